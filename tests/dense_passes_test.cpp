// SPDX-License-Identifier: MIT
// The passes of the dense transform solve (sim/model/dense_passes.hpp, the
// code of the device's three kernels, cuda/dense_transform.cuh) run serially
// on the host with the kernels' own ends (the pressure's load, division and
// store with its halo; the viscous step's residual, division and correction)
// against the FFTW solvers (sim/cpu/cpu_fft.hpp, cpu_helmholtz_fft.hpp): every
// side pairing each solver takes, odd, one-cell-wide and rectangular sizes,
// every cell and halo value written (the output poisoned first).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "sim/cpu/cpu_fft.hpp"
#include "sim/cpu/cpu_helmholtz_fft.hpp"
#include "sim/model/constants.hpp"
#include "sim/model/dense_basis.hpp"
#include "sim/model/dense_passes.hpp"
#include "sim/model/helmholtz_fft.hpp"
#include "sim/model/poisson.hpp"
#include "sim/model/poisson_fft.hpp"
#include "support/sides.hpp"

namespace {

using sim::BoundaryKind;

struct Bases {
  sim::DenseBasis x, y;
  std::vector<double> t, scratch;
  Bases(sim::DenseBasis bx, sim::DenseBasis by) : x(std::move(bx)), y(std::move(by)) {
    t.assign(static_cast<size_t>(x.n) * y.n, std::numeric_limits<double>::quiet_NaN());
    scratch.assign(static_cast<size_t>(std::max(x.n, 2 * y.n)), std::numeric_limits<double>::quiet_NaN());
  }
  sim::DenseAxisView vx() const { return {x.q.data(), x.lambda.data(), x.n}; }
  sim::DenseAxisView vy() const { return {y.q.data(), y.lambda.data(), y.n}; }
};

void poisson_against_fftw(int nx, int ny, BoundaryKind kx, BoundaryKind ky) {
  CAPTURE(nx);
  CAPTURE(ny);
  CAPTURE(static_cast<int>(kx));
  CAPTURE(static_cast<int>(ky));
  const sim::Config cfg = sim::test::sides_config(nx, ny, kx, ky);
  const sim::Grid grid = sim::Grid::make(nx, ny, cfg.lx, cfg.ly);
  const std::vector<sim::real> open(grid.size(), sim::real(1));
  const sim::PoissonHierarchy h = sim::build_poisson_hierarchy(grid, open, sim::make_constants(cfg, grid));
  const sim::FftProblem p = sim::fft_problem(h);
  const sim::PoissonLevel& l = h.levels[0];
  std::vector<sim::real> rhs(l.size(), sim::real(0));
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i)
      rhs[static_cast<size_t>(l.index(i, j))] = static_cast<sim::real>(std::sin(0.37 * i + 1.3 * j) + 0.1 * ((i * 7 + j) % 5));

  std::vector<double> want(l.size(), 0.0);
  std::vector<sim::real> want_phi(l.size(), sim::real(0));
  sim::CpuFftPoisson cpu(h);
  cpu.solve(rhs.data(), want.data(), want_phi.data());

  Bases b(sim::dense_basis(p.ax, nx, p.cx), sim::dense_basis(p.ay, ny, p.cy));
  std::vector<double> x(l.size(), std::numeric_limits<double>::quiet_NaN());
  std::vector<sim::real> phi(l.size(), std::numeric_limits<sim::real>::quiet_NaN());
  const sim::DenseStoreHalo store{x.data(), phi.data(), nx, ny, p.pitch, {p.ghost[0], p.ghost[1], p.ghost[2], p.ghost[3]}};
  sim::dense_solve_host(b.vx(), b.vy(), sim::DenseLoadRhs{rhs.data(), p.pitch}, sim::DensePoissonDivide{}, store,
                        b.t.data(), b.scratch.data());

  double d2 = 0, r2 = 0;
  int phi_off = 0;
  for (int j = -1; j <= ny; ++j)
    for (int i = -1; i <= nx; ++i) {
      const size_t q = static_cast<size_t>(l.index(i, j));
      d2 += (x[q] - want[q]) * (x[q] - want[q]);
      r2 += want[q] * want[q];
      phi_off += !(phi[q] == static_cast<sim::real>(x[q]));
    }
  const double rel = r2 > 0 ? std::sqrt(d2 / r2) : std::sqrt(d2);
  CAPTURE(rel);
  CHECK(rel <= 1e-12);  // NaN (a value not written) fails
  CHECK(phi_off == 0);
}

void helmholtz_against_fftw(int nx, int ny, BoundaryKind kx, BoundaryKind ky) {
  const sim::Config cfg = sim::test::sides_config(nx, ny, kx, ky);
  const sim::Grid grid = sim::Grid::make(nx, ny, cfg.lx, cfg.ly);
  const sim::Constants k = sim::make_constants(cfg, grid);
  if (!sim::helmholtz_transform_refusal(k, false).empty()) return;
  CAPTURE(nx);
  CAPTURE(ny);
  CAPTURE(static_cast<int>(kx));
  CAPTURE(static_cast<int>(ky));
  sim::CpuFftHelmholtz cpu(k);
  const double g = 0.37;
  for (int q = 0; q < 2; ++q) {
    CAPTURE(q);
    const sim::HelmholtzComponent c = sim::helmholtz_component(k, q);
    if (c.x.unknowns <= 0 || c.y.unknowns <= 0) continue;
    std::vector<sim::real> b(grid.size()), x0(grid.size());
    for (size_t n = 0; n < b.size(); ++n) {
      b[n] = static_cast<sim::real>(std::sin(0.7 * static_cast<double>(n)) + 0.25 * static_cast<double>(n % 5));
      x0[n] = static_cast<sim::real>(std::cos(0.3 * static_cast<double>(n)) - 0.125 * static_cast<double>(n % 3));
    }
    std::vector<sim::real> want = x0, got = x0;
    cpu.correct(q, b.data(), want.data(), g);

    Bases bases(sim::dense_basis(c.x), sim::dense_basis(c.y));
    const sim::DenseLoadResidual load{b.data(), x0.data(), k.pitch, c.x.first, c.y.first, c.x.c, c.y.c,
                                      static_cast<sim::real>(g), nullptr};
    const sim::DenseCorrect store{got.data(), k.pitch, c.x.first, c.y.first, c.x.unknowns, c.y.unknowns};
    sim::dense_solve_host(bases.vx(), bases.vy(), load,
                          sim::DenseHelmholtzDivide{static_cast<sim::real>(g), nullptr}, store, bases.t.data(),
                          bases.scratch.data());
    // float x: the corrections agree to float rounding; nothing else moved
    double worst = 0, size = 0;
    int moved_elsewhere = 0;
    for (size_t n = 0; n < got.size(); ++n) {
      worst = std::max(worst, std::fabs(static_cast<double>(got[n]) - want[n]));
      size = std::max(size, std::fabs(static_cast<double>(want[n])));
    }
    for (int j = -1; j <= grid.rows - 2; ++j)
      for (int i = -1; i <= grid.pitch - 2; ++i) {
        const bool unknown = i >= c.x.first && i < c.x.first + c.x.unknowns && j >= c.y.first &&
                             j < c.y.first + c.y.unknowns;
        const size_t at = static_cast<size_t>(grid.idx(i, j));
        if (!unknown && !(got[at] == x0[at])) ++moved_elsewhere;
      }
    CAPTURE(worst);
    CHECK(worst <= 4e-7 * std::max(size, 1.0));
    CHECK(moved_elsewhere == 0);
  }
}

const BoundaryKind kP = BoundaryKind::periodic, kW = BoundaryKind::wall, kO = BoundaryKind::outflow,
                   kF = BoundaryKind::free_slip, kI = BoundaryKind::inflow;

}  // namespace

TEST_CASE("dense passes: the pressure's transform solve, every side pairing and awkward sizes, match FFTW") {
  for (auto [nx, ny] : {std::pair{32, 16}, {45, 37}, {17, 1}, {1, 23}, {1, 1}, {2, 3}, {33, 48}})
    for (BoundaryKind x : {kP, kW, kO})
      for (BoundaryKind y : {kP, kW, kO}) poisson_against_fftw(nx, ny, x, y);
}

TEST_CASE("dense passes: the viscous step's transform correction, every side pairing it takes, matches FFTW") {
  for (auto [nx, ny] : {std::pair{5, 9}, {20, 37}, {33, 18}, {2, 2}})
    for (BoundaryKind x : {kP, kW, kF, kI})
      for (BoundaryKind y : {kP, kW, kF, kI}) helmholtz_against_fftw(nx, ny, x, y);
}
