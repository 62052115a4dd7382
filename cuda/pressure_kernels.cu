// SPDX-License-Identifier: MIT
// Pressure Poisson primitives on the cells: right-hand side, Jacobi and
// red-black SOR sweeps, the residual, and the pressure halo. Each stencil is
// written once over a memory-access policy (cuda/access.cuh) and calls the
// physics of sim/model/fluid_physics.hpp exactly as CpuBackend does.
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cuda/access.cuh"
#include "sim/model/fluid_physics.hpp"
#include "sim/model/halo.hpp"

namespace sim::cuda {
namespace {

enum { kPhi = 0, kOpen = 1 };

// 1 for fluid, 0 for solid, at the cell and its four neighbours; all 1
// without obstacles (no mask read).
struct OpenAround {
  real self, w, e, s, n;
};
template <bool kSolids, class N>
__device__ __forceinline__ OpenAround open_around(const N& nb) {
  if constexpr (!kSolids) return {1, 1, 1, 1, 1};
  else
    return {nb.at(kOpen, 0, 0), nb.at(kOpen, -1, 0), nb.at(kOpen, 1, 0), nb.at(kOpen, 0, -1), nb.at(kOpen, 0, 1)};
}

// rhs = div(u) / dt on fluid cells, 0 in solids; block sum of rhs^2 in double.
template <class A, class KP, bool kSolids>
__global__ void rhs_kernel(KP kp, Region r, typename A::In u, typename A::In v, typename A::In open,
                           typename A::Out rhs, double* partials) {
  const Constants& k = kp.get();
  const Point pt = thread_point(r);
  const int c = at(k, pt.i, pt.j);
  const typename A::In f[2] = {u, v};
  const Neighbourhood<A, 2> n(f, c, r, k);
  double acc = 0;
  if (pt.valid) {
    const real inv_dt = real(1) / k.dt;
    const bool fluid = !kSolids || A::load(open, c) != real(0);
    const real b = fluid ? divergence_point(n.at(0, 0, 0), n.at(0, 1, 0), n.at(1, 0, 0), n.at(1, 0, 1), k) * inv_dt
                         : real(0);
    rhs[c] = b;
    acc = static_cast<double>(b) * b;
  }
  const double s = block_sum(acc);
  if (threadIdx.x == 0 && threadIdx.y == 0) partials[block_index()] = s;
}

// phi_new = jacobi_point(neighbours of phi_old), out of place.
template <class A, class KP, bool kSolids>
__global__ void jacobi_kernel(KP kp, Region r, typename A::In phi, typename A::In rhs, typename A::In open,
                              typename A::Out out) {
  const Constants& k = kp.get();
  const Point pt = thread_point(r);
  const int c = at(k, pt.i, pt.j);
  const typename A::In f[2] = {phi, open};
  const Neighbourhood<A, kSolids ? 2 : 1> n(f, c, r, k);
  if (!pt.valid) return;
  const OpenAround o = open_around<kSolids>(n);
  out[c] = o.self != real(0) ? jacobi_point(n.at(kPhi, -1, 0), n.at(kPhi, 1, 0), n.at(kPhi, 0, -1), n.at(kPhi, 0, 1),
                                            A::load(rhs, c), o.w, o.e, o.s, o.n, k)
                             : real(0);
}

// In place on the cells with (i + j) % 2 == color. Their neighbours are of
// the other colour and not written by this launch, so reading them through
// phi_nb (the same array) is race-free; the cell itself is read and written
// through the plain pointer by its own thread only.
template <class A, class KP, bool kSolids>
__global__ void sor_kernel(KP kp, Region r, typename A::In phi_nb, typename A::In rhs, typename A::In open,
                           real* phi, int color) {
  const Constants& k = kp.get();
  const Point pt = thread_point(r);
  const int c = at(k, pt.i, pt.j);
  const typename A::In f[2] = {phi_nb, open};
  const Neighbourhood<A, kSolids ? 2 : 1> n(f, c, r, k);
  if (!pt.valid || ((pt.i + pt.j) & 1) != color) return;
  const OpenAround o = open_around<kSolids>(n);
  phi[c] = o.self != real(0) ? sor_point(phi[c], n.at(kPhi, -1, 0), n.at(kPhi, 1, 0), n.at(kPhi, 0, -1),
                                         n.at(kPhi, 0, 1), A::load(rhs, c), o.w, o.e, o.s, o.n, k)
                             : real(0);
}

// Block sum of (rhs - lap phi)^2 over fluid cells, in double.
template <class A, class KP, bool kSolids>
__global__ void residual_kernel(KP kp, Region r, typename A::In phi, typename A::In rhs, typename A::In open,
                                double* partials) {
  const Constants& k = kp.get();
  const Point pt = thread_point(r);
  const int c = at(k, pt.i, pt.j);
  const typename A::In f[2] = {phi, open};
  const Neighbourhood<A, kSolids ? 2 : 1> n(f, c, r, k);
  double acc = 0;
  if (pt.valid) {
    const OpenAround o = open_around<kSolids>(n);
    if (o.self != real(0)) {
      const double res = residual_point(n.at(kPhi, 0, 0), n.at(kPhi, -1, 0), n.at(kPhi, 1, 0), n.at(kPhi, 0, -1),
                                        n.at(kPhi, 0, 1), A::load(rhs, c), o.w, o.e, o.s, o.n, k);
      acc = res * res;
    }
  }
  const double s = block_sum(acc);
  if (threadIdx.x == 0 && threadIdx.y == 0) partials[block_index()] = s;
}

// x sides for rows j in [0, ny), then y sides for columns i in [-1, nx].
template <class KP>
__global__ void pressure_halo_x_kernel(KP kp, real* phi) {
  const Constants& k = kp.get();
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j < k.ny) halo_pressure_x(phi, j, k);
}
template <class KP>
__global__ void pressure_halo_y_kernel(KP kp, real* phi) {
  const Constants& k = kp.get();
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) - 1;
  if (i <= k.nx) halo_pressure_y(phi, i, k);
}

constexpr int kLineBlock = 128;

// The `vector` variant of the Jacobi sweep (no obstacles): each thread owns
// a float4 column chunk (elements 4m..4m+3 of a row, cells i = 4m-1..4m+2
// since the halo shifts the interior by one) over kVecRows rows. The rows
// j0-1 .. j0+kVecRows are loaded once as 16-byte vectors through the
// read-only path and kept in registers, so every phi row is reused by the
// rows above and below it, and all loads are issued before the first use.
// The arithmetic is jacobi_point's, lane by lane, as in every other variant.
constexpr int kVecRows = 4;
constexpr int kVecBlockX = 64, kVecBlockY = 4;

template <class KP>
__global__ void __launch_bounds__(kVecBlockX * kVecBlockY)
    jacobi_vector_kernel(KP kp, const real* __restrict__ phi, const real* __restrict__ rhs, real* __restrict__ out) {
  const Constants& k = kp.get();
  const int m = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j0 = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) * kVecRows;
  const int e0 = 4 * m;
  if (e0 >= k.pitch || j0 >= k.ny) return;
  const int P = k.pitch, P4 = k.pitch / 4;
  const float4* phi4 = reinterpret_cast<const float4*>(phi);
  const float4* rhs4 = reinterpret_cast<const float4*>(rhs);
  float4 row[kVecRows + 2], b[kVecRows];
  real west[kVecRows], east[kVecRows];
#pragma unroll
  for (int r = 0; r < kVecRows + 2; ++r) {
    const int j = j0 - 1 + r;  // cell row; element row j + 1
    row[r] = j <= k.ny ? __ldg(phi4 + (j + 1) * P4 + m) : make_float4(0, 0, 0, 0);
  }
#pragma unroll
  for (int r = 0; r < kVecRows; ++r) {
    const int j = j0 + r;
    const bool in = j < k.ny;
    b[r] = in ? __ldg(rhs4 + (j + 1) * P4 + m) : make_float4(0, 0, 0, 0);
    west[r] = in && e0 > 0 ? __ldg(phi + (j + 1) * P + e0 - 1) : real(0);
    east[r] = in && e0 + 4 < P ? __ldg(phi + (j + 1) * P + e0 + 4) : real(0);
  }
  const bool full = e0 >= 1 && e0 + 2 < k.nx;  // all four lanes interior
#pragma unroll
  for (int r = 0; r < kVecRows; ++r) {
    const int j = j0 + r;
    if (j >= k.ny) break;
    const float4 s = row[r], c = row[r + 1], n = row[r + 2];
    float4 o;
    o.x = jacobi_point(west[r], c.y, s.x, n.x, b[r].x, 1, 1, 1, 1, k);
    o.y = jacobi_point(c.x, c.z, s.y, n.y, b[r].y, 1, 1, 1, 1, k);
    o.z = jacobi_point(c.y, c.w, s.z, n.z, b[r].z, 1, 1, 1, 1, k);
    o.w = jacobi_point(c.z, east[r], s.w, n.w, b[r].w, 1, 1, 1, 1, k);
    real* dst = out + (j + 1) * P + e0;
    if (full) {
      *reinterpret_cast<float4*>(dst) = o;
    } else {
      const real lane[4] = {o.x, o.y, o.z, o.w};
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int i = e0 - 1 + q;
        if (i >= 0 && i < k.nx) dst[q] = lane[q];
      }
    }
  }
}

// The `temporal` variant: S Jacobi sweeps (S <= kTemporalSweeps) per pass
// through memory, without obstacles and with no periodic side. A warp owns
// a window of 128 elements of a row (4 per lane, float4 loads) and streams
// it upwards over `rows` output rows. Level 0 is phi as loaded; at
// every row step level t = 1..S-1 computes row s - t from the last three
// rows of level t - 1 held in registers, and level S writes row s - S. The
// east/west neighbours of a lane's chunk come from the neighbouring lanes
// by shuffle, so a level row costs two shuffles and no shared memory or
// barrier. Values S cells from a window edge are wrong after S levels, so
// the windows overlap by a halo of 4 ceil(S/4) elements on each side and
// each writes only its middle 128 - 2 halo elements.
//
// Between levels the pressure halo of sim/model/halo.hpp is reproduced in
// registers, in fill_pressure_halo's order: the ghost columns -1 and nx
// take pressure_ghost of their interior neighbour in every row, then the
// ghost rows -1 and ny take pressure_ghost of rows 0 and ny - 1 (so corners
// take the y-side value). The arithmetic is jacobi_point's, lane by lane,
// so a pass equals S single sweeps with the halo filled after each, bit for
// bit. Level 0 reads phi's halo as stored, as a single sweep does.
// Output rows per warp: long columns where the grid gives every SM enough
// warps anyway (less overlap recomputed), short ones below, so a 4096^2
// pass still has about 2000 warps for the 132 SMs.
constexpr int kTemporalRowsLong = 256, kTemporalRowsShort = 64;
constexpr long long kTemporalLongCells = 16384LL * 16384LL;
constexpr int kTemporalWarps = 4;   // warps per block, stacked in y
constexpr int kTemporalWidth = 128; // elements per warp window
constexpr unsigned kFullMask = 0xffffffffu;

constexpr int temporal_halo(int sweeps) { return 4 * ((sweeps + 3) / 4); }
constexpr int temporal_span(int sweeps) { return kTemporalWidth - 2 * temporal_halo(sweeps); }

// A lane's four values of one level row and the values west of .x and east of .w.
struct LaneRow {
  float4 c;
  real w, e;
};

__device__ __forceinline__ float4 temporal_point4(const LaneRow& s, const LaneRow& c, const LaneRow& n,
                                                  const float4& b, const Constants& k) {
  float4 o;
  o.x = jacobi_point(c.w, c.c.y, s.c.x, n.c.x, b.x, 1, 1, 1, 1, k);
  o.y = jacobi_point(c.c.x, c.c.z, s.c.y, n.c.y, b.y, 1, 1, 1, 1, k);
  o.z = jacobi_point(c.c.y, c.c.w, s.c.z, n.c.z, b.z, 1, 1, 1, 1, k);
  o.w = jacobi_point(c.c.z, c.e, s.c.w, n.c.w, b.w, 1, 1, 1, 1, k);
  return o;
}

// The neighbours of a new level row, after the x-side ghost columns (if in
// this lane) took their values: halo_pressure_x.
__device__ __forceinline__ LaneRow temporal_finish(float4 v, int e0, bool fix, const Constants& k) {
  if (fix && e0 == 0) v.x = pressure_ghost(k.bc_kind[kLeft], v.y);
  const real w = __shfl_up_sync(kFullMask, v.w, 1);
  if (fix) {
    const int q = k.nx + 1 - e0;  // lane of ghost column nx
    const int R = k.bc_kind[kRight];
    if (q == 0) v.x = pressure_ghost(R, w);
    else if (q == 1) v.y = pressure_ghost(R, v.x);
    else if (q == 2) v.z = pressure_ghost(R, v.y);
    else if (q == 3) v.w = pressure_ghost(R, v.z);
  }
  const real e = __shfl_down_sync(kFullMask, v.x, 1);
  return {v, w, e};
}

// A ghost row from its interior neighbour row: halo_pressure_y.
__device__ __forceinline__ LaneRow temporal_ghost_row(int kind, const LaneRow& r) {
  return {make_float4(pressure_ghost(kind, r.c.x), pressure_ghost(kind, r.c.y), pressure_ghost(kind, r.c.z),
                      pressure_ghost(kind, r.c.w)),
          pressure_ghost(kind, r.w), pressure_ghost(kind, r.e)};
}

template <int S, class KP>
__global__ void __launch_bounds__(32 * kTemporalWarps)
    jacobi_temporal_kernel(KP kp, const real* __restrict__ phi, const real* __restrict__ rhs, real* __restrict__ out,
                           int rows) {
  static_assert(S >= 1 && S <= 8, "sweeps per pass");
  constexpr int kHalo = temporal_halo(S), kSpan = temporal_span(S);
  const Constants& k = kp.get();
  const int lane = static_cast<int>(threadIdx.x);
  const int first = static_cast<int>(blockIdx.x) * kSpan;  // first element written by this warp
  const int e0 = first - kHalo + 4 * lane;
  const int jb = (static_cast<int>(blockIdx.y) * kTemporalWarps + static_cast<int>(threadIdx.y)) * rows;
  if (jb >= k.ny) return;  // the whole warp
  const int P = k.pitch, ny = k.ny, nx = k.nx;
  const bool in_row = e0 >= 0 && e0 < P;
  auto load = [&](const real* a, int j) {  // cell row j
    return in_row && j >= -1 && j <= ny ? __ldg(reinterpret_cast<const float4*>(a + (j + 1) * P + e0))
                                        : make_float4(0, 0, 0, 0);
  };
  const int lo = max(first, 1), hi = min(first + kSpan - 1, nx);  // elements written
  const bool full = e0 >= lo && e0 + 3 <= hi;
  const int bottom = k.bc_kind[kBottom], top = k.bc_kind[kTop];

  LaneRow A[S], B[S], C[S];  // rows r - 2, r - 1, r of level t (r its newest)
  float4 R[S + 1];           // R[t]: rhs row s - t
#pragma unroll
  for (int t = 0; t < S; ++t) {
    A[t] = B[t] = C[t] = LaneRow{make_float4(0, 0, 0, 0), 0, 0};
  }
#pragma unroll
  for (int t = 0; t <= S; ++t) R[t] = make_float4(0, 0, 0, 0);

  const int s0 = jb - S;  // level t is right from row s0 + t on
  float4 next_phi = load(phi, s0), next_rhs = load(rhs, s0);
#pragma unroll 3
  for (int it = 0; it < rows + 2 * S; ++it) {
    const int s = s0 + it;
    const float4 cur = next_phi;
#pragma unroll
    for (int t = S; t > 0; --t) R[t] = R[t - 1];
    R[0] = next_rhs;
    next_phi = load(phi, s + 1);
    next_rhs = load(rhs, s + 1);
    A[0] = B[0];
    B[0] = C[0];
    C[0] = temporal_finish(cur, e0, false, k);
#pragma unroll
    for (int t = 1; t < S; ++t) {
      const int r = s - t;
      const LaneRow n = r == ny ? temporal_ghost_row(top, C[t])
                                : temporal_finish(temporal_point4(A[t - 1], B[t - 1], C[t - 1], R[t], k), e0, true, k);
      A[t] = B[t];
      B[t] = C[t];
      C[t] = n;
      if (r == 0) B[t] = temporal_ghost_row(bottom, n);
    }
    const int r = s - S;
    if (r >= jb && r < ny && r < jb + rows) {
      const float4 o = temporal_point4(A[S - 1], B[S - 1], C[S - 1], R[S], k);
      real* dst = out + (r + 1) * P + e0;
      if (full) {
        *reinterpret_cast<float4*>(dst) = o;
      } else {
        const real v[4] = {o.x, o.y, o.z, o.w};
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (e0 + q >= lo && e0 + q <= hi) dst[q] = v[q];
      }
    }
  }
}

template <bool kSolids>
constexpr int phi_fields() {
  return kSolids ? 2 : 1;
}

}  // namespace

void upload_pressure_constants(const Constants& c, cudaStream_t s) { upload_unit_constants(c, s); }
void copy_pressure_dt(const Constants* k_dev, cudaStream_t s) { copy_unit_dt(k_dev, s); }

void compute_rhs(const Exec& e, const StencilOpts& o, const real* u, const real* v, const real* open, real* rhs,
                 double* partials) {
  const Region r = cell_region(e);
  with_stencil(e, o, [&](auto a, auto kp, auto solids) {
    using A = decltype(a);
    rhs_kernel<A, decltype(kp), decltype(solids)::value>
        <<<grid_dim(r, o), block_dim(o), tile_bytes<A>(2, o), e.stream>>>(kp, r, u, v, open, rhs, partials);
    SIM_CUDA_CHECK_LAUNCH("rhs_kernel");
  });
}

void fill_pressure_halo(const Exec& e, real* phi) {
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    pressure_halo_x_kernel<<<(e.ny + kLineBlock - 1) / kLineBlock, kLineBlock, 0, e.stream>>>(kp, phi);
    SIM_CUDA_CHECK_LAUNCH("pressure_halo_x_kernel");
    pressure_halo_y_kernel<<<(e.nx + 2 + kLineBlock - 1) / kLineBlock, kLineBlock, 0, e.stream>>>(kp, phi);
    SIM_CUDA_CHECK_LAUNCH("pressure_halo_y_kernel");
  });
}

void jacobi_sweep(const Exec& e, const StencilOpts& o, const real* phi, const real* rhs, const real* open,
                  real* out) {
  if ((o.variant == Stencil::vector || o.variant == Stencil::temporal) && !o.solids) {
    with_constants(e.constants, e.k_dev, [&](auto kp) {
      const dim3 block(kVecBlockX, kVecBlockY);
      const dim3 grid((e.pitch / 4 + kVecBlockX - 1) / kVecBlockX,
                      (e.ny + kVecBlockY * kVecRows - 1) / (kVecBlockY * kVecRows));
      jacobi_vector_kernel<<<grid, block, 0, e.stream>>>(kp, phi, rhs, out);
      SIM_CUDA_CHECK_LAUNCH("jacobi_vector_kernel");
    });
    return;
  }
  const Region r = cell_region(e);
  with_stencil(e, o, [&](auto a, auto kp, auto solids) {
    using A = decltype(a);
    constexpr bool kSolids = decltype(solids)::value;
    jacobi_kernel<A, decltype(kp), kSolids><<<grid_dim(r, o), block_dim(o), tile_bytes<A>(phi_fields<kSolids>(), o),
                                              e.stream>>>(kp, r, phi, rhs, open, out);
    SIM_CUDA_CHECK_LAUNCH("jacobi_kernel");
  });
}

void jacobi_sweeps_temporal(const Exec& e, const real* phi, const real* rhs, real* out, int sweeps) {
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    auto launch = [&](auto depth) {
      constexpr int S = decltype(depth)::value;
      const int rows = static_cast<long long>(e.nx) * e.ny >= kTemporalLongCells ? kTemporalRowsLong
                                                                                 : kTemporalRowsShort;
      const dim3 block(32, kTemporalWarps);
      const dim3 grid(e.nx / temporal_span(S) + 1, (e.ny + kTemporalWarps * rows - 1) / (kTemporalWarps * rows));
      jacobi_temporal_kernel<S><<<grid, block, 0, e.stream>>>(kp, phi, rhs, out, rows);
      SIM_CUDA_CHECK_LAUNCH("jacobi_temporal_kernel");
    };
    static_assert(kTemporalSweeps == 4, "one launch per depth below");
    switch (sweeps) {
      case 1: launch(std::integral_constant<int, 1>{}); break;
      case 2: launch(std::integral_constant<int, 2>{}); break;
      case 3: launch(std::integral_constant<int, 3>{}); break;
      case 4: launch(std::integral_constant<int, 4>{}); break;
      default: throw std::invalid_argument("jacobi_sweeps_temporal: sweeps must be 1.." + std::to_string(kTemporalSweeps));
    }
  });
}

void sor_sweep(const Exec& e, const StencilOpts& o, real* phi, const real* rhs, const real* open, int color) {
  const Region r = cell_region(e);
  with_stencil(e, o, [&](auto a, auto kp, auto solids) {
    using A = decltype(a);
    constexpr bool kSolids = decltype(solids)::value;
    sor_kernel<A, decltype(kp), kSolids><<<grid_dim(r, o), block_dim(o), tile_bytes<A>(phi_fields<kSolids>(), o),
                                           e.stream>>>(kp, r, phi, rhs, open, phi, color);
    SIM_CUDA_CHECK_LAUNCH("sor_kernel");
  });
}

void residual(const Exec& e, const StencilOpts& o, const real* phi, const real* rhs, const real* open,
              double* partials) {
  const Region r = cell_region(e);
  with_stencil(e, o, [&](auto a, auto kp, auto solids) {
    using A = decltype(a);
    constexpr bool kSolids = decltype(solids)::value;
    residual_kernel<A, decltype(kp), kSolids><<<grid_dim(r, o), block_dim(o),
                                                tile_bytes<A>(phi_fields<kSolids>(), o), e.stream>>>(kp, r, phi, rhs,
                                                                                                    open, partials);
    SIM_CUDA_CHECK_LAUNCH("residual_kernel");
  });
}

}  // namespace sim::cuda
