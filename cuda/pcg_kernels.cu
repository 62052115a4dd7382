// SPDX-License-Identifier: MIT
// The conjugate gradients' kernels in float64 on level 0 (cuda/poisson_levels.cuh):
// the Krylov updates with their dot products, each a deterministic
// reduction (one partial sum per block, then one block sums the partials
// in a fixed order); the loop's scalars on the device; the projection from
// the float64 pressure.
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/block_sum.cuh"
#include "cuda/check.hpp"
#include "cuda/poisson_kernels.hpp"
#include "cuda/poisson_levels.cuh"
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
// The constants from global memory (the device copy every dt change
// reaches, also inside a recorded step). P: the float64 pressure or phi.
template <class P>
__global__ void project_double_kernel(const Constants* __restrict__ kd, const P* __restrict__ x,
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

}  // namespace

int pcg_partial_count(int nx, int ny) {
  const dim3 g = red_grid(nx, ny);
  return static_cast<int>(g.x * g.y);
}

int pcg_partial_count(const DeviceLevel& l) { return pcg_partial_count(l.nx, l.j_hi - l.j_lo); }

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
  project_double_kernel<double><<<grid, b, 0, s>>>(k_dev, x, open, u, v, j0, j_end);
  SIM_CUDA_CHECK_LAUNCH("project_double_kernel");
}

void project_from_float(cudaStream_t s, const Constants* k_dev, int nx, int j0, int j_end, const float* phi,
                        const float* open, float* u, float* v) {
  if (j_end <= j0) return;
  const dim3 b(32, 8);
  const dim3 grid(static_cast<unsigned>((nx + 1 + b.x - 1) / b.x), static_cast<unsigned>((j_end - j0 + b.y - 1) / b.y));
  project_double_kernel<float><<<grid, b, 0, s>>>(k_dev, phi, open, u, v, j0, j_end);
  SIM_CUDA_CHECK_LAUNCH("project_float_kernel");
}

}  // namespace sim::cuda
