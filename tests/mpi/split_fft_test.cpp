// SPDX-License-Identifier: MIT
// The transform solve split over slabs of rows (CpuFftPoisson::split)
// against the same solve on one rank: each rank's rows of x and phi and the
// halo rows next to them (the bottom and top ranks' ghost rows included),
// bit for bit, reading the right-hand side in its own rows only. Grids
// narrower and wider than the 16-row and 16-column blocks, with row blocks
// that straddle slabs, for every boundary pairing and every group size up
// to the run's.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sim/model/constants.hpp"
#include "sim/cpu/cpu_fft.hpp"
#include "sim/ranks/slab_rows.hpp"
#include "sim/model/poisson.hpp"
#include "../support/sides.hpp"

using sim::BoundaryKind;
using sim::Comm;

namespace {

struct Case {
  sim::Config cfg;
  sim::Grid grid;
  sim::PoissonHierarchy h;
};

Case make_case(int nx, int ny, BoundaryKind x, BoundaryKind y) {
  Case c;
  c.cfg = sim::test::sides_config(nx, ny, x, y);
  c.grid = sim::Grid::make(nx, ny, c.cfg.lx, c.cfg.ly);
  const sim::Constants k = sim::make_constants(c.cfg, c.grid);
  const std::vector<sim::real> open(c.grid.size(), sim::real(1));
  c.h = sim::build_poisson_hierarchy(c.grid, open, k);
  return c;
}

}  // namespace

TEST_CASE("split fft: every rank's rows and halo rows are one rank's solution, bit for bit") {
  const Comm world = Comm::world();
  const BoundaryKind kinds[] = {BoundaryKind::periodic, BoundaryKind::wall, BoundaryKind::outflow};
  for (int groups = 1; groups <= world.size(); ++groups) {
    const Comm c = world.split(world.rank() < groups ? 0 : 1, world.rank());
    for (auto [nx, ny] : {std::pair{5, 9}, {20, 37}, {33, 18}})
      for (BoundaryKind x : kinds)
        for (BoundaryKind y : kinds) {
          if (ny < c.size()) continue;
          const Case k = make_case(nx, ny, x, y);
          const sim::PoissonLevel& l = k.h.levels[0];
          INFO("group of ", c.size(), ", rank ", c.rank(), ": ", nx, " x ", ny, ", x ", static_cast<int>(x), ", y ",
               static_cast<int>(y));
          std::vector<sim::real> rhs(l.size(), sim::real(0));
          for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i)
              rhs[l.index(i, j)] = static_cast<sim::real>(std::sin(0.7 * i + 1.3 * j) + 0.25 * ((i * 7 + j * 3) % 5));
          std::vector<double> want_x(l.size(), 0.0);
          std::vector<sim::real> want_phi(l.size(), sim::real(0));
          sim::CpuFftPoisson one(k.h);
          one.solve(rhs.data(), want_x.data(), want_phi.data());

          const auto ranks = std::make_shared<const sim::SlabRows>(
              c, sim::Domain{nx, ny, k.cfg.lx, k.cfg.ly, x == BoundaryKind::periodic, y == BoundaryKind::periodic});
          const int j0 = ranks->j0(), j1 = ranks->j1();
          // Rows other ranks own are NaN here: the split solve must not read them.
          std::vector<sim::real> mine = rhs;
          for (int j = 0; j < ny; ++j)
            if (j < j0 || j >= j1)
              for (int i = 0; i < nx; ++i) mine[l.index(i, j)] = std::numeric_limits<sim::real>::quiet_NaN();
          std::vector<double> x_out(l.size(), -7.0);
          std::vector<sim::real> phi_out(l.size(), sim::real(-7));
          sim::CpuFftPoisson split(k.h);
          split.split(ranks);
          split.solve(mine.data(), x_out.data(), phi_out.data());
          std::string first;
          for (int j = j0 - 1; j <= j1 && first.empty(); ++j)
            for (int i = -1; i <= nx; ++i) {
              const size_t at = static_cast<size_t>(l.index(i, j));
              if (x_out[at] != want_x[at] || phi_out[at] != want_phi[at]) {
                first = "row " + std::to_string(j) + ", column " + std::to_string(i) + ": x " +
                        std::to_string(x_out[at]) + " against " + std::to_string(want_x[at]);
                break;
              }
            }
          CHECK_MESSAGE(first.empty(), first);
        }
  }
}
