// SPDX-License-Identifier: MIT
// SlabRows, the CPU backend's view of a run split into slabs of rows,
// against what one rank holding every row computes: row reductions folded
// in row order (the same bits), gathers of storage rows, the
// deposit fold and refresh of the rows next to a slab, and row copies. Every
// group size from 1 to the run's ranks, rows per rank down to one, closed and
// periodic y.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/ranks/slab_rows.hpp"

namespace {

using sim::Comm;
using sim::Domain;
using sim::Grid;
using sim::SlabRows;
using sim::Stagger;

constexpr float kUntouched = -7.0f;

// The first mismatch of a check over many points. Every rank goes on to the
// next collective call whatever it finds (a failed REQUIRE on one rank would
// leave the others waiting in it).
struct FirstMismatch {
  std::string where;
  template <class A, class B>
  void expect(const A& got, const B& want, const std::string& what) {
    if (where.empty() && !(got == want)) where = what + ": " + std::to_string(got) + ", expected " + std::to_string(want);
  }
};

float formula(int col, int row) { return float(1 + col + 100 * row); }

// Runs f(comm, domain) for every group size and every (nx, ny, periodic y)
// with at least one row per rank.
template <class F>
void for_each_split(F&& f) {
  const Comm world = Comm::world();
  for (int groups = 1; groups <= world.size(); ++groups) {
    const Comm c = world.split(world.rank() < groups ? 0 : 1, world.rank());
    for (auto [nx, ny] : {std::pair{3, 1}, {2, 2}, {5, 3}, {4, 5}, {3, 8}})
      for (bool periodic : {false, true}) {
        if (ny < c.size()) continue;
        const Domain d{nx, ny, 1.0, 2.0, false, periodic};
        INFO("group of ", c.size(), ", rank ", c.rank(), ": ", nx, " x ", ny, periodic ? " periodic y" : "");
        f(c, d);
      }
  }
}

}  // namespace

TEST_CASE("slab rows: sums and maxima over rows are one rank's fold, bit for bit") {
  for_each_split([](const Comm& c, const Domain& d) {
    const SlabRows s(c, d);
    auto value = [](int row) { return 1.0 / (3.0 + row) + 1e16 * (row == 1); };  // order matters
    std::vector<double> mine, maxima;
    for (int j = s.j0(); j < s.j1(); ++j) {
      mine.push_back(value(j));
      maxima.push_back(j == d.ny - 1 && d.ny > 1 ? std::numeric_limits<double>::quiet_NaN() : value(j));
    }
    double want = 0;
    for (int j = 0; j < d.ny; ++j) want += value(j);
    const double got = s.sum_rows(mine);
    CHECK(got == want);
    const double m = s.max_rows(maxima);
    CHECK((d.ny > 1 ? std::isnan(m) : m == value(0)));
    CHECK(s.sum(int64_t(c.rank() + 1)) == int64_t(c.size()) * (c.size() + 1) / 2);
    CHECK(s.broadcast(c.rank() == 0 ? 2.5 : -1.0) == 2.5);
  });
}

TEST_CASE("slab rows: gather gives rank 0 every row") {
  for_each_split([](const Comm& c, const Domain& d) {
    const SlabRows s(c, d);
    const Grid g = Grid::make(d.nx, d.ny, d.lx, d.ly);
    std::vector<float> f(g.size(), kUntouched);
    // this rank's storage rows: its rows, the bottom rank's from row -1, the top rank's to ny + 1
    const int lo = s.j0() == 0 ? -1 : s.j0(), hi = s.top() ? d.ny + 1 : s.j1() - 1;
    for (int j = lo; j <= hi; ++j)
      for (int col = 0; col < g.pitch; ++col) f[size_t((j + 1) * g.pitch + col)] = formula(col, j);
    s.gather(f.data());
    FirstMismatch m;
    if (c.rank() == 0)
      for (int j = -1; j <= d.ny + 1; ++j)
        for (int col = 0; col < g.pitch; ++col)
          m.expect(f[size_t((j + 1) * g.pitch + col)], formula(col, j), "gather row " + std::to_string(j));

    CHECK_MESSAGE(m.where.empty(), m.where);
  });
}

TEST_CASE("slab rows: the fold adds deposits next to a slab onto their owners; refresh copies them back") {
  for_each_split([](const Comm& c, const Domain& d) {
    const SlabRows s(c, d);
    const Grid g = Grid::make(d.nx, d.ny, d.lx, d.ly);
    for (Stagger st : {Stagger::u_face, Stagger::v_face}) {
      const bool v = st == Stagger::v_face;
      INFO(std::string(v ? "v faces" : "u faces"));
      // Rows a deposit of rank q's particles reaches (rows j0 - 1 .. j1, and j1 + 1 for v),
      // wrapped on a periodic y, dropped past a closed side (no fluid unknown there).
      const int last = v && !d.periodic_y ? d.ny : d.ny - 1;
      auto reached = [&](int q) {
        std::vector<int> rows;
        const int a = s.first_row(q), b = s.end_row(q);
        for (int r = a - 1; r <= b + (v ? 1 : 0); ++r) {
          int w = r;
          if (d.periodic_y) w = ((r % d.ny) + d.ny) % d.ny;
          if (w < 0 || w > last) continue;
          bool seen = false;
          for (int x : rows) seen = seen || x == w;
          if (!seen) rows.push_back(w);
        }
        return rows;
      };
      auto owner = [&](int row) {
        if (row == d.ny) return c.size() - 1;
        for (int q = 0; q < c.size(); ++q)
          if (row >= s.first_row(q) && row < s.end_row(q)) return q;
        return -1;
      };
      std::vector<float> f(g.size(), 0.0f);
      for (int row : reached(c.rank()))
        for (int col = 0; col < g.pitch; ++col) f[size_t((row + 1) * g.pitch + col)] = float(c.rank() + 1) * formula(col, row);
      s.fold(f.data(), st);
      std::vector<float> want(g.size(), 0.0f);
      for (int q = 0; q < c.size(); ++q)
        for (int row : reached(q))
          if (owner(row) == c.rank())
            for (int col = 0; col < g.pitch; ++col) want[size_t((row + 1) * g.pitch + col)] += float(q + 1) * formula(col, row);
      FirstMismatch m;
      for (int row = -1; row <= d.ny + 1; ++row)
        for (int col = 0; col < g.pitch; ++col) {
          const size_t k = size_t((row + 1) * g.pitch + col);
          m.expect(f[k], want[k], "after the fold, row " + std::to_string(row) + " col " + std::to_string(col));
        }
      s.refresh(f.data(), st);
      // the rows this rank reaches now hold their owners' sums
      for (int row : reached(c.rank())) {
        float sum_factor = 0;
        for (int q = 0; q < c.size(); ++q)
          for (int r : reached(q))
            if (r == row) sum_factor += float(q + 1);
        for (int col = 0; col < g.pitch; ++col)
          m.expect(f[size_t((row + 1) * g.pitch + col)], sum_factor * formula(col, row),
                   "after refresh, row " + std::to_string(row));
      }
      CHECK_MESSAGE(m.where.empty(), m.where);
    }
  });
}

TEST_CASE("slab rows: copy_rows moves each listed row from its owner") {
  for_each_split([](const Comm& c, const Domain& d) {
    const SlabRows s(c, d);
    const int pitch = 5;
    std::vector<double> f(size_t(pitch) * (d.ny + 2), -1.0);
    for (int j = s.j0(); j < s.j1(); ++j)
      for (int col = 0; col < pitch; ++col) f[size_t((j + 1) * pitch + col)] = formula(col, j);
    // every rank wants every row it does not own, into row -1 (the last one listed wins)
    // and the first of them also into its own place
    std::vector<std::vector<SlabRows::RowCopy>> wanted(size_t(c.size()));
    int last_src = -1;
    for (int q = 0; q < c.size(); ++q)
      for (int r = 0; r < d.ny; ++r) {
        int o = 0;
        while (!(r >= s.first_row(o) && r < s.end_row(o))) ++o;
        if (o == q) continue;
        auto& w = wanted[size_t(q)];
        if (w.empty()) w.push_back({r, r, o});
        w.push_back({-1, r, o});
        if (q == c.rank()) last_src = r;
      }
    s.copy_rows(f.data(), pitch, wanted);
    const auto& mine = wanted[size_t(c.rank())];
    if (!mine.empty()) {
      for (int col = 0; col < pitch; ++col) {
        CHECK(f[size_t(col)] == formula(col, last_src));
        CHECK(f[size_t((mine[0].dst + 1) * pitch + col)] == formula(col, mine[0].src));
      }
    }
  });
}

TEST_CASE("slab rows: the halo plan's row copies give exchange_halo's rows") {
  for_each_split([](const Comm& c, const Domain& d) {
    const SlabRows s(c, d);
    const Grid g = Grid::make(d.nx, d.ny, d.lx, d.ly);
    for (Stagger st : {Stagger::cell, Stagger::u_face, Stagger::v_face}) {
      INFO(std::string(st == Stagger::cell ? "cells" : st == Stagger::u_face ? "u faces" : "v faces"));
      // Every row owned by this rank holds the formula; the rest (other
      // ranks' rows, the ghost rows of closed sides) holds a mark that
      // either way leaves as it came.
      std::vector<float> a(g.size(), kUntouched);
      const int hi = st == Stagger::v_face ? s.face_end() : s.j1();
      for (int j = s.j0(); j < hi; ++j)
        for (int col = 0; col < g.pitch; ++col) a[size_t((j + 1) * g.pitch + col)] = formula(col, j);
      std::vector<float> b = a;
      s.exchange_halo(a.data(), st);
      s.copy_rows(b.data(), g.pitch, s.halo_plan(st));
      for (const SlabRows::RowCopy& w : s.halo_plan(st)[size_t(c.rank())])  // the own wraps: the boundary fill's
        if (w.owner == c.rank())
          for (int col = 0; col < g.pitch; ++col)
            b[size_t((w.dst + 1) * g.pitch + col)] = b[size_t((w.src + 1) * g.pitch + col)];
      FirstMismatch m;
      for (int j = -1; j <= d.ny + 1; ++j)
        for (int col = 0; col < d.nx + (st == Stagger::u_face ? 3 : 2); ++col)  // storage columns, not the padding
          m.expect(b[size_t((j + 1) * g.pitch + col)], a[size_t((j + 1) * g.pitch + col)],
                   "row " + std::to_string(j) + " column " + std::to_string(col));
      CHECK_MESSAGE(m.where.empty(), m.where);
    }
  });
}

TEST_CASE("slab rows: row runs are the list's copies from others, in order, in maximal runs") {
  // Lists of 0 to 40 copies: runs of following rows from one owner, broken
  // by another owner, by a copy from the rank itself, or by a gap in the
  // source or the destination; fixed seeds, so every rank checks the same.
  uint32_t state = 12345;
  auto next = [&](uint32_t n) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % n;
  };
  std::string bad;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok && bad.empty()) bad = what;
  };
  for (int trial = 0; trial < 2000 && bad.empty(); ++trial) {
    const int rank = static_cast<int>(next(4));
    std::vector<SlabRows::RowCopy> list;
    const int n = static_cast<int>(next(41));
    for (int k = 0; k < n; ++k) {
      const bool follow = !list.empty() && next(4) != 0;
      SlabRows::RowCopy w{static_cast<int>(next(60)) - 1, static_cast<int>(next(60)) - 1, static_cast<int>(next(4))};
      if (follow) {
        w = list.back();
        w.dst += next(8) != 0 ? 1 : 2;
        w.src += next(8) != 0 ? 1 : 3;
        if (next(8) == 0) w.owner = static_cast<int>(next(4));
      }
      list.push_back(w);
    }
    const std::string at = "trial " + std::to_string(trial);
    const std::vector<SlabRows::RowRun> runs = SlabRows::row_runs(list, rank);
    // expanded, the runs are the copies from others in list order, slots counted among them
    std::vector<SlabRows::RowCopy> others;
    for (const auto& w : list)
      if (w.owner != rank) others.push_back(w);
    size_t k = 0;
    for (const auto& r : runs) {
      expect(r.count >= 1 && r.slot == k, at + ": a run's count or slot");
      for (int t = 0; t < r.count; ++t, ++k)
        expect(k < others.size() && others[k].dst == r.dst + t && others[k].src == r.src + t &&
                   others[k].owner == r.owner,
               at + ": a run's copy " + std::to_string(k));
    }
    expect(k == others.size(), at + ": copies left out of the runs");
    // maximal: two runs next to each other in the list with nothing of the
    // rank's own between them could not have been one
    size_t pos = 0;  // the list position after each run
    for (size_t r = 0; r < runs.size(); ++r) {
      size_t taken = 0;
      while (taken < static_cast<size_t>(runs[r].count)) taken += list[pos++].owner != rank ? 1 : 0;
      if (r + 1 < runs.size() && pos < list.size() && list[pos].owner != rank) {
        const auto& a = runs[r];
        const auto& b = runs[r + 1];
        expect(!(b.owner == a.owner && b.dst == a.dst + a.count && b.src == a.src + a.count),
               at + ": runs " + std::to_string(r) + " and " + std::to_string(r + 1) + " are one");
      }
    }
  }
  CHECK_MESSAGE(bad.empty(), bad);
}
