// Basic scalar type and the host/device qualifier shared by CPU and CUDA code.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define SIM_HD __host__ __device__ __forceinline__
#else
#define SIM_HD inline
#endif

namespace sim {
// Field and particle state are single precision (what the GPU streams);
// reductions and diagnostics accumulate in double.
using real = float;
}  // namespace sim
