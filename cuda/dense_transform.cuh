// SPDX-License-Identifier: MIT
// The small-grid engine of the device's transform solves (the pressure's,
// cuda/cuda_fft.cu, and the viscous step's, cuda/cuda_helmholtz_fft.cu):
// products with the dense 1-D eigenbases of sim/model/dense_basis.hpp in
// place of cuFFT. On a small grid a solve is bound by its launches, not its
// arithmetic, and this one is three launches whatever the sides: the passes
// of sim/model/dense_passes.hpp (rows forward, columns forward-divide-back,
// rows back with the store), one block a row or column, its line in shared
// memory. The sums run in a fixed order, so a solve gives the same bits
// every time. Measured slower than cuFFT on an H100 (a solve's three kernels
// 37 us at 64^2: each thread's sum is one dependent chain of loads from L2;
// bench/h100/dense-transform/), so gpu.dense_transform_cells is 0 by default.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/check.hpp"
#include "cuda/device_buffer.hpp"
#include "sim/model/dense_basis.hpp"
#include "sim/model/dense_passes.hpp"

namespace sim::cuda {

// Most unknowns along one axis (a block's row or column in shared memory).
constexpr int kDenseMaxLine = 1024;

// Whether a solve of nx x ny unknowns takes the dense engine under the
// limit `cells` (gpu.dense_transform_cells).
inline bool use_dense_transform(int nx, int ny, int64_t cells) {
  return cells > 0 && nx <= kDenseMaxLine && ny <= kDenseMaxLine && static_cast<int64_t>(nx) * ny <= cells;
}

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

template <class Load>
__global__ void dense_rows_forward(Load load, DenseAxisView x, int ny, double* __restrict__ t) {
  extern __shared__ double row[];
  const int j = static_cast<int>(blockIdx.x), first = static_cast<int>(threadIdx.x), stride = blockDim.x;
  dense_load_row(load, j, x.n, row, first, stride);
  __syncthreads();
  dense_forward_row(row, x, j, ny, t, first, stride);
}

template <class Divide>
__global__ void dense_columns(DenseAxisView x, DenseAxisView y, Divide divide, double* __restrict__ t) {
  extern __shared__ double col[];  // 2 ny: the column, then its spectrum
  const int k = static_cast<int>(blockIdx.x), first = static_cast<int>(threadIdx.x), stride = blockDim.x;
  dense_load_column(t, k, y.n, col, first, stride);
  __syncthreads();
  dense_column_spectrum(col, x, y, k, divide, col + y.n, first, stride);
  __syncthreads();
  dense_column_back(col + y.n, y, k, t, first, stride);
}

template <class Store>
__global__ void dense_rows_inverse(Store store, DenseAxisView x, int ny, const double* __restrict__ t) {
  extern __shared__ double coef[];
  const int r = static_cast<int>(blockIdx.x), first = static_cast<int>(threadIdx.x), stride = blockDim.x;
  const double sign = dense_load_coefficients(store, r, x, ny, t, coef, first, stride);
  __syncthreads();
  dense_inverse_row(store, r, sign, x, coef, first, stride);
}

}  // namespace

// The three launches of one solve on `stream`.
template <class Load, class Divide, class Store>
void dense_solve(DenseTables& d, const Load& load, const Divide& divide, const Store& store, cudaStream_t stream) {
  const DenseAxisView x = d.x(), y = d.y();
  dense_rows_forward<<<d.ny, dense_threads(d.nx), d.nx * sizeof(double), stream>>>(load, x, d.ny, d.t.data());
  SIM_CUDA_CHECK_LAUNCH("dense_rows_forward");
  dense_columns<<<d.nx, dense_threads(d.ny), 2 * d.ny * sizeof(double), stream>>>(x, y, divide, d.t.data());
  SIM_CUDA_CHECK_LAUNCH("dense_columns");
  dense_rows_inverse<<<store.rows(), dense_threads(d.nx + 2), d.nx * sizeof(double), stream>>>(store, x, d.ny,
                                                                                         d.t.data());
  SIM_CUDA_CHECK_LAUNCH("dense_rows_inverse");
}

}  // namespace sim::cuda
