// SPDX-License-Identifier: MIT
// The levels of the multigrid-preconditioned conjugate gradients
// (sim/model/poisson.hpp, sim/model/pressure.cpp), shared by its kernels: the
// V-cycle's in float32 (cuda/multigrid_kernels.cu: red-black smoothing,
// restriction, prolongation, the one-block tail) and the float64 Krylov
// updates with their dot products on level 0 (cuda/pcg_kernels.cu).
//
// Per point each kernel calls the SIM_HD functions of sim/model/poisson.hpp, so
// the arithmetic is the CPU's. Every reduction is deterministic: each block
// writes one partial sum (a fixed shuffle tree per warp, then the warps in
// order), and one block sums the partials in a fixed order: a run is
// reproducible bit for bit. No atomics.
//
// Halos: the smoothing, prolongation and direction kernels write the halo
// cells derived from the cells they update (a copy or negation of a
// boundary cell, or the wrapped value), so no separate halo launch follows;
// the corners are left alone (no 5-point stencil reads them). Where that
// would race (a wrap side with an odd count: both ends of a row share a
// colour) the caller runs mg_halo instead.
#pragma once
#include <cuda_runtime.h>

#include "cuda/check.hpp"
#include "cuda/poisson_kernels.hpp"
#include "sim/model/faces.hpp"
#include "sim/model/fluid_physics.hpp"

namespace sim::cuda {
namespace {

// --- coefficients ----------------------------------------------------------------

struct Coef {
  float w, e, s, n;
};

// The four face coefficients of the cell at index c: from the face bits on a
// uniform level, else from the arrays (cx at c and c + 1, cy at c and c + pitch).
__device__ __forceinline__ Coef coef_at(const DeviceLevel& l, int c, uint8_t bits) {
  if (l.uniform)
    return {(bits & kFaceW) ? l.cx_value : 0.f, (bits & kFaceE) ? l.cx_value : 0.f,
            (bits & kFaceS) ? l.cy_value : 0.f, (bits & kFaceN) ? l.cy_value : 0.f};
  return {__ldg(l.cx + c), __ldg(l.cx + c + 1), __ldg(l.cy + c), __ldg(l.cy + c + l.pitch)};
}
__device__ __forceinline__ uint8_t bits_at(const DeviceLevel& l, int c) { return l.uniform ? __ldg(l.faces + c) : 0; }

// --- halos -----------------------------------------------------------------------

SIM_HD bool is_wrap(GhostRule r) { return r == GhostRule::wrap; }

// The halo cells that take their value from cell (i, j), which now holds
// `val` (sim/model/poisson.hpp: poisson_halo_x / poisson_halo_y), corners excluded.
template <class T>
__device__ __forceinline__ void halo_from_cell(T* p, int i, int j, int nx, int ny, int pitch, const Ghosts& g, T val) {
  const int c = (i + 1) + (j + 1) * pitch;
  if (i == 0) {
    if (!is_wrap(g.rule[kLeft])) p[c - 1] = ghost_value(g.rule[kLeft], val, val);
    if (is_wrap(g.rule[kRight])) p[c + nx] = val;  // halo (nx, j) = cell (0, j)
  }
  if (i == nx - 1) {
    if (!is_wrap(g.rule[kRight])) p[c + 1] = ghost_value(g.rule[kRight], val, val);
    if (is_wrap(g.rule[kLeft])) p[c - nx] = val;  // halo (-1, j) = cell (nx - 1, j)
  }
  if (j == 0) {
    if (!is_wrap(g.rule[kBottom])) p[c - pitch] = ghost_value(g.rule[kBottom], val, val);
    if (is_wrap(g.rule[kTop])) p[c + ny * pitch] = val;
  }
  if (j == ny - 1) {
    if (!is_wrap(g.rule[kTop])) p[c + pitch] = ghost_value(g.rule[kTop], val, val);
    if (is_wrap(g.rule[kBottom])) p[c - ny * pitch] = val;
  }
}

// The full halo (poisson_halo_x for rows, then poisson_halo_y for columns
// -1..nx including the corners), as two launches.
template <class T>
__global__ void halo_x_kernel(T* p, int nx, int ny, int pitch, Ghosts g) {
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j < ny) poisson_halo_x(p, j, nx, pitch, g.rule);
}
template <class T>
__global__ void halo_y_kernel(T* p, int nx, int ny, int pitch, Ghosts g) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) - 1;
  if (i <= nx) poisson_halo_y(p, i, ny, pitch, g.rule);
}

// Both in one block where the rows and columns fit it: the rows, a
// barrier, then the columns (the order of the two launches).
template <class T>
__global__ void halo_kernel(T* p, int nx, int ny, int pitch, Ghosts g) {
  for (int j = static_cast<int>(threadIdx.x); j < ny; j += static_cast<int>(blockDim.x))
    poisson_halo_x(p, j, nx, pitch, g.rule);
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x) - 1; i <= nx; i += static_cast<int>(blockDim.x))
    poisson_halo_y(p, i, ny, pitch, g.rule);
}

constexpr int kLineBlock = 128;
constexpr int kOneBlockLines = 1024;

template <class T>
void full_halo(cudaStream_t s, T* p, int nx, int ny, int pitch, const Ghosts& g) {
  if (ny <= kOneBlockLines && nx + 2 <= kOneBlockLines) {
    const int lines = ny > nx + 2 ? ny : nx + 2;
    halo_kernel<T><<<1, (lines + 31) / 32 * 32, 0, s>>>(p, nx, ny, pitch, g);
    SIM_CUDA_CHECK_LAUNCH("halo_kernel");
    return;
  }
  halo_x_kernel<T><<<(ny + kLineBlock - 1) / kLineBlock, kLineBlock, 0, s>>>(p, nx, ny, pitch, g);
  SIM_CUDA_CHECK_LAUNCH("halo_x_kernel");
  halo_y_kernel<T><<<(nx + 2 + kLineBlock - 1) / kLineBlock, kLineBlock, 0, s>>>(p, nx, ny, pitch, g);
  SIM_CUDA_CHECK_LAUNCH("halo_y_kernel");
}

// --- launch geometry of the level kernels --------------------------------------

// Blocks of up to 256 threads, narrower for small levels so a launch over a
// coarse level does not start mostly idle threads.
dim3 level_block(int ni, int nj) {
  const int bx = ni >= 32 ? 32 : ni >= 16 ? 16 : 8;
  int by = 1;
  while (by * bx < 256 && by < nj) by *= 2;
  return dim3(bx, by);
}
dim3 level_grid(int ni, int nj, dim3 b) {
  return dim3((ni + static_cast<int>(b.x) - 1) / static_cast<int>(b.x), (nj + static_cast<int>(b.y) - 1) / static_cast<int>(b.y));
}

constexpr int kFlatBlock = 256;
int flat_blocks(int n) { return (n + kFlatBlock - 1) / kFlatBlock; }
int level_size(const DeviceLevel& l) { return l.pitch * l.rows; }
int own_rows(const DeviceLevel& l) { return l.j_hi - l.j_lo; }

}  // namespace
}  // namespace sim::cuda
