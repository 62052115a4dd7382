// SPDX-License-Identifier: MIT
#include "sim/ranks/level_rows.hpp"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace sim {

namespace {
// The rank whose share holds `row`.
int owner(const LevelRows& L, int row) {
  for (size_t r = 0; r + 1 < L.first.size(); ++r)
    if (row >= L.first[r] && row < L.first[r + 1]) return static_cast<int>(r);
  return -1;
}
}  // namespace

std::vector<LevelRows> split_levels(const SlabRows* ranks, const std::vector<int>& level_nx,
                                    const std::vector<int>& level_ny, int64_t replicated_cells) {
  if (level_nx.size() != level_ny.size()) throw std::invalid_argument("split_levels: level_nx and level_ny differ in length");
  const int n = ranks ? ranks->ranks() : 1;
  const int me = ranks ? ranks->rank() : 0;
  const size_t levels = level_ny.size();
  std::vector<LevelRows> out(levels);
  size_t first_replicated = levels;
  for (size_t l = 0; l < levels; ++l) {
    LevelRows& L = out[l];
    const int ny = level_ny[l];
    L.first.assign(static_cast<size_t>(n) + 1, 0);
    for (int r = 0; r < n; ++r)
      L.first[static_cast<size_t>(r)] = !ranks   ? 0
                                        : l == 0 ? ranks->first_row(r)
                                                 : (out[l - 1].first[static_cast<size_t>(r)] + 1) / 2;
    L.first[static_cast<size_t>(n)] = ny;
    const int64_t cells = static_cast<int64_t>(level_nx[l]) * ny;
    L.replicated = n > 1 && l > 0 &&
                   (l > first_replicated || ny < kGatherRowsPerRank * n || cells <= replicated_cells);
    if (L.replicated && first_replicated == levels) first_replicated = l;
    L.shared = n > 1 && !L.replicated;
    const int share_lo = L.first[static_cast<size_t>(me)], share_hi = L.first[static_cast<size_t>(me) + 1];
    L.lo = L.replicated ? 0 : share_lo;
    L.hi = L.replicated ? ny : share_hi;
    L.f_lo = L.replicated && l > first_replicated ? 0 : share_lo;
    L.f_hi = L.replicated && l > first_replicated ? ny : share_hi;
  }
  if (!ranks) return out;
  const bool periodic = ranks->periodic_y();
  for (size_t l = 0; l < levels; ++l) {
    LevelRows& L = out[l];
    const int ny = level_ny[l];
    for (auto* list : {&L.halo, &L.below, &L.parents, &L.gather}) list->assign(static_cast<size_t>(n), {});
    for (int q = 0; q < n; ++q) {
      auto want = [&](std::vector<SlabRows::RowCopy>& list, int dst) {
        int src = dst;
        if (dst < 0 || dst >= ny) {
          if (!periodic) return;  // a closed side's ghost: the rank's own rule
          src = dst < 0 ? ny - 1 : 0;
        }
        const int o = owner(L, src);
        if (o == q) return;
        for (const auto& w : list)
          if (w.dst == dst) return;
        list.push_back({dst, src, o});
      };
      const int lo = L.first[static_cast<size_t>(q)], hi = L.first[static_cast<size_t>(q) + 1];
      if (!L.replicated && lo < hi) {
        want(L.halo[static_cast<size_t>(q)], lo - 1);
        want(L.halo[static_cast<size_t>(q)], hi);
      }
      if (l == first_replicated)
        for (int j = 0; j < ny; ++j) want(L.gather[static_cast<size_t>(q)], j);
      if (l >= 1 && !L.replicated) {
        const LevelRows& F = out[l - 1];
        for (int j = F.first[static_cast<size_t>(q)]; j < F.first[static_cast<size_t>(q) + 1]; ++j)
          want(L.parents[static_cast<size_t>(q)], j / 2);
      }
      if (l + 1 < levels && !L.replicated) {
        const LevelRows& C = out[l + 1];
        for (int J = C.first[static_cast<size_t>(q)]; J < C.first[static_cast<size_t>(q) + 1]; ++J)
          for (int j = 2 * J; j <= 2 * J + 1 && j < ny; ++j) want(L.below[static_cast<size_t>(q)], j);
      }
    }
  }
  return out;
}

}  // namespace sim
