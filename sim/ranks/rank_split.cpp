// SPDX-License-Identifier: MIT
#include "sim/ranks/rank_split.hpp"

#include <algorithm>
#include <cmath>

#include "sim/model/types.hpp"

namespace sim {

std::pair<size_t, size_t> RankSplit::near_rows(const Grid& g) const {
  if (alone() || periodic_y()) return {0, g.size()};
  const int lo = std::max(-1, j0() - 2), hi = std::min(g.ny + 2, face_end() + 2);
  return {static_cast<size_t>(lo + 1) * g.pitch, static_cast<size_t>(hi + 1) * g.pitch};
}

double OneRank::sum_rows(const double* values, int n) const {
  double acc = 0;
  for (int r = 0; r < n; ++r) acc += values[r];
  return acc;
}

double OneRank::max_rows(const double* values, int n) const {
  double acc = 0;
  for (int r = 0; r < n; ++r) acc = max_nan(acc, values[r]);
  return acc;
}

int OneRank::owner_of_point(double x, double y) const { return std::isfinite(x) && std::isfinite(y) ? 0 : -1; }

std::shared_ptr<const RankSplit> rank_split_or_one(std::shared_ptr<const RankSplit> ranks, int ny, bool periodic_y) {
  if (ranks && !ranks->alone()) return ranks;
  return std::make_shared<const OneRank>(ny, periodic_y);
}

}  // namespace sim
