// SPDX-License-Identifier: MIT
// The transform solve of the implicit viscous step's Helmholtz problems on
// the device (sim/model/helmholtz_fft.hpp), the CPU's
// (sim/cpu/cpu_helmholtz_fft.hpp) with cuFFT in float64.
//
// Per component one real 2-D D2Z/Z2D pair, as the pressure's transform
// solve (cuda/cuda_fft.hpp): a DCT-II or DST-II axis through Makhoul's
// reordering of a length-n DFT; a periodic axis is the DFT; a DST-I axis
// (the normal component between closed sides: n - 1 unknown faces, fixed
// values at both ends) the DFT of its odd extension to 2n points
// (0, x_1, .., x_{n-1}, 0, -x_{n-1}, .., -x_1), a periodic problem of 2n
// points whose eigenvalues -4 c sin^2(pi k / 2n) are the DST-I's. A solve is
//   residual (float64, from x with its halo) + reorder -> D2Z ->
//   twiddle, divide by 1 - g lambda, untwiddle -> Z2D -> x += e
// on the given stream, g read from the device where the step's dt lives.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "sim/model/helmholtz_fft.hpp"

namespace sim::cuda {

class CudaFftHelmholtz {
 public:
  // Plans and buffers for both components; needs an empty
  // helmholtz_transform_refusal. A component of at most dense_cells unknowns
  // (gpu.dense_transform_cells) multiplies by the dense 1-D eigenbases
  // instead (cuda/dense_transform.cuh): no cuFFT plan.
  CudaFftHelmholtz(const Constants& k, cudaStream_t stream, int64_t dense_cells);
  ~CudaFftHelmholtz();
  CudaFftHelmholtz(const CudaFftHelmholtz&) = delete;
  CudaFftHelmholtz& operator=(const CudaFftHelmholtz&) = delete;

  // x += (I - g lap_0)^-1 (b - A x) on the unknown faces of component q
  // (0: u, 1: v), device arrays in the grid's layout, x's halo filled (the
  // boundary values) and left alone. g = *g_dev where g_dev is not null
  // (a real on the device), else g. Enqueued on the stream, no sync.
  void correct(int q, const real* b, real* x, real g, const real* g_dev);
  void set_stream(cudaStream_t s);

  // Whether component q multiplies by dense bases (no cuFFT).
  bool dense(int q) const;

  // Device bytes for the run with constants k: the larger component's
  // spectrum, cuFFT's work area (estimated as the spectrum) and the tables;
  // or the dense engine's bases and coefficients.
  static size_t bytes(const Constants& k, int64_t dense_cells);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sim::cuda
