// SPDX-License-Identifier: MIT
// The V-cycle's kernels in float32 on the levels (cuda/poisson_levels.cuh):
// red-black smoothing (single half-sweeps, and pairs in one pass), the
// restriction of the residual (whole, or over ranks from an array), the
// prolongation, and the block-resident tail of the coarse levels.
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/check.hpp"
#include "cuda/poisson_kernels.hpp"
#include "cuda/poisson_levels.cuh"
#include "sim/model/faces.hpp"
#include "sim/model/fluid_physics.hpp"

namespace sim::cuda {
namespace {

// --- V-cycle kernels ----------------------------------------------------------

// One red-black half-sweep: thread (t, j) updates cell i = 2t + ((j + color) & 1),
// the t-th cell of row j with (i + j) % 2 == color. Its four neighbours have
// the other colour and are not written by this launch; e[c] itself is
// written by this thread only.
__global__ void smooth_kernel(DeviceLevel l, Ghosts g, int color, int fuse_halo) {
  const int j = l.j_lo + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  const int i = 2 * static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) + ((j + color) & 1);
  if (j >= l.j_hi || i >= l.nx) return;
  const int P = l.pitch, c = (i + 1) + (j + 1) * P;
  const Coef k = coef_at(l, c, bits_at(l, c));
  const float val =
      poisson_relax_point<float>(l.e[c - 1], l.e[c + 1], l.e[c - P], l.e[c + P], __ldg(l.f + c), k.w, k.e, k.s, k.n);
  l.e[c] = val;
  if (fuse_halo) halo_from_cell(l.e, i, j, l.nx, l.ny, P, g, val);
}

// A red-black pair of half-sweeps (colour c0, then the other) in one pass
// through memory, for levels without a wrapped side: a block loads e of its
// 32 x 32 tile with a ring of 2 from `ein` into shared memory, updates the
// c0 cells of the tile and a ring of 1 there, refreshes the ghost cells of
// that ring by the ghost rules, updates the other colour on the tile, and
// writes the whole tile (and the halo cells derived from it) to `eout`.
// Another array, because a neighbouring block must read its ring from the
// values before the pair. Per point the arithmetic of smooth_kernel, and
// every value it reads is the one the two launches would read: the result
// is the same bit for bit.
constexpr int kPairTile = 32;              // tile side in cells
constexpr int kPairSide = kPairTile + 4;   // with the ring of 2
constexpr int kPairThreads = 256;          // 32 x 8

__global__ void __launch_bounds__(kPairThreads) smooth_pair_kernel(DeviceLevel l, const float* __restrict__ ein,
                                                                    float* __restrict__ eout, Ghosts g, int c0) {
  __shared__ float E[kPairSide][kPairSide];
  const int i0 = static_cast<int>(blockIdx.x) * kPairTile - 2, j0 = static_cast<int>(blockIdx.y) * kPairTile - 2;
  const int tid = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  const int P = l.pitch, nx = l.nx, ny = l.ny;
  for (int q = tid; q < kPairSide * kPairSide; q += kPairThreads) {
    const int a = q % kPairSide, b = q / kPairSide, i = i0 + a, j = j0 + b;
    E[b][a] = (i >= -1 && i <= nx && j >= -1 && j <= ny) ? ein[(i + 1) + (j + 1) * P] : 0.f;
  }
  __syncthreads();
  constexpr int kRing1 = kPairTile + 2;
  for (int q = tid; q < kRing1 * kRing1; q += kPairThreads) {
    const int a = q % kRing1 + 1, b = q / kRing1 + 1, i = i0 + a, j = j0 + b;
    if (i < 0 || j < 0 || i >= nx || j >= ny || ((i + j) & 1) != c0) continue;
    const int c = (i + 1) + (j + 1) * P;
    const Coef k = coef_at(l, c, bits_at(l, c));
    E[b][a] = poisson_relax_point<float>(E[b][a - 1], E[b][a + 1], E[b - 1][a], E[b + 1][a], __ldg(l.f + c), k.w, k.e,
                                         k.s, k.n);
  }
  __syncthreads();
  for (int q = tid; q < kRing1 * kRing1; q += kPairThreads) {
    const int a = q % kRing1 + 1, b = q / kRing1 + 1, i = i0 + a, j = j0 + b;
    const bool row = j >= 0 && j < ny, col = i >= 0 && i < nx;
    if (i == -1 && row) E[b][a] = ghost_value(g.rule[kLeft], E[b][a + 1], E[b][a + 1]);
    else if (i == nx && row) E[b][a] = ghost_value(g.rule[kRight], E[b][a - 1], E[b][a - 1]);
    else if (j == -1 && col) E[b][a] = ghost_value(g.rule[kBottom], E[b + 1][a], E[b + 1][a]);
    else if (j == ny && col) E[b][a] = ghost_value(g.rule[kTop], E[b - 1][a], E[b - 1][a]);
  }
  __syncthreads();
  for (int q = tid; q < kPairTile * kPairTile; q += kPairThreads) {
    const int a = q % kPairTile + 2, b = q / kPairTile + 2, i = i0 + a, j = j0 + b;
    if (i >= nx || j >= ny) continue;
    const int c = (i + 1) + (j + 1) * P;
    float val = E[b][a];
    if (((i + j) & 1) != c0) {
      const Coef k = coef_at(l, c, bits_at(l, c));
      val = poisson_relax_point<float>(E[b][a - 1], E[b][a + 1], E[b - 1][a], E[b + 1][a], __ldg(l.f + c), k.w, k.e,
                                       k.s, k.n);
    }
    eout[c] = val;
    halo_from_cell(eout, i, j, nx, ny, P, g, val);
  }
}

// f = (float) r and the first half-sweep from e = 0: every cell written
// (the other colour with 0), halo included; e is not read.
__global__ void load_smooth_kernel(DeviceLevel l, Ghosts g, const double* __restrict__ r, int color) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = l.j_lo + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= l.nx || j >= l.j_hi) return;
  const int c = (i + 1) + (j + 1) * l.pitch;
  const float f = static_cast<float>(__ldg(r + c));
  l.f[c] = f;
  float val = 0.f;
  if (((i + j) & 1) == color) {
    const Coef k = coef_at(l, c, bits_at(l, c));
    val = poisson_relax_point<float>(0.f, 0.f, 0.f, 0.f, f, k.w, k.e, k.s, k.n);
  }
  l.e[c] = val;
  halo_from_cell(l.e, i, j, l.nx, l.ny, l.pitch, g, val);
}

// f = (float) r, e = 0 over the whole array (padding and halo included).
__global__ void load_kernel(float* f, float* e, const double* __restrict__ r, int n) {
  const int q = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (q >= n) return;
  f[q] = static_cast<float>(__ldg(r + q));
  e[q] = 0.f;
}

// Coarse element (I, J) of the whole coarse array, halo included: e = 0;
// for a cell, f = sum of the fine residuals f - A e of its children
// (2I + a, 2J + b) inside the fine level, in the order (0,0), (1,0), (0,1), (1,1).
// Plain loads: the tail kernel wrote fe and ff earlier in the same launch.
__device__ __forceinline__ void restrict_point(const DeviceLevel& fl, const DeviceLevel& cl, int I, int J) {
  const int cc = (I + 1) + (J + 1) * cl.pitch;
  cl.e[cc] = 0.f;
  if (I < 0 || J < 0 || I >= cl.nx || J >= cl.ny) return;
  const int P = fl.pitch;
  const float* fe = fl.e;
  const float* ff = fl.f;
  float sum = 0.f;
#pragma unroll
  for (int b = 0; b < 2; ++b) {
    const int j = 2 * J + b;
    if (j >= fl.ny) break;
#pragma unroll
    for (int a = 0; a < 2; ++a) {
      const int i = 2 * I + a;
      if (i >= fl.nx) break;
      const int c = (i + 1) + (j + 1) * P;
      const Coef k = coef_at(fl, c, bits_at(fl, c));
      const float ax = poisson_apply_point<float>(fe[c], fe[c - 1], fe[c + 1], fe[c - P], fe[c + P], k.w, k.e, k.s, k.n);
      sum += ff[c] - ax;
    }
  }
  cl.f[cc] = sum;
}

__global__ void restrict_kernel(DeviceLevel fl, DeviceLevel cl) {
  const int I = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) - 1;
  const int J = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) - 1;
  if (I > cl.nx || J > cl.ny) return;
  restrict_point(fl, cl, I, J);
}

// Over ranks the restriction reads the fine residual from an array, since
// some children of a rank's coarse rows are another rank's: res = f - A e on
// the fine level's own rows (restrict_point's arithmetic per cell), then,
// once the children others own have been copied in, every coarse element
// e = 0 and f of the own coarse rows = the sum of the children's res, in
// restrict_point's order: the same bits.
__global__ void residual_rows_kernel(DeviceLevel fl, float* __restrict__ res) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = fl.j_lo + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= fl.nx || j >= fl.j_hi) return;
  const int P = fl.pitch, c = (i + 1) + (j + 1) * P;
  const float* fe = fl.e;
  const Coef k = coef_at(fl, c, bits_at(fl, c));
  const float ax = poisson_apply_point<float>(fe[c], fe[c - 1], fe[c + 1], fe[c - P], fe[c + P], k.w, k.e, k.s, k.n);
  res[c] = fl.f[c] - ax;
}

__global__ void restrict_rows_kernel(DeviceLevel fl, DeviceLevel cl, const float* __restrict__ res) {
  const int I = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) - 1;
  const int J = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) - 1;
  if (I > cl.nx || J > cl.ny) return;
  const int cc = (I + 1) + (J + 1) * cl.pitch;
  cl.e[cc] = 0.f;
  if (I < 0 || J < cl.j_lo || I >= cl.nx || J >= cl.j_hi) return;
  float sum = 0.f;
#pragma unroll
  for (int b = 0; b < 2; ++b) {
    const int j = 2 * J + b;
    if (j >= fl.ny) break;
#pragma unroll
    for (int a = 0; a < 2; ++a) {
      const int i = 2 * I + a;
      if (i >= fl.nx) break;
      sum += res[(i + 1) + (j + 1) * fl.pitch];
    }
  }
  cl.f[cc] = sum;
}

// e += e_parent on open cells (any face bit); the halo from the new values.
__global__ void prolong_kernel(DeviceLevel fl, DeviceLevel cl, Ghosts g) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = fl.j_lo + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= fl.nx || j >= fl.j_hi) return;
  const int c = (i + 1) + (j + 1) * fl.pitch;
  float val = fl.e[c];
  if (__ldg(fl.faces + c) != 0) val += __ldg(cl.e + (i / 2 + 1) + (j / 2 + 1) * cl.pitch);
  fl.e[c] = val;
  halo_from_cell(fl.e, i, j, fl.nx, fl.ny, fl.pitch, g, val);
}

// The tail of the V-cycle by one block (TailProgram): each operation over
// its level with a block-stride loop, the full halo (x sides, barrier, y
// sides) after a half-sweep or a prolongation, and a barrier after every
// operation; barriers make each write visible to the next phase
// (block-scope ordering of global memory under __syncthreads). Loads are
// plain, not __ldg: e and f change within the launch.
constexpr int kTailThreads = 1024;

__device__ void block_halo(const DeviceLevel& l, const Ghosts& g) {
  const int T = static_cast<int>(blockDim.x), tid = static_cast<int>(threadIdx.x);
  for (int j = tid; j < l.ny; j += T) poisson_halo_x(l.e, j, l.nx, l.pitch, g.rule);
  __syncthreads();
  for (int i = tid - 1; i <= l.nx; i += T) poisson_halo_y(l.e, i, l.ny, l.pitch, g.rule);
}

__global__ void __launch_bounds__(kTailThreads) tail_kernel(TailLevels L, Ghosts g, TailProgram prog,
                                                            const double* __restrict__ r) {
  const int T = static_cast<int>(blockDim.x), tid = static_cast<int>(threadIdx.x);
  // The current level in registers, reloaded only when the level changes
  // (the coarse solve is hundreds of operations on one level).
  int cur = 0;
  DeviceLevel l = L.l[0];
  for (int q = 0; q < prog.count; ++q) {
    const unsigned op = prog.op[q];
    const int lv = static_cast<int>(op & 15u), kind = static_cast<int>((op >> 4) & 3u);
    const int color = static_cast<int>((op >> 6) & 1u);
    if (lv != cur) {
      l = L.l[lv];
      cur = lv;
    }
    const int P = l.pitch;
    if (kind == kTailLoad) {  // mg_load
      const int n = l.pitch * l.rows;
      for (int c = tid; c < n; c += T) {
        l.f[c] = static_cast<float>(r[c]);
        l.e[c] = 0.f;
      }
    } else if (kind == kTailSmooth) {  // mg_smooth, then mg_halo
      const int half = (l.nx + 1) / 2, cells = half * l.ny;
      for (int t = tid; t < cells; t += T) {
        const int j = t / half;
        const int i = 2 * (t % half) + ((j + color) & 1);
        if (i >= l.nx) continue;
        const int c = (i + 1) + (j + 1) * P;
        const Coef k = coef_at(l, c, bits_at(l, c));
        l.e[c] = poisson_relax_point<float>(l.e[c - 1], l.e[c + 1], l.e[c - P], l.e[c + P], l.f[c], k.w, k.e, k.s, k.n);
      }
      __syncthreads();
      block_halo(l, g);
    } else if (kind == kTailRestrict) {  // mg_restrict from l to the next level
      const DeviceLevel& cl = L.l[lv + 1];
      const int w = cl.nx + 2, n = w * (cl.ny + 2);
      for (int t = tid; t < n; t += T) restrict_point(l, cl, t % w - 1, t / w - 1);
    } else {  // mg_prolong to l from the next level
      const DeviceLevel& cl = L.l[lv + 1];
      const int cells = l.nx * l.ny;
      for (int t = tid; t < cells; t += T) {
        const int i = t % l.nx, j = t / l.nx;
        const int c = (i + 1) + (j + 1) * P;
        float val = l.e[c];
        if (__ldg(l.faces + c) != 0) val += cl.e[(i / 2 + 1) + (j / 2 + 1) * cl.pitch];
        l.e[c] = val;
      }
      __syncthreads();
      block_halo(l, g);
    }
    __syncthreads();
  }
}

}  // namespace

bool smooth_halo_races(const DeviceLevel& l, const Ghosts& g) {
  const bool wx = is_wrap(g.rule[kLeft]) || is_wrap(g.rule[kRight]);
  const bool wy = is_wrap(g.rule[kBottom]) || is_wrap(g.rule[kTop]);
  return (wx && (l.nx & 1)) || (wy && (l.ny & 1));
}

void mg_load(cudaStream_t s, const DeviceLevel& l0, const double* r) {
  const int n = level_size(l0);
  load_kernel<<<flat_blocks(n), kFlatBlock, 0, s>>>(l0.f, l0.e, r, n);
  SIM_CUDA_CHECK_LAUNCH("load_kernel");
}

void mg_load_smooth(cudaStream_t s, const DeviceLevel& l0, const Ghosts& g, const double* r, int color) {
  if (own_rows(l0) == 0) return;
  const dim3 b = level_block(l0.nx, own_rows(l0));
  load_smooth_kernel<<<level_grid(l0.nx, own_rows(l0), b), b, 0, s>>>(l0, g, r, color);
  SIM_CUDA_CHECK_LAUNCH("load_smooth_kernel");
}

void mg_smooth(cudaStream_t s, const DeviceLevel& l, const Ghosts& g, int color, bool fuse_halo) {
  if (own_rows(l) == 0) return;
  const int half = (l.nx + 1) / 2;
  const dim3 b = level_block(half, own_rows(l));
  smooth_kernel<<<level_grid(half, own_rows(l), b), b, 0, s>>>(l, g, color, fuse_halo ? 1 : 0);
  SIM_CUDA_CHECK_LAUNCH("smooth_kernel");
}

void mg_smooth_pair(cudaStream_t s, const DeviceLevel& l, const Ghosts& g, float* out, int first_color) {
  const dim3 b(32, kPairThreads / 32);
  const dim3 grid((l.nx + kPairTile - 1) / kPairTile, (l.ny + kPairTile - 1) / kPairTile);
  smooth_pair_kernel<<<grid, b, 0, s>>>(l, l.e, out, g, first_color);
  SIM_CUDA_CHECK_LAUNCH("smooth_pair_kernel");
}

void mg_halo(cudaStream_t s, const DeviceLevel& l, const Ghosts& g) { full_halo(s, l.e, l.nx, l.ny, l.pitch, g); }

void mg_restrict(cudaStream_t s, const DeviceLevel& fine, const DeviceLevel& coarse) {
  const dim3 b = level_block(coarse.nx + 2, coarse.ny + 2);
  restrict_kernel<<<level_grid(coarse.nx + 2, coarse.ny + 2, b), b, 0, s>>>(fine, coarse);
  SIM_CUDA_CHECK_LAUNCH("restrict_kernel");
}

void mg_prolong(cudaStream_t s, const DeviceLevel& fine, const DeviceLevel& coarse, const Ghosts& g) {
  if (own_rows(fine) == 0) return;
  const dim3 b = level_block(fine.nx, own_rows(fine));
  prolong_kernel<<<level_grid(fine.nx, own_rows(fine), b), b, 0, s>>>(fine, coarse, g);
  SIM_CUDA_CHECK_LAUNCH("prolong_kernel");
}

void mg_residual_rows(cudaStream_t s, const DeviceLevel& fine, float* res) {
  if (own_rows(fine) == 0) return;
  const dim3 b = level_block(fine.nx, own_rows(fine));
  residual_rows_kernel<<<level_grid(fine.nx, own_rows(fine), b), b, 0, s>>>(fine, res);
  SIM_CUDA_CHECK_LAUNCH("residual_rows_kernel");
}

void mg_restrict_rows(cudaStream_t s, const DeviceLevel& fine, const DeviceLevel& coarse, const float* res) {
  const dim3 b = level_block(coarse.nx + 2, coarse.ny + 2);
  restrict_rows_kernel<<<level_grid(coarse.nx + 2, coarse.ny + 2, b), b, 0, s>>>(fine, coarse, res);
  SIM_CUDA_CHECK_LAUNCH("restrict_rows_kernel");
}

void mg_tail(cudaStream_t s, const TailLevels& levels, const Ghosts& g, const TailProgram& prog, const double* r) {
  if (prog.count == 0) return;
  const DeviceLevel& l = levels.l[0];
  const int work = (l.nx + 2) * (l.ny + 2);
  const int threads = std::min(kTailThreads, (work / 2 + 31) / 32 * 32);
  tail_kernel<<<1, std::max(threads, 32), 0, s>>>(levels, g, prog, r);
  SIM_CUDA_CHECK_LAUNCH("tail_kernel");
}

}  // namespace sim::cuda
