// SPDX-License-Identifier: MIT
// Taylor-Green vortex against its exact solution
//   u =  U sin x cos y e^{-2 nu t},  v = -U cos x sin y e^{-2 nu t}
// on a periodic [0, 2 pi]^2 box.
#include <doctest/doctest.h>

#include <cmath>

#include "sim/model/stability.hpp"
#include "support/cases.hpp"

namespace {

// Max velocity error over all faces after time T, relative to U, at a
// fixed step `dt` for every grid (not tied to h^2, which would hide a
// first-order time error: the step is small enough that the O(dt^2) time
// error stays below the O(h^2) spatial error being measured).
double tg_error(int n, double T, double nu, double dt) {
  sim::Config c = sim::test::taylor_green(n, nu);
  // the default solver (auto) solves for a float64 pressure: 1e-8 keeps the
  // solve error far below the h^2 error measured
  c.tolerance = 1e-8;
  const int steps = static_cast<int>(std::ceil(T / dt));
  c.dt = T / steps;
  auto s = sim::test::make_sim(c);
  for (int k = 0; k < steps; ++k) s->step();
  const sim::SimState st = s->download();
  const sim::Grid& g = st.grid;
  const double decay = std::exp(-2.0 * nu * s->time());
  double err = 0;
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) {
      const double x = i * c.dx(), y = (j + 0.5) * c.dy();
      err = std::max(err, std::abs(st.u[g.idx(i, j)] - std::sin(x) * std::cos(y) * decay));
      const double xv = (i + 0.5) * c.dx(), yv = j * c.dy();
      err = std::max(err, std::abs(st.v[g.idx(i, j)] + std::cos(xv) * std::sin(yv) * decay));
    }
  return err;
}

}  // namespace

TEST_CASE("fluid: Taylor-Green vortex within 1% after one viscous decay time at 64x64") {
  const double nu = 0.05;
  const double T = 1.0 / (2.0 * nu);  // e-folding time of the amplitude
  const double err = tg_error(64, T, nu, 0.02);
  MESSAGE("64x64 max error / U = " << err);
  CHECK(err < 0.01);
}

TEST_CASE("fluid: Taylor-Green converges at second order across 32, 64, 128 at one fixed step") {
  const double nu = 0.05, T = 1.0;
  // within the viscous limit of 128^2 (0.0121), the same for all three grids
  const double dt = 0.01;
  const double e32 = tg_error(32, T, nu, dt), e64 = tg_error(64, T, nu, dt), e128 = tg_error(128, T, nu, dt);
  const double p1 = std::log2(e32 / e64), p2 = std::log2(e64 / e128);
  MESSAGE("errors " << e32 << " " << e64 << " " << e128 << ", orders " << p1 << " " << p2);
  CHECK(p1 >= 1.8);
  CHECK(p2 >= 1.8);
}
