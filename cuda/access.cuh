// SPDX-License-Identifier: MIT
// Memory-access policies of the grid stencils. A stencil kernel is written
// once against Neighbourhood<Access, fields, R>::at(field, di, dj), the value
// of an input field at (i + di, j + dj) with |di|, |dj| <= R, and Access::load
// for values read only at the point itself:
//   NaiveAccess   plain loads through ordinary pointers;
//   LdgAccess     const __restrict__ pointers read through __ldg (read-only cache);
//   SharedAccess  the block's tile plus an R-cell halo staged in shared
//                 memory (rows padded by tile_pitch against bank conflicts),
//                 neighbours read from there.
// R is 1 for every stencil but the momentum stage of fluid.advection =
// quick (R = 2). Storage holds a one-cell halo, so a point two cells out is
// read as wide_offset (sim/model/fluid_physics.hpp) places it: at its periodic
// image on a periodic axis, clamped into the arrays on a closed one (the
// scheme's reach rules never use such a point).
#pragma once
#include <cuda_runtime.h>

#include <type_traits>

#include "cuda/block_sum.cuh"
#include "cuda/constants.cuh"
#include "cuda/kernels.hpp"
#include "sim/model/fluid_physics.hpp"

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

template <class A, int NF, int R = 1, bool kTiled = A::kTiled>
class Neighbourhood;

// Straight from global memory, through the policy's load. Radius 2 keeps
// what wide_offset needs of the point and the grid.
template <class A, int NF, int R>
class Neighbourhood<A, NF, R, false> {
 public:
  static constexpr int kRadius = R;
  __device__ __forceinline__ Neighbourhood(const typename A::In* fields, int c, const Region&, const Constants& k)
      : c_(c), pitch_(k.pitch) {
    static_assert(R == 1, "a radius-2 neighbourhood needs its point: the constructor taking a Point");
#pragma unroll
    for (int q = 0; q < NF; ++q) f_[q] = fields[q];
  }
  __device__ __forceinline__ Neighbourhood(const typename A::In* fields, Point pt, int c, const Region&,
                                           const Constants& k)
      : c_(c), pitch_(k.pitch) {
#pragma unroll
    for (int q = 0; q < NF; ++q) f_[q] = fields[q];
    if constexpr (R >= 2) {
      i_ = pt.i;
      j_ = pt.j;
      nx_ = k.nx;
      ny_ = k.ny;
      px_ = is_periodic(k, kLeft);
      py_ = is_periodic(k, kBottom);
      last_x_ = k.pitch - 2;
      last_y_ = k.rows - 2;
    }
  }
  __device__ __forceinline__ real at(int q, int di, int dj) const {
    if constexpr (R >= 2) {  // constant offsets: the checks fold away but for the points two cells out
      if (di < -1 || di > 1) di = wide_offset(i_, di, nx_, px_, last_x_);
      if (dj < -1 || dj > 1) dj = wide_offset(j_, dj, ny_, py_, last_y_);
    }
    return A::load(f_[q], c_ + di + dj * pitch_);
  }
  __device__ __forceinline__ real operator()(int q, int di, int dj) const { return at(q, di, dj); }

 private:
  typename A::In f_[NF];
  int c_, pitch_;
  int i_ = 0, j_ = 0, nx_ = 0, ny_ = 0, last_x_ = 0, last_y_ = 0;  // radius 2
  bool px_ = false, py_ = false;
};

// Tile coordinate g of a radius-2 tile along an axis of n cells: the
// periodic image on a periodic axis, then clamped into the arrays
// [-1, last] (points a block holds beyond the grid are never used).
__device__ __forceinline__ int tile_coord(int g, int n, bool periodic, int last) {
  if (periodic) g = g < 0 ? g + n : g > n ? g - n : g;
  return g < -1 ? -1 : g > last ? last : g;
}

// From a shared tile of (blockDim.x + 2R) x (blockDim.y + 2R) values per
// field. Every thread of the block takes part in the load, so kernels must
// not return before constructing it. Radius 1 is the tile every stencil
// used before fluid.advection existed, unchanged.
template <class A, int NF, int R>
class Neighbourhood<A, NF, R, true> {
 public:
  static constexpr int kRadius = R;
  __device__ __forceinline__ Neighbourhood(const typename A::In* fields, int, const Region& r, const Constants& k) {
    load(fields, r, k);
  }
  __device__ __forceinline__ Neighbourhood(const typename A::In* fields, Point, int, const Region& r,
                                           const Constants& k) {
    load(fields, r, k);
  }
  __device__ __forceinline__ real at(int q, int di, int dj) const {
    extern __shared__ real tile[];
    return tile[q * plane_ + base_ + di + dj * tp_];
  }
  __device__ __forceinline__ real operator()(int q, int di, int dj) const { return at(q, di, dj); }

 private:
  __device__ __forceinline__ void load(const typename A::In* fields, const Region& r, const Constants& k) {
    extern __shared__ real tile[];
    const int bx = static_cast<int>(blockDim.x), by = static_cast<int>(blockDim.y);
    const int w = bx + 2 * R, h = by + 2 * R;
    tp_ = tile_pitch(bx, R);
    plane_ = tp_ * h;
    // tile (0, 0) is point (i0 - R, j0 - R) of the block; its array index (i + 1) + (j + 1) pitch
    const int gi0 = r.i0 + static_cast<int>(blockIdx.x) * bx - R;
    const int gj0 = r.j0 + static_cast<int>(blockIdx.y) * by - R;
    if constexpr (R == 1) {
#pragma unroll
      for (int q = 0; q < NF; ++q)
        for (int tj = static_cast<int>(threadIdx.y); tj < h; tj += by)
          for (int ti = static_cast<int>(threadIdx.x); ti < w; ti += bx) {
            const int gi = gi0 + ti, gj = gj0 + tj;
            const bool in_array = gi <= k.pitch - 2 && gj <= k.rows - 2;
            tile[q * plane_ + tj * tp_ + ti] = in_array ? A::load(fields[q], (gi + 1) + (gj + 1) * k.pitch) : real(0);
          }
    } else {
      const bool px = is_periodic(k, kLeft), py = is_periodic(k, kBottom);
#pragma unroll
      for (int q = 0; q < NF; ++q)
        for (int tj = static_cast<int>(threadIdx.y); tj < h; tj += by) {
          const int gj = tile_coord(gj0 + tj, k.ny, py, k.rows - 2);
          for (int ti = static_cast<int>(threadIdx.x); ti < w; ti += bx) {
            const int gi = tile_coord(gi0 + ti, k.nx, px, k.pitch - 2);
            tile[q * plane_ + tj * tp_ + ti] = A::load(fields[q], (gi + 1) + (gj + 1) * k.pitch);
          }
        }
    }
    __syncthreads();
    base_ = (static_cast<int>(threadIdx.y) + R) * tp_ + static_cast<int>(threadIdx.x) + R;
  }

  int tp_, plane_, base_;
};


__device__ __forceinline__ int block_index() { return static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x); }

inline Region face_region(const Exec& e) { return {0, e.row0, e.nx + 1, e.face_row_end() - e.row0}; }
inline Region cell_region(const Exec& e) { return {0, e.row0, e.nx, e.cell_row_end() - e.row0}; }
inline dim3 block_dim(const StencilOpts& o) { return dim3(o.block_x, o.block_y); }
inline dim3 grid_dim(const Region& r, const StencilOpts& o) {
  return dim3((r.ni + o.block_x - 1) / o.block_x, (r.nj + o.block_y - 1) / o.block_y);
}
template <class A>
size_t tile_bytes(int fields, const StencilOpts& o, int radius = 1) {
  return A::kTiled ? shared_tile_bytes(fields, o.block_x, o.block_y, radius) : 0;
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
    case Stencil::temporal: pick(LdgAccess{}); break;  // as vector, plus several Jacobi sweeps per pass
    case Stencil::shared: pick(SharedAccess{}); break;
    case Stencil::auto_: break;  // resolved before: make_stencil_opts refuses it
  }
}

}  // namespace
}  // namespace sim::cuda
