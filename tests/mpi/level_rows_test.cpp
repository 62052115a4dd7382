// split_levels (sim/parallel/level_rows.hpp), the multigrid rows of a run
// split into slabs that both backends use, against what each operation of
// the V-cycle reads: every level's rows shared out without gap or overlap;
// each rank's halo rows (wrapped on a periodic y, none past a closed side);
// the parent of every fine row a rank updates, and both children of every
// coarse row it restricts to, either its own or in its copy lists, from
// their owner. Every group size up to the run's, 1 to 40 rows, closed and
// periodic y.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/parallel/level_rows.hpp"

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

TEST_CASE("level rows: every row a V-cycle reads is the rank's own or copied in from its owner") {
  const Comm world = Comm::world();
  for (int groups = 1; groups <= world.size(); ++groups) {
    const Comm c = world.split(world.rank() < groups ? 0 : 1, world.rank());
    const int n = c.size();
    for (int ny = n; ny <= 40; ++ny)
      for (bool periodic : {false, true}) {
        const SlabRows s(c, Domain{3, ny, 1.0, 1.0, false, periodic});
        std::vector<int> level_ny{ny};
        while (level_ny.back() > 2) level_ny.push_back((level_ny.back() + 1) / 2);
        const std::vector<LevelRows> L = sim::split_levels(&s, level_ny);
        std::string bad;
        auto expect = [&](bool ok, const std::string& what) {
          if (!ok && bad.empty()) bad = what;
        };
        bool gathered = false;
        for (size_t l = 0; l < L.size(); ++l) {
          const LevelRows& V = L[l];
          const int rows = level_ny[l];
          const std::string at = "level " + std::to_string(l) + " (" + std::to_string(rows) + " rows)";
          expect(V.first.size() == size_t(n) + 1 && V.first.front() == 0 && V.first.back() == rows, at + ": ends");
          for (int q = 0; q < n; ++q) expect(V.first[size_t(q)] <= V.first[size_t(q) + 1], at + ": order");
          expect(V.lo == V.first[size_t(c.rank())] && V.hi == V.first[size_t(c.rank()) + 1], at + ": own rows");
          if (l == 0)
            for (int q = 0; q < n; ++q) expect(V.first[size_t(q)] == s.first_row(q), at + ": the slabs");
          // once a level is rank 0's alone, so is every coarser one
          if (gathered) expect(V.first[1] == rows, at + ": gathered");
          gathered = gathered || (n > 1 && V.first[1] == rows);
          for (int q = 0; q < n; ++q) {
            const int lo = V.first[size_t(q)], hi = V.first[size_t(q) + 1];
            const std::string who = at + ", rank " + std::to_string(q);
            for (const auto* list : {&V.halo[size_t(q)], &V.parents[size_t(q)], &V.below[size_t(q)]})
              for (const auto& w : *list) expect(w.owner != q, who + ": a copy from itself");
            // halo rows lo - 1 and hi of a rank with rows
            size_t halo = 0;
            for (int dst : {lo - 1, hi}) {
              if (lo >= hi) break;
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
            // prolongation: the parent of each fine row the rank updates
            if (l >= 1)
              for (int j = L[l - 1].first[size_t(q)]; j < L[l - 1].first[size_t(q) + 1]; ++j) {
                const int p = j / 2, o = owner(V, p);
                const auto* w = find(V.parents[size_t(q)], p);
                expect(o == q || (w && w->src == p && w->owner == o), who + ": parent " + std::to_string(p));
              }
            // restriction: both children of each coarse row the rank updates
            if (l + 1 < L.size())
              for (int J = L[l + 1].first[size_t(q)]; J < L[l + 1].first[size_t(q) + 1]; ++J)
                for (int j = 2 * J; j <= 2 * J + 1 && j < rows; ++j) {
                  const int o = owner(V, j);
                  const auto* w = find(V.below[size_t(q)], j);
                  expect(o == q || (w && w->src == j && w->owner == o), who + ": child " + std::to_string(j));
                }
          }
        }
        INFO("group of ", n, ", ", ny, " rows", periodic ? ", periodic y" : "");
        CHECK_MESSAGE(bad.empty(), bad);
      }
  }
}
