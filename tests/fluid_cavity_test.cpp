// Lid-driven cavity at Re = 100 against the steady centreline velocities of
// Ghia, Ghia & Shin (J. Comput. Phys. 48, 1982, Table I).
#include <doctest/doctest.h>

#include <cmath>

#include "support/cases.hpp"

TEST_CASE("fluid: lid-driven cavity at Re = 100 matches Ghia et al. on the vertical centreline") {
  sim::Config c = sim::test::quiet_box(48);
  c.top.speed = 1.0;
  c.viscosity = 0.01;  // Re = U L / nu = 100
  c.tolerance = 1e-6;  // the default solver (auto): float64 pressure
  c.cfl = 0.5;
  auto s = sim::test::make_sim(c);
  while (s->time() < 15.0) s->step();
  const sim::SimState st = s->download();
  const sim::Grid& g = st.grid;
  // u along x = 0.5 (a face column when nx is even), linear in y between face rows.
  auto u_at = [&](double y) {
    const double fy = y / c.dy() - 0.5;
    const int j = std::max(0, std::min(g.ny - 2, static_cast<int>(std::floor(fy))));
    const double w = std::min(1.0, std::max(0.0, fy - j));
    return (1 - w) * st.u[g.idx(g.nx / 2, j)] + w * st.u[g.idx(g.nx / 2, j + 1)];
  };
  const double ghia[][2] = {{0.9766, 0.84123}, {0.9531, 0.68717}, {0.8516, 0.23151}, {0.7344, 0.00332},
                            {0.6172, -0.13641}, {0.5000, -0.20581}, {0.4531, -0.21090}, {0.2813, -0.15662},
                            {0.1719, -0.10150}, {0.1016, -0.06434}, {0.0547, -0.03717}};
  double worst = 0;
  for (const auto& p : ghia) worst = std::max(worst, std::abs(u_at(p[0]) - p[1]));
  MESSAGE("48x48: worst |u - u_Ghia| on the centreline = " << worst << " (lid speed 1)");
  CHECK(worst < 0.01);
}
