// Momentum advection: fluid.advection = "central" (the default) and "quick".
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sim/fluid_physics.hpp"
#include "sim/halo.hpp"
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
// The hashes were recorded with the code before fluid.advection existed
// (g++ 12, x86-64, no FMA contraction); another compiler or flags may
// change them legitimately: record them again from that code then.
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
    cases.push_back({"channel 64x16", c, sim::make_initial_state(c), 0x70eda0f3e5707fe4ull});
    c.viscosity = 3e-5;  // Re = 10,000
    cases.push_back({"channel 64x16 at Re 10,000", c, sim::make_initial_state(c), 0x7e7414f8c82af31aull});
  }
  {
    Config c = sim::test::shipped_config("cavity.toml", {"domain.nx=32", "domain.ny=32", "pressure.solver=\"multigrid\"",
                                                         "run.backend=\"cpu\""});
    c.regions.clear();
    cases.push_back({"cavity 32x32", c, sim::make_initial_state(c), 0xd1bb01fa05d2cac9ull});
  }
  {
    const Config c = shear_config(32, 1e-4);
    cases.push_back({"double shear layer 32x32", c, shear_state(c), 0x9876d3d1eab19f2full});
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
