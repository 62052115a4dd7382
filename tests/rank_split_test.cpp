// SPDX-License-Identifier: MIT
// The rank split of one process (OneRank, sim/ranks/rank_split.hpp): the
// rows are the whole grid and every operation the identity, folding rows in
// the order the local loops did; and the backends hold one when given none.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/model/config.hpp"
#include "sim/model/grid.hpp"
#include "sim/ranks/rank_split.hpp"

using namespace sim;

TEST_CASE("rank split: one rank owns every row and point") {
  const OneRank r(8, false);
  CHECK(r.alone());
  CHECK(r.root());
  CHECK(r.j0() == 0);
  CHECK(r.j1() == 8);
  CHECK(r.face_end() == 9);
  CHECK(r.first_row(0) == 0);
  CHECK(r.end_row(0) == 8);
  const Grid g = Grid::make(5, 8, 1.0, 1.0);
  const auto [first, last] = r.near_rows(g);
  CHECK(first == 0);
  CHECK(last == g.size());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(r.owns_point(nan, 0.5));  // the watchdog finds it where it is
  CHECK(r.owner_of_point(nan, 0.5) == -1);
  CHECK(r.owner_of_point(0.5, 0.5) == 0);
  CHECK(r.slabs() == nullptr);
  CHECK(r.describe().empty());
}

TEST_CASE("rank split: one rank's reductions are the local folds") {
  const OneRank r(3, true);
  const std::vector<double> v{0.1, 0.2, 0.3, 1e-17};
  double acc = 0;
  for (const double x : v) acc += x;
  CHECK(r.sum_rows(v.data(), 4) == acc);  // bit for bit: from 0, in row order
  const std::vector<double> negative{-1.0, -2.0};
  CHECK(r.max_rows(negative.data(), 2) == 0.0);  // folded from 0, as over ranks
  const std::vector<double> with_nan{1.0, std::numeric_limits<double>::quiet_NaN(), 2.0};
  CHECK(std::isnan(r.max_rows(with_nan.data(), 3)));
  CHECK(r.sum(0.3) == 0.3);
  CHECK(r.max(-0.5) == -0.5);
  CHECK(r.sum(int64_t(7)) == 7);
}

TEST_CASE("rank split: one rank's exchanges and gathers leave everything as it is") {
  const OneRank r(4, false);
  std::vector<real> f{1, 2, 3, 4};
  const std::vector<real> before = f;
  r.exchange_halo(f.data(), Stagger::cell);
  r.exchange_wide(f.data());
  r.fold(f.data(), Stagger::u_face);
  r.refresh(f.data(), Stagger::v_face);
  r.copy_rows(f.data(), 1, RankSplit::RowPlan{{{0, 1, 0}}});
  CHECK(f == before);
  SimState s;
  s.u = f;
  s.counters.removed = 3;
  r.gather_state(s, 0);
  CHECK(s.u == before);
  CHECK(s.counters.removed == 3);
  CHECK(r.send_to_owners({Particle{}}).empty());
}

TEST_CASE("rank split: an attached transport counts in comm_ms and comm_calls") {
  struct Fake final : SplitTransport {
    double transport_ms() override { return 2.5; }
    int64_t transport_calls() const override { return 4; }
  } t;
  const OneRank r(4, false);
  CHECK(r.comm_ms() == 0.0);
  r.attach(&t);
  CHECK(r.comm_ms() == 2.5);
  CHECK(r.comm_calls() == 4);
  r.attach(nullptr);
  CHECK(r.comm_calls() == 0);
}

TEST_CASE("rank split: a backend made without one holds one rank") {
  Config c;
  c.nx = 8;
  c.ny = 6;
  const Grid g = Grid::make(c.nx, c.ny, c.lx, c.ly);
  const auto b = make_cpu_backend(c, g);
  CHECK(b->ranks().alone());
  CHECK(b->ranks().j1() == 6);
  CHECK(b->ranks().face_end() == 7);
  CHECK(b->ranks().comm_calls() == 0);
}
