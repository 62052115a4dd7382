// Two-way coupling deposit, sorted and reproducible: the particle step
// emitted 8 (face key, contribution) pairs per slot at 8 (id % capacity);
// a stable radix sort by key keeps each face's contributions in slot
// order, a reduce-by-key sums each run (CUB: run-to-run deterministic on
// one device), and one thread per run adds the sum to its face, so no two
// threads touch the same face and no atomics are needed.
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

#include "cuda/check.hpp"
#include "cuda/kernels.hpp"

namespace sim::cuda {
namespace {

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

void deposit_sorted(cudaStream_t s, const DepositBuffers& b, int pairs, int end_bit, real* fu, real* fv) {
  if (pairs == 0) return;
  const bool alt = radix_sort_pairs(s, b.keys, b.keys_alt, b.values, b.values_alt, pairs, end_bit, b.workspace,
                                    b.workspace_bytes);
  const uint32_t* keys = alt ? b.keys_alt : b.keys;
  const real* values = alt ? b.values_alt : b.values;
  size_t bytes = b.workspace_bytes;
  SIM_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(b.workspace, bytes, keys, b.unique_keys, values, b.sums, b.run_count,
                                                ::cuda::std::plus<real>{}, pairs, s));
  const int blocks = (pairs + kBlock - 1) / kBlock < kMaxBlocks ? (pairs + kBlock - 1) / kBlock : kMaxBlocks;
  scatter_add_kernel<<<blocks, kBlock, 0, s>>>(b.unique_keys, b.sums, b.run_count, b.sentinel, fu, fv);
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
