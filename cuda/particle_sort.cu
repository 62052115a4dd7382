// SPDX-License-Identifier: MIT
// Particle order on the device: the stable radix sorts (particles by cell,
// deposit pairs by face), the gather that applies a sort to every field,
// and the scatter back to the canonical slot order (slot r holds the
// particle whose id % capacity == r) for downloads.
#include <cub/device/device_radix_sort.cuh>

#include "cuda/check.hpp"
#include "cuda/kernels.hpp"

namespace sim::cuda {
namespace {

template <class View>
__global__ void gather_kernel(View src, View dst, const uint32_t* __restrict__ perm) {
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s < dst.size()) dst.store(s, src.load(perm[s]));
}

// The slot invariant makes id % capacity a permutation of the slots.
template <class View>
__global__ void canonical_scatter_kernel(View src, View dst) {
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s < src.size()) dst.store(static_cast<int64_t>(src.id(s) % static_cast<uint64_t>(src.size())), src.load(s));
}

constexpr int kBlock = 256;

template <class V>
bool sort_pairs(cudaStream_t s, uint32_t* keys, uint32_t* keys_alt, V* values, V* values_alt, int n, int end_bit,
                void* workspace, size_t workspace_bytes) {
  cub::DoubleBuffer<uint32_t> k(keys, keys_alt);
  cub::DoubleBuffer<V> v(values, values_alt);
  size_t bytes = workspace_bytes;
  SIM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(workspace, bytes, k, v, n, 0, end_bit, s));
  return k.Current() == keys_alt;
}

}  // namespace

bool radix_sort_pairs(cudaStream_t s, uint32_t* keys, uint32_t* keys_alt, uint32_t* values, uint32_t* values_alt,
                      int n, int end_bit, void* workspace, size_t workspace_bytes) {
  return sort_pairs(s, keys, keys_alt, values, values_alt, n, end_bit, workspace, workspace_bytes);
}

bool radix_sort_pairs(cudaStream_t s, uint32_t* keys, uint32_t* keys_alt, real* values, real* values_alt, int n,
                      int end_bit, void* workspace, size_t workspace_bytes) {
  return sort_pairs(s, keys, keys_alt, values, values_alt, n, end_bit, workspace, workspace_bytes);
}

size_t radix_sort_workspace_bytes(int n, int end_bit) {
  // Asking touches no memory; the larger of the two value types' needs.
  cub::DoubleBuffer<uint32_t> k(nullptr, nullptr), vi(nullptr, nullptr);
  cub::DoubleBuffer<real> vf(nullptr, nullptr);
  size_t a = 0, b = 0;
  SIM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, a, k, vi, n, 0, end_bit));
  SIM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, b, k, vf, n, 0, end_bit));
  return a > b ? a : b;
}

void gather_particles(cudaStream_t s, const DeviceParticles& src, const DeviceParticles& dst, const uint32_t* perm) {
  const int64_t n = src.size();
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  if (src.layout == Layout::aos) gather_kernel<<<blocks, kBlock, 0, s>>>(src.aos, dst.aos, perm);
  else gather_kernel<<<blocks, kBlock, 0, s>>>(src.soa, dst.soa, perm);
  SIM_CUDA_CHECK_LAUNCH("gather_kernel");
}

void scatter_to_canonical(cudaStream_t s, const DeviceParticles& src, const DeviceParticles& dst) {
  const int64_t n = src.size();
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  if (src.layout == Layout::aos) canonical_scatter_kernel<<<blocks, kBlock, 0, s>>>(src.aos, dst.aos);
  else canonical_scatter_kernel<<<blocks, kBlock, 0, s>>>(src.soa, dst.soa);
  SIM_CUDA_CHECK_LAUNCH("canonical_scatter_kernel");
}

}  // namespace sim::cuda
