// SPDX-License-Identifier: MIT
// The small-grid engine of the device's transform solves (the pressure's,
// cuda/cuda_fft.cu, and the viscous step's, cuda/cuda_helmholtz_fft.cu):
// products with the dense 1-D eigenbases of sim/model/dense_basis.hpp in
// place of cuFFT. On a small grid a solve is bound by its launches, not its
// arithmetic, and this one is three launches whatever the sides:
//   rows:    t(k, j) = sum_i Qx(i, k) b(i, j)       one block a row j (b loaded by the caller's functor)
//   columns: s(k, m) = sum_j Qy(j, m) t(k, j), divided by the mode's divisor,
//            t(k, j) = sum_m Qy(j, m) s(k, m)       one block a column k, in shared memory
//   rows:    x(i, j) = sum_k Qx(i, k) t(k, j)       one block an output row (stored by the caller's functor)
// t is kept column-major (k * ny + j), so the columns pass reads and writes
// contiguously. The arithmetic is n^3 per pass: 65536 unknowns (256^2) is
// 17 M multiply-adds a pass, a few microseconds; the sums run in a fixed
// order, so a solve gives the same bits every time.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/check.hpp"
#include "cuda/device_buffer.hpp"
#include "sim/model/dense_basis.hpp"

namespace sim::cuda {

// Most unknowns along one axis (a block's row or column in shared memory).
constexpr int kDenseMaxLine = 1024;

// Whether a solve of nx x ny unknowns takes the dense engine under the
// limit `cells` (gpu.dense_transform_cells).
inline bool use_dense_transform(int nx, int ny, int64_t cells) {
  return nx <= kDenseMaxLine && ny <= kDenseMaxLine && static_cast<int64_t>(nx) * ny <= cells;
}

struct DenseAxisView {
  const double* q;    // n x n, q[i * n + k]
  const double* lam;  // eigenvalue of mode k
  int n;
};

// The two axes' bases on the device, and the intermediate t (nx x ny).
struct DenseTables {
  DeviceBuffer<double> qx, qy, lx, ly, t;
  int nx = 0, ny = 0;

  void upload(const DenseBasis& bx, const DenseBasis& by, cudaStream_t s) {
    nx = bx.n;
    ny = by.n;
    qx.allocate(bx.q.size(), "dense transform basis");
    qy.allocate(by.q.size(), "dense transform basis");
    lx.allocate(bx.lambda.size(), "dense transform eigenvalues");
    ly.allocate(by.lambda.size(), "dense transform eigenvalues");
    t.allocate(static_cast<size_t>(nx) * ny, "dense transform coefficients");
    qx.upload(bx.q.data(), bx.q.size(), s);
    qy.upload(by.q.data(), by.q.size(), s);
    lx.upload(bx.lambda.data(), bx.lambda.size(), s);
    ly.upload(by.lambda.data(), by.lambda.size(), s);
    SIM_CUDA_CHECK(cudaStreamSynchronize(s));  // the pageable sources go out of scope
  }
  DenseAxisView x() const { return DenseAxisView{qx.data(), lx.data(), nx}; }
  DenseAxisView y() const { return DenseAxisView{qy.data(), ly.data(), ny}; }
  static size_t bytes(int nx, int ny) {
    return (static_cast<size_t>(nx) * nx + static_cast<size_t>(ny) * ny + static_cast<size_t>(nx) * ny + nx + ny) *
           sizeof(double);
  }
};

inline unsigned dense_threads(int n) {
  return static_cast<unsigned>(std::clamp((n + 31) / 32 * 32, 32, 256));
}

namespace {

// Block j: b's row j (load(i, j), i in [0, nx)) into shared memory, then
// t(k, j) = sum_i Qx(i, k) b(i, j).
template <class Load>
__global__ void dense_rows_forward(Load load, DenseAxisView x, int ny, double* __restrict__ t) {
  extern __shared__ double row[];
  const int j = static_cast<int>(blockIdx.x);
  for (int i = static_cast<int>(threadIdx.x); i < x.n; i += blockDim.x) row[i] = load(i, j);
  __syncthreads();
  for (int k = static_cast<int>(threadIdx.x); k < x.n; k += blockDim.x) {
    double acc = 0.0;
    const double* q = x.q + k;
#pragma unroll 8
    for (int i = 0; i < x.n; ++i) acc = fma(row[i], q[static_cast<size_t>(i) * x.n], acc);
    t[static_cast<size_t>(k) * ny + j] = acc;
  }
}

// Block k: column k of t forward along y, each mode divided by
// divide(value, lambda_x(k) + lambda_y(m)), and back, in place.
template <class Divide>
__global__ void dense_columns(DenseAxisView x, DenseAxisView y, Divide divide, double* __restrict__ t) {
  extern __shared__ double col[];  // 2 ny
  double* spec = col + y.n;
  const int k = static_cast<int>(blockIdx.x);
  double* tk = t + static_cast<size_t>(k) * y.n;
  for (int j = static_cast<int>(threadIdx.x); j < y.n; j += blockDim.x) col[j] = tk[j];
  __syncthreads();
  const double lx = x.lam[k];
  for (int m = static_cast<int>(threadIdx.x); m < y.n; m += blockDim.x) {
    double acc = 0.0;
    const double* q = y.q + m;
#pragma unroll 8
    for (int j = 0; j < y.n; ++j) acc = fma(col[j], q[static_cast<size_t>(j) * y.n], acc);
    spec[m] = divide(acc, lx + y.lam[m]);
  }
  __syncthreads();
  for (int j = static_cast<int>(threadIdx.x); j < y.n; j += blockDim.x) {
    double acc = 0.0;
    const double* q = y.q + static_cast<size_t>(j) * y.n;
#pragma unroll 8
    for (int m = 0; m < y.n; ++m) acc = fma(spec[m], q[m], acc);
    tk[j] = acc;
  }
}

// Block r (of store.rows()): the coefficients of source row j =
// store.row(r, sign) into shared memory, then for each output column c of
// store.cols(): x = sign_r sign_c sum_k Qx(i, k) t(k, j), i = store.col(c,
// sign_c), handed to store.put(r, c, x).
template <class Store>
__global__ void dense_rows_inverse(Store store, DenseAxisView x, int ny, const double* __restrict__ t) {
  extern __shared__ double coef[];
  const int r = static_cast<int>(blockIdx.x);
  double row_sign = 1.0;
  const int j = store.row(r, row_sign);
  for (int k = static_cast<int>(threadIdx.x); k < x.n; k += blockDim.x) coef[k] = t[static_cast<size_t>(k) * ny + j];
  __syncthreads();
  const int cols = store.cols();
  for (int c = static_cast<int>(threadIdx.x); c < cols; c += blockDim.x) {
    double sign = row_sign;
    const int i = store.col(c, sign);
    const double* q = x.q + static_cast<size_t>(i) * x.n;
    double acc = 0.0;
#pragma unroll 8
    for (int k = 0; k < x.n; ++k) acc = fma(coef[k], q[k], acc);
    store.put(r, c, sign * acc);
  }
}

}  // namespace

// The three launches of one solve on `stream`.
template <class Load, class Divide, class Store>
void dense_solve(DenseTables& d, const Load& load, const Divide& divide, const Store& store, int out_rows,
                 cudaStream_t stream) {
  const DenseAxisView x = d.x(), y = d.y();
  dense_rows_forward<<<d.ny, dense_threads(d.nx), d.nx * sizeof(double), stream>>>(load, x, d.ny, d.t.data());
  SIM_CUDA_CHECK_LAUNCH("dense_rows_forward");
  dense_columns<<<d.nx, dense_threads(d.ny), 2 * d.ny * sizeof(double), stream>>>(x, y, divide, d.t.data());
  SIM_CUDA_CHECK_LAUNCH("dense_columns");
  dense_rows_inverse<<<out_rows, dense_threads(d.nx + 2), d.nx * sizeof(double), stream>>>(store, x, d.ny,
                                                                                         d.t.data());
  SIM_CUDA_CHECK_LAUNCH("dense_rows_inverse");
}

}  // namespace sim::cuda
