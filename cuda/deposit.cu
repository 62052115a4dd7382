// SPDX-License-Identifier: MIT
// Two-way coupling deposit, sorted and reproducible: each pass of the
// coupled particle step emits 8 (face key, contribution) pairs per slot at
// 8 (id % capacity) + corner, the keys the same in every pass. The keys are
// sorted once per step by a stable radix sort that carries the pair index,
// so each face's contributions stay in slot order; the values are gathered
// into that order, a reduce-by-key sums each run (CUB: run-to-run
// deterministic on one device), and one thread per run adds the sum to its
// face, so no two threads touch the same face and no atomics are needed.
// The drag's B and A share the keys: they go through one float2 pass (4
// launches instead of 8).
#include <algorithm>

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

#include "cuda/check.hpp"
#include "cuda/kernels.hpp"

namespace sim::cuda {
namespace {

__global__ void gather_values_kernel(const uint32_t* __restrict__ perm, const real* __restrict__ values, int n,
                                     real* __restrict__ out) {
  const int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r < n) out[r] = values[perm[r]];
}

__global__ void gather_pairs_kernel(const uint32_t* __restrict__ perm, const real* __restrict__ a,
                                    const real* __restrict__ b, int n, float2* __restrict__ out) {
  const int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r < n) {
    const uint32_t q = perm[r];
    out[r] = make_float2(a[q], b[q]);
  }
}

struct Plus2 {
  __device__ float2 operator()(const float2& x, const float2& y) const { return make_float2(x.x + y.x, x.y + y.y); }
};

// Run count lives on the device: a grid-stride loop over at most `pairs` runs.
__global__ void scatter_add_kernel(const uint32_t* __restrict__ keys, const real* __restrict__ sums,
                                   const int* __restrict__ runs, uint32_t sentinel, real* __restrict__ fu,
                                   real* __restrict__ fv) {
  const int n = *runs;
  for (int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); r < n;
       r += static_cast<int>(gridDim.x * blockDim.x)) {
    const uint32_t key = keys[r];
    if (key >= sentinel) continue;
    real* f = (key & 1u) != 0 ? fv : fu;
    f[key >> 1] += sums[r];
  }
}

__global__ void scatter_add2_kernel(const uint32_t* __restrict__ keys, const float2* __restrict__ sums,
                                    const int* __restrict__ runs, uint32_t sentinel, real* __restrict__ fu_a,
                                    real* __restrict__ fv_a, real* __restrict__ fu_b, real* __restrict__ fv_b) {
  const int n = *runs;
  for (int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); r < n;
       r += static_cast<int>(gridDim.x * blockDim.x)) {
    const uint32_t key = keys[r];
    if (key >= sentinel) continue;
    const float2 sum = sums[r];
    const bool v = (key & 1u) != 0;
    (v ? fv_a : fu_a)[key >> 1] += sum.x;
    (v ? fv_b : fu_b)[key >> 1] += sum.y;
  }
}

constexpr int kBlock = 256;
constexpr int kMaxBlocks = 4096;

}  // namespace

SortedPairs sort_deposit_pairs(cudaStream_t s, const DepositBuffers& b) {
  if (b.pairs == 0) return {b.keys, b.perm};
  const bool alt = radix_sort_pairs(s, b.keys, b.keys_alt, b.perm, b.perm_alt, b.pairs, b.end_bit, b.workspace,
                                    b.workspace_bytes);
  return alt ? SortedPairs{b.keys_alt, b.perm_alt} : SortedPairs{b.keys, b.perm};
}

void deposit_sorted(cudaStream_t s, const DepositBuffers& b, const SortedPairs& sorted, const real* values,
                    real* to_u, real* to_v) {
  const int pairs = b.pairs;
  if (pairs == 0) return;
  gather_values_kernel<<<(pairs + kBlock - 1) / kBlock, kBlock, 0, s>>>(sorted.perm, values, pairs, b.gathered);
  SIM_CUDA_CHECK_LAUNCH("gather_values_kernel");
  size_t bytes = b.workspace_bytes;
  SIM_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(b.workspace, bytes, sorted.keys, b.unique_keys, b.gathered, b.sums,
                                                b.run_count, ::cuda::std::plus<real>{}, pairs, s));
  const int blocks = (pairs + kBlock - 1) / kBlock < kMaxBlocks ? (pairs + kBlock - 1) / kBlock : kMaxBlocks;
  scatter_add_kernel<<<blocks, kBlock, 0, s>>>(b.unique_keys, b.sums, b.run_count, b.sentinel, to_u, to_v);
  SIM_CUDA_CHECK_LAUNCH("scatter_add_kernel");
}

void deposit_sorted2(cudaStream_t s, const DepositBuffers& b, const SortedPairs& sorted, const real* values_a,
                     const real* values_b, real* a_u, real* a_v, real* b_u, real* b_v) {
  const int pairs = b.pairs;
  if (pairs == 0) return;
  float2* gathered = reinterpret_cast<float2*>(b.gathered);
  float2* sums = reinterpret_cast<float2*>(b.sums);
  gather_pairs_kernel<<<(pairs + kBlock - 1) / kBlock, kBlock, 0, s>>>(sorted.perm, values_a, values_b, pairs, gathered);
  SIM_CUDA_CHECK_LAUNCH("gather_pairs_kernel");
  size_t bytes = b.workspace_bytes;
  SIM_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(b.workspace, bytes, sorted.keys, b.unique_keys, gathered, sums,
                                                b.run_count, Plus2{}, pairs, s));
  const int blocks = (pairs + kBlock - 1) / kBlock < kMaxBlocks ? (pairs + kBlock - 1) / kBlock : kMaxBlocks;
  scatter_add2_kernel<<<blocks, kBlock, 0, s>>>(b.unique_keys, sums, b.run_count, b.sentinel, a_u, a_v, b_u, b_v);
  SIM_CUDA_CHECK_LAUNCH("scatter_add2_kernel");
}

size_t deposit_workspace_bytes(int pairs, int end_bit) {
  size_t reduce = 0, reduce2 = 0;
  SIM_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, reduce, static_cast<const uint32_t*>(nullptr),
                                                static_cast<uint32_t*>(nullptr), static_cast<const real*>(nullptr),
                                                static_cast<real*>(nullptr), static_cast<int*>(nullptr),
                                                ::cuda::std::plus<real>{}, pairs));
  SIM_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, reduce2, static_cast<const uint32_t*>(nullptr),
                                                static_cast<uint32_t*>(nullptr), static_cast<const float2*>(nullptr),
                                                static_cast<float2*>(nullptr), static_cast<int*>(nullptr), Plus2{},
                                                pairs));
  const size_t sort = radix_sort_workspace_bytes(pairs, end_bit);
  return std::max({reduce, reduce2, sort});
}

}  // namespace sim::cuda
