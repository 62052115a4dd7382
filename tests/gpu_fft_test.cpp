// SPDX-License-Identifier: MIT
// The transform pressure solve on the GPU (cuda/cuda_fft.hpp) against the
// CPU's (sim/cpu/cpu_fft.hpp, FFTW): manufactured problems for every
// boundary pairing and awkward sizes, and the shipped periodic and walled
// cases run with pressure.solver = fft on both backends.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/cuda_fft.hpp"
#include "cuda/device_buffer.hpp"
#include "support/cases.hpp"
#include "support/gpu.hpp"
#include "support/sides.hpp"
#include "sim/cpu/cpu_fft.hpp"
#include "sim/model/poisson.hpp"

namespace {

using sim::BoundaryKind;

struct FftCase {
  sim::Grid grid;
  sim::PoissonHierarchy h;
};

FftCase fft_case(int nx, int ny, BoundaryKind x, BoundaryKind y) {
  const sim::Config cfg = sim::test::sides_config(nx, ny, x, y);
  FftCase c;
  c.grid = sim::Grid::make(nx, ny, cfg.lx, cfg.ly);
  const std::vector<sim::real> open(c.grid.size(), sim::real(1));
  c.h = sim::build_poisson_hierarchy(c.grid, open, sim::make_constants(cfg, c.grid));
  return c;
}

uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// b = A phi* for integer phi* in [-100, 100] (exact in float); returns ||b||.
double manufacture(const FftCase& c, uint64_t seed, std::vector<sim::real>& rhs) {
  const sim::PoissonLevel& l = c.h.levels[0];
  std::vector<double> phi(l.size(), 0.0);
  for (int j = 0; j < l.ny; ++j)
    for (int i = 0; i < l.nx; ++i)
      phi[l.index(i, j)] = static_cast<double>(static_cast<int>(mix(seed * 1000003u + l.index(i, j)) % 201) - 100);
  sim::fill_poisson_halo(phi.data(), l.nx, l.ny, l.pitch, c.h.ghost);
  rhs.assign(l.size(), sim::real(0));
  const int P = l.pitch;
  double b2 = 0;
  for (int j = 0; j < l.ny; ++j)
    for (int i = 0; i < l.nx; ++i) {
      const int q = l.index(i, j);
      const double* p = phi.data();
      const double b = sim::poisson_apply_point(p[q], p[q - 1], p[q + 1], p[q - P], p[q + P], l.cx[q], l.cx[q + 1],
                                                l.cy[q], l.cy[q + P]);
      rhs[q] = static_cast<sim::real>(b);
      b2 += b * b;
    }
  return std::sqrt(b2);
}

// dense_cells: gpu.dense_transform_cells (0: cuFFT; large: the dense bases)
void check_against_cpu(int nx, int ny, BoundaryKind x, BoundaryKind y, int64_t dense_cells) {
  CAPTURE(dense_cells);
  CAPTURE(nx);
  CAPTURE(ny);
  CAPTURE(static_cast<int>(x));
  CAPTURE(static_cast<int>(y));
  const FftCase c = fft_case(nx, ny, x, y);
  const sim::PoissonLevel& l = c.h.levels[0];
  std::vector<sim::real> rhs;
  const double b = manufacture(c, static_cast<uint64_t>(nx * 7 + ny), rhs);

  std::vector<double> cpu_x(l.size(), 0.0);
  std::vector<sim::real> cpu_phi(l.size(), sim::real(0));
  sim::CpuFftPoisson cpu(c.h);
  cpu.solve(rhs.data(), cpu_x.data(), cpu_phi.data());

  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  {
    sim::cuda::DeviceBuffer<sim::real> d_rhs(l.size()), d_phi(l.size());
    sim::cuda::DeviceBuffer<double> d_x(l.size());
    d_rhs.upload(rhs.data(), rhs.size(), stream);
    // poisoned: every cell and halo value must be written
    const std::vector<double> nan_x(l.size(), std::nan(""));
    const std::vector<sim::real> nan_phi(l.size(), std::nanf(""));
    d_x.upload(nan_x.data(), nan_x.size(), stream);
    d_phi.upload(nan_phi.data(), nan_phi.size(), stream);
    sim::cuda::CudaFftPoisson gpu(c.h, stream, dense_cells);
    CHECK(gpu.dense() == (dense_cells > 0));
    gpu.solve(d_rhs.data(), d_x.data(), d_phi.data());
    const double r = gpu.residual_norm(d_rhs.data(), d_x.data(), nullptr);
    const double residual = b > 0 ? r / b : r;  // b = 0: one cell, singular
    std::vector<double> gpu_x(l.size());
    std::vector<sim::real> gpu_phi(l.size());
    d_x.download(gpu_x.data(), l.size(), stream);
    d_phi.download(gpu_phi.data(), l.size(), stream);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);

    CHECK(residual <= 1e-10);
    // cells and halo against the CPU; phi is x rounded
    double d2 = 0, r2 = 0;
    int phi_off = 0;
    for (int j = -1; j <= l.ny; ++j)
      for (int i = -1; i <= l.nx; ++i) {
        const int q = l.index(i, j);
        d2 += (gpu_x[q] - cpu_x[q]) * (gpu_x[q] - cpu_x[q]);
        r2 += cpu_x[q] * cpu_x[q];
        phi_off += gpu_phi[q] != static_cast<sim::real>(gpu_x[q]);
      }
    const double rel = r2 > 0 ? std::sqrt(d2 / r2) : std::sqrt(d2);
    CAPTURE(rel);
    CHECK(rel <= 1e-9);
    CHECK(phi_off == 0);
  }
  cudaStreamDestroy(stream);
}

const BoundaryKind kP = BoundaryKind::periodic, kW = BoundaryKind::wall, kO = BoundaryKind::outflow;

// A few steps of a shipped case with pressure.solver = fft on both backends.
void compare_case(const std::string& file, int steps, int64_t dense_cells) {
  CAPTURE(dense_cells);
  sim::Config cfg = sim::test::gpu_case(file, steps);
  cfg.solver = sim::PressureSolverKind::fft;
  cfg.dense_transform_cells = dense_cells;
  cfg.backend = sim::BackendKind::cpu;
  const sim::SimState cpu = sim::test::run_steps(cfg, steps);
  cfg.backend = sim::BackendKind::cuda;
  const sim::SimState gpu = sim::test::run_steps(cfg, steps);
  const sim::test::Differences d = sim::test::gpu_vs_cpu(gpu, cpu, true);
  CAPTURE(file);
  INFO(d.text());
  CHECK(d.same_slots);
  CHECK(d.same_counters);
  // The physics kernels round as the CPU does (-fmad=false); the solves agree
  // to ~1e-13, so only an occasional last bit of phi or u differs.
  CHECK(d.fluid() < 1e-6);
  CHECK(d.particles() < 1e-6);
}

}  // namespace

const int64_t kEngines[] = {0, int64_t(1) << 20};  // cuFFT, the dense bases

TEST_CASE("gpu fft: manufactured solutions, every boundary pairing, match the CPU (cuFFT and dense bases)") {
  for (int64_t dense : kEngines)
    for (BoundaryKind x : {kP, kW, kO})
      for (BoundaryKind y : {kP, kW, kO}) check_against_cpu(32, 16, x, y, dense);
}

TEST_CASE("gpu fft: odd, non-power-of-two and one-cell-wide sizes match the CPU (cuFFT and dense bases)") {
  for (auto [nx, ny] : {std::pair{45, 37}, std::pair{100, 60}, std::pair{17, 1}, std::pair{1, 23}, std::pair{1, 1},
                        std::pair{2, 3}, std::pair{33, 48}, std::pair{256, 192}})
    for (int64_t dense : kEngines)
      for (BoundaryKind x : {kP, kW, kO})
        for (BoundaryKind y : {kP, kW, kO}) check_against_cpu(nx, ny, x, y, dense);
}

TEST_CASE("gpu fft: taylor_green.toml (periodic) and cavity.toml (walls) with pressure.solver = fft match the CPU") {
  for (int64_t dense : kEngines) {
    compare_case("taylor_green.toml", sim::test::gpu_steps(10), dense);
    compare_case("cavity.toml", sim::test::gpu_steps(10), dense);
  }
}
