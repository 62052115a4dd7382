// Two-way coupling deposit, sorted and reproducible: each pass of the
// coupled particle step emits 8 (face key, contribution) pairs per slot at
// 8 (id % capacity) + corner, the keys the same in every pass. The keys are
// sorted once per step by a stable radix sort that carries the pair index,
// so each face's contributions stay in slot order; for every quantity the
// values are gathered into that order, a reduce-by-key sums each run (CUB:
// run-to-run deterministic on one device), and one thread per run adds the
// sum to its face, so no two threads touch the same face and no atomics
// are needed.
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

size_t deposit_workspace_bytes(int pairs, int end_bit) {
  size_t reduce = 0;
  SIM_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, reduce, static_cast<const uint32_t*>(nullptr),
                                                static_cast<uint32_t*>(nullptr), static_cast<const real*>(nullptr),
                                                static_cast<real*>(nullptr), static_cast<int*>(nullptr),
                                                ::cuda::std::plus<real>{}, pairs));
  const size_t sort = radix_sort_workspace_bytes(pairs, end_bit);
  return reduce > sort ? reduce : sort;
}

}  // namespace sim::cuda
