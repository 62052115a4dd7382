// SPDX-License-Identifier: MIT
#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/cuda_helmholtz_fft.hpp"
#include "cuda/dense_transform.cuh"
#include "cuda/device_buffer.hpp"
#include "cuda/fft_spectral.cuh"

namespace sim::cuda {
namespace {


// One axis of a component on the device: its kind (HelmholtzAxis), cells
// n, transform length T (2n for DST-I, else n), unknowns and the first.
struct LineMap {
  int kind, n, T, unknowns, first;
};

constexpr int kPeriodic = static_cast<int>(HelmholtzAxis::periodic);
constexpr int kDct2 = static_cast<int>(HelmholtzAxis::dct2);
constexpr int kDst2 = static_cast<int>(HelmholtzAxis::dst2);
constexpr int kDst1 = static_cast<int>(HelmholtzAxis::dst1);

// The unknown at transform position p and its sign; -1 where the
// position holds 0 (the odd extension's nodes 0 and n).
__device__ __forceinline__ int source_of(const LineMap& l, int p, double& sign) {
  if (l.kind == kPeriodic) return p;
  if (l.kind == kDst1) {
    if (p == 0 || p == l.n) return -1;
    if (p < l.n) return p - 1;
    sign = -sign;
    return l.T - 1 - p;
  }
  // Makhoul's order: evens forward, odds backward; DST-II flips odd signs
  const int m = p < (l.T + 1) / 2 ? 2 * p : 2 * (l.T - 1 - p) + 1;
  if (l.kind == kDst2 && (m & 1)) sign = -sign;
  return m;
}
// The transform position of unknown m, and its sign.
__device__ __forceinline__ int position_of(const LineMap& l, int m, double& sign) {
  if (l.kind == kPeriodic) return m;
  if (l.kind == kDst1) return m + 1;
  if (l.kind == kDst2 && (m & 1)) sign = -sign;
  return (m & 1) ? l.T - 1 - (m >> 1) : (m >> 1);
}

__device__ __forceinline__ double g_of(real g, const real* g_dev) {
  return static_cast<double>(g_dev != nullptr ? *g_dev : g);
}

// r = b - A x in float64 at the transform positions, rows rp apart (pad
// columns 0).
__global__ void residual_load_kernel(const real* __restrict__ b, const real* __restrict__ x, int pitch, LineMap lx,
                                     LineMap ly, double cx, double cy, real g, const real* g_dev, int rp,
                                     double* __restrict__ a) {
  const int p = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int q = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (p >= rp || q >= ly.T) return;
  double sign = 1.0, v = 0.0;
  const int mx = p < lx.T ? source_of(lx, p, sign) : -1;
  const int my = source_of(ly, q, sign);
  if (mx >= 0 && my >= 0) {
    const int c = (lx.first + mx + 1) + (ly.first + my + 1) * pitch;
    const double xc = x[c];
    const double lap = (static_cast<double>(x[c - 1]) - 2.0 * xc + x[c + 1]) * cx +
                       (static_cast<double>(x[c - pitch]) - 2.0 * xc + x[c + pitch]) * cy;
    v = sign * (static_cast<double>(b[c]) - (xc - g_of(g, g_dev) * lap));
  }
  a[static_cast<size_t>(q) * rp + p] = v;
}

// x += e at the unknowns.
__global__ void correct_store_kernel(const double* __restrict__ a, int rp, int pitch, LineMap lx, LineMap ly,
                                     real* __restrict__ x) {
  const int mx = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int my = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (mx >= lx.unknowns || my >= ly.unknowns) return;
  double sign = 1.0;
  const int p = position_of(lx, mx, sign);
  const int q = position_of(ly, my, sign);
  const int c = (lx.first + mx + 1) + (ly.first + my + 1) * pitch;
  x[c] = static_cast<real>(static_cast<double>(x[c]) + sign * a[static_cast<size_t>(q) * rp + p]);
}

// The Helmholtz division: by 1 - g lambda (and the DFT's T_x T_y).
struct HelmholtzDivide {
  real g;
  const real* g_dev;
  __device__ __forceinline__ double2 operator()(double2 c, double lam, double inv_n) const {
    return cscale(c, inv_n / (1.0 - g_of(g, g_dev) * lam));
  }
};

dim3 cover(int ni, int nj, dim3 b) { return dim3((ni + b.x - 1) / b.x, (nj + b.y - 1) / b.y); }

LineMap line_map(const HelmholtzLine& l) {
  const int kind = static_cast<int>(l.kind);
  return LineMap{kind, l.cells, kind == kDst1 ? 2 * l.cells : l.unknowns, l.unknowns, l.first};
}

// Eigenvalues by coefficient index: the DFT index on a periodic axis (T
// points for the DST-I's extension), the DCT index on a cosine axis (DST
// mode n - 1 - k where the signs were flipped).
std::vector<double> eigen_table(const HelmholtzLine& l, const LineMap& m) {
  const double pi = 3.14159265358979323846;
  std::vector<double> t(static_cast<size_t>(m.T));
  for (int k = 0; k < m.T; ++k) {
    double v = 0;
    if (m.kind == kDst1) {
      const double s = std::sin(pi * k / m.T);
      v = -4.0 * l.c * s * s;
    } else {
      v = helmholtz_eigenvalue(l, m.kind == kDst2 ? m.T - 1 - k : k);
    }
    t[static_cast<size_t>(k)] = v;
  }
  return t;
}

}  // namespace

struct CudaFftHelmholtz::Impl {
  struct Component {
    HelmholtzComponent h;
    LineMap lx{}, ly{};
    int hc = 0, rp = 0;
    DeviceBuffer<double> lam_x, lam_y;
    DeviceBuffer<double2> tw_x, tw_y;
    cufftHandle fwd = 0, inv = 0;
    bool has_plans = false;
    bool dense = false;
    DenseTables tables;  // the dense engine's (dense)
    ~Component() {
      if (has_plans) {
        (void)cufftDestroy(fwd);
        (void)cufftDestroy(inv);
      }
    }
  };
  Component c[2];
  int pitch = 0;
  cudaStream_t stream = nullptr;
  DeviceBuffer<double2> spec;  // the larger component's half spectrum, in place of its real array
  DeviceBuffer<unsigned char> work;
};

size_t CudaFftHelmholtz::bytes(const Constants& k, int64_t dense_cells) {
  size_t most = 0, tables = 0;
  for (int q = 0; q < 2; ++q) {
    const HelmholtzComponent h = helmholtz_component(k, q);
    const LineMap lx = line_map(h.x), ly = line_map(h.y);
    if (use_dense_transform(lx.unknowns, ly.unknowns, dense_cells)) {
      tables += DenseTables::bytes(lx.unknowns, ly.unknowns);
      continue;
    }
    most = std::max(most, static_cast<size_t>(ly.T) * (lx.T / 2 + 1) * sizeof(double2));
    tables += static_cast<size_t>(lx.T + ly.T) * (sizeof(double) + sizeof(double2));
  }
  return 2 * most + tables;
}

CudaFftHelmholtz::CudaFftHelmholtz(const Constants& k, cudaStream_t stream, int64_t dense_cells)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.pitch = k.pitch;
  m.stream = stream;
  size_t most = 0, ws_most = 1;
  for (int q = 0; q < 2; ++q) {
    Impl::Component& c = m.c[q];
    c.h = helmholtz_component(k, q);
    c.lx = line_map(c.h.x);
    c.ly = line_map(c.h.y);
    if (c.lx.T < 2 || c.ly.T < 2) throw std::invalid_argument("the transform viscous solve needs 2 points per axis");
    if (use_dense_transform(c.lx.unknowns, c.ly.unknowns, dense_cells)) {
      c.dense = true;
      if (c.lx.unknowns > 0 && c.ly.unknowns > 0) c.tables.upload(dense_basis(c.h.x), dense_basis(c.h.y), stream);
      continue;
    }
    c.hc = c.lx.T / 2 + 1;
    c.rp = 2 * c.hc;
    most = std::max(most, static_cast<size_t>(c.ly.T) * c.hc);
    const std::vector<double> lx = eigen_table(c.h.x, c.lx), ly = eigen_table(c.h.y, c.ly);
    const std::vector<double2> tx = twiddle_table(c.lx.T), ty = twiddle_table(c.ly.T);
    c.lam_x.allocate(lx.size(), "viscous transform eigenvalues");
    c.lam_y.allocate(ly.size(), "viscous transform eigenvalues");
    c.tw_x.allocate(tx.size(), "viscous transform twiddles");
    c.tw_y.allocate(ty.size(), "viscous transform twiddles");
    c.lam_x.upload(lx.data(), lx.size(), stream);
    c.lam_y.upload(ly.data(), ly.size(), stream);
    c.tw_x.upload(tx.data(), tx.size(), stream);
    c.tw_y.upload(ty.data(), ty.size(), stream);
    SIM_CUDA_CHECK(cudaStreamSynchronize(stream));  // the tables' pageable sources go out of scope
    SIM_CUFFT_CHECK(cufftCreate(&c.fwd));
    SIM_CUFFT_CHECK(cufftCreate(&c.inv));
    c.has_plans = true;
    size_t wf = 0, wi = 0;
    int n[2] = {c.ly.T, c.lx.T}, real_embed[2] = {c.ly.T, c.rp}, complex_embed[2] = {c.ly.T, c.hc};
    for (cufftHandle h : {c.fwd, c.inv}) SIM_CUFFT_CHECK(cufftSetAutoAllocation(h, 0));
    SIM_CUFFT_CHECK(cufftMakePlanMany(c.fwd, 2, n, real_embed, 1, c.ly.T * c.rp, complex_embed, 1, c.ly.T * c.hc,
                                      CUFFT_D2Z, 1, &wf));
    SIM_CUFFT_CHECK(cufftMakePlanMany(c.inv, 2, n, complex_embed, 1, c.ly.T * c.hc, real_embed, 1, c.ly.T * c.rp,
                                      CUFFT_Z2D, 1, &wi));
    ws_most = std::max({ws_most, wf, wi});
  }
  if (most > 0) m.spec.allocate(most, "viscous transform spectrum");
  m.work.allocate(ws_most, "cuFFT work area (viscous)");
  for (Impl::Component& c : m.c) {
    if (!c.has_plans) continue;
    SIM_CUFFT_CHECK(cufftSetWorkArea(c.fwd, m.work.data()));
    SIM_CUFFT_CHECK(cufftSetWorkArea(c.inv, m.work.data()));
  }
  set_stream(stream);
}

CudaFftHelmholtz::~CudaFftHelmholtz() = default;

bool CudaFftHelmholtz::dense(int q) const { return impl_->c[q].dense; }

void CudaFftHelmholtz::set_stream(cudaStream_t s) {
  Impl& m = *impl_;
  m.stream = s;
  for (Impl::Component& c : m.c) {
    if (!c.has_plans) continue;
    SIM_CUFFT_CHECK(cufftSetStream(c.fwd, s));
    SIM_CUFFT_CHECK(cufftSetStream(c.inv, s));
  }
}

void CudaFftHelmholtz::correct(int q, const real* b, real* x, real g, const real* g_dev) {
  Impl& m = *impl_;
  Impl::Component& c = m.c[q];
  if (c.lx.unknowns <= 0 || c.ly.unknowns <= 0) return;
  if (c.dense) {
    dense_solve(c.tables, DenseLoadResidual{b, x, m.pitch, c.lx.first, c.ly.first, c.h.x.c, c.h.y.c, g, g_dev},
                DenseHelmholtzDivide{g, g_dev},
                DenseCorrect{x, m.pitch, c.lx.first, c.ly.first, c.lx.unknowns, c.ly.unknowns}, m.stream);
    return;
  }
  double* a = reinterpret_cast<double*>(m.spec.data());
  cufftDoubleComplex* s = reinterpret_cast<cufftDoubleComplex*>(m.spec.data());
  const dim3 blk(32, 8);
  residual_load_kernel<<<cover(c.rp, c.ly.T, blk), blk, 0, m.stream>>>(b, x, m.pitch, c.lx, c.ly, c.h.x.c, c.h.y.c,
                                                                       g, g_dev, c.rp, a);
  SIM_CUDA_CHECK_LAUNCH("residual_load_kernel");
  SIM_CUFFT_CHECK(cufftExecD2Z(c.fwd, a, s));
  const AxisView vx{c.lam_x.data(), c.tw_x.data(), c.lx.T, c.lx.kind == kDct2 || c.lx.kind == kDst2};
  const AxisView vy{c.lam_y.data(), c.tw_y.data(), c.ly.T, c.ly.kind == kDct2 || c.ly.kind == kDst2};
  const double inv_n = 1.0 / (static_cast<double>(c.lx.T) * c.ly.T);
  spectral_kernel<<<cover(c.hc, c.ly.T / 2 + 1, blk), blk, 0, m.stream>>>(m.spec.data(), c.hc, vx, vy, inv_n,
                                                                          HelmholtzDivide{g, g_dev});
  SIM_CUDA_CHECK_LAUNCH("spectral_kernel");
  SIM_CUFFT_CHECK(cufftExecZ2D(c.inv, s, a));
  correct_store_kernel<<<cover(c.lx.unknowns, c.ly.unknowns, blk), blk, 0, m.stream>>>(a, c.rp, m.pitch, c.lx, c.ly,
                                                                                       x);
  SIM_CUDA_CHECK_LAUNCH("correct_store_kernel");
}

}  // namespace sim::cuda
