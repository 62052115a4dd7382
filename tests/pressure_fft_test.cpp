// SPDX-License-Identifier: MIT
// The transform pressure solve on the CPU (sim/cpu/cpu_fft.hpp): exact
// discrete answers of manufactured problems for every boundary pairing,
// refusal where it does not apply, thread-count independence, second-order
// accuracy against a continuous solution, and a run through Simulation.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/cpu/cpu_fft.hpp"
#include "sim/model/poisson.hpp"
#include "sim/model/pressure.hpp"
#include "sim/model/simulation.hpp"

namespace {

using sim::BoundaryKind;

struct Case {
  sim::Config cfg;
  sim::Grid grid;
  sim::PoissonHierarchy h;
};

// nx x ny cells of dx x dy; kinds per side (left, right, bottom, top).
// dx = 0.5 and dy = 0.25 make the float coefficients 4 and 16 exactly.
Case make_case(int nx, int ny, BoundaryKind x, BoundaryKind y, double dx = 0.5, double dy = 0.25,
               std::optional<BoundaryKind> x_hi = {}, std::optional<BoundaryKind> y_hi = {}) {
  Case c;
  c.cfg.nx = nx;
  c.cfg.ny = ny;
  c.cfg.lx = nx * dx;
  c.cfg.ly = ny * dy;
  c.cfg.left.kind = x;
  c.cfg.right.kind = x_hi.value_or(x);
  c.cfg.bottom.kind = y;
  c.cfg.top.kind = y_hi.value_or(y);
  c.grid = sim::Grid::make(nx, ny, c.cfg.lx, c.cfg.ly);
  const sim::Constants k = sim::make_constants(c.cfg, c.grid);
  const std::vector<sim::real> open(c.grid.size(), sim::real(1));
  c.h = sim::build_poisson_hierarchy(c.grid, open, k);
  return c;
}

uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

struct Manufactured {
  std::vector<double> phi;  // phi*, halo filled
  std::vector<sim::real> rhs;  // b = A phi*, exact in float
  double b_norm = 0;
};

// Integer phi* in [-100, 100]: with the coefficients 4 and 16, b = A phi* is
// an integer below 2^24, so the float right-hand side is exactly A phi* and
// the solve must return phi* itself (minus its mean when singular).
Manufactured manufacture(const Case& c, uint64_t seed) {
  const sim::PoissonLevel& l = c.h.levels[0];
  Manufactured m;
  m.phi.assign(l.size(), 0.0);
  m.rhs.assign(l.size(), sim::real(0));
  for (int j = 0; j < l.ny; ++j)
    for (int i = 0; i < l.nx; ++i)
      m.phi[l.index(i, j)] = static_cast<double>(static_cast<int>(mix(seed * 1000003u + l.index(i, j)) % 201) - 100);
  sim::fill_poisson_halo(m.phi.data(), l.nx, l.ny, l.pitch, c.h.ghost);
  const int P = l.pitch;
  double b2 = 0;
  for (int j = 0; j < l.ny; ++j)
    for (int i = 0; i < l.nx; ++i) {
      const int q = l.index(i, j);
      const double* p = m.phi.data();
      const double b = sim::poisson_apply_point(p[q], p[q - 1], p[q + 1], p[q - P], p[q + P], l.cx[q], l.cx[q + 1],
                                                l.cy[q], l.cy[q + P]);
      REQUIRE(static_cast<double>(static_cast<sim::real>(b)) == b);
      m.rhs[q] = static_cast<sim::real>(b);
      b2 += b * b;
    }
  m.b_norm = std::sqrt(b2);
  return m;
}

// ||a - b|| / ||b|| over the cells, each minus its mean if `minus_mean`.
double rel_error(const std::vector<double>& a, const std::vector<double>& b, const sim::PoissonLevel& l, bool minus_mean) {
  double ma = 0, mb = 0;
  if (minus_mean) {
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) {
        ma += a[l.index(i, j)];
        mb += b[l.index(i, j)];
      }
    ma /= double(l.nx) * l.ny;
    mb /= double(l.nx) * l.ny;
  }
  double d2 = 0, r2 = 0;
  for (int j = 0; j < l.ny; ++j)
    for (int i = 0; i < l.nx; ++i) {
      const double d = (a[l.index(i, j)] - ma) - (b[l.index(i, j)] - mb);
      d2 += d * d;
      r2 += (b[l.index(i, j)] - mb) * (b[l.index(i, j)] - mb);
    }
  return r2 > 0 ? std::sqrt(d2 / r2) : std::sqrt(d2);
}

struct Solved {
  std::vector<double> x;
  std::vector<sim::real> phi;
  double residual = 0;  // relative
};

Solved solve(const Case& c, const Manufactured& m) {
  const sim::PoissonLevel& l = c.h.levels[0];
  sim::CpuFftPoisson f(c.h);
  Solved s;
  s.x.assign(l.size(), -7.0);
  s.phi.assign(l.size(), sim::real(-7));
  f.solve(m.rhs.data(), s.x.data(), s.phi.data());
  const double r = f.residual_norm(m.rhs.data(), s.x.data(), nullptr);
  s.residual = m.b_norm > 0 ? r / m.b_norm : r;  // b = 0: one cell, singular
  return s;
}

void check_manufactured(int nx, int ny, BoundaryKind x, BoundaryKind y) {
  CAPTURE(nx);
  CAPTURE(ny);
  CAPTURE(static_cast<int>(x));
  CAPTURE(static_cast<int>(y));
  const Case c = make_case(nx, ny, x, y);
  const Manufactured m = manufacture(c, static_cast<uint64_t>(nx * 131 + ny));
  const Solved s = solve(c, m);
  const sim::PoissonLevel& l = c.h.levels[0];
  CHECK(s.residual <= 1e-10);
  CHECK(rel_error(s.x, m.phi, l, c.h.singular) <= 1e-9);
  // x mean-free when singular; phi is x rounded; halos follow the ghost rules.
  if (c.h.singular) {
    double sum = 0, abs_sum = 0;
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) {
        sum += s.x[l.index(i, j)];
        abs_sum += std::abs(s.x[l.index(i, j)]);
      }
    CHECK(std::abs(sum) <= 1e-12 * abs_sum + 1e-300);
  }
  std::vector<double> halo = s.x;
  sim::fill_poisson_halo(halo.data(), l.nx, l.ny, l.pitch, c.h.ghost);
  bool phi_rounded = true, halo_ok = true;
  for (int j = -1; j <= l.ny; ++j)
    for (int i = -1; i <= l.nx; ++i) {
      const int q = l.index(i, j);
      phi_rounded = phi_rounded && s.phi[q] == static_cast<sim::real>(s.x[q]);
      halo_ok = halo_ok && halo[q] == s.x[q];
    }
  CHECK(phi_rounded);
  CHECK(halo_ok);
}

const BoundaryKind kP = BoundaryKind::periodic, kW = BoundaryKind::wall, kO = BoundaryKind::outflow;

}  // namespace

TEST_CASE("pressure fft: manufactured solutions, every boundary pairing on each axis") {
  for (BoundaryKind x : {kP, kW, kO})
    for (BoundaryKind y : {kP, kW, kO}) check_manufactured(32, 16, x, y);
}

TEST_CASE("pressure fft: odd, non-power-of-two and one-cell-wide sizes") {
  for (auto [nx, ny] : {std::pair{45, 37}, std::pair{100, 60}, std::pair{17, 1}, std::pair{1, 23}, std::pair{1, 1},
                        std::pair{2, 3}, std::pair{33, 48}})
    for (BoundaryKind x : {kP, kW, kO})
      for (BoundaryKind y : {kP, kW, kO}) check_manufactured(nx, ny, x, y);
}

TEST_CASE("pressure fft: free-slip and inflow act as walls (Neumann) on both sides") {
  for (BoundaryKind k : {BoundaryKind::free_slip, BoundaryKind::inflow}) check_manufactured(24, 20, k, kP);
}

TEST_CASE("pressure fft: the same bits for any number of threads") {
  const Case c = make_case(100, 60, kP, kW);
  const Manufactured m = manufacture(c, 5);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const Solved one = solve(c, m);
  omp_set_num_threads(3);
  const Solved three = solve(c, m);
  omp_set_num_threads(threads);
  CHECK(one.x == three.x);
}

TEST_CASE("pressure fft: refused with the reason for obstacles and for an inflow/outflow axis") {
  const Case c = make_case(16, 16, kW, kW);
  try {
    sim::make_pressure_solver(sim::PressureSolverKind::fft, &c.h, true);
    FAIL("fft with obstacles was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("obstacles") != std::string::npos);
  }
  const Case io = make_case(16, 16, BoundaryKind::inflow, kW, 0.5, 0.25, kO);
  try {
    sim::make_pressure_solver(sim::PressureSolverKind::fft, &io.h, false);
    FAIL("fft with inflow/outflow was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("x (left/right)") != std::string::npos);
  }
  CHECK_THROWS_AS(sim::CpuFftPoisson{io.h}, std::invalid_argument);
  // auto falls back to multigrid there, and picks fft where it applies
  CHECK(sim::make_pressure_solver(sim::PressureSolverKind::auto_, &io.h, false)->name() == "multigrid");
  CHECK(sim::make_pressure_solver(sim::PressureSolverKind::auto_, &c.h, true)->name() == "multigrid");
  CHECK(sim::make_pressure_solver(sim::PressureSolverKind::auto_, &c.h, false)->name() == "fft");
}

TEST_CASE("pressure fft: second order against cos(pi x) cos(pi y) with Neumann walls") {
  // lap phi = -2 pi^2 phi on the unit square, d phi / dn = 0 on the walls.
  const double pi = 3.14159265358979323846;
  std::vector<double> err;
  for (int n : {32, 64, 128}) {
    const Case c = make_case(n, n, kW, kW, 1.0 / n, 1.0 / n);
    const sim::PoissonLevel& l = c.h.levels[0];
    std::vector<sim::real> rhs(l.size(), sim::real(0));
    std::vector<double> exact(l.size(), 0.0), x(l.size(), 0.0);
    std::vector<sim::real> phi(l.size(), sim::real(0));
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double e = std::cos(pi * (i + 0.5) / n) * std::cos(pi * (j + 0.5) / n);
        exact[l.index(i, j)] = e;
        rhs[l.index(i, j)] = static_cast<sim::real>(-2 * pi * pi * e);
      }
    sim::CpuFftPoisson f(c.h);
    f.solve(rhs.data(), x.data(), phi.data());
    double m = 0;  // the exact solution has mean 0 over the cell centres too
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) m = std::max(m, std::abs(x[l.index(i, j)] - exact[l.index(i, j)]));
    err.push_back(m);
  }
  CAPTURE(err[0]);
  CAPTURE(err[1]);
  CAPTURE(err[2]);
  CHECK(err[2] < 2e-4);
  for (int k = 0; k < 2; ++k) {
    const double order = std::log2(err[k] / err[k + 1]);
    CAPTURE(order);
    CHECK(order > 1.9);
    CHECK(order < 2.1);
  }
}

TEST_CASE("pressure fft: Taylor-Green through Simulation, the residual at rounding and the flow divergence-free") {
  sim::Config cfg;
  cfg.source = "test";
  cfg.nx = 48;
  cfg.ny = 40;
  cfg.lx = 2 * 3.14159265358979323846;
  cfg.ly = cfg.lx;
  cfg.viscosity = 0.05;
  cfg.gx = cfg.gy = 0;
  cfg.initial = sim::InitialFlow::taylor_green;
  cfg.initial_u = 1.0;
  for (sim::BoundarySide* s : {&cfg.left, &cfg.right, &cfg.bottom, &cfg.top}) s->kind = kP;
  cfg.solver = sim::PressureSolverKind::fft;
  cfg.backend = sim::BackendKind::cpu;
  const sim::SimState s0 = sim::make_initial_state(cfg);
  sim::Simulation simulation(cfg, sim::make_cpu_backend(cfg, s0.grid), s0);
  for (int k = 0; k < 5; ++k) {
    const sim::StepInfo info = simulation.step();
    CHECK(info.pressure.iterations == 3);  // one direct solve for each of the step's three stages
    CHECK(info.pressure.converged);
    CHECK(info.pressure.residual <= 1e-10);
  }
  // div u after projecting with the float64 pressure: float rounding of u
  const sim::Diagnostics d = simulation.backend().diagnostics();
  CHECK(d.max_div < 1e-4 * d.max_speed * cfg.nx / cfg.lx);
}
