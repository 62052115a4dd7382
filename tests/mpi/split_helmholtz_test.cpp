// SPDX-License-Identifier: MIT
// The viscous step's transform solve split over slabs of rows
// (CpuFftHelmholtz::split: x transforms on the ranks holding their rows,
// y transforms on columns of blocks, all-to-all transposes between) against
// the same correction on one rank: each rank's rows of both components bit
// for bit, reading b in its own rows and x in its rows and the rows next to
// them only. Grids narrower and wider than the 16-row and 16-column blocks,
// with blocks that straddle slabs, every side pairing the transform takes,
// every group size up to the run's.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sim/cpu/cpu_helmholtz_fft.hpp"
#include "sim/model/constants.hpp"
#include "sim/model/helmholtz_fft.hpp"
#include "sim/ranks/slab_rows.hpp"
#include "one_thread.hpp"
#include "../support/sides.hpp"

using sim::BoundaryKind;
using sim::Comm;

TEST_CASE("split helmholtz: every rank's corrected rows are one rank's, bit for bit") {
  const sim::test::OneThreadPerRank one_thread;
  const Comm world = Comm::world();
  const BoundaryKind kinds[] = {BoundaryKind::periodic, BoundaryKind::wall, BoundaryKind::free_slip,
                                BoundaryKind::inflow};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  int solved = 0;
  for (int groups = 1; groups <= world.size(); ++groups) {
    const Comm c = world.split(world.rank() < groups ? 0 : 1, world.rank());
    for (auto [nx, ny] : {std::pair{5, 9}, {20, 37}, {33, 18}})
      for (BoundaryKind x : kinds)
        for (BoundaryKind y : kinds) {
          if (ny < c.size()) continue;
          const sim::Config cfg = sim::test::sides_config(nx, ny, x, y);
          const sim::Grid grid = sim::Grid::make(nx, ny, cfg.lx, cfg.ly);
          const sim::Constants k = sim::make_constants(cfg, grid);
          if (!sim::helmholtz_transform_refusal(k, false).empty()) continue;
          INFO("group of ", c.size(), ", rank ", c.rank(), ": ", nx, " x ", ny, ", x ", static_cast<int>(x), ", y ",
               static_cast<int>(y));
          const auto ranks = std::make_shared<const sim::SlabRows>(
              c, sim::Domain{nx, ny, cfg.lx, cfg.ly, x == BoundaryKind::periodic, y == BoundaryKind::periodic});
          const int j0 = ranks->j0(), j1 = ranks->j1();
          sim::CpuFftHelmholtz one(k), split(k);
          split.split(ranks);
          const double g = 0.37;
          for (int q = 0; q < 2; ++q) {
            std::vector<float> b(grid.size()), x0(grid.size());
            for (size_t n = 0; n < b.size(); ++n) {
              b[n] = static_cast<float>(std::sin(0.7 * n) + 0.25 * (n % 5));
              x0[n] = static_cast<float>(std::cos(0.3 * n) - 0.125 * (n % 3));
            }
            std::vector<float> want = x0;
            one.correct(q, b.data(), want.data(), g);
            // What other ranks own is NaN here (b beyond the rank's rows, x
            // beyond them and the rows next to them): the split solve must
            // not read it.
            std::vector<float> mine_b = b, got = x0;
            for (int j = 0; j < ny + (q == 1 ? 1 : 0); ++j)
              for (int i = -1; i <= grid.pitch - 2; ++i) {
                if (j < j0 || j >= j1) mine_b[static_cast<size_t>(grid.idx(i, j))] = nan;
                if (j < j0 - 1 || j > j1) got[static_cast<size_t>(grid.idx(i, j))] = nan;
              }
            split.correct(q, mine_b.data(), got.data(), g);
            std::string first;
            for (int j = j0; j < j1 && first.empty(); ++j)
              for (int i = -1; i <= grid.pitch - 2; ++i) {
                const size_t at = static_cast<size_t>(grid.idx(i, j));
                if (!(got[at] == want[at])) {
                  first = "component " + std::to_string(q) + ", row " + std::to_string(j) + ", column " +
                          std::to_string(i) + ": " + std::to_string(got[at]) + " against " + std::to_string(want[at]);
                  break;
                }
              }
            CHECK_MESSAGE(first.empty(), first);
            ++solved;
          }
        }
  }
  CHECK(solved > 0);
}
