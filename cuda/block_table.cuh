// SPDX-License-Identifier: MIT
// A block's fixed-point deposits summed in shared memory before the global
// atomics: an open-addressing table of (face key, V integer sums), one
// 64-bit global atomic per distinct face a block touches instead of one per
// contribution. Particles sorted by cell put a block's 256 particles on
// about a hundred cells, whose faces their 8 contributions each share (at
// 16.7M particles on 5.4M cells, about 4 contributions a face). Integer
// sums do not depend on the order of the additions, so the result is the
// same bits as adding every contribution to the face directly; a key that
// finds no slot within kProbes (a block of unsorted particles) goes
// straight to the global atomics. Every thread of the block must reach
// clear(), the adds (or none), and flush(), which holds the barriers.
#pragma once
#include <cstdint>

namespace sim::cuda {
namespace {

template <int V>
struct BlockTable {
  static constexpr int kSlots = 1024;  // a power of two; 4 + 8 V bytes each
  static constexpr int kProbes = 8;
  static constexpr uint32_t kEmpty = 0xffffffffu;
  uint32_t key[kSlots];
  unsigned long long sum[V][kSlots];

  __device__ __forceinline__ void clear() {
    for (int s = static_cast<int>(threadIdx.x); s < kSlots; s += static_cast<int>(blockDim.x)) {
      key[s] = kEmpty;
#pragma unroll
      for (int v = 0; v < V; ++v) sum[v][s] = 0ull;
    }
    __syncthreads();
  }

  // Adds x to the sums of `k`; `direct(k, x)` where the table has no room.
  template <class Direct>
  __device__ __forceinline__ void add(uint32_t k, const unsigned long long (&x)[V], Direct&& direct) {
    const uint32_t h = (k * 2654435761u) >> 22;  // Knuth's multiplicative hash, 10 bits
#pragma unroll 1
    for (int p = 0; p < kProbes; ++p) {
      const uint32_t s = (h + static_cast<uint32_t>(p)) & (kSlots - 1);
      const uint32_t old = key[s] == k ? k : atomicCAS(key + s, kEmpty, k);
      if (old == kEmpty || old == k) {
#pragma unroll
        for (int v = 0; v < V; ++v)
          if (x[v] != 0ull) atomicAdd(sum[v] + s, x[v]);
        return;
      }
    }
    direct(k, x);
  }

  // After every add of the block: `to_global(k, sums)` for each key held.
  template <class ToGlobal>
  __device__ __forceinline__ void flush(ToGlobal&& to_global) {
    __syncthreads();
    for (int s = static_cast<int>(threadIdx.x); s < kSlots; s += static_cast<int>(blockDim.x)) {
      const uint32_t k = key[s];
      if (k == kEmpty) continue;
      unsigned long long x[V];
#pragma unroll
      for (int v = 0; v < V; ++v) x[v] = sum[v][s];
      to_global(k, x);
    }
  }
};

// A face's key: its storage index and component (0: u, 1: v).
__device__ __forceinline__ uint32_t face_key(int face, int component) {
  return (static_cast<uint32_t>(face) << 1) | static_cast<uint32_t>(component);
}

}  // namespace
}  // namespace sim::cuda
