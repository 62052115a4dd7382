// SPDX-License-Identifier: MIT
#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/block_sum.cuh"
#include "cuda/check.hpp"
#include "cuda/cuda_fft.hpp"
#include "cuda/dense_transform.cuh"
#include "cuda/device_buffer.hpp"
#include "cuda/fft_spectral.cuh"

namespace sim::cuda {
namespace {


constexpr int kReduceBlocks = 1024;  // fixed, so the sums are the same on any device
constexpr int kReduceThreads = 256;

// Position of x_i in Makhoul's reordering (evens forward, odds backward) on
// a cosine or sine axis, i itself on a periodic one.
__device__ __forceinline__ int reorder(int a, int i, int n) {
  if (a == static_cast<int>(FftAxis::periodic)) return i;
  return (i & 1) ? n - 1 - (i >> 1) : (i >> 1);
}
// (-1)^i on a sine axis (DST-II through DCT-II), 1 otherwise.
__device__ __forceinline__ double sign_of(int a, int i) {
  return a == static_cast<int>(FftAxis::dirichlet) && (i & 1) ? -1.0 : 1.0;
}

// rhs (float, grid layout) -> the reordered real array, rows rp apart; the
// pad columns [nx, rp) are zeroed (with nx = 1 they are the imaginary parts
// of the complex column the Z2Z transform reads).
__global__ void load_kernel(const real* __restrict__ rhs, int pitch, int nx, int ny, int rp, int ax, int ay,
                            double* __restrict__ a) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= rp || j >= ny) return;
  if (i >= nx) {
    a[static_cast<size_t>(j) * rp + i] = 0.0;
    return;
  }
  const double v = static_cast<double>(rhs[(i + 1) + (j + 1) * pitch]) * sign_of(ax, i) * sign_of(ay, j);
  a[static_cast<size_t>(reorder(ay, j, ny)) * rp + reorder(ax, i, nx)] = v;
}

struct Ghosts {
  GhostRule g[4];
};

// The inverse transform's real array -> x and phi = (float) x on cells and halo.
__global__ void store_kernel(const double* __restrict__ a, int rp, int nx, int ny, int pitch, int ax, int ay,
                             Ghosts gh, double* __restrict__ x, real* __restrict__ phi) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) - 1;
  const int j = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y) - 1;
  if (i > nx || j > ny) return;
  double sign = 1.0;
  const int si = ghost_source(i, nx, gh.g[kLeft], gh.g[kRight], sign);
  const int sj = ghost_source(j, ny, gh.g[kBottom], gh.g[kTop], sign);
  const double v =
      a[static_cast<size_t>(reorder(ay, sj, ny)) * rp + reorder(ax, si, nx)] * sign_of(ax, si) * sign_of(ay, sj) * sign;
  const int c = (i + 1) + (j + 1) * pitch;
  x[c] = v;
  phi[c] = static_cast<real>(v);
}


// One thread's share of the rhs sum and the fluid-cell count: cells q =
// first, first + stride, ... (a fixed order).
__device__ __forceinline__ void rhs_sum_cells(const real* rhs, const real* open, int nx, int ny, int pitch, int first,
                                              int stride, double& s, double& n) {
  const int cells = nx * ny;
  for (int q = first; q < cells; q += stride) {
    const int c = (q % nx + 1) + (q / nx + 1) * pitch;
    if (open == nullptr || open[c] != real(0)) {
      s += rhs[c];
      n += 1;
    }
  }
}

// One thread's share of the sum of (b - mean - A x)^2 over fluid cells; the
// coefficients are level 0's, uniform per axis wherever the transform solve applies.
__device__ __forceinline__ double residual_cells(const real* rhs, const double* x, const real* open, double m, int nx,
                                                 int ny, int pitch, real cx, real cy, int first, int stride) {
  double acc = 0;
  const int cells = nx * ny;
  for (int q = first; q < cells; q += stride) {
    const int c = (q % nx + 1) + (q / nx + 1) * pitch;
    if (open != nullptr && open[c] == real(0)) continue;
    const double ax = poisson_apply_point(x[c], x[c - 1], x[c + 1], x[c - pitch], x[c + pitch], cx, cx, cy, cy);
    const double r = (static_cast<double>(rhs[c]) - m) - ax;
    acc += r * r;
  }
  return acc;
}

__device__ __forceinline__ int grid_thread() { return static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); }
__device__ __forceinline__ int grid_threads() { return static_cast<int>(gridDim.x * blockDim.x); }

// Per block: sum of rhs and number of fluid cells.
__global__ void rhs_sum_kernel(const real* __restrict__ rhs, const real* __restrict__ open, int nx, int ny, int pitch,
                               double* __restrict__ partials) {
  double s = 0, n = 0;
  rhs_sum_cells(rhs, open, nx, ny, pitch, grid_thread(), grid_threads(), s, n);
  s = block_sum(s);
  __syncthreads();
  n = block_sum(n);
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x] = s;
    partials[2 * blockIdx.x + 1] = n;
  }
}

// out[0] = mean = sum / count (0 when not singular).
__global__ void mean_kernel(const double* __restrict__ partials, int blocks, int singular, double* __restrict__ out) {
  double s = 0, n = 0;
  for (int b = static_cast<int>(threadIdx.x); b < blocks; b += blockDim.x) {
    s += partials[2 * b];
    n += partials[2 * b + 1];
  }
  s = block_sum(s);
  __syncthreads();
  n = block_sum(n);
  if (threadIdx.x == 0) out[0] = singular && n > 0 ? s / n : 0.0;
}

// Per block: sum of (b - mean - A x)^2 over fluid cells.
__global__ void residual_kernel(const real* __restrict__ rhs, const double* __restrict__ x,
                                const real* __restrict__ open, const double* __restrict__ mean, int nx, int ny,
                                int pitch, real cx, real cy, double* __restrict__ partials) {
  double acc = residual_cells(rhs, x, open, *mean, nx, ny, pitch, cx, cy, grid_thread(), grid_threads());
  acc = block_sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

__global__ void sum_kernel(const double* __restrict__ partials, int blocks, double* __restrict__ out) {
  double s = 0;
  for (int b = static_cast<int>(threadIdx.x); b < blocks; b += blockDim.x) s += partials[b];
  s = block_sum(s);
  if (threadIdx.x == 0) out[0] = s;
}

// The three kernels above and sum_kernel in one block, for small grids
// (where four launches cost more than the work): the rhs sum and count, a
// barrier, the mean, then the residual sum, each in the fixed order of one
// block's threads.
constexpr int kOneBlockThreads = 1024;
constexpr long long kOneBlockCells = 32768;

__global__ void __launch_bounds__(kOneBlockThreads) residual_block_kernel(const real* __restrict__ rhs,
                                                                       const double* __restrict__ x,
                                                                       const real* __restrict__ open, int singular,
                                                                       int nx, int ny, int pitch, real cx, real cy,
                                                                       double* __restrict__ out) {
  __shared__ double mean;
  const int T = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
  double s = 0, n = 0;
  rhs_sum_cells(rhs, open, nx, ny, pitch, t, T, s, n);
  s = block_sum(s);
  __syncthreads();
  n = block_sum(n);
  if (threadIdx.x == 0) mean = singular && n > 0 ? s / n : 0.0;
  __syncthreads();
  double acc = residual_cells(rhs, x, open, mean, nx, ny, pitch, cx, cy, t, T);
  acc = block_sum(acc);
  if (threadIdx.x == 0) out[0] = acc;
}

dim3 cover(int ni, int nj, dim3 b) { return dim3((ni + b.x - 1) / b.x, (nj + b.y - 1) / b.y); }

}  // namespace

struct CudaFftPoisson::Impl {
  FftProblem p;
  cudaStream_t stream = nullptr;
  int hc = 0, rp = 0;  // complex values per spectrum row (nx/2 + 1), doubles per real row (2 hc)
  DeviceBuffer<double2> spec;  // ny x hc complex; the same memory is the ny x rp real array (in-place transforms)
  DeviceBuffer<double> lam_x, lam_y;
  DeviceBuffer<double2> tw_x, tw_y;
  DeviceBuffer<unsigned char> work;
  DeviceBuffer<double> partials, scalars;
  PinnedBuffer<double> host{1};
  cufftHandle fwd = 0, inv = 0;
  bool has_fwd = false, has_inv = false;
  int blocks = 1;
  bool dense = false;
  DenseTables tables;  // the dense engine's (dense)

  ~Impl() {
    if (has_fwd) (void)cufftDestroy(fwd);
    if (has_inv) (void)cufftDestroy(inv);
  }
};

namespace {
// Eigenvalues in the order of the coefficient index: DFT index where
// periodic, DCT index where Neumann, and where Dirichlet the DCT index k of
// the sign-flipped input, which is DST mode n-1-k.
std::vector<double> eigen_table(FftAxis a, int n, double c) {
  std::vector<double> l(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k)
    l[static_cast<size_t>(k)] = a == FftAxis::dirichlet ? fft_axis_eigenvalue(a, n - 1 - k, n, c)
                                                        : fft_axis_eigenvalue(a, k, n, c);
  return l;
}
}  // namespace

size_t CudaFftPoisson::bytes(int nx, int ny, int64_t dense_cells) {
  if (use_dense_transform(nx, ny, dense_cells))
    return DenseTables::bytes(nx, ny) + (2 * kReduceBlocks + 2) * sizeof(double);
  const size_t spectrum = static_cast<size_t>(ny) * (nx / 2 + 1) * sizeof(double2);
  return 2 * spectrum + static_cast<size_t>(nx + ny) * (sizeof(double) + sizeof(double2)) +
         (2 * kReduceBlocks + 2) * sizeof(double);
}

CudaFftPoisson::CudaFftPoisson(const PoissonHierarchy& h, cudaStream_t stream, int64_t dense_cells)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.p = fft_problem(h);
  m.stream = stream;
  const int nx = m.p.nx, ny = m.p.ny;
  m.blocks = static_cast<int>(std::min<long long>(kReduceBlocks, (static_cast<long long>(nx) * ny + kReduceThreads - 1) / kReduceThreads));
  m.partials.allocate(2 * static_cast<size_t>(kReduceBlocks), "transform residual partial sums");
  m.scalars.allocate(2, "transform residual scalars");
  if (use_dense_transform(nx, ny, dense_cells)) {
    m.dense = true;
    m.tables.upload(dense_basis(m.p.ax, nx, m.p.cx), dense_basis(m.p.ay, ny, m.p.cy), stream);
    return;
  }
  m.hc = nx / 2 + 1;
  m.rp = 2 * m.hc;
  m.spec.allocate(static_cast<size_t>(ny) * m.hc, "transform spectrum");
  const std::vector<double> lx = eigen_table(m.p.ax, nx, m.p.cx), ly = eigen_table(m.p.ay, ny, m.p.cy);
  const std::vector<double2> tx = twiddle_table(nx), ty = twiddle_table(ny);
  m.lam_x.allocate(lx.size(), "transform eigenvalues");
  m.lam_y.allocate(ly.size(), "transform eigenvalues");
  m.tw_x.allocate(tx.size(), "transform twiddles");
  m.tw_y.allocate(ty.size(), "transform twiddles");
  m.lam_x.upload(lx.data(), lx.size(), stream);
  m.lam_y.upload(ly.data(), ly.size(), stream);
  m.tw_x.upload(tx.data(), tx.size(), stream);
  m.tw_y.upload(ty.data(), ty.size(), stream);

  // In place: the real rows are padded to rp doubles. ny = 1 is a 1-D D2Z
  // of the row; nx = 1 a 1-D Z2Z of the column with zero imaginary parts
  // (the pad), whose spectrum has the layout of the 2-D half spectrum.
  size_t ws_fwd = 0, ws_inv = 0;
  auto make = [&](cufftHandle& plan, bool& has, bool forward, size_t& ws) {
    SIM_CUFFT_CHECK(cufftCreate(&plan));
    has = true;
    SIM_CUFFT_CHECK(cufftSetAutoAllocation(plan, 0));
    if (nx > 1 && ny > 1) {
      int n[2] = {ny, nx}, real_embed[2] = {ny, m.rp}, complex_embed[2] = {ny, m.hc};
      if (forward)
        SIM_CUFFT_CHECK(cufftMakePlanMany(plan, 2, n, real_embed, 1, ny * m.rp, complex_embed, 1, ny * m.hc,
                                          CUFFT_D2Z, 1, &ws));
      else
        SIM_CUFFT_CHECK(cufftMakePlanMany(plan, 2, n, complex_embed, 1, ny * m.hc, real_embed, 1, ny * m.rp,
                                          CUFFT_Z2D, 1, &ws));
    } else if (ny == 1) {
      SIM_CUFFT_CHECK(cufftMakePlan1d(plan, nx, forward ? CUFFT_D2Z : CUFFT_Z2D, 1, &ws));
    } else {
      SIM_CUFFT_CHECK(cufftMakePlan1d(plan, ny, CUFFT_Z2Z, 1, &ws));
    }
    SIM_CUFFT_CHECK(cufftSetStream(plan, stream));
  };
  if (nx > 1 || ny > 1) {  // 1 x 1: the transforms are the identity
    make(m.fwd, m.has_fwd, true, ws_fwd);
    make(m.inv, m.has_inv, false, ws_inv);
    m.work.allocate(std::max<size_t>(std::max(ws_fwd, ws_inv), 1), "cuFFT work area");
    SIM_CUFFT_CHECK(cufftSetWorkArea(m.fwd, m.work.data()));
    SIM_CUFFT_CHECK(cufftSetWorkArea(m.inv, m.work.data()));
  }
  SIM_CUDA_CHECK(cudaStreamSynchronize(stream));  // the tables' pageable sources go out of scope
}

CudaFftPoisson::~CudaFftPoisson() = default;

bool CudaFftPoisson::dense() const { return impl_->dense; }

void CudaFftPoisson::solve(const real* rhs, double* x, real* phi) {
  Impl& m = *impl_;
  const FftProblem& p = m.p;
  if (m.dense) {
    dense_solve(m.tables, DenseLoadRhs{rhs, p.pitch}, DensePoissonDivide{},
                DenseStoreHalo{x, phi, p.nx, p.ny, p.pitch, {p.ghost[0], p.ghost[1], p.ghost[2], p.ghost[3]}},
                m.stream);
    return;
  }
  const int ax = static_cast<int>(p.ax), ay = static_cast<int>(p.ay);
  double* a = reinterpret_cast<double*>(m.spec.data());
  cufftDoubleComplex* s = reinterpret_cast<cufftDoubleComplex*>(m.spec.data());
  const dim3 b(32, 8);
  load_kernel<<<cover(m.rp, p.ny, b), b, 0, m.stream>>>(rhs, p.pitch, p.nx, p.ny, m.rp, ax, ay, a);
  SIM_CUDA_CHECK_LAUNCH("load_kernel");
  if (m.has_fwd) {
    if (p.nx == 1 && p.ny > 1) SIM_CUFFT_CHECK(cufftExecZ2Z(m.fwd, s, s, CUFFT_FORWARD));
    else SIM_CUFFT_CHECK(cufftExecD2Z(m.fwd, a, s));
  }
  const AxisView vx{m.lam_x.data(), m.tw_x.data(), p.nx, p.ax != FftAxis::periodic};
  const AxisView vy{m.lam_y.data(), m.tw_y.data(), p.ny, p.ay != FftAxis::periodic};
  const double inv_n = 1.0 / (static_cast<double>(p.nx) * p.ny);
  spectral_kernel<<<cover(m.hc, p.ny / 2 + 1, b), b, 0, m.stream>>>(m.spec.data(), m.hc, vx, vy, inv_n,
                                                                     PoissonDivide{});
  SIM_CUDA_CHECK_LAUNCH("spectral_kernel");
  if (m.has_inv) {
    if (p.nx == 1 && p.ny > 1) SIM_CUFFT_CHECK(cufftExecZ2Z(m.inv, s, s, CUFFT_INVERSE));
    else SIM_CUFFT_CHECK(cufftExecZ2D(m.inv, s, a));
  }
  Ghosts g;
  for (int k = 0; k < 4; ++k) g.g[k] = p.ghost[k];
  store_kernel<<<cover(p.nx + 2, p.ny + 2, b), b, 0, m.stream>>>(a, m.rp, p.nx, p.ny, p.pitch, ax, ay, g, x, phi);
  SIM_CUDA_CHECK_LAUNCH("store_kernel");
}

double CudaFftPoisson::residual_norm(const real* rhs, const double* x, const real* open) {
  Impl& m = *impl_;
  residual_sum_to(rhs, x, open, m.scalars.data() + 1);
  SIM_CUDA_CHECK(cudaMemcpyAsync(m.host.data(), m.scalars.data() + 1, sizeof(double), cudaMemcpyDeviceToHost, m.stream));
  SIM_CUDA_CHECK(cudaStreamSynchronize(m.stream));
  return std::sqrt(m.host[0]);
}

void CudaFftPoisson::residual_sum_to(const real* rhs, const double* x, const real* open, double* out) {
  Impl& m = *impl_;
  const FftProblem& p = m.p;
  if (static_cast<long long>(p.nx) * p.ny <= kOneBlockCells) {
    residual_block_kernel<<<1, kOneBlockThreads, 0, m.stream>>>(rhs, x, open, p.singular ? 1 : 0, p.nx, p.ny, p.pitch,
                                                               static_cast<real>(p.cx), static_cast<real>(p.cy), out);
    SIM_CUDA_CHECK_LAUNCH("residual_block_kernel");
    return;
  }
  rhs_sum_kernel<<<m.blocks, kReduceThreads, 0, m.stream>>>(rhs, open, p.nx, p.ny, p.pitch, m.partials.data());
  SIM_CUDA_CHECK_LAUNCH("rhs_sum_kernel");
  mean_kernel<<<1, kReduceThreads, 0, m.stream>>>(m.partials.data(), m.blocks, p.singular ? 1 : 0, m.scalars.data());
  SIM_CUDA_CHECK_LAUNCH("mean_kernel");
  residual_kernel<<<m.blocks, kReduceThreads, 0, m.stream>>>(rhs, x, open, m.scalars.data(), p.nx, p.ny, p.pitch,
                                                             static_cast<real>(p.cx), static_cast<real>(p.cy),
                                                             m.partials.data());
  SIM_CUDA_CHECK_LAUNCH("residual_kernel");
  sum_kernel<<<1, kReduceThreads, 0, m.stream>>>(m.partials.data(), m.blocks, out);
  SIM_CUDA_CHECK_LAUNCH("sum_kernel");
}

}  // namespace sim::cuda
