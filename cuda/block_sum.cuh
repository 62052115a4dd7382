// SPDX-License-Identifier: MIT
// A deterministic block-wide sum shared by the reduction kernels.
#pragma once
#include <cuda_runtime.h>

namespace sim::cuda {

// Sum over the block, valid in thread (0, 0). Deterministic: a fixed
// shuffle tree per warp, then the warps in order. Blocks hold whole warps.
// Two calls in a row need a __syncthreads() between them (one scratch array).
__device__ __forceinline__ double block_sum(double v) {
  __shared__ double warp_sums[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int tid = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  const int warps = static_cast<int>(blockDim.x * blockDim.y) >> 5;
  if ((tid & 31) == 0) warp_sums[tid >> 5] = v;
  __syncthreads();
  double s = 0;
  if (tid < 32) {
    s = tid < warps ? warp_sums[tid] : 0.0;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  }
  return s;
}

}  // namespace sim::cuda
