// SPDX-License-Identifier: MIT
// Counter-based random numbers: the value for (seed, particle id, stream)
// is a pure function, so seeding is deterministic on any backend, in any
// order, and a restart needs no generator state beyond the next id.
#pragma once
#include <cstdint>

#include "sim/model/types.hpp"

namespace sim {

SIM_HD uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in [0, 1).
SIM_HD double uniform01(uint64_t seed, uint64_t id, uint32_t stream) {
  const uint64_t h = splitmix64(splitmix64(seed ^ (0x632be59bd9b4e019ULL * (stream + 1))) + id);
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace sim
