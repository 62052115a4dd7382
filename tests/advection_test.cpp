// SPDX-License-Identifier: MIT
// Momentum advection: fluid.advection = "central" (the default) and "quick".
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sim/model/advection.hpp"
#include "sim/model/faces.hpp"
#include "sim/model/fluid_physics.hpp"
#include "sim/model/halo.hpp"
#include "support/cases.hpp"

namespace {

using sim::Config;
using sim::SimState;

// FNV-1a over the bits of the interior u and v faces and the cell pressures.
uint64_t fluid_hash(const SimState& s) {
  const sim::Grid& g = s.grid;
  uint64_t h = 1469598103934665603ull;
  auto add = [&](float x) {
    uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    for (int k = 0; k < 4; ++k) {
      h ^= (b >> (8 * k)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i <= g.nx; ++i) add(s.u[g.idx(i, j)]);
  for (int j = 0; j <= g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) add(s.v[g.idx(i, j)]);
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) add(s.phi[g.idx(i, j)]);
  return h;
}

// A periodic unit square holding a double shear layer (Bell, Colella & Glaz
// 1989): u = tanh((y - 1/4) / delta) below y = 1/2, tanh((3/4 - y) / delta)
// above, and a small sine in v that rolls the layers up. Not divergence-free
// at the faces to rounding: the first projection takes care of that.
Config shear_config(int n, double nu) {
  Config c = sim::test::quiet_box(n);
  for (sim::BoundarySide* s : {&c.left, &c.right, &c.bottom, &c.top}) s->kind = sim::BoundaryKind::periodic;
  c.viscosity = nu;
  c.solver = sim::PressureSolverKind::multigrid;
  c.tolerance = 1e-6;
  return c;
}

SimState shear_state(const Config& c, double delta = 1.0 / 30, double amp = 0.05) {
  SimState s = sim::make_initial_state(c);
  const sim::Grid& g = s.grid;
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i <= g.nx; ++i) {
      const double y = (j + 0.5) * c.dy();
      s.u[g.idx(i, j)] = static_cast<float>(y <= 0.5 ? std::tanh((y - 0.25) / delta) : std::tanh((0.75 - y) / delta));
    }
  for (int j = 0; j <= g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) s.v[g.idx(i, j)] = static_cast<float>(amp * std::sin(2 * M_PI * (i + 0.5) * c.dx()));
  const sim::Constants k = sim::make_constants(c, g);
  for (int j = 0; j <= g.ny; ++j) sim::halo_velocity_x(s.u.data(), s.v.data(), j, k);
  for (int i = -1; i <= g.nx + 1; ++i) sim::halo_velocity_y(s.u.data(), s.v.data(), i, k);
  return s;
}

SimState run_from(const Config& c, const SimState& start, int steps) {
  sim::Simulation sim(c, sim::make_backend(c, start.grid, nullptr), start);
  for (int k = 0; k < steps; ++k) sim.step();
  return sim.download();
}

}  // namespace

// Catches any drift of the default scheme: a reordered sum, a changed
// rounding or a stencil read through the new code path changes these bits.
// The hashes were recorded with the IMEX SSP-RK3 step (sim/model/time_scheme.hpp;
// the cavity and the shear layer with its transform viscous solves, where the
// domain allows them; before it, with the code before fluid.advection existed), g++ 12, x86-64,
// no FMA contraction; another compiler or flags may change them
// legitimately: record them again from that code then.
TEST_CASE("advection: central stays bit-identical to the scheme before fluid.advection") {
  struct Case {
    const char* name;
    Config cfg;
    SimState start;
    uint64_t hash;
  };
  std::vector<Case> cases;
  {
    Config c = sim::test::shipped_config(
        "channel.toml", {"domain.nx=64", "domain.ny=16", "particles.inject.rate=0", "run.backend=\"cpu\""});
    cases.push_back({"channel 64x16", c, sim::make_initial_state(c), 0xed140c713d362108ull});
    c.viscosity = 3e-5;  // Re = 10,000
    cases.push_back({"channel 64x16 at Re 10,000", c, sim::make_initial_state(c), 0xba5b933e7f767c63ull});
  }
  {
    Config c = sim::test::shipped_config("cavity.toml", {"domain.nx=32", "domain.ny=32", "pressure.solver=\"multigrid\"",
                                                         "run.backend=\"cpu\""});
    c.regions.clear();
    cases.push_back({"cavity 32x32", c, sim::make_initial_state(c), 0x6cbdcf65eaba5ebfull});
  }
  {
    const Config c = shear_config(32, 1e-4);
    cases.push_back({"double shear layer 32x32", c, shear_state(c), 0x789c06b0232ebb8dull});
  }
  for (const Case& k : cases) {
    const uint64_t h = fluid_hash(run_from(k.cfg, k.start, 30));
    char text[32];
    std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(h));
    MESSAGE(std::string(k.name) << ": " << text);
    CHECK(h == k.hash);
  }
}

namespace {

// A face's neighbourhood over storage arrays, as the CPU backend reads it
// (two cells out through wide_offset).
struct ArrayNeighbours {
  static constexpr int kRadius = 2;
  const std::vector<float>& u;
  const std::vector<float>& v;
  int c, i, j;
  const sim::Constants& k;
  float operator()(int q, int di, int dj) const {
    if (di < -1 || di > 1) di = sim::wide_offset(i, di, k.nx, sim::is_periodic(k, sim::kLeft), k.pitch - 2);
    if (dj < -1 || dj > 1) dj = sim::wide_offset(j, dj, k.ny, sim::is_periodic(k, sim::kBottom), k.rows - 2);
    return (q == 0 ? u : v)[c + di + dj * k.pitch];
  }
};

// A smooth periodic field on [0, 2 pi]^2 (not divergence-free: the operator
// is checked as an algebraic operator) and its derivatives.
struct Smooth {
  static double u(double x, double y) { return std::sin(x + 0.3) * std::cos(2 * y) + 0.5 * std::cos(x - y); }
  static double ux(double x, double y) { return std::cos(x + 0.3) * std::cos(2 * y) - 0.5 * std::sin(x - y); }
  static double uy(double x, double y) { return -2 * std::sin(x + 0.3) * std::sin(2 * y) + 0.5 * std::sin(x - y); }
  static double v(double x, double y) { return std::cos(x) * std::sin(y + 0.7) + 0.3 * std::sin(2 * x + y); }
  static double vx(double x, double y) { return -std::sin(x) * std::sin(y + 0.7) + 0.6 * std::cos(2 * x + y); }
  static double vy(double x, double y) { return std::cos(x) * std::cos(y + 0.7) + 0.3 * std::cos(2 * x + y); }
  // -(d(uu)/dx + d(uv)/dy), -(d(uv)/dx + d(vv)/dy)
  static double au(double x, double y) { return -(2 * u(x, y) * ux(x, y) + uy(x, y) * v(x, y) + u(x, y) * vy(x, y)); }
  static double av(double x, double y) { return -(ux(x, y) * v(x, y) + u(x, y) * vx(x, y) + 2 * v(x, y) * vy(x, y)); }
};

struct OperatorError {
  double max = 0, rms = 0;
};

// Truncation error of advection_u and advection_v (both components
// together) on the periodic n x n grid, against the exact operator.
OperatorError operator_error(int n, sim::AdvectionScheme scheme) {
  Config c = sim::test::taylor_green(n);
  c.advection = scheme;
  const sim::Grid g = sim::Grid::make(c.nx, c.ny, c.lx, c.ly);
  const sim::Constants k = sim::make_constants(c, g);
  const double dx = c.dx(), dy = c.dy();
  std::vector<float> u(g.size(), 0), v(g.size(), 0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      u[g.idx(i, j)] = static_cast<float>(Smooth::u(i * dx, (j + 0.5) * dy));
      v[g.idx(i, j)] = static_cast<float>(Smooth::v((i + 0.5) * dx, j * dy));
    }
  for (int j = 0; j <= n; ++j) sim::halo_velocity_x(u.data(), v.data(), j, k);
  for (int i = -1; i <= n + 1; ++i) sim::halo_velocity_y(u.data(), v.data(), i, k);
  OperatorError e;
  double sum2 = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const int cc = g.idx(i, j);
      const ArrayNeighbours nb{u, v, cc, i, j, k};
      const double du = sim::advection_u(nb, sim::reach_u(i, j, cc, sim::AllClear{}, k), k) - Smooth::au(i * dx, (j + 0.5) * dy);
      const double dv = sim::advection_v(nb, sim::reach_v(i, j, cc, sim::AllClear{}, k), k) - Smooth::av((i + 0.5) * dx, j * dy);
      e.max = std::max({e.max, std::abs(du), std::abs(dv)});
      sum2 += du * du + dv * dv;
    }
  e.rms = std::sqrt(sum2 / (2.0 * n * n));
  return e;
}

}  // namespace

// Catches a wrong QUICK weight or sign, a flux taken on the wrong side, a
// two-point advecting velocity (second order: its h^2/8 error enters every
// flux) or a misread periodic image: any of them drops the measured order
// to 2 or less (or leaves an O(1) error).
TEST_CASE("advection: quick is third order in space, central second order (truncation error, periodic)") {
  for (sim::AdvectionScheme s : {sim::AdvectionScheme::central, sim::AdvectionScheme::quick}) {
    const OperatorError e32 = operator_error(32, s), e64 = operator_error(64, s), e128 = operator_error(128, s);
    const double p1 = std::log2(e32.max / e64.max), p2 = std::log2(e64.max / e128.max);
    const double q1 = std::log2(e32.rms / e64.rms), q2 = std::log2(e64.rms / e128.rms);
    MESSAGE(sim::to_string(s) << ": max error " << e32.max << " " << e64.max << " " << e128.max << ", orders " << p1
                              << " " << p2 << "; rms orders " << q1 << " " << q2);
    if (s == sim::AdvectionScheme::quick) {
      CHECK(p1 >= 2.7);
      CHECK(p2 >= 2.7);
      CHECK(q1 >= 2.7);
      CHECK(q2 >= 2.7);
    } else {
      CHECK(p1 == doctest::Approx(2).epsilon(0.1));
      CHECK(p2 == doctest::Approx(2).epsilon(0.1));
    }
  }
}

namespace {

struct Leak {
  int faces = 0, wide_fluxes = 0, all_fluxes = 0;
  double worst = 0;  // largest |change of quick - change of central| over the faces
};

// Every face's advection, quick and central, with a smooth field, then with
// every value the wide fluxes must not read poisoned: halo points on the
// closed sides (mirror ghosts, copies) and faces inside obstacles (both
// cells solid). Central fluxes may read halo points (a tangential ghost at
// an inflow), so quick may change only as much as central does.
Leak poison_leak(Config c) {
  c.advection = sim::AdvectionScheme::quick;
  const SimState s0 = sim::make_initial_state(c);
  const sim::Grid& g = s0.grid;
  const sim::Constants kq = sim::make_constants(c, g);
  sim::Constants kc = kq;
  kc.advection = static_cast<int>(sim::AdvectionScheme::central);
  const std::vector<float> clearance = sim::advection_clearance_field(c, g, s0.open);
  const bool px = sim::is_periodic(kq, sim::kLeft), py = sim::is_periodic(kq, sim::kBottom);
  std::vector<float> u(g.size()), v(g.size());
  for (int j = -1; j <= g.rows - 2; ++j)
    for (int i = -1; i <= g.pitch - 2; ++i) {
      const double x = (i + 0.5) / g.nx, y = (j + 0.5) / g.ny;
      u[g.idx(i, j)] = static_cast<float>(1.0 + 0.5 * std::sin(7 * x + 3 * y) + 0.3 * std::cos(11 * y));
      v[g.idx(i, j)] = static_cast<float>(0.4 * std::cos(5 * x - 2 * y) - 0.2 * std::sin(13 * x));
    }
  const bool solids = !c.obstacles.empty();
  auto solid_u = [&](int c0) { return solids && sim::solid_u(s0.open.data(), c0); };
  auto solid_v = [&](int c0) { return solids && sim::solid_v(s0.open.data(), c0, g.pitch); };
  auto inside_u = [&](int c0) { return solids && s0.open[c0 - 1] == 0 && s0.open[c0] == 0; };
  auto inside_v = [&](int c0) { return solids && s0.open[c0 - g.pitch] == 0 && s0.open[c0] == 0; };
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i <= g.nx; ++i)
      if (solid_u(g.idx(i, j))) u[g.idx(i, j)] = 0;
  for (int j = 0; j <= g.ny; ++j)
    for (int i = 0; i < g.nx; ++i)
      if (solid_v(g.idx(i, j))) v[g.idx(i, j)] = 0;
  if (px || py) {  // periodic sides: the halo holds exact copies, which the scheme trusts
    for (int j = 0; j <= g.ny; ++j) sim::halo_velocity_x(u.data(), v.data(), j, kq);
    for (int i = -1; i <= g.nx + 1; ++i) sim::halo_velocity_y(u.data(), v.data(), i, kq);
  }

  std::vector<float> pu = u, pv = v;
  constexpr float kPoison = 1000;
  for (int j = -1; j <= g.rows - 2; ++j)
    for (int i = -1; i <= g.pitch - 2; ++i) {
      const int cc = g.idx(i, j);
      const bool out_x = !px && (i < 0 || i > g.nx), out_y = !py && (j < 0 || j > g.ny - 1);
      if (out_x || out_y || (i >= 0 && i <= g.nx && j >= 0 && j < g.ny && inside_u(cc))) pu[cc] += kPoison;
      const bool vout_x = !px && (i < 0 || i > g.nx - 1), vout_y = !py && (j < 0 || j > g.ny);
      if (vout_x || vout_y || (i >= 0 && i < g.nx && j >= 0 && j <= g.ny && inside_v(cc))) pv[cc] += kPoison;
    }

  Leak leak;
  auto count = [&](const sim::AdvectionReach& r) {
    leak.wide_fluxes += r.w + r.e + r.s + r.n;
    leak.all_fluxes += 4;
  };
  for (int j = 0; j <= g.ny; ++j)
    for (int i = 0; i <= g.nx; ++i) {
      const int cc = g.idx(i, j);
      const ArrayNeighbours clean{u, v, cc, i, j, kq}, dirty{pu, pv, cc, i, j, kq};
      if (sim::active_u(i, j, kq) && !solid_u(cc)) {
        const sim::AdvectionReach r = solids ? sim::reach_u(i, j, cc, clearance.data(), kq)
                                             : sim::reach_u(i, j, cc, sim::AllClear{}, kq);
        const double dq = sim::advection_u(dirty, r, kq) - sim::advection_u(clean, r, kq);
        const double dc = sim::advection_u(dirty, r, kc) - sim::advection_u(clean, r, kc);
        leak.worst = std::max(leak.worst, std::abs(dq - dc) / (1 + std::abs(dc)));
        ++leak.faces;
        count(r);
      }
      if (sim::active_v(i, j, kq) && !solid_v(cc)) {
        const sim::AdvectionReach r = solids ? sim::reach_v(i, j, cc, clearance.data(), kq)
                                             : sim::reach_v(i, j, cc, sim::AllClear{}, kq);
        const double dq = sim::advection_v(dirty, r, kq) - sim::advection_v(clean, r, kq);
        const double dc = sim::advection_v(dirty, r, kc) - sim::advection_v(clean, r, kc);
        leak.worst = std::max(leak.worst, std::abs(dq - dc) / (1 + std::abs(dc)));
        ++leak.faces;
        count(r);
      }
    }
  return leak;
}

}  // namespace

// Catches a reach rule that lets a wide flux read past a closed side (its
// mirror ghosts and copies are no data for a quadratic upwind fit) or into
// an obstacle: the poisoned values then change quick's advection by about
// poison / 8 / h, where central's does not change. The fraction of wide
// fluxes catches the opposite defect, a rule that falls back everywhere.
TEST_CASE("advection: quick reads no halo point of a closed side and no face inside an obstacle") {
  std::vector<std::pair<std::string, Config>> cases;
  {
    Config c = sim::test::shipped_config("channel.toml", {"domain.nx=64", "domain.ny=16", "run.backend=\"cpu\""});
    sim::Obstacle wall_block;  // touching the bottom wall: corners of the obstacle against the domain side
    wall_block.shape = sim::ObstacleShape::rectangle;
    wall_block.x0 = 4.0;
    wall_block.x1 = 4.5;
    wall_block.y0 = 0.0;
    wall_block.y1 = 0.4;
    c.obstacles.push_back(wall_block);
    cases.emplace_back("channel: inflow, outflow, walls, a cylinder and a block on the wall", c);
  }
  cases.emplace_back("cavity: walls and a moving lid",
                     sim::test::shipped_config("cavity.toml", {"domain.nx=24", "domain.ny=20", "run.backend=\"cpu\""}));
  {
    Config c = sim::test::quiet_box(24);
    c.left.kind = c.right.kind = sim::BoundaryKind::periodic;
    c.top.kind = sim::BoundaryKind::outflow;
    c.bottom.kind = sim::BoundaryKind::inflow;
    c.bottom.speed = 1;
    c.obstacles.push_back({});
    c.obstacles.back().x = 0.02;  // across the periodic side
    c.obstacles.back().y = 0.5;
    c.obstacles.back().radius = 0.12;
    cases.emplace_back("periodic in x, inflow at the bottom, outflow at the top, a cylinder across the periodic side", c);
  }
  for (const auto& [name, cfg] : cases) {
    const Leak l = poison_leak(cfg);
    MESSAGE(name << ": " << l.faces << " faces, " << l.wide_fluxes << " of " << l.all_fluxes
                 << " fluxes wide; worst relative change beyond central's " << l.worst);
    CHECK(l.worst < 1e-4);
    CHECK(l.wide_fluxes > 0.5 * l.all_fluxes);
  }
}

namespace {

// Largest |v| and |omega| in the upstream core of config/channel.toml: x in
// [0.25, 1.0] m (the cylinder's front is at 1.35 m), y in [0.5, 1.5] m (the
// wall boundary layers stay outside). The inflow there is uniform: a clean
// solution only bends around the cylinder ahead (|v| below 0.1 m/s at
// Re = 100) and carries no vorticity. omega at the corners,
// dv/dx - du/dy.
struct Core {
  double v = 0, omega = 0;
};
Core upstream_core(const SimState& s, const Config& c) {
  const sim::Grid& g = s.grid;
  Core r;
  for (int j = 1; j < g.ny; ++j)
    for (int i = 1; i < g.nx; ++i) {
      const double x = i * c.dx(), y = j * c.dy();
      if (x < 0.25 || x > 1.0 || y < 0.5 || y > 1.5) continue;
      r.v = std::max(r.v, static_cast<double>(std::abs(s.v[g.idx(i, j)])));
      const double w = (s.v[g.idx(i, j)] - s.v[g.idx(i - 1, j)]) / c.dx() -
                       (s.u[g.idx(i, j)] - s.u[g.idx(i, j - 1)]) / c.dy();
      r.omega = std::max(r.omega, std::abs(w));
    }
  return r;
}

}  // namespace

// Catches quick degrading to central (or any scheme without upwind damping)
// in the interior: central fills the core with grid-scale noise within a
// second of flow at Re = 10,000 (cell Reynolds number 1040), quick keeps it
// uniform. Measured over 2000 steps (to t = 12.6 s): quick |v| 0.082-0.105
// m/s, |omega| 0.017-0.027 /s; central (to t = 10.8 s) 0.47-0.97 m/s, 48-86 /s.
TEST_CASE("advection: the channel at Re = 10,000 keeps a uniform upstream core with quick, not with central") {
  Core core[2];
  for (sim::AdvectionScheme s : {sim::AdvectionScheme::central, sim::AdvectionScheme::quick}) {
    Config c = sim::test::shipped_config("channel.toml", {"particles.inject.rate=0", "run.backend=\"cpu\""});
    c.viscosity = 3e-5;  // Re = U D / nu = 1 * 0.3 / 3e-5
    c.advection = s;
    const SimState end = run_from(c, sim::make_initial_state(c), 200);  // t = 1.1 s
    core[static_cast<int>(s)] = upstream_core(end, c);
    MESSAGE(sim::to_string(s) << " after 200 steps: upstream core max |v| " << core[static_cast<int>(s)].v
                              << " m/s, max |omega| " << core[static_cast<int>(s)].omega << " /s");
  }
  const Core central = core[static_cast<int>(sim::AdvectionScheme::central)];
  const Core quick = core[static_cast<int>(sim::AdvectionScheme::quick)];
  CHECK(central.omega > 10);  // the defect this case shows
  CHECK(quick.v < 0.12);
  CHECK(quick.omega < 0.1);
}

// Catches a warning that is missing, repeated, printed for quick, or
// printed for the shipped Re = 100 channel (cell Reynolds number 10.4, where
// central and quick agree): each check below fails then.
TEST_CASE("advection: central warns once above cell Reynolds number 15, quick and the Re = 100 channel do not") {
  Config c = sim::test::shipped_config("channel.toml");
  CHECK(sim::reference_speed(c) == 1.0);
  CHECK(sim::cell_reynolds(c, 1.0) == doctest::Approx(0.03125 / 0.003));
  CHECK(sim::central_advection_warning(c, 1.0, "x").empty());
  c.viscosity = 3e-5;
  const std::string w = sim::central_advection_warning(c, 1.0, "the reference speed of the config");
  CHECK(w.rfind("sim: warning: central advection at cell Reynolds number 1.04e+03 ", 0) == 0);
  CHECK(w.find("set fluid.advection = \"quick\"") != std::string::npos);
  CHECK(w.find('\n') == std::string::npos);
  c.viscosity = 0;
  CHECK(sim::central_advection_warning(c, 1.0, "x").find("without viscosity") != std::string::npos);
  c.advection = sim::AdvectionScheme::quick;
  CHECK(sim::central_advection_warning(c, 1.0, "x").empty());

  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
  };
  const std::string dir = sim::test::scratch_dir("advection_warning");
  for (sim::AdvectionScheme s : {sim::AdvectionScheme::central, sim::AdvectionScheme::quick}) {
    Config r = sim::test::case_config("channel.toml", dir + "/" + std::string(sim::to_string(s)),
                                      {"domain.nx=64", "domain.ny=16", "run.steps=3", "fluid.viscosity=3e-5"});
    r.advection = s;
    std::string out, err;
    REQUIRE(sim::test::run_case(r, "", &err, &out) == 0);
    INFO(err);
    CHECK(count(err, "sim: warning:") == (s == sim::AdvectionScheme::central ? 1u : 0u));
  }
  // No speed in the config (a body force drives the flow): the flow reached at the end decides.
  Config f = sim::test::quiet_box(16);
  for (sim::BoundarySide* s : {&f.left, &f.right, &f.bottom, &f.top}) s->kind = sim::BoundaryKind::periodic;
  f.viscosity = 1e-4;
  f.force_x = 10;
  f.dt = 0.01;
  f.steps = 5;  // |u| = 0.5 m/s: cell Reynolds number 312
  f.output = dir + "/forced";
  std::string out, err;
  REQUIRE(sim::test::run_case(f, "", &err, &out) == 0);
  INFO(err);
  CHECK(count(err, "sim: warning:") == 1);
  CHECK(err.find("the largest face speed reached") != std::string::npos);
}

// Catches the key missing from the schema, a wrong default, or a name that
// does not reach Constants::advection.
TEST_CASE("advection: fluid.advection in the config, its default and its errors") {
  CHECK(Config{}.advection == sim::AdvectionScheme::central);
  CHECK(sim::test::config_error("[fluid]\nadvection = \"upwind\"\n") ==
        "t.toml:2:13: fluid.advection: expected one of central|quick, got \"upwind\"");
  const Config c = sim::load_config_string("[fluid]\nadvection = \"quick\"\n", "t.toml", {});
  CHECK(c.advection == sim::AdvectionScheme::quick);
  const sim::Grid g = sim::Grid::make(c.nx, c.ny, c.lx, c.ly);
  CHECK(sim::make_constants(c, g).advection == static_cast<int>(sim::AdvectionScheme::quick));
  CHECK(sim::load_config_string("", "t.toml", {"fluid.advection=quick"}).advection == sim::AdvectionScheme::quick);
}
