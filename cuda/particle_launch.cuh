// SPDX-License-Identifier: MIT
// The launch shape of the particle kernels (one thread per slot) and the
// dispatch on the particle layout, shared by the particle units.
#pragma once
#include <cstdint>

#include "cuda/kernels.hpp"

namespace sim::cuda {
namespace {

constexpr int kParticleBlock = 256;

unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + kParticleBlock - 1) / kParticleBlock); }

template <class Body>
void with_view(const DeviceParticles& p, Body&& body) {
  if (p.layout == Layout::aos) body(p.aos);
  else body(p.soa);
}

}  // namespace
}  // namespace sim::cuda
