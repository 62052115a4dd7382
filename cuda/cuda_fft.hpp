// SPDX-License-Identifier: MIT
// Direct solve of the pressure Poisson equation A x = rhs on level 0 with
// cuFFT in float64 (sim/model/poisson_fft.hpp has the eigen decomposition).
//
// Method: one real 2-D FFT of length nx x ny in each direction, whatever the
// boundary kinds. A cosine axis (Neumann) uses Makhoul's reordering (1980):
// v = (x_0, x_2, x_4, ..., x_5, x_3, x_1) has the DFT V with
//   C_k = sum_j x_j cos(pi k (2j + 1) / (2n)) = (E_k V_k + conj(E_k) V_{n-k}) / 2,  E_k = exp(-i pi k / (2n)),
// and back V_k = conj(E_k) (C_k - i C_{n-k}) (C_n = 0). A sine axis
// (Dirichlet) is the cosine one of (-1)^j x_j with the output reversed:
// DST-II_k(x) = DCT-II_{n-1-k}((-1)^j x_j), so it only flips signs and reads
// the eigenvalue of mode n-1-k. A periodic axis is the DFT itself.
// Why this and not the even/odd extension to 2n: the transforms stay length
// n (half the points and traffic of the extension, which matters at 4096^2
// where the solve is memory bound) and both axes go through one cuFFT 2-D
// D2Z/Z2D plan; the reorder and the sign flips are folded into the kernels
// that read rhs and write x, and the twiddles, the eigenvalue division and
// the inverse twiddles into one kernel on the half spectrum. So a solve is
//   load+reorder -> D2Z -> twiddle, divide, untwiddle -> Z2D -> reorder+store+halos
// on the backend's stream, with no host round trip.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "sim/model/constants.hpp"
#include "sim/model/poisson_fft.hpp"

namespace sim::cuda {

class CudaFftPoisson {
 public:
  // Plans and buffers (cuFFT's work area allocated here); throws
  // std::invalid_argument where the transform solve does not apply. Grids of
  // at most dense_cells cells (gpu.dense_transform_cells) multiply by the
  // dense 1-D eigenbases instead (cuda/dense_transform.cuh): no cuFFT plan.
  CudaFftPoisson(const PoissonHierarchy& h, cudaStream_t stream, int64_t dense_cells);
  ~CudaFftPoisson();
  CudaFftPoisson(const CudaFftPoisson&) = delete;
  CudaFftPoisson& operator=(const CudaFftPoisson&) = delete;

  // Device level-0 arrays (the Grid's layout). x = A^-1 rhs in float64 (the
  // mean of rhs dropped and x mean-free if singular), phi = x rounded; the
  // halos of x and phi filled with the ghost rules. Enqueued, no sync.
  void solve(const real* rhs, double* x, real* phi);

  // ||b - A x||_2 over fluid cells in float64, b = rhs minus its mean over
  // fluid cells if singular (open: the mask, may be null). Synchronises.
  double residual_norm(const real* rhs, const double* x, const real* open);
  // Its square written to the device double *out; enqueued, no sync.
  void residual_sum_to(const real* rhs, const double* x, const real* open, double* out);


  // Whether the solve multiplies by dense bases (no cuFFT).
  bool dense() const;

  // Device bytes of an nx x ny solve besides x: the spectrum, an estimate of
  // cuFFT's work area (the size of the spectrum) and the small tables; or
  // the dense engine's bases and coefficients.
  static size_t bytes(int nx, int ny, int64_t dense_cells);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sim::cuda
