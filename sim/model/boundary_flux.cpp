// SPDX-License-Identifier: MIT
#include "sim/model/boundary_flux.hpp"

#include <algorithm>

#include "sim/model/backend.hpp"
#include "sim/model/state.hpp"

namespace sim {
namespace {

int wrap(int i, int n) { return ((i % n) + n) % n; }

}  // namespace

bool measures_boundaries(const Config& cfg) {
  if (!cfg.obstacles.empty()) return true;
  for (const BoundarySide* s : {&cfg.left, &cfg.right, &cfg.bottom, &cfg.top})
    if (s->kind == BoundaryKind::inflow || s->kind == BoundaryKind::outflow) return true;
  return false;
}

int64_t boundary_link_bound(const Config& cfg) {
  if (!measures_boundaries(cfg)) return 0;
  // a free face has at most 4 links; the faces with links lie in the first
  // row or column along each side (2 components) and in the ring of cells
  // around each obstacle's bounding box (4 faces a cell)
  int64_t faces = 2 * 2 * (int64_t(cfg.nx) + cfg.ny + 2);
  for (const Obstacle& o : cfg.obstacles) {
    const double w = o.shape == ObstacleShape::circle ? 2 * o.radius : o.x1 - o.x0;
    const double h = o.shape == ObstacleShape::circle ? 2 * o.radius : o.y1 - o.y0;
    const int64_t cw = std::min<int64_t>(cfg.nx, static_cast<int64_t>(w / cfg.dx()) + 4);
    const int64_t ch = std::min<int64_t>(cfg.ny, static_cast<int64_t>(h / cfg.dy()) + 4);
    faces += 4 * 2 * (cw + ch);
  }
  return 4 * faces;
}

BoundaryLinks boundary_links(const Config& cfg, const Grid& g, const Constants& k, const std::vector<real>& open,
                             int j0, int j1) {
  BoundaryLinks out;
  out.first.assign(kBoundaryOwners + 1, 0);
  if (!measures_boundaries(cfg)) return out;
  const bool px = is_periodic(k, kLeft), py = is_periodic(k, kBottom);
  const bool solids = k.has_solids != 0;
  // The obstacle that owns closed cell (i, j) (cells outside the grid are open).
  auto owner_of_cell = [&](int i, int j) -> int {
    if (px) i = wrap(i, g.nx);
    if (py) j = wrap(j, g.ny);
    if (i < 0 || i >= g.nx || j < 0 || j >= g.ny || open[g.idx(i, j)] != 0) return -1;
    const int o = obstacle_at(cfg, (i + 0.5) * cfg.dx(), (j + 0.5) * cfg.dy());
    return o >= 0 ? kSides + o : -1;
  };
  // The owner of the link from a free face of component q to its neighbour
  // face (ni, nj), or -1 when the neighbour is a free face.
  auto owner_of = [&](int q, int ni, int nj) -> int {
    if (q == 0) {
      if (!px && ni < k.u_i_begin) return kLeft;
      if (!px && ni >= k.u_i_end) return kRight;
      if (!py && nj < 0) return kBottom;
      if (!py && nj >= g.ny) return kTop;
      if (!solids) return -1;
      const int a = owner_of_cell(ni - 1, nj);
      return a >= 0 ? a : owner_of_cell(ni, nj);
    }
    if (!px && ni < 0) return kLeft;
    if (!px && ni >= g.nx) return kRight;
    if (!py && nj < k.v_j_begin) return kBottom;
    if (!py && nj >= k.v_j_end) return kTop;
    if (!solids) return -1;
    const int a = owner_of_cell(ni, nj - 1);
    return a >= 0 ? a : owner_of_cell(ni, nj);
  };
  const int di[4] = {-1, 1, 0, 0}, dj[4] = {0, 0, -1, 1};
  for (int j = j0; j < j1; ++j)
    for (int i = 0; i <= g.nx; ++i) {
      const int c = g.idx(i, j);
      const bool free[2] = {active_u(i, j, k) && !(solids && solid_u(open.data(), c)),
                            active_v(i, j, k) && !(solids && solid_v(open.data(), c, g.pitch))};
      for (int q = 0; q < 2; ++q) {
        if (!free[q]) continue;
        for (int side = 0; side < 4; ++side) {
          const int o = owner_of(q, i + di[side], j + dj[side]);
          if (o >= 0) out.links.push_back({i, j, static_cast<int8_t>(q), static_cast<int8_t>(side), static_cast<int16_t>(o)});
        }
      }
    }
  std::stable_sort(out.links.begin(), out.links.end(),
                   [](const BoundaryLink& a, const BoundaryLink& b) { return a.owner < b.owner; });
  for (const BoundaryLink& l : out.links) ++out.first[l.owner + 1];
  for (int o = 0; o < kBoundaryOwners; ++o) out.first[o + 1] += out.first[o];
  return out;
}

void boundary_rates(const BoundarySums& s, double rate[kBoundaryOwners][2]) {
  for (int o = 0; o < kBoundaryOwners; ++o)
    for (int a = 0; a < 2; ++a) {
      double sum = 0;
      for (int p = 0; p < kBoundaryParts; ++p) sum += s.part[p][o][a];
      rate[o][a] = sum;
    }
}

void set_boundary_diagnostics(const BoundarySums& s, int obstacles, Diagnostics& d,
                              const std::function<double(double)>& over_ranks) {
  double rate[kBoundaryOwners][2];
  boundary_rates(s, rate);
  for (auto& owner : rate)
    for (double& x : owner) x = over_ranks(x);
  d.boundaries = true;
  for (int side = 0; side < kSides; ++side)
    for (int a = 0; a < 2; ++a) d.side_intake[side][a] = rate[side][a];
  for (int o = 0; o < obstacles && o < kMaxObstacles; ++o)
    for (int a = 0; a < 2; ++a) d.obstacle_force[o][a] = -rate[kSides + o][a];
}

}  // namespace sim
