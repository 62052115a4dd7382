// SPDX-License-Identifier: MIT
// Pressure solvers on the CPU backend against manufactured solutions.
//
// The solvers read their right-hand side from the velocity (rhs = div u / dt),
// so a problem A phi* = b is posed through the velocity u = grad phi* on the
// faces (dt = 1): its discrete divergence is A phi* with the boundary rules
// of sim/model/poisson.hpp (wall and inflow faces fixed at 0 = Neumann, an outflow
// face across the negated ghost = Dirichlet, periodic faces across the wrap).
// With dx = dy = 1 and an integer phi*, every face velocity and every b is an
// integer, exact in float32, so phi* is the exact discrete answer.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "sim/app/memory_check.hpp"
#include "sim/cpu/cpu_backend.hpp"
#include "sim/model/poisson.hpp"
#include "sim/model/pressure.hpp"
#include "sim/model/simulation.hpp"
#include "sim/model/state.hpp"
#include "support/cases.hpp"

namespace {

using sim::BoundaryKind;
using sim::PressureSolverKind;

struct Case {
  const char* name;
  int nx, ny;
  BoundaryKind sides[4];  // left, right, bottom, top
  bool obstacle;
};

sim::Config make_config(const Case& c, double lx, double ly) {
  sim::Config cfg;
  cfg.source = "test";
  cfg.nx = c.nx;
  cfg.ny = c.ny;
  cfg.lx = lx;
  cfg.ly = ly;
  cfg.density = 1.0;
  cfg.viscosity = 0.01;
  cfg.gx = cfg.gy = 0;
  cfg.backend = sim::BackendKind::cpu;
  sim::BoundarySide* s[4] = {&cfg.left, &cfg.right, &cfg.bottom, &cfg.top};
  for (int k = 0; k < 4; ++k) *s[k] = sim::BoundarySide{c.sides[k], 0.0};
  if (c.obstacle) {
    sim::Obstacle o;
    o.shape = sim::ObstacleShape::circle;
    o.x = 0.37 * lx;
    o.y = 0.55 * ly;
    o.radius = 0.17 * std::min(lx, ly);
    cfg.obstacles.push_back(o);
    sim::Obstacle r;
    r.shape = sim::ObstacleShape::rectangle;
    r.x0 = 0.7 * lx;
    r.x1 = 0.8 * lx;
    r.y0 = 0.1 * ly;
    r.y1 = 0.45 * ly;
    cfg.obstacles.push_back(r);
  }
  return cfg;
}

// A backend holding the velocity u = grad phi (phi on cell centres, grid
// layout, solid cells ignored), ready for solvers to compute b = A phi.
struct Problem {
  sim::Config cfg;
  sim::SimState state;
  sim::Constants k{};
  std::unique_ptr<sim::Backend> backend;
  sim::PoissonHierarchy h;
  bool has_solids = false;

  Problem(const sim::Config& c, const std::function<double(double, double)>& phi_of_xy) : cfg(c) {
    state = sim::make_initial_state(cfg);
    const sim::Grid& g = state.grid;
    k = sim::make_constants(cfg, g);
    k.dt = 1;
    has_solids = k.has_solids != 0;
    h = sim::build_poisson_hierarchy(g, state.open, k);
    const double dx = cfg.dx(), dy = cfg.dy();
    std::vector<double> phi(g.size(), 0.0);
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i)
        if (state.open[g.idx(i, j)] != 0) phi[g.idx(i, j)] = phi_of_xy((i + 0.5) * dx, (j + 0.5) * dy);
    // the halo by the level rules (wrap, copy, negate)
    for (int j = 0; j < g.ny; ++j) sim::poisson_halo_x(phi.data(), j, g.nx, g.pitch, h.ghost);
    for (int i = -1; i <= g.nx; ++i) sim::poisson_halo_y(phi.data(), i, g.ny, g.pitch, h.ghost);
    auto open = [&](int i, int j) {
      if (h.ghost[sim::kLeft] == sim::GhostRule::wrap) i = (i + g.nx) % g.nx;
      if (h.ghost[sim::kBottom] == sim::GhostRule::wrap) j = (j + g.ny) % g.ny;
      if (i < 0 || j < 0 || i >= g.nx || j >= g.ny) return true;  // the halo acts by its rule
      return state.open[g.idx(i, j)] != 0;
    };
    const bool wrap_x = h.ghost[sim::kLeft] == sim::GhostRule::wrap;
    const bool wrap_y = h.ghost[sim::kBottom] == sim::GhostRule::wrap;
    std::fill(state.u.begin(), state.u.end(), 0.0f);
    std::fill(state.v.begin(), state.v.end(), 0.0f);
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i <= g.nx; ++i) {
        const bool active = (i >= k.u_i_begin && i < k.u_i_end) || (wrap_x && i == g.nx);
        if (!active || !open(i - 1, j) || !open(i, j)) continue;
        const int c = g.idx(i, j);
        const int w = wrap_x && i == g.nx ? g.idx(g.nx - 1, j) : g.idx(i - 1, j);
        const int e = wrap_x && i == g.nx ? g.idx(0, j) : c;
        state.u[c] = static_cast<float>((phi[e] - phi[w]) / dx);
      }
    for (int j = 0; j <= g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const bool active = (j >= k.v_j_begin && j < k.v_j_end) || (wrap_y && j == g.ny);
        if (!active || !open(i, j - 1) || !open(i, j)) continue;
        const int c = g.idx(i, j);
        const int s = wrap_y && j == g.ny ? g.idx(i, g.ny - 1) : g.idx(i, j - 1);
        const int n = wrap_y && j == g.ny ? g.idx(i, 0) : c;
        state.v[c] = static_cast<float>((phi[n] - phi[s]) / dy);
      }
    std::fill(state.phi.begin(), state.phi.end(), 0.0f);
    backend = sim::make_cpu_backend(cfg, g);
    backend->set_constants(k);
    backend->upload(state);
  }

  // Solves; false when the backend has no such solver (fft not built).
  bool solve(PressureSolverKind kind, const sim::PressureSettings& ps, sim::PressureStats& st) {
    auto solver = sim::make_pressure_solver(kind, &h, has_solids);
    try {
      solver->prepare(*backend, h);
    } catch (const std::logic_error& e) {
      if (kind == PressureSolverKind::fft) return false;
      throw;
    }
    st = solver->solve(*backend, ps);
    return true;
  }

  // The solved pressure (float32 phi) on the fluid cells.
  std::vector<double> pressure() {
    sim::SimState s;
    s.grid = state.grid;
    backend->download(s);
    return std::vector<double>(s.phi.begin(), s.phi.end());
  }

  // max |(a - mean a) - (b - mean b)| over fluid cells; the means only where
  // A is singular (no Dirichlet side).
  double max_diff(const std::vector<double>& a, const std::vector<double>& b) const {
    const sim::Grid& g = state.grid;
    double ma = 0, mb = 0, n = 0;
    if (h.singular) {
      for (int j = 0; j < g.ny; ++j)
        for (int i = 0; i < g.nx; ++i)
          if (state.open[g.idx(i, j)] != 0) {
            ma += a[g.idx(i, j)];
            mb += b[g.idx(i, j)];
            n += 1;
          }
      ma /= n;
      mb /= n;
    }
    double m = 0;
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i)
        if (state.open[g.idx(i, j)] != 0) m = std::max(m, std::abs((a[g.idx(i, j)] - ma) - (b[g.idx(i, j)] - mb)));
    return m;
  }
  double max_abs(const std::vector<double>& a) const { return max_diff(a, std::vector<double>(a.size(), 0.0)); }

  std::vector<double> sampled(const std::function<double(double, double)>& f) const {
    const sim::Grid& g = state.grid;
    std::vector<double> out(g.size(), 0.0);
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) out[g.idx(i, j)] = f((i + 0.5) * cfg.dx(), (j + 0.5) * cfg.dy());
    return out;
  }
};

// An integer pressure field with smooth and rough parts (x, y in cells).
double integer_phi(double x, double y) {
  const double smooth = 800.0 * std::cos(0.11 * x + 0.3) * std::sin(0.07 * y + 1.1) + 3.0 * x - 2.0 * y;
  const int rough = ((static_cast<int>(x) * 7919 + static_cast<int>(y) * 104729) % 13) - 6;
  return std::round(smooth) + rough;
}

constexpr BoundaryKind W = BoundaryKind::wall, P = BoundaryKind::periodic, In = BoundaryKind::inflow,
                       Out = BoundaryKind::outflow, F = BoundaryKind::free_slip;

bool has_outflow(const Case& c) {
  return std::find(std::begin(c.sides), std::end(c.sides), BoundaryKind::outflow) != std::end(c.sides);
}

// The existing red-black SOR refreshes the halo only after each half-sweep:
// at an outflow side the negated ghost lags a half-sweep, and across a
// periodic side of odd length two cells of one colour are neighbours. Both
// destabilise omega near 2 (the default optimum on these grids: NaN within a
// few hundred sweeps), so SOR runs those cases with a moderate omega.
sim::Config solver_config(const Case& c, PressureSolverKind kind) {
  sim::Config cfg = make_config(c, c.nx, c.ny);
  const bool odd_periodic = (c.sides[0] == BoundaryKind::periodic && c.nx % 2 == 1) ||
                            (c.sides[2] == BoundaryKind::periodic && c.ny % 2 == 1);
  if (kind == PressureSolverKind::sor && (has_outflow(c) || odd_periodic)) cfg.omega = 1.5;
  return cfg;
}

const Case kCases[] = {
    {"walls 45x37", 45, 37, {W, W, W, W}, false},
    {"walls + obstacles 100x60", 100, 60, {W, W, W, W}, true},
    {"periodic 45x37", 45, 37, {P, P, P, P}, false},
    {"periodic x, walls y + obstacles 100x60", 100, 60, {P, P, W, F}, true},
    {"inflow/outflow 45x37", 45, 37, {In, Out, W, W}, false},
    {"inflow/outflow + obstacles 100x60", 100, 60, {In, Out, W, W}, true},
    {"outflow on all sides 64x64", 64, 64, {Out, Out, Out, Out}, false},
};

sim::PressureSettings settings(PressureSolverKind kind) {
  sim::PressureSettings ps;
  const bool mg = kind == PressureSolverKind::multigrid || kind == PressureSolverKind::fft;
  ps.tolerance = mg ? 1e-10 : 1e-4;  // jacobi and sor iterate on float32: 1e-5 is about their floor
  ps.max_iterations = mg ? 100 : 50000;
  ps.check_every = 10;
  return ps;
}

}  // namespace

TEST_CASE("pressure: every solver recovers a manufactured discrete solution") {
  for (const Case& c : kCases)
    for (PressureSolverKind kind :
         {PressureSolverKind::jacobi, PressureSolverKind::sor, PressureSolverKind::multigrid, PressureSolverKind::fft}) {
      if (kind == PressureSolverKind::fft && (c.obstacle || c.sides[0] != c.sides[1] || c.sides[2] != c.sides[3]))
        continue;  // the transform solve does not apply
      // jacobi: tens of thousands of sweeps on the larger grids; with outflow
      // on all sides its float32 residual stalls near 1e-3
      if (kind == PressureSolverKind::jacobi && (c.nx > 64 || c.sides[2] == BoundaryKind::outflow)) continue;
      INFO(std::string(c.name) << ", " << sim::to_string(kind));
      Problem p(solver_config(c, kind), integer_phi);
      const std::vector<double> exact = p.sampled(integer_phi);
      const sim::PressureSettings ps = settings(kind);
      sim::PressureStats st;
      if (!p.solve(kind, ps, st)) {
        MESSAGE("fft: not implemented by this backend, skipped");
        continue;
      }
      CHECK(st.converged);
      CHECK(st.residual <= ps.tolerance);
      const double err = p.max_diff(p.pressure(), exact) / p.max_abs(exact);
      INFO("relative max error " << err << " after " << st.iterations << " iterations");
      // multigrid and fft: float64 to 1e-10, then phi rounded to float32;
      // jacobi and sor: relative residual 1e-4 in float32, worth a few
      // percent of the solution on the Dirichlet cases
      CHECK(err < (ps.tolerance < 1e-8 ? 1e-6 : 5e-2));
    }
}

TEST_CASE("pressure: multigrid and SOR agree to the tolerance on the same problem") {
  for (const Case& c : {kCases[1], kCases[5]}) {
    INFO(std::string(c.name));
    Problem a(solver_config(c, PressureSolverKind::sor), integer_phi);
    Problem b(solver_config(c, PressureSolverKind::multigrid), integer_phi);
    sim::PressureSettings ps = settings(PressureSolverKind::sor);
    sim::PressureStats sa, sb;
    REQUIRE(a.solve(PressureSolverKind::sor, ps, sa));
    ps.tolerance = 1e-4;  // the same tolerance as SOR's
    ps.max_iterations = 100;
    REQUIRE(b.solve(PressureSolverKind::multigrid, ps, sb));
    CHECK(sa.converged);
    CHECK(sb.converged);
    const double d = a.max_diff(a.pressure(), b.pressure()) / a.max_abs(a.pressure());
    INFO("relative max difference " << d);
    CHECK(d < 5e-2);
    CHECK(d > 0);  // two different solvers: not the same rounding
  }
}

TEST_CASE("pressure: second order against cos(pi x) cos(pi y) with walls") {
  const double pi = 3.14159265358979323846;
  auto phi = [&](double x, double y) { return std::cos(pi * x) * std::cos(pi * y); };
  // the float64 solvers: jacobi and sor stall near 1e-5 in float32, which
  // on 128^2 is already the size of the discretisation error
  for (PressureSolverKind kind : {PressureSolverKind::multigrid, PressureSolverKind::fft}) {
    INFO(sim::to_string(kind));
    std::vector<double> err;
    for (int n : {32, 64, 128}) {
      const Case c{"walls", n, n, {W, W, W, W}, false};
      // the face velocity is the exact gradient, so b = div(grad phi) + O(h^2)
      Problem p(make_config(c, 1.0, 1.0), [](double, double) { return 0.0; });
      const sim::Grid& g = p.state.grid;
      const double h = 1.0 / n;
      for (int j = 0; j < n; ++j)
        for (int i = 1; i < n; ++i) p.state.u[g.idx(i, j)] = float(-pi * std::sin(pi * i * h) * std::cos(pi * (j + 0.5) * h));
      for (int j = 1; j < n; ++j)
        for (int i = 0; i < n; ++i) p.state.v[g.idx(i, j)] = float(-pi * std::cos(pi * (i + 0.5) * h) * std::sin(pi * j * h));
      p.backend->upload(p.state);
      sim::PressureSettings ps = settings(kind);
      sim::PressureStats st;
      if (!p.solve(kind, ps, st)) break;  // fft not implemented by this backend
      CHECK(st.converged);
      err.push_back(p.max_diff(p.pressure(), p.sampled(phi)));
      MESSAGE(sim::to_string(kind) << " " << n << "^2: max error " << err.back());
    }
    for (size_t i = 1; i < err.size(); ++i) {
      const double order = std::log2(err[i - 1] / err[i]);
      INFO("order " << order);
      CHECK(order >= 1.8);
    }
  }
}

TEST_CASE("pressure: multigrid iterations do not grow with the grid, 64^2 to 512^2") {
  // A cavity-like right-hand side: the divergence of a pseudo-random
  // velocity, plus a lid-like layer near the top.
  int first = -1;
  for (int n : {64, 128, 256, 512}) {
    const Case c{"walls", n, n, {W, W, W, W}, false};
    Problem p(make_config(c, 1.0, 1.0), [](double, double) { return 0.0; });
    const sim::Grid& g = p.state.grid;
    uint32_t s = 12345;
    auto rnd = [&] {
      s = s * 1664525u + 1013904223u;
      return (s >> 8) * (1.0 / 16777216.0) - 0.5;
    };
    for (int j = 0; j < n; ++j)
      for (int i = 1; i < n; ++i) p.state.u[g.idx(i, j)] = float(rnd() + (j == n - 1 ? 1.0 : 0.0));
    for (int j = 1; j < n; ++j)
      for (int i = 0; i < n; ++i) p.state.v[g.idx(i, j)] = float(rnd());
    p.backend->upload(p.state);
    sim::PressureSettings ps;
    ps.tolerance = 1e-6;
    ps.max_iterations = 50;
    ps.record_history = true;
    sim::PressureStats st;
    REQUIRE(p.solve(PressureSolverKind::multigrid, ps, st));
    CHECK(st.converged);
    const double factor = std::pow(st.residual / st.history.front(), 1.0 / st.iterations);
    MESSAGE(n << "^2: " << st.iterations << " iterations to " << st.residual << ", factor " << factor);
    CHECK(st.iterations <= 12);
    CHECK(factor <= 0.15);
    if (first < 0) first = st.iterations;
    CHECK(std::abs(st.iterations - first) <= 2);
  }
}

TEST_CASE("pressure: unconverged solves are counted and max_failures in a row stop the run") {
  const Case c{"cavity", 24, 24, {W, W, W, W}, false};
  sim::Config cfg = make_config(c, 1.0, 1.0);
  cfg.top.speed = 1.0;
  cfg.solver = PressureSolverKind::sor;
  cfg.max_iterations = 1;
  cfg.tolerance = 1e-10;
  // three solves a step and, on the run's first step, the pressure the
  // implicit viscous solve starts from: steps 1 and 2 miss 7 times, step 3's
  // first solve is the 8th
  cfg.max_failures = 8;
  {
    const sim::SimState s = sim::make_initial_state(cfg);
    sim::Simulation run(cfg, sim::make_cpu_backend(cfg, s.grid), s);
    run.step();
    run.step();
    CHECK(run.pressure_unconverged() == 7);
    CHECK(run.pressure_worst_residual() > 1e-10);
    try {
      run.step();
      FAIL("the fifth unconverged solve in a row did not stop the run");
    } catch (const sim::PressureFailure& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.find("step 3") != std::string::npos);
      CHECK(what.find("solver sor") != std::string::npos);
      CHECK(what.find("tolerance 1e-10") != std::string::npos);
      CHECK(what.find('\n') == std::string::npos);
    }
  }
  {
    // a converged solve resets the count: with a reachable tolerance no stop
    cfg.max_iterations = 2000;
    cfg.tolerance = 1e-4;
    const sim::SimState s = sim::make_initial_state(cfg);
    sim::Simulation run(cfg, sim::make_cpu_backend(cfg, s.grid), s);
    for (int i = 0; i < 5; ++i) CHECK_NOTHROW(run.step());
    CHECK(run.pressure_unconverged() == 0);
  }
}

// pressure.fixed_iterations: a budget, not a tolerance. Catches a budget
// that still counts failures (max_failures = 1 would stop the run), a solve
// that stops early or runs on, and a budget accepted for a solver it does
// not suit.
TEST_CASE("pressure: a fixed budget runs exactly that many sweeps a solve and never fails") {
  const Case c{"cavity", 24, 24, {W, W, W, W}, false};
  for (const PressureSolverKind kind : {PressureSolverKind::jacobi, PressureSolverKind::sor}) {
    double last = 1;
    for (const int n : {3, 12, 48}) {
      sim::Config cfg = make_config(c, 1.0, 1.0);
      cfg.top.speed = 1.0;
      cfg.solver = kind;
      cfg.fixed_iterations = n;
      cfg.tolerance = 1e-12;  // out of float32's reach: with a tolerance every solve would fail
      cfg.max_iterations = 1;
      cfg.max_failures = 1;
      CAPTURE(static_cast<int>(kind));
      const sim::SimState s = sim::make_initial_state(cfg);
      sim::Simulation run(cfg, sim::make_cpu_backend(cfg, s.grid), s);
      sim::StepInfo info;
      for (int i = 0; i < 3; ++i) {
        info = run.step();
        CHECK(info.pressure.iterations == 3 * n);  // three solves a step, n sweeps each
        CHECK(info.pressure.converged);
      }
      CHECK(run.pressure_unconverged() == 0);
      // reported, not reached; more sweeps, a smaller residual
      MESSAGE(std::string(kind == PressureSolverKind::sor ? "sor" : "jacobi") << ", a budget of " << n
                                                                   << " sweeps: relative residual " << info.pressure.residual);
      CHECK(info.pressure.residual > 1e-12);
      CHECK(info.pressure.residual < last);
      last = info.pressure.residual;
    }
  }
  for (const char* solver : {"auto", "fft", "multigrid"})
    CHECK(sim::test::config_error("", {"pressure.fixed_iterations=5", std::string("pressure.solver=") + solver}) ==
          "--set pressure.fixed_iterations=5: pressure.fixed_iterations: a fixed budget needs pressure.solver = jacobi "
          "or sor");
}

TEST_CASE("pressure: the sim binary exits non-zero with one line after max_failures unconverged solves") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sim_pressure_failure_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string err = (dir / "err.txt").string(), out = (dir / "out.txt").string();
  const std::string cmd = "OMP_NUM_THREADS=1 '" + std::string(SIM_EXECUTABLE) + "' '" + std::string(SIM_SOURCE_DIR) +
                          "/config/cavity.toml' --backend cpu --steps 10 --set domain.nx=16 --set domain.ny=16"
                          " --pressure-solver sor --set pressure.max_iterations=1 --set pressure.tolerance=1e-10"
                          " --set pressure.max_failures=2 --snapshot-every 0 --output '" +
                          (dir / "run").string() + "' > '" + out + "' 2> '" + err + "'";
  const int rc = std::system(cmd.c_str());
  std::ifstream f(err);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  INFO(text);
  CHECK(rc != 0);
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  CHECK(text.find("step 1,") != std::string::npos);  // two solves a step: both of step 1 miss
  CHECK(text.find("solver sor") != std::string::npos);
  CHECK(text.find("relative residual") != std::string::npos);
  CHECK(text.find("tolerance 1e-10") != std::string::npos);
  std::filesystem::remove_all(dir);
}

// The solver a run will use, as the memory checks budget it, is the one
// Simulation makes: both ask resolve_solver. Catches: the GPU plan budgeting
// the transform solve over GPU ranks, where auto takes multigrid; the host
// check of a split GPU run planning one process's solver.
TEST_CASE("pressure: the memory checks budget the solver the run picks, over GPU ranks too") {
  const sim::Config cavity = sim::test::shipped_config("cavity.toml");
  CHECK(sim::resolve_solver(cavity) == PressureSolverKind::fft);
  // the backend refuses it (the CUDA backend over GPU ranks): auto takes multigrid
  CHECK(sim::resolve_solver(cavity, "refused") == PressureSolverKind::multigrid);
  CHECK(sim::why_no_transform(cavity, "refused") == "refused");
  const sim::Config channel = sim::test::shipped_config("channel.toml");  // an outflow on one side of x, obstacles
  CHECK(sim::resolve_solver(channel) == PressureSolverKind::multigrid);
  CHECK_FALSE(sim::why_no_transform(channel).empty());
  for (const char* solver : {"multigrid", "jacobi", "sor", "fft"}) {
    const std::string set = std::string("pressure.solver=\"") + solver + "\"";
    CHECK(sim::to_string(sim::resolve_solver(sim::test::shipped_config("cavity.toml", {set}), "refused")) == solver);
  }
  // the choice on the grid (make_pressure_solver from a hierarchy) is the same one
  sim::Config c = cavity;
  const sim::SimState s = sim::make_initial_state(c);
  const sim::PoissonHierarchy h = sim::build_poisson_hierarchy(s.grid, s.open, sim::make_constants(c, s.grid));
  CHECK(sim::make_pressure_solver(c.solver, &h, false)->name() == "fft");
  CHECK(sim::make_pressure_solver(c.solver, &h, false, "refused")->name() == "multigrid");
  CHECK_THROWS_WITH_AS(sim::make_pressure_solver(PressureSolverKind::fft, &h, false, "refused"),
                       "pressure.solver = \"fft\" does not apply: refused", std::invalid_argument);
  CHECK_THROWS_AS(sim::make_pressure_solver(PressureSolverKind::auto_), std::invalid_argument);
  // The run and the host estimate, for configs where auto goes either way:
  // the solver Simulation makes is resolve_solver's, and the estimate of the
  // config is that of the config asking for it by name.
  for (const sim::Config& cfg :
       {cavity, channel, sim::test::shipped_config("box.toml"), sim::test::shipped_config("taylor_green.toml")}) {
    INFO(cfg.source);
    const PressureSolverKind picked = sim::resolve_solver(cfg);
    const sim::SimState st = sim::make_initial_state(cfg);
    sim::Simulation run(cfg, sim::make_cpu_backend(cfg, st.grid), st);
    CHECK(run.pressure_solver_name() == sim::to_string(picked));
    sim::Config named = cfg;
    named.solver = picked;
    CHECK(sim::host_memory_need(cfg, false).total().value() == sim::host_memory_need(named, false).total().value());
  }
  // fft where it does not apply is refused when the run makes it, as before
  sim::Config obstacle = sim::test::shipped_config("cavity.toml", {"pressure.solver=\"fft\""});
  obstacle.obstacles.push_back(sim::Obstacle{sim::ObstacleShape::circle, 0.5, 0.5, 0.1});
  const sim::SimState so = sim::make_initial_state(obstacle);
  CHECK(sim::resolve_solver(obstacle) == PressureSolverKind::fft);
  CHECK_THROWS_WITH_AS(sim::Simulation(obstacle, sim::make_cpu_backend(obstacle, so.grid), so),
                       "pressure.solver = \"fft\" does not apply: the domain has obstacles", std::invalid_argument);
}
