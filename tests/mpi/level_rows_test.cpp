// SPDX-License-Identifier: MIT
// split_levels (sim/ranks/level_rows.hpp), the multigrid rows of a run
// split into slabs that both backends use, against what each operation of
// the V-cycle reads: every level's rows shared out without gap or overlap;
// the replicated levels (every row on every rank) from the first one the
// rules pick to the coarsest; each rank's halo rows (wrapped on a periodic
// y, none past a closed side); the parent of every fine row a rank updates,
// both children of every coarse row it restricts to, and on the first
// replicated level every row others restrict, either its own or in its
// copy lists, from a rank that computed it. Every group size up to the
// run's, 1 to 40 rows, closed and periodic y, replication by rows alone
// and from 8 and 40 cells.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/ranks/level_rows.hpp"

namespace {

using sim::Comm;
using sim::Domain;
using sim::LevelRows;
using sim::SlabRows;

int owner(const LevelRows& L, int row) {
  for (size_t r = 0; r + 1 < L.first.size(); ++r)
    if (row >= L.first[r] && row < L.first[r + 1]) return static_cast<int>(r);
  return -1;
}

// The copy of row `dst` in `list`, or null.
const SlabRows::RowCopy* find(const std::vector<SlabRows::RowCopy>& list, int dst) {
  for (const auto& w : list)
    if (w.dst == dst) return &w;
  return nullptr;
}

}  // namespace

TEST_CASE("level rows: every row a V-cycle reads is the rank's own or copied in from a rank that computed it") {
  const Comm world = Comm::world();
  for (int groups = 1; groups <= world.size(); ++groups) {
    const Comm c = world.split(world.rank() < groups ? 0 : 1, world.rank());
    const int n = c.size();
    for (int ny = n; ny <= 40; ++ny)
      for (bool periodic : {false, true})
        for (int64_t replicated_cells : {int64_t(0), int64_t(8), int64_t(40)}) {
          const SlabRows s(c, Domain{3, ny, 1.0, 1.0, false, periodic});
          std::vector<int> level_ny{ny};
          while (level_ny.back() > 2) level_ny.push_back((level_ny.back() + 1) / 2);
          const std::vector<int> level_nx(level_ny.size(), 3);
          const std::vector<LevelRows> L = sim::split_levels(&s, level_nx, level_ny, replicated_cells);
          std::string bad;
          auto expect = [&](bool ok, const std::string& what) {
            if (!ok && bad.empty()) bad = what;
          };
          // rows rank q sweeps and prolongs into, and those it restricts, on level l
          auto rows_of = [&](size_t l, int q) {
            const LevelRows& V = L[l];
            return V.replicated ? std::pair<int, int>{0, level_ny[l]}
                                : std::pair<int, int>{V.first[size_t(q)], V.first[size_t(q) + 1]};
          };
          auto f_rows_of = [&](size_t l, int q) {
            const bool later = L[l].replicated && l > 0 && L[l - 1].replicated;
            return later ? std::pair<int, int>{0, level_ny[l]}
                         : std::pair<int, int>{L[l].first[size_t(q)], L[l].first[size_t(q) + 1]};
          };
          auto inside = [](std::pair<int, int> r, int j) { return j >= r.first && j < r.second; };
          size_t first_replicated = L.size();
          for (size_t l = 0; l < L.size(); ++l) {
            const LevelRows& V = L[l];
            const int rows = level_ny[l];
            const std::string at = "level " + std::to_string(l) + " (" + std::to_string(rows) + " rows)";
            expect(V.first.size() == size_t(n) + 1 && V.first.front() == 0 && V.first.back() == rows, at + ": ends");
            for (int q = 0; q < n; ++q) expect(V.first[size_t(q)] <= V.first[size_t(q) + 1], at + ": order");
            if (l == 0)
              for (int q = 0; q < n; ++q) expect(V.first[size_t(q)] == s.first_row(q), at + ": the slabs");
            else
              for (int q = 0; q < n; ++q)
                expect(V.first[size_t(q)] == (L[l - 1].first[size_t(q)] + 1) / 2, at + ": shares by first child");
            // replicated: never level 0; from the first level of few rows a
            // rank or few cells on, every coarser one
            const bool rule = n > 1 && l > 0 &&
                              (l > first_replicated || rows < sim::kGatherRowsPerRank * n ||
                               int64_t(3) * rows <= replicated_cells);
            expect(V.replicated == rule, at + ": replicated " + (rule ? "expected" : "unexpected"));
            if (V.replicated && first_replicated == L.size()) first_replicated = l;
            expect(std::pair<int, int>{V.lo, V.hi} == rows_of(l, c.rank()), at + ": own rows");
            expect(std::pair<int, int>{V.f_lo, V.f_hi} == f_rows_of(l, c.rank()), at + ": restricted rows");
            for (int q = 0; q < n; ++q) {
              const auto mine = rows_of(l, q);
              const std::string who = at + ", rank " + std::to_string(q);
              for (const auto* list : {&V.halo[size_t(q)], &V.parents[size_t(q)], &V.below[size_t(q)], &V.gather[size_t(q)]})
                for (const auto& w : *list) expect(w.owner != q && w.owner >= 0 && w.owner < n, who + ": a copy from itself");
              // halo rows lo - 1 and hi of a rank with rows of a shared-out level
              size_t halo = 0;
              for (int dst : {mine.first - 1, mine.second}) {
                if (V.replicated || mine.first >= mine.second) break;
                int src = dst;
                if (dst < 0 || dst >= rows) {
                  if (!periodic) continue;
                  src = dst < 0 ? rows - 1 : 0;
                }
                const int o = owner(V, src);
                if (o == q) continue;
                const auto* w = find(V.halo[size_t(q)], dst);
                expect(w && w->src == src && w->owner == o, who + ": halo row " + std::to_string(dst));
                ++halo;
              }
              expect(V.halo[size_t(q)].size() <= halo, who + ": extra halo rows");
              // prolongation: the parent of each fine row the rank updates, from a rank updating it
              if (l >= 1) {
                const auto fine = rows_of(l - 1, q);
                for (int j = fine.first; j < fine.second; ++j) {
                  const int p = j / 2;
                  const auto* w = find(V.parents[size_t(q)], p);
                  expect(inside(mine, p) || (w && w->src == p && inside(rows_of(l, w->owner), p)),
                         who + ": parent " + std::to_string(p));
                }
              }
              // restriction: both children of each coarse row the rank restricts
              if (l + 1 < L.size()) {
                const auto coarse = f_rows_of(l + 1, q);
                for (int J = coarse.first; J < coarse.second; ++J)
                  for (int j = 2 * J; j <= 2 * J + 1 && j < rows; ++j) {
                    const auto* w = find(V.below[size_t(q)], j);
                    expect(inside(mine, j) || (w && w->src == j && inside(rows_of(l, w->owner), j)),
                           who + ": child " + std::to_string(j));
                  }
              }
              // the first replicated level: every row another rank restricted, from it
              if (l == first_replicated) {
                for (int j = 0; j < rows; ++j) {
                  const auto* w = find(V.gather[size_t(q)], j);
                  expect(inside(f_rows_of(l, q), j) || (w && w->src == j && inside(f_rows_of(l, w->owner), j)),
                         who + ": gathered row " + std::to_string(j));
                }
              } else {
                expect(V.gather[size_t(q)].empty(), who + ": gathers off the first replicated level");
              }
            }
          }
          INFO("group of ", n, ", ", ny, " rows", periodic ? ", periodic y" : "", ", replicated from ",
               replicated_cells, " cells");
          CHECK_MESSAGE(bad.empty(), bad);
        }
  }
}
