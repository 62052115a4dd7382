// Memory-access policies of the grid stencils. A stencil kernel is written
// once against Neighbourhood<Access, fields>::at(field, di, dj), the value of
// an input field at (i + di, j + dj) with |di|, |dj| <= 1, and Access::load
// for values read only at the point itself:
//   NaiveAccess   plain loads through ordinary pointers;
//   LdgAccess     const __restrict__ pointers read through __ldg (read-only cache);
//   SharedAccess  the block's tile plus a one-cell halo staged in shared
//                 memory (rows padded by tile_pitch against bank conflicts),
//                 neighbours read from there.
#pragma once
#include <cuda_runtime.h>

#include <type_traits>

#include "cuda/block_sum.cuh"
#include "cuda/constants.cuh"
#include "cuda/kernels.hpp"

namespace sim::cuda {

// The points a launch covers: i in [i0, i0 + ni), j in [j0, j0 + nj); i0, j0 >= 0.
struct Region {
  int i0, j0, ni, nj;
};

struct Point {
  int i, j;
  bool valid;
};

__device__ __forceinline__ Point thread_point(const Region& r) {
  const int i = r.i0 + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = r.j0 + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  return {i, j, i < r.i0 + r.ni && j < r.j0 + r.nj};
}

// Out: the pointer type of the arrays a stencil writes. Without __restrict__
// on either side (naive) the compiler may not route reads through the
// read-only cache on its own.
struct NaiveAccess {
  using In = const real*;
  using Out = real*;
  static constexpr bool kTiled = false;
  __device__ __forceinline__ static real load(In p, int idx) { return p[idx]; }
};

struct LdgAccess {
  using In = const real* __restrict__;
  using Out = real* __restrict__;
  static constexpr bool kTiled = false;
  __device__ __forceinline__ static real load(In p, int idx) { return __ldg(p + idx); }
};

struct SharedAccess {
  using In = const real* __restrict__;
  using Out = real* __restrict__;
  static constexpr bool kTiled = true;
  __device__ __forceinline__ static real load(In p, int idx) { return __ldg(p + idx); }
};

// An array read through a policy's load, for the shared functions of sim/
// that take any `field[index]`.
template <class A>
struct Loaded {
  typename A::In p;
  __device__ __forceinline__ real operator[](int idx) const { return A::load(p, idx); }
};

template <class A, int NF, bool kTiled = A::kTiled>
class Neighbourhood;

// Straight from global memory, through the policy's load.
template <class A, int NF>
class Neighbourhood<A, NF, false> {
 public:
  __device__ __forceinline__ Neighbourhood(const typename A::In* fields, int c, const Region&, const Constants& k)
      : c_(c), pitch_(k.pitch) {
#pragma unroll
    for (int q = 0; q < NF; ++q) f_[q] = fields[q];
  }
  __device__ __forceinline__ real at(int q, int di, int dj) const { return A::load(f_[q], c_ + di + dj * pitch_); }
  __device__ __forceinline__ real operator()(int q, int di, int dj) const { return at(q, di, dj); }

 private:
  typename A::In f_[NF];
  int c_, pitch_;
};

// From a shared tile of (blockDim.x + 2) x (blockDim.y + 2) values per field.
// Every thread of the block takes part in the load, so kernels must not
// return before constructing it.
template <class A, int NF>
class Neighbourhood<A, NF, true> {
 public:
  __device__ __forceinline__ Neighbourhood(const typename A::In* fields, int, const Region& r, const Constants& k) {
    extern __shared__ real tile[];
    const int bx = static_cast<int>(blockDim.x), by = static_cast<int>(blockDim.y);
    const int w = bx + 2, h = by + 2;
    tp_ = tile_pitch(bx);
    plane_ = tp_ * h;
    // tile (0, 0) is point (i0 - 1, j0 - 1) of the block; its array index (i + 1) + (j + 1) pitch
    const int gi0 = r.i0 + static_cast<int>(blockIdx.x) * bx - 1;
    const int gj0 = r.j0 + static_cast<int>(blockIdx.y) * by - 1;
#pragma unroll
    for (int q = 0; q < NF; ++q)
      for (int tj = static_cast<int>(threadIdx.y); tj < h; tj += by)
        for (int ti = static_cast<int>(threadIdx.x); ti < w; ti += bx) {
          const int gi = gi0 + ti, gj = gj0 + tj;
          const bool in_array = gi <= k.pitch - 2 && gj <= k.rows - 2;
          tile[q * plane_ + tj * tp_ + ti] = in_array ? A::load(fields[q], (gi + 1) + (gj + 1) * k.pitch) : real(0);
        }
    __syncthreads();
    base_ = (static_cast<int>(threadIdx.y) + 1) * tp_ + static_cast<int>(threadIdx.x) + 1;
  }
  __device__ __forceinline__ real at(int q, int di, int dj) const {
    extern __shared__ real tile[];
    return tile[q * plane_ + base_ + di + dj * tp_];
  }
  __device__ __forceinline__ real operator()(int q, int di, int dj) const { return at(q, di, dj); }

 private:
  int tp_, plane_, base_;
};


__device__ __forceinline__ int block_index() { return static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x); }

inline Region face_region(const Exec& e) { return {0, 0, e.nx + 1, e.ny + 1}; }
inline Region cell_region(const Exec& e) { return {0, 0, e.nx, e.ny}; }
inline dim3 block_dim(const StencilOpts& o) { return dim3(o.block_x, o.block_y); }
inline dim3 grid_dim(const Region& r, const StencilOpts& o) {
  return dim3((r.ni + o.block_x - 1) / o.block_x, (r.nj + o.block_y - 1) / o.block_y);
}
template <class A>
size_t tile_bytes(int fields, const StencilOpts& o) {
  return A::kTiled ? shared_tile_bytes(fields, o.block_x, o.block_y) : 0;
}

namespace {

// Calls body(access, constants_policy, has_solids) with the instantiation
// the run asked for: the one run-time switch of every stencil launch.
template <class Body>
void with_stencil(const Exec& e, const StencilOpts& o, Body&& body) {
  auto pick = [&](auto access) {
    with_constants(e.constants, e.k_dev, [&](auto kp) {
      if (o.solids) body(access, kp, std::true_type{});
      else body(access, kp, std::false_type{});
    });
  };
  switch (o.variant) {
    case Stencil::naive: pick(NaiveAccess{}); break;
    case Stencil::ldg: pick(LdgAccess{}); break;
    case Stencil::vector: pick(LdgAccess{}); break;  // its own Jacobi sweep; every other stencil as ldg
    case Stencil::shared: pick(SharedAccess{}); break;
  }
}

}  // namespace
}  // namespace sim::cuda
