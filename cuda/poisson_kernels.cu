// Kernels of the multigrid-preconditioned conjugate gradients
// (sim/model/poisson.hpp, sim/model/pressure.cpp): red-black smoothing, restriction of
// the residual, prolongation and a one-block coarse solve in float32 on the
// levels; the float64 Krylov updates on level 0 with their dot products.
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
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/block_sum.cuh"
#include "cuda/check.hpp"
#include "cuda/poisson_kernels.hpp"
#include "sim/model/faces.hpp"
#include "sim/model/fluid_physics.hpp"

namespace sim::cuda {
namespace {

static_assert(sizeof(Constants) < 4000, "Constants is passed by value as a kernel parameter");

// --- reductions ---------------------------------------------------------------

constexpr int kRedBX = 32, kRedBY = 8, kRedRows = 4;  // a block covers 32 x 32 cells
constexpr int kFinalThreads = 1024;


__device__ __forceinline__ void write_partial(double acc, double* partials) {
  const double s = block_sum(acc);
  if (threadIdx.x == 0 && threadIdx.y == 0) partials[blockIdx.y * gridDim.x + blockIdx.x] = s;
}

dim3 red_grid(int nx, int ny) {
  return dim3((nx + kRedBX - 1) / kRedBX, (ny + kRedBY * kRedRows - 1) / (kRedBY * kRedRows));
}

// Cells (i, j) of thread row r of a reduction block.
__device__ __forceinline__ int red_i() { return static_cast<int>(blockIdx.x * kRedBX + threadIdx.x); }
__device__ __forceinline__ int red_j(int r) {
  return static_cast<int>(blockIdx.y * (kRedBY * kRedRows) + r * kRedBY + threadIdx.y);
}

// Thread t sums partials t, t + T, t + 2T, ... in order; then the block tree.
__global__ void __launch_bounds__(kFinalThreads) final_sum_kernel(const double* partials, int n, double* out,
                                                                  double divide_by) {
  double acc = 0;
  for (int q = static_cast<int>(threadIdx.x); q < n; q += kFinalThreads) acc += partials[q];
  const double s = block_sum(acc);
  if (threadIdx.x == 0) {
    out[0] = s;
    if (divide_by > 0) out[1] = s / divide_by;
  }
}

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

// --- conjugate-gradient kernels (float64, level 0) ------------------------------

__global__ void __launch_bounds__(kRedBX* kRedBY) sum_rhs_kernel(DeviceLevel l, const float* __restrict__ rhs,
                                                                 double* partials) {
  double acc = 0;
  const int i = red_i();
#pragma unroll
  for (int r = 0; r < kRedRows; ++r) {
    const int j = l.j_lo + red_j(r);
    if (i < l.nx && j < l.j_hi) acc += static_cast<double>(__ldg(rhs + (i + 1) + (j + 1) * l.pitch));
  }
  write_partial(acc, partials);
}

// b of the solve at cell c: rhs less the mean on open cells (singular), 0 on solids.
__device__ __forceinline__ double rhs_value(const float* rhs, const float* open, const double* mean, int c) {
  if (__ldg(open + c) == 0.f) return 0.0;
  const double b = static_cast<double>(__ldg(rhs + c));
  return mean ? b - *mean : b;
}

__global__ void __launch_bounds__(kRedBX* kRedBY) start_kernel(DeviceLevel l, const float* __restrict__ rhs,
                                                               const float* __restrict__ open,
                                                               const double* __restrict__ mean, double* r,
                                                               double* partials) {
  double acc = 0;
  const int i = red_i();
#pragma unroll
  for (int q = 0; q < kRedRows; ++q) {
    const int j = l.j_lo + red_j(q);
    if (i < l.nx && j < l.j_hi) {
      const int c = (i + 1) + (j + 1) * l.pitch;
      const double b = rhs_value(rhs, open, mean, c);
      r[c] = b;
      acc += b * b;
    }
  }
  write_partial(acc, partials);
}

__global__ void __launch_bounds__(kRedBX* kRedBY) dot_kernel(DeviceLevel l, const double* __restrict__ r,
                                                             const float* __restrict__ e, double* partials) {
  double acc = 0;
  const int i = red_i();
#pragma unroll
  for (int q = 0; q < kRedRows; ++q) {
    const int j = l.j_lo + red_j(q);
    if (i < l.nx && j < l.j_hi) {
      const int c = (i + 1) + (j + 1) * l.pitch;
      acc += __ldg(r + c) * static_cast<double>(__ldg(e + c));
    }
  }
  write_partial(acc, partials);
}

// beta from the device (*beta_dev) when given, else the host's `beta`.
__global__ void direction_kernel(DeviceLevel l, Ghosts g, const float* __restrict__ e, double beta_host,
                                 const double* __restrict__ beta_dev, double* p) {
  const double beta = beta_dev != nullptr ? *beta_dev : beta_host;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = l.j_lo + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= l.nx || j >= l.j_hi) return;
  const int c = (i + 1) + (j + 1) * l.pitch;
  const double z = static_cast<double>(__ldg(e + c));
  const double val = beta == 0.0 ? z : z + beta * p[c];  // p of the previous solve is never read at beta = 0
  p[c] = val;
  halo_from_cell(p, i, j, l.nx, l.ny, l.pitch, g, val);
}

__global__ void __launch_bounds__(kRedBX* kRedBY) apply_kernel(DeviceLevel l, const double* __restrict__ p,
                                                               double* __restrict__ q, double* partials) {
  double acc = 0;
  const int i = red_i(), P = l.pitch;
#pragma unroll
  for (int s = 0; s < kRedRows; ++s) {
    const int j = l.j_lo + red_j(s);
    if (i < l.nx && j < l.j_hi) {
      const int c = (i + 1) + (j + 1) * P;
      const Coef k = coef_at(l, c, bits_at(l, c));
      const double pc = __ldg(p + c);
      const double v = poisson_apply_point<double>(pc, __ldg(p + c - 1), __ldg(p + c + 1), __ldg(p + c - P),
                                                   __ldg(p + c + P), k.w, k.e, k.s, k.n);
      q[c] = v;
      acc += pc * v;
    }
  }
  write_partial(acc, partials);
}

// alpha from the device (pcg_alpha_kernel: nothing is written when it is
// not valid) when `dev` is given, else the host's `alpha`.
__global__ void __launch_bounds__(kRedBX* kRedBY) update_kernel(DeviceLevel l, double alpha_host,
                                                                const PcgState* __restrict__ dev,
                                                                const double* __restrict__ p,
                                                                const double* __restrict__ q, double* __restrict__ x,
                                                                double* __restrict__ r, double* partials) {
  if (dev != nullptr && dev->valid == 0) return;
  const double alpha = dev != nullptr ? dev->alpha : alpha_host;
  double acc = 0;
  const int i = red_i();
#pragma unroll
  for (int s = 0; s < kRedRows; ++s) {
    const int j = l.j_lo + red_j(s);
    if (i < l.nx && j < l.j_hi) {
      const int c = (i + 1) + (j + 1) * l.pitch;
      x[c] += alpha * __ldg(p + c);
      const double rn = r[c] - alpha * __ldg(q + c);
      r[c] = rn;
      acc += rn * rn;
    }
  }
  write_partial(acc, partials);
}

__global__ void __launch_bounds__(kRedBX* kRedBY) residual_kernel(DeviceLevel l, const float* __restrict__ rhs,
                                                                  const float* __restrict__ open,
                                                                  const double* __restrict__ mean,
                                                                  const double* __restrict__ x, double* partials) {
  double acc = 0;
  const int i = red_i(), P = l.pitch;
#pragma unroll
  for (int s = 0; s < kRedRows; ++s) {
    const int j = l.j_lo + red_j(s);
    if (i < l.nx && j < l.j_hi) {
      const int c = (i + 1) + (j + 1) * P;
      const Coef k = coef_at(l, c, bits_at(l, c));
      const double ax = poisson_apply_point<double>(__ldg(x + c), __ldg(x + c - 1), __ldg(x + c + 1),
                                                    __ldg(x + c - P), __ldg(x + c + P), k.w, k.e, k.s, k.n);
      const double res = rhs_value(rhs, open, mean, c) - ax;
      acc += res * res;
    }
  }
  write_partial(acc, partials);
}

__global__ void round_kernel(const double* __restrict__ x, float* phi, int n) {
  const int q = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (q < n) phi[q] = static_cast<float>(__ldg(x + q));
}

// --- the conjugate-gradient scalars on the device (MultigridSolver::solve_on_device) ---
// The host loop's arithmetic, in the same order: b = ||rhs||, r = ||r_0||;
// done at once if either is 0; residual r / b; go on while it exceeds the
// tolerance and iterations are left.
__global__ void pcg_init_kernel(PcgState* st, const double* __restrict__ rhs2, double tolerance, int max_iterations,
                                int64_t* rec_iterations, double* rec_relative) {
  const double b = sqrt(*rhs2), r = sqrt(st->r2);
  st->b = b;
  st->it = 0;
  if (b == 0.0 || r == 0.0) {
    st->relative = 0;
    st->cont = 0;
  } else {
    st->relative = r / b;
    st->cont = st->relative > tolerance && 0 < max_iterations ? 1 : 0;
  }
  *rec_iterations = 0;
  *rec_relative = st->relative;
}

__global__ void pcg_beta_kernel(PcgState* st) {
  st->beta = st->it == 0 ? 0.0 : st->rz / st->rz_old;
  st->rz_old = st->rz;
}

// A (the Laplacian) and the V-cycle are negative definite, so alpha > 0;
// anything else ends the loop without an update (as the host's break).
__global__ void pcg_alpha_kernel(PcgState* st) {
  const double alpha = st->rz / st->pq;
  st->alpha = alpha;
  st->valid = alpha > 0 && isfinite(alpha) ? 1 : 0;
}

__global__ void pcg_check_kernel(PcgState* st, double tolerance, int max_iterations, int64_t* rec_iterations,
                                 double* rec_relative) {
  if (st->valid == 0) {
    st->cont = 0;
    return;
  }
  st->it += 1;
  st->relative = sqrt(st->r2) / st->b;
  st->cont = st->relative > tolerance && st->it < max_iterations ? 1 : 0;
  *rec_iterations = st->it;
  *rec_relative = st->relative;
}

__global__ void pcg_condition_kernel(cudaGraphConditionalHandle h, const PcgState* st) {
  cudaGraphSetConditional(h, static_cast<unsigned>(st->cont));
}

// Faces (i, j) in [0, nx] x [0, ny]; x at index (i + 1) + (j + 1) * pitch.
__global__ void project_double_kernel(const Constants* __restrict__ kd, const double* __restrict__ x,
                                      const float* __restrict__ open, float* u, float* v, int j0, int j_end) {
  const Constants& k = *kd;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = j0 + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i > k.nx || j >= j_end) return;
  const int c = (i + 1) + (j + 1) * k.pitch;
  if (active_u(i, j, k))
    u[c] = k.has_solids && solid_u(open, c) ? 0.f : project_point(u[c], __ldg(x + c - 1), __ldg(x + c), k.inv_dx, k);
  if (active_v(i, j, k))
    v[c] = k.has_solids && solid_v(open, c, k.pitch) ? 0.f
                                                     : project_point(v[c], __ldg(x + c - k.pitch), __ldg(x + c), k.inv_dy, k);
}

constexpr int kFlatBlock = 256;
int flat_blocks(int n) { return (n + kFlatBlock - 1) / kFlatBlock; }
int level_size(const DeviceLevel& l) { return l.pitch * l.rows; }
int own_rows(const DeviceLevel& l) { return l.j_hi - l.j_lo; }

}  // namespace

int pcg_partial_count(int nx, int ny) {
  const dim3 g = red_grid(nx, ny);
  return static_cast<int>(g.x * g.y);
}

int pcg_partial_count(const DeviceLevel& l) { return pcg_partial_count(l.nx, l.j_hi - l.j_lo); }

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

void pcg_sum_rhs(cudaStream_t s, const DeviceLevel& l0, const float* rhs, double* partials) {
  sum_rhs_kernel<<<red_grid(l0.nx, own_rows(l0)), dim3(kRedBX, kRedBY), 0, s>>>(l0, rhs, partials);
  SIM_CUDA_CHECK_LAUNCH("sum_rhs_kernel");
}

void pcg_final_sum(cudaStream_t s, const double* partials, int n, double* out, double divide_by) {
  final_sum_kernel<<<1, kFinalThreads, 0, s>>>(partials, n, out, divide_by);
  SIM_CUDA_CHECK_LAUNCH("final_sum_kernel");
}

void pcg_start(cudaStream_t s, const DeviceLevel& l0, const float* rhs, const float* open, const double* mean,
               double* r, double* partials) {
  start_kernel<<<red_grid(l0.nx, own_rows(l0)), dim3(kRedBX, kRedBY), 0, s>>>(l0, rhs, open, mean, r, partials);
  SIM_CUDA_CHECK_LAUNCH("start_kernel");
}

void pcg_dot(cudaStream_t s, const DeviceLevel& l0, const double* r, const float* e, double* partials) {
  dot_kernel<<<red_grid(l0.nx, own_rows(l0)), dim3(kRedBX, kRedBY), 0, s>>>(l0, r, e, partials);
  SIM_CUDA_CHECK_LAUNCH("dot_kernel");
}

void pcg_direction(cudaStream_t s, const DeviceLevel& l0, const Ghosts& g, const float* e, double beta, double* p,
                   const double* beta_dev) {
  const dim3 b = level_block(l0.nx, own_rows(l0));
  direction_kernel<<<level_grid(l0.nx, own_rows(l0), b), b, 0, s>>>(l0, g, e, beta, beta_dev, p);
  SIM_CUDA_CHECK_LAUNCH("direction_kernel");
}

void pcg_apply(cudaStream_t s, const DeviceLevel& l0, const double* p, double* q, double* partials) {
  apply_kernel<<<red_grid(l0.nx, own_rows(l0)), dim3(kRedBX, kRedBY), 0, s>>>(l0, p, q, partials);
  SIM_CUDA_CHECK_LAUNCH("apply_kernel");
}

void pcg_update(cudaStream_t s, const DeviceLevel& l0, double alpha, const double* p, const double* q, double* x,
                double* r, double* partials, const PcgState* dev) {
  update_kernel<<<red_grid(l0.nx, own_rows(l0)), dim3(kRedBX, kRedBY), 0, s>>>(l0, alpha, dev, p, q, x, r, partials);
  SIM_CUDA_CHECK_LAUNCH("update_kernel");
}

void pcg_init_on_device(cudaStream_t s, PcgState* st, const double* rhs2, double tolerance, int max_iterations,
                        int64_t* rec_iterations, double* rec_relative) {
  pcg_init_kernel<<<1, 1, 0, s>>>(st, rhs2, tolerance, max_iterations, rec_iterations, rec_relative);
  SIM_CUDA_CHECK_LAUNCH("pcg_init_kernel");
}

void pcg_beta_on_device(cudaStream_t s, PcgState* st) {
  pcg_beta_kernel<<<1, 1, 0, s>>>(st);
  SIM_CUDA_CHECK_LAUNCH("pcg_beta_kernel");
}

void pcg_alpha_on_device(cudaStream_t s, PcgState* st) {
  pcg_alpha_kernel<<<1, 1, 0, s>>>(st);
  SIM_CUDA_CHECK_LAUNCH("pcg_alpha_kernel");
}

void pcg_check_on_device(cudaStream_t s, PcgState* st, double tolerance, int max_iterations, int64_t* rec_iterations,
                         double* rec_relative) {
  pcg_check_kernel<<<1, 1, 0, s>>>(st, tolerance, max_iterations, rec_iterations, rec_relative);
  SIM_CUDA_CHECK_LAUNCH("pcg_check_kernel");
}

void pcg_load_condition(cudaStream_t s, cudaGraphConditionalHandle h, const PcgState* st) {
  pcg_condition_kernel<<<1, 1, 0, s>>>(h, st);
  SIM_CUDA_CHECK_LAUNCH("pcg_condition_kernel");
}

void pcg_halo(cudaStream_t s, const DeviceLevel& l0, const Ghosts& g, double* v) {
  full_halo(s, v, l0.nx, l0.ny, l0.pitch, g);
}

void pcg_residual(cudaStream_t s, const DeviceLevel& l0, const float* rhs, const float* open, const double* mean,
                  const double* x, double* partials) {
  residual_kernel<<<red_grid(l0.nx, own_rows(l0)), dim3(kRedBX, kRedBY), 0, s>>>(l0, rhs, open, mean, x, partials);
  SIM_CUDA_CHECK_LAUNCH("residual_kernel");
}

void pcg_round(cudaStream_t s, const DeviceLevel& l0, const double* x, float* phi) {
  const int n = level_size(l0);
  round_kernel<<<flat_blocks(n), kFlatBlock, 0, s>>>(x, phi, n);
  SIM_CUDA_CHECK_LAUNCH("round_kernel");
}

void project_from_double(cudaStream_t s, const Constants* k_dev, int nx, int j0, int j_end, const double* x,
                         const float* open, float* u, float* v) {
  if (j_end <= j0) return;
  const dim3 b(32, 8);
  const dim3 grid((nx + 1 + 31) / 32, (j_end - j0 + 7) / 8);
  project_double_kernel<<<grid, b, 0, s>>>(k_dev, x, open, u, v, j0, j_end);
  SIM_CUDA_CHECK_LAUNCH("project_double_kernel");
}

}  // namespace sim::cuda
