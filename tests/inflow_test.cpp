// SPDX-License-Identifier: MIT
// Inflow profiles (sim/model/inflow.hpp): the parabolic side's faces against
// the exact mean of the parabola, its volume flux, the steady Poiseuille
// channel it feeds, the particles injected at it, and the config's checks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "sim/model/inflow.hpp"
#include "sim/model/injection.hpp"
#include "support/cases.hpp"

namespace {

constexpr int kParabolic = static_cast<int>(sim::InflowProfile::parabolic);

// Simpson's rule, exact for a quadratic: the mean of 6 U xi (1 - xi) over
// [a, b], computed apart from the closed form of inflow_face_speed.
double simpson_mean(double U, double a, double b) {
  auto f = [&](double x) { return 6 * U * x * (1 - x); };
  return (f(a) + 4 * f(0.5 * (a + b)) + f(b)) / 6;
}

// A channel [0, 2] x [0, 1] with a parabolic inflow of mean U on the left,
// an outflow on the right and no-slip walls, Re = U H / nu = 2 (the slowest
// mode decays as exp(-nu pi^2 t): 3e-9 by t = 4).
sim::Config poiseuille(int ny) {
  sim::Config c = sim::test::quiet_box(ny);
  c.nx = 2 * ny;
  c.lx = 2.0;
  c.ly = 1.0;
  c.viscosity = 0.5;
  c.left.kind = sim::BoundaryKind::inflow;
  c.left.speed = 1.0;
  c.left.profile = sim::InflowProfile::parabolic;
  c.right.kind = sim::BoundaryKind::outflow;
  c.tolerance = 1e-8;  // float64 pressure (multigrid): the steady state to rounding
  c.cfl = 0.5;
  c.dt_max = 0.05;
  return c;
}

}  // namespace

// Catches face values taken at the face centre (their sum misses U L by
// U L / (2 n^2)), a peak of 1 instead of 1.5, a profile not zero at the ends.
TEST_CASE("inflow: a parabolic side's faces are the parabola's exact face means and bring speed x length") {
  const double U = 0.3, L = 0.41;
  for (int n : {8, 41, 82, 164, 328, 1000, 46333}) {
    double flux = 0, worst = 0, peak = 0;
    for (int f = 0; f < n; ++f) {
      const double s = sim::inflow_face_speed(kParabolic, static_cast<sim::real>(U), f, n);
      worst = std::max(worst, std::abs(s - simpson_mean(U, double(f) / n, double(f + 1) / n)));
      peak = std::max(peak, s);
      flux += s * L / n;
    }
    INFO("n = " << n << ": flux " << flux << " against U L = " << U * L << ", worst face " << worst);
    CHECK(std::abs(flux - U * L) <= 1e-7 * U * L);  // float32 faces, each rounded once
    CHECK(worst <= 1.2e-7 * U);  // one float32 rounding of a value up to 1.5 U
    // The middle face(s): 1.5 U less U / (2 n^2) (n odd) or 2 U / n^2 (n even).
    CHECK(peak <= 1.5 * U * (1 + 1e-7));
    CHECK(peak >= 1.5 * U * (1 - 1e-7) - 2 * U / (double(n) * n));
    // Exact in double: the bracket of the closed form sums to 2 n^3.
    double bracket = 0;
    for (int f = 0; f < n; ++f) bracket += 3.0 * (2 * f + 1) * (2.0 * n - (2 * f + 1)) - 1;
    CHECK(bracket == 2.0 * n * n * n);
  }
  // The faces next to the ends, and the halo's corners mirroring them.
  CHECK(sim::inflow_face_speed(kParabolic, 1.0f, 0, 10) == doctest::Approx(0.28).epsilon(1e-6));  // (3n - 2) / n^2
  CHECK(sim::inflow_face_speed(kParabolic, 1.0f, -1, 10) == -sim::inflow_face_speed(kParabolic, 1.0f, 0, 10));
  CHECK(sim::inflow_face_speed(kParabolic, 1.0f, 10, 10) == -sim::inflow_face_speed(kParabolic, 1.0f, 9, 10));
  CHECK(sim::inflow_face_speed(static_cast<int>(sim::InflowProfile::uniform), 0.7f, 3, 10) == 0.7f);
}

// Catches a backend's halo that ignores the profile on any side, the sign
// of the sides where positive velocity points out, or a projection that
// lets the outflow carry another volume.
TEST_CASE("inflow: the halo holds the profile on each side, and the outflow carries the same volume") {
  for (int side = 0; side < 4; ++side) {
    sim::Config c = sim::test::quiet_box(24);
    c.nx = 32;
    c.lx = 1.6;
    c.ly = 1.1;
    sim::BoundarySide* sides[4] = {&c.left, &c.right, &c.bottom, &c.top};
    sides[side]->kind = sim::BoundaryKind::inflow;
    sides[side]->speed = 0.5;
    sides[side]->profile = sim::InflowProfile::parabolic;
    sides[side ^ 1]->kind = sim::BoundaryKind::outflow;
    const sim::SimState st = sim::test::run_steps(c, 5);
    const sim::Grid& g = st.grid;
    const bool x_side = side < 2;
    const int n = x_side ? g.ny : g.nx, at = (side == 1) ? g.nx : (side == 3) ? g.ny : 0;
    const int out = (side == 0) ? g.nx : (side == 2) ? g.ny : 0;
    const double into = (side == 0 || side == 2) ? 1 : -1, h = x_side ? c.dy() : c.dx();
    double in_flux = 0, out_flux = 0, worst = 0;
    for (int f = 0; f < n; ++f) {
      const double face = x_side ? st.u[g.idx(at, f)] : st.v[g.idx(f, at)];
      const double far = x_side ? st.u[g.idx(out, f)] : st.v[g.idx(f, out)];
      worst = std::max(worst, std::abs(into * face - simpson_mean(0.5, double(f) / n, double(f + 1) / n)));
      in_flux += into * face * h;
      out_flux += into * far * h;
    }
    const double length = x_side ? c.ly : c.lx;
    INFO("inflow side " << side << ": in " << in_flux << ", out " << out_flux << ", worst face " << worst);
    CHECK(worst <= 1e-7);
    CHECK(std::abs(in_flux - 0.5 * length) <= 1e-7 * 0.5 * length);
    CHECK(std::abs(out_flux - in_flux) <= 1e-5 * in_flux);
  }
}

// The steady state of the channel of poiseuille(): fully developed flow,
// -nu u'' = G with u = 0 on the walls and the mean U,
//   u(y) = 6 U y (H - y) / H^2,   G = -dp/dx = 12 nu U / H^2.
// The MAC grid with its mirror ghost at the wall ((u_-1 + u_0) / 2 = 0) has
// the discrete solution u_j = a (y_j (H - y_j) + h^2 / 4): its second
// difference is -2a exactly and it meets the ghost rule; the mean flux U H
// (the midpoint sum of y (H - y) is H^3 / 6 + H h^2 / 12) sets
// a = 6 U / (H^2 + 2 h^2), so G_h = 2 nu a = 12 nu U / (H^2 + 2 h^2): second
// order, relative error 2 / n^2. Measured at mid-channel (the inflow's face
// means differ from u_j by O(h^2), an entry region of a few cells).
// Catches an inflow profile of another shape or mean, a first-order wall
// or inflow treatment, and boundary fluxes that do not balance (the implicit
// solves' wall shear taken after the pressure went back in, and the third
// solve's part written over the first projection's, left 10% of the wall
// shear and 6% of the pressure force out).
TEST_CASE("inflow: a parabolic inflow feeds a steady Poiseuille channel, second order in h") {
  double err_prev = 0;
  for (int ny : {8, 16}) {
    const sim::Config c = poiseuille(ny);
    auto s = sim::test::make_sim(c);
    while (s->time() < 4.0) s->step();
    const sim::SimState st = s->download();
    const sim::Diagnostics d = s->diagnostics();
    const sim::Grid& g = st.grid;
    const double h = c.dy(), H = c.ly, U = c.left.speed, nu = c.viscosity;
    const int im = g.nx / 2;
    double err = 0, err_discrete = 0, vmax = 0;
    for (int j = 0; j < g.ny; ++j) {
      const double y = (j + 0.5) * h, u = st.u[g.idx(im, j)];
      err = std::max(err, std::abs(u - 6 * U * y * (H - y) / (H * H)));
      err_discrete = std::max(err_discrete, std::abs(u - 6 * U * (y * (H - y) + h * h / 4) / (H * H + 2 * h * h)));
      for (int i = 0; i < g.nx; ++i) vmax = std::max(vmax, std::abs(double(st.v[g.idx(i, j)])));
    }
    // G from the kinematic pressure, averaged over the rows at mid-channel.
    double grad = 0;
    for (int j = 0; j < g.ny; ++j) grad += (st.phi[g.idx(im - 1, j)] - st.phi[g.idx(im, j)]) / c.dx() / g.ny;
    const double G = 12 * nu * U / (H * H), G_h = 12 * nu * U / (H * H + 2 * h * h);
    // Steady: what the sides give the fluid adds up to nothing; each wall
    // takes the shear of the developed flow, nu a H per unit length (rho = 1).
    double net = 0;
    for (int side = 0; side < 4; ++side) net += d.side_intake[side][0];
    const double shear = -nu * 6 * U * H / (H * H + 2 * h * h) * c.lx;
    std::ostringstream m;
    m << ny << " cells across, t = " << s->time() << ": max |u - Poiseuille| " << err << ", against the discrete "
      << err_discrete << ", max |v| " << vmax << "; G " << grad << " (analytic " << G << ", discrete " << G_h
      << "); wall intake " << d.side_intake[sim::kBottom][0] << ", " << d.side_intake[sim::kTop][0]
      << " (developed " << shear << "), net " << net << "; left " << d.side_intake[sim::kLeft][0] << " right "
      << d.side_intake[sim::kRight][0];
    MESSAGE(m.str());
    CHECK(err_discrete <= 1e-4 * U);  // converged in time: 1.9e-5 (8 cells), 2.2e-6 (16)
    CHECK(err <= 1.2 * 3 * U / (ny * ny));  // |u_j - u(y_j)| <= 3 U h^2 / H^2 (derivation above)
    CHECK(std::abs(grad - G_h) <= 1e-3 * G);
    CHECK(std::abs(grad - G) <= 1.05 * 2 * G / (ny * ny));
    CHECK(std::abs(net) <= 1e-4 * std::abs(shear));
    CHECK(std::abs(d.side_intake[sim::kBottom][0] - shear) <= 0.01 * std::abs(shear));
    CHECK(std::abs(d.side_intake[sim::kTop][0] - shear) <= 0.01 * std::abs(shear));
    if (err_prev > 0) CHECK(err_prev / err > 3.5);  // second order
    err_prev = err;
  }
}

// Catches injected tracers spread evenly over a parabolic inlet (they would
// crowd the slow fluid by the walls) or started at the mean speed.
TEST_CASE("inflow: particles injected at a parabolic inflow cross it as the volume flux does") {
  sim::Config c = poiseuille(16);
  c.inject.rate = 100;
  c.inject.x0 = 0.0;
  c.inject.x1 = 0.05;
  c.inject.y0 = 0.0;
  c.inject.y1 = 1.0;
  c.inject.vx = 1.0;
  c.inject.vy = 0.25;
  for (const double y0 : {0.0, 0.5}) {
    c.inject.y0 = y0;
    const sim::InjectionC in = sim::make_injection(c);
    REQUIRE(in.side == sim::kLeft);
    const int N = 40000;
    int middle = 0;
    double worst_v = 0;
    const double a = y0, b = 1.0, mid0 = a + 0.25 * (b - a), mid1 = a + 0.75 * (b - a);
    for (int id = 0; id < N; ++id) {
      const sim::Particle p = sim::injected_particle(7, id, in);
      REQUIRE(p.y >= a);
      REQUIRE(p.y <= b);
      REQUIRE(p.x >= 0.0f);
      REQUIRE(p.x <= 0.05f);
      middle += (p.y >= mid0 && p.y < mid1) ? 1 : 0;
      worst_v = std::max(worst_v, std::abs(p.vx - 6.0 * p.y * (1 - p.y)));
      CHECK(p.vy == 0.25f);
    }
    // The flux's share of the middle half of [a, b]: F = 3 xi^2 - 2 xi^3.
    auto F = [](double x) { return x * x * (3 - 2 * x); };
    const double expect = (F(mid1) - F(mid0)) / (F(b) - F(a));
    const double sigma = std::sqrt(expect * (1 - expect) / N);
    INFO("span [" << a << ", " << b << "]: middle half " << double(middle) / N << ", expected " << expect);
    CHECK(std::abs(double(middle) / N - expect) <= 4 * sigma);
    CHECK(worst_v <= 1e-5);
  }
  // Away from the inflow side, or with a uniform profile: uniform as before.
  c.inject.x0 = 0.1;
  CHECK(sim::make_injection(c).side == -1);
  c.inject.x0 = 0.0;
  c.left.profile = sim::InflowProfile::uniform;
  CHECK(sim::make_injection(c).side == -1);
}

// Catches a misspelt profile taken silently, or a profile on a side that
// ignores it.
TEST_CASE("inflow: config errors name the file, line and key of a profile") {
  const std::string base = "[boundary.left]\nkind = \"inflow\"\nspeed = 1.0\n[boundary.right]\nkind = \"outflow\"\n";
  CHECK(sim::test::config_error(base + "[boundary.top]\nkind = \"wall\"\n") == "");
  CHECK(sim::test::config_error(base.substr(0, 44) + "profile = \"parabolic\"\n" + base.substr(44)) == "");
  CHECK(sim::test::config_error(base + "[boundary.bottom]\nprofile = \"parablic\"\n") ==
        "t.toml:7:11: boundary.bottom.profile: expected one of uniform|parabolic, got \"parablic\"");
  CHECK(sim::test::config_error(base + "[boundary.top]\nkind = \"wall\"\nprofile = \"parabolic\"\n") ==
        "t.toml:8:11: boundary.top.profile: \"parabolic\" applies to an inflow side, and the top side is of kind "
        "\"wall\" (set kind = \"inflow\", or leave out the profile)");
  CHECK(sim::test::config_error(base, {"boundary.right.profile=parabolic"}) ==
        "--set boundary.right.profile=parabolic: boundary.right.profile: \"parabolic\" applies to an inflow side, "
        "and the right side is of kind \"outflow\" (set kind = \"inflow\", or leave out the profile)");
  // "uniform" is every side's default, and what a snapshot's config writes.
  CHECK(sim::test::config_error(base + "[boundary.top]\nprofile = \"uniform\"\n") == "");
  // A parabolic inflow brings speed x length, as a uniform one: balanced by
  // an equal uniform inflow opposite, with no outflow side.
  CHECK(sim::test::config_error("[boundary.left]\nkind = \"inflow\"\nspeed = 1.0\nprofile = \"parabolic\"\n"
                                "[boundary.right]\nkind = \"inflow\"\nspeed = -1.0\n") == "");
}
