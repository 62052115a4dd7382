// SPDX-License-Identifier: MIT
// The time integration and the walls of obstacles, against independent
// truth: a reference run at a 64 times smaller step (temporal order at fixed
// h), the exact steady Taylor-Green vortex (energy), the analytic Couette
// and Poiseuille profiles between obstacle plates, and dt-independence of a
// steady state.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "sim/model/stability.hpp"
#include "support/cases.hpp"

namespace {

using sim::BoundaryKind;

// The double shear layer of Bell, Colella and Glaz (1989) on a periodic unit
// square, at 32^2: thin shear layers rolling up, a flow with every term of
// the momentum equation active. 32^2 and steps up to CFL 0.8 keep the time
// error measured well above float32 rounding.
sim::Config shear_layer(double dt) {
  sim::Config c = sim::test::quiet_box(32);
  for (sim::BoundarySide* s : {&c.left, &c.right, &c.bottom, &c.top}) s->kind = BoundaryKind::periodic;
  c.viscosity = 2e-4;
  c.tolerance = 1e-9;  // float64 pressure: the solve's error far below the time error measured
  c.dt = dt;
  return c;
}

sim::SimState run_shear_layer(double dt, double T) {
  const sim::Config c = shear_layer(dt);
  sim::SimState st = sim::make_initial_state(c);
  sim::test::set_velocity(
      st, c, [](double, double y) { return y <= 0.5 ? std::tanh(30 * (y - 0.25)) : std::tanh(30 * (0.75 - y)); },
      [](double x, double) { return 0.05 * std::sin(2 * M_PI * x); });
  sim::Simulation s(c, sim::make_backend(c, st.grid, nullptr), st);
  const int steps = static_cast<int>(std::lround(T / dt));
  for (int k = 0; k < steps; ++k) s.step();
  return s.download();
}

// A lid-driven unit cavity at Re = 1 / nu.
sim::Config cavity(int n, double nu) {
  sim::Config c = sim::test::quiet_box(n);
  c.viscosity = nu;
  c.top.speed = 1.0;
  c.tolerance = 1e-8;
  c.dt_max = 1.0;
  return c;
}

}  // namespace

// Catches a first-order term anywhere in the step (the former scheme, Euler
// diffusion and an advection-only RK2, measured order 1): the step is
// halved at a fixed grid, against a reference 64 times finer in time.
TEST_CASE("fluid: second order in time at fixed h (double shear layer, 32^2, dt halved three times)") {
  const double T = 0.96, dt0 = 0.024;  // dt0: CFL 0.8 at |u| = 1
  const sim::SimState ref = run_shear_layer(dt0 / 64, T);
  double e[4];
  for (int k = 0; k < 4; ++k) e[k] = sim::test::max_velocity_diff(run_shear_layer(dt0 / (1 << k), T), ref);
  const double p1 = std::log2(e[0] / e[1]), p2 = std::log2(e[1] / e[2]), p3 = std::log2(e[2] / e[3]);
  MESSAGE("max |u - u_ref| at dt0, /2, /4, /8: " << e[0] << " " << e[1] << " " << e[2] << " " << e[3] << "; orders "
                                                 << p1 << " " << p2 << " " << p3);
  // Float32 rounding over the reference's 2560 steps floors the error near
  // 5e-5 (1.3e-5 with explicit viscosity: the incremental pressure's
  // subtraction and return round too); measured 0.000496, 8.9e-5, 4.7e-5,
  // 4.5e-5: the first halving shows the order, the rest the floor.
  CHECK(p1 >= 1.8);
  CHECK(e[1] > e[2]);
  (void)p2;
  (void)p3;
}

// Catches a steady state that depends on dt (a non-incremental splitting:
// the former scheme moved the cavity by ~1e-2 between CFL 0.5 and 0.25).
TEST_CASE("fluid: the steady cavity at Re = 100 does not depend on the step (CFL 0.5 and 0.2)") {
  sim::SimState out[2];
  int n = 0;
  for (double cfl : {0.5, 0.2}) {
    sim::Config c = cavity(32, 0.01);
    c.cfl = cfl;
    auto s = sim::test::make_sim(c);
    while (s->time() < 40.0) s->step();
    out[n++] = s->download();
  }
  const double d = sim::test::max_velocity_diff(out[0], out[1]);
  MESSAGE("max |u(CFL 0.5) - u(CFL 0.2)| at t = 40: " << d << " (lid speed 1)");
  CHECK(d < 2e-5);
}

// Catches an adaptive step limited by the lid's ghost row (2U - u, so half
// the step the flow needs).
TEST_CASE("fluid: the cavity's adaptive step follows the lid speed, not its ghost row") {
  sim::Config c = cavity(32, 0.01);
  c.cfl = 0.5;
  auto s = sim::test::make_sim(c);
  double dt = 0;
  for (int k = 0; k < 200; ++k) dt = s->step().dt;
  const double h = 1.0 / 32;
  MESSAGE("dt after 200 steps = " << dt << ", cfl h / U = " << c.cfl * h);
  CHECK(dt > 0.7 * c.cfl * h);  // the ghost row (2U - u, about 2U at the corners) gave about 0.5
}

// Catches energy lost or gained by the time integration: the former scheme
// lost 15% by t = 20 at this step (exp(-0.47 dt t)). Heun's method on the
// energy-conserving central advection keeps it within what is asserted.
TEST_CASE("fluid: the inviscid Taylor-Green vortex keeps its kinetic energy (64^2, dt = 0.02, t = 20)") {
  sim::Config c = sim::test::taylor_green(64, 0.0);
  c.dt = 0.02;
  c.tolerance = 1e-9;
  auto s = sim::test::make_sim(c);
  const double e0 = s->diagnostics().kinetic_energy;
  for (int k = 0; k < 1000; ++k) s->step();
  const double e1 = s->diagnostics().kinetic_energy;
  MESSAGE("E(t = 20) / E(0) - 1 = " << e1 / e0 - 1 << " (" << 20 / (2 * M_PI) << " turnover times 2 pi / U)");
  CHECK(std::abs(e1 / e0 - 1) < 1e-4);
}

namespace {

// A channel between two obstacle plates, periodic along it, driven by a
// body force G (Poiseuille) or, with `couette`, by the moving domain wall
// beyond the upper plate's place (the upper plate left out): the flow along
// the channel at its faces, and the analytic profile there. `along_y` turns
// the case by 90 degrees (the v faces and the mirror ghosts across i).
struct Channel {
  double max_error;  // max |u - exact| / max |exact|
};

Channel channel(int n, bool couette, bool along_y) {
  sim::Config c = sim::test::quiet_box(n);
  const double L = 1.0, a = 0.25, b = couette ? 1.0 : 0.75, nu = 1.0, G = 1.0, U = 0.05;
  // 8 cells along the channel, periodic; n across it
  int& n_along = along_y ? c.ny : c.nx;
  double& l_along = along_y ? c.ly : c.lx;
  n_along = 8;
  l_along = 8.0 * L / n;
  c.viscosity = nu;
  c.tolerance = 1e-9;
  c.dt_max = 1e-2;  // 100 steps to t = 1: the implicit step would take the flow's dt, a few steps
  c.max_iterations = 20000;
  sim::BoundarySide& lo_end = along_y ? c.bottom : c.left;
  sim::BoundarySide& hi_end = along_y ? c.top : c.right;
  lo_end.kind = hi_end.kind = BoundaryKind::periodic;
  if (couette) (along_y ? c.right : c.top).speed = U;  // the wall's tangential speed, along +y or +x
  if (!couette) (along_y ? c.force_y : c.force_x) = G;
  auto plate = [&](double lo, double hi) {
    sim::Obstacle o;
    o.shape = sim::ObstacleShape::rectangle;
    if (along_y) {
      o.x0 = lo, o.x1 = hi, o.y0 = -1, o.y1 = l_along + 1;
    } else {
      o.x0 = -1, o.x1 = l_along + 1, o.y0 = lo, o.y1 = hi;
    }
    c.obstacles.push_back(o);
  };
  plate(-1.0, a);
  if (!couette) plate(b, 2.0);
  auto s = sim::test::make_sim(c);
  while (s->time() < 1.0) s->step();  // > 25 e-folding times of the slowest mode
  const sim::SimState st = s->download();
  const sim::Grid& g = st.grid;
  auto exact = [&](double y) {
    if (y <= a || y >= b) return 0.0;
    return couette ? U * (y - a) / (b - a) : G / (2 * nu) * (y - a) * (b - y);
  };
  const double peak = couette ? U : G / (8 * nu) * (b - a) * (b - a);
  double err = 0;
  for (int k = 0; k < n; ++k) {  // across the channel
    const double y = (k + 0.5) / n;
    if (y <= a || y >= b) continue;
    for (int m = 0; m < 8; ++m) {
      const double vel = along_y ? st.v[g.idx(k, m)] : st.u[g.idx(m, k)];
      err = std::max(err, std::abs(vel - exact(y)) / peak);
    }
  }
  return {err};
}

}  // namespace

// Catches a no-slip wall at the wrong place: faces inside a solid used as
// the Laplacian's neighbours put the wall half a cell into the solid (the
// former error 1.5e-2 for Couette at 32 cells; first order in h).
TEST_CASE("fluid: Couette and Poiseuille flows between obstacle plates match the analytic profiles") {
  for (bool along_y : {false, true}) {
    const Channel c32 = channel(32, true, along_y);
    MESSAGE((along_y ? "along y" : "along x") << ": Couette at 32 cells: max error / U = " << c32.max_error);
    CHECK(c32.max_error < 1e-4);  // a linear profile is exact on the MAC grid: rounding only
    const double e16 = channel(16, false, along_y).max_error, e32 = channel(32, false, along_y).max_error,
                 e64 = channel(64, false, along_y).max_error;
    const double p1 = std::log2(e16 / e32), p2 = std::log2(e32 / e64);
    MESSAGE((along_y ? "along y" : "along x") << ": Poiseuille max error / peak at 16, 32, 64 cells: " << e16 << " "
                                              << e32 << " " << e64 << "; orders " << p1 << " " << p2);
    CHECK(p1 >= 1.8);
    CHECK(p2 >= 1.8);
    CHECK(e64 < 1e-3);
  }
}

// Catches a pressure written at the wrong scale (the second stage's
// projection carries half the step's pressure gradient): the Taylor-Green
// pressure p / rho = (cos 2x + cos 2y) e^{-4 nu t} / 4 at the cell centres.
TEST_CASE("fluid: the written pressure is the Taylor-Green pressure (64^2)") {
  const double nu = 0.05;
  sim::Config c = sim::test::taylor_green(64, nu);
  c.dt = 0.02;
  c.tolerance = 1e-9;
  auto s = sim::test::make_sim(c);
  for (int k = 0; k < 50; ++k) s->step();
  const sim::SimState st = s->download();
  const sim::Grid& g = st.grid;
  double mean = 0;
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) mean += st.phi[g.idx(i, j)];
  mean /= double(g.nx) * g.ny;
  const double decay = std::exp(-4 * nu * s->time());
  double err = 0;
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) {
      const double x = (i + 0.5) * c.dx(), y = (j + 0.5) * c.dy();
      const double exact = 0.25 * (std::cos(2 * x) + std::cos(2 * y)) * decay;
      err = std::max(err, std::abs(st.phi[g.idx(i, j)] - mean - exact));
    }
  MESSAGE("max |phi - p_exact / rho| / (max p / rho) = " << err / (0.5 * decay));
  CHECK(err / (0.5 * decay) < 0.01);
}

// The Taylor-Green vortex carried by a uniform acceleration a (fluid.force_x):
// exactly u = a t + TG(x - a t^2/2, y, t), a flow whose every face changes in
// time, the body force included (the steady vortex is a discrete steady state
// and cannot show a time error). At a fixed 32^2 grid against a run at dt/16:
// second order in dt, and the mean x velocity is a t to rounding.
// Catches: a first-order treatment of the body force or of the stages'
// sources (the coupled step's drag enters both stages the same way).
TEST_CASE("fluid: the translating Taylor-Green vortex is second order in time (32^2, force_x, dt halved twice)") {
  const double a = 1.0, T = 1.0, dt0 = 0.05;  // CFL about 0.5 at the end (|u| <= 1 + a T)
  auto run = [&](double dt) {
    sim::Config c = sim::test::taylor_green(32, 0.05);
    c.force_x = a;
    c.dt = dt;
    c.tolerance = 1e-9;
    return sim::test::run_steps(c, static_cast<int>(std::lround(T / dt)));
  };
  const sim::SimState ref = run(dt0 / 16);
  double e[3];
  for (int k = 0; k < 3; ++k) e[k] = sim::test::max_velocity_diff(run(dt0 / (1 << k)), ref);
  const double p1 = std::log2(e[0] / e[1]), p2 = std::log2(e[1] / e[2]);
  double mean = 0;
  for (int j = 0; j < ref.grid.ny; ++j)
    for (int i = 0; i < ref.grid.nx; ++i) mean += ref.u[ref.grid.idx(i, j)];
  mean /= double(ref.grid.nx) * ref.grid.ny;
  MESSAGE("max |u - u_ref| at dt0, /2, /4: " << e[0] << " " << e[1] << " " << e[2] << "; orders " << p1 << " " << p2
                                             << "; mean u " << mean << " (a t = " << a * T << ")");
  CHECK(p1 >= 1.8);
  CHECK(p2 >= 1.8);
  CHECK(mean == doctest::Approx(a * T).epsilon(1e-5));
}

// The walled counterpart of the translating Taylor-Green test: the cavity at
// Re = 1000 (64^2), developed from rest to t = 1 (the primary vortex formed,
// the flow still evolving: a steady state would have no time error to
// measure), then stepped on to t = 2 at dt0, dt0/2 and dt0/4 against dt0/16
// from that same state (measured orders 2.01 and 2.07; at dt0 = 0.015, CFL
// near 1 at the lid, they fall to 0.8 and 1.6: the step near its stability
// limit, not a boundary term). Walls and a
// moving lid enter the step through the held faces and the projection's
// boundary conditions; a first-order term there (a boundary value taken at
// the wrong stage, a pressure boundary condition lagged by a step) shows as
// order 1 here while the periodic tests stay at 2.
TEST_CASE("fluid: the cavity at Re = 1000 from a developed state is second order in time (64^2, dt halved twice)") {
  const double dt0 = 0.01;  // advective CFL about 0.64 at the lid, below the viscous limit 0.061
  sim::Config c = cavity(64, 1e-3);
  c.dt = dt0;
  const sim::SimState developed = sim::test::run_steps(c, 100);  // t = 1: the primary vortex formed, still evolving
  auto run = [&](double dt) {
    sim::Config ci = c;
    ci.dt = dt;
    sim::Simulation s(ci, sim::make_backend(ci, developed.grid, nullptr), developed);
    const int steps = static_cast<int>(std::lround(1.0 / dt));
    for (int k = 0; k < steps; ++k) s.step();
    return s.download();
  };
  const sim::SimState ref = run(dt0 / 16);
  double e[3];
  for (int k = 0; k < 3; ++k) e[k] = sim::test::max_velocity_diff(run(dt0 / (1 << k)), ref);
  const double p1 = std::log2(e[0] / e[1]), p2 = std::log2(e[1] / e[2]);
  MESSAGE("max |u - u_ref| at dt0, /2, /4: " << e[0] << " " << e[1] << " " << e[2] << "; orders " << p1 << " " << p2);
  CHECK(e[0] > 1e-5);  // a time error well above float32 rounding
  CHECK(p1 >= 1.8);
  CHECK(p2 >= 1.8);
}
