// SPDX-License-Identifier: MIT
// Basic scalar type and the host/device qualifier shared by CPU and CUDA code.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define SIM_HD __host__ __device__ __forceinline__
#else
#define SIM_HD inline __attribute__((always_inline))
#endif

// Unrolls the fixed-count loop that follows in device code.
#if defined(__CUDA_ARCH__)
#define SIM_UNROLL _Pragma("unroll")
#else
#define SIM_UNROLL
#endif

namespace sim {
// Field and particle state are single precision (what the GPU streams);
// reductions and diagnostics accumulate in double.
using real = float;

// max(a, b) that keeps a NaN from either side (std::max(a, NaN) is a): the
// CFL rate and the max reductions must report a blown-up field, not skip it.
SIM_HD double max_nan(double a, double b) { return (a != a || a > b) ? a : b; }
}  // namespace sim
