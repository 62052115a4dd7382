// SPDX-License-Identifier: MIT
// Where kernels read sim::Constants from, as a template policy.
//
// InConstantMemory: one __constant__ block. Every thread of a warp reads the
//   same word at the same time (constants are never indexed by thread), so
//   each read is one broadcast from the constant cache.
// InGlobalMemory: the same block in a device buffer, read through a pointer;
//   kept for comparison (ConstantsIn::global).
//
// The backend is built without relocatable device code, so a __constant__
// variable belongs to one translation unit: each .cu that launches kernels
// reading constants includes this header inside its own unit (hence the
// unnamed namespace) and exports an upload function that the backend calls
// from set_constants (see cuda/kernels.hpp).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "cuda/check.hpp"

#include "sim/model/constants.hpp"

namespace sim::cuda {
namespace {

__constant__ Constants c_constants;

struct InConstantMemory {
  __device__ __forceinline__ const Constants& get() const { return c_constants; }
};

struct InGlobalMemory {
  const Constants* __restrict__ p;
  __device__ __forceinline__ const Constants& get() const { return *p; }
};

// Pageable source: the copy is staged before returning, so `c` may change at once.
inline void upload_unit_constants(const Constants& c, cudaStream_t s) {
  SIM_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_constants, &c, sizeof(Constants), 0, cudaMemcpyHostToDevice, s));
}

// dt alone, from the device copy: a recorded step changes it without the host.
inline void copy_unit_dt(const Constants* k_dev, cudaStream_t s) {
  SIM_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_constants, &k_dev->dt, sizeof(real), offsetof(Constants, dt),
                                         cudaMemcpyDeviceToDevice, s));
}

// Calls body(kp) with the policy object the run asked for.
template <class Body>
void with_constants(ConstantsIn where, const Constants* k_dev, Body&& body) {
  if (where == ConstantsIn::constant) body(InConstantMemory{});
  else body(InGlobalMemory{k_dev});
}

}  // namespace
}  // namespace sim::cuda
