// SPDX-License-Identifier: MIT
// The decomposition as pure functions: ownership, neighbours, sizes, the
// choice of process grid, the refusals and the owner of a point.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/ranks/decomposition.hpp"

namespace {

using sim::Box;
using sim::Decomposition;
using sim::Domain;

std::string where(const Decomposition& d) {
  const Domain& g = d.domain();
  return std::to_string(g.nx) + " x " + std::to_string(g.ny) + (g.periodic_x ? " px" : "") +
         (g.periodic_y ? " py" : "") + " on " + std::to_string(d.px()) + " x " + std::to_string(d.py());
}

// Each point of an nx x ny range is covered by exactly one of the boxes
// `of(rank)`; "" or the first problem.
template <class Of>
std::string covered_once(const Decomposition& d, int nx, int ny, Of of, const char* what) {
  std::vector<int> count(size_t(nx) * ny, 0);
  for (int r = 0; r < d.ranks(); ++r) {
    const Box b = of(r);
    for (int j = b.j0; j < b.j1; ++j)
      for (int i = b.i0; i < b.i1; ++i) {
        if (i < 0 || i >= nx || j < 0 || j >= ny)
          return std::string(what) + " (" + std::to_string(i) + ", " + std::to_string(j) + ") of rank " +
                 std::to_string(r) + " outside the grid";
        ++count[size_t(i) + size_t(j) * nx];
      }
  }
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i)
      if (count[size_t(i) + size_t(j) * nx] != 1)
        return std::string(what) + " (" + std::to_string(i) + ", " + std::to_string(j) + ") owned " +
               std::to_string(count[size_t(i) + size_t(j) * nx]) + " times";
  return "";
}

// Everything the header promises of one decomposition; "" or the first problem.
std::string problems(const Decomposition& d) {
  const Domain& g = d.domain();
  if (std::string p = covered_once(d, g.nx, g.ny, [&](int r) { return d.box(r); }, "cell"); !p.empty()) return p;
  const int unx = g.nx + (g.periodic_x ? 0 : 1), vny = g.ny + (g.periodic_y ? 0 : 1);
  if (std::string p = covered_once(d, unx, g.ny, [&](int r) { return d.owned_u(r); }, "u face"); !p.empty()) return p;
  if (std::string p = covered_once(d, g.nx, vny, [&](int r) { return d.owned_v(r); }, "v face"); !p.empty()) return p;
  for (int r = 0; r < d.ranks(); ++r) {
    const Box b = d.box(r);
    const std::string rank = "rank " + std::to_string(r);
    if (d.rank_at(d.cx(r), d.cy(r)) != r) return rank + ": process-grid coordinates do not map back";
    // Near-equal sizes; boxes of a process row share rows, of a column columns.
    if (b.nx() != g.nx / d.px() && b.nx() != g.nx / d.px() + 1) return rank + ": width " + std::to_string(b.nx());
    if (b.ny() != g.ny / d.py() && b.ny() != g.ny / d.py() + 1) return rank + ": height " + std::to_string(b.ny());
    const Box row = d.box(d.rank_at(0, d.cy(r))), col = d.box(d.rank_at(d.cx(r), 0));
    if (row.j0 != b.j0 || row.j1 != b.j1 || col.i0 != b.i0 || col.i1 != b.i1) return rank + ": not on the process grid";
    for (int j = b.j0; j < b.j1; ++j)
      for (int i = b.i0; i < b.i1; ++i)
        if (d.owner_of_cell(i, j) != r) return rank + ": owner_of_cell disagrees with the box";
    const sim::Grid lg = d.local_grid(r);
    const sim::Grid gg = sim::Grid::make(g.nx, g.ny, g.lx, g.ly);
    if (lg.nx != b.nx() || lg.ny != b.ny() || lg.dx != gg.dx || lg.dy != gg.dy) return rank + ": local grid";
    // Neighbours: adjacent (or across a periodic seam), symmetric, -1 exactly at closed sides.
    const auto nb = d.neighbours(r);
    const bool edge[4] = {b.i0 == 0, b.i1 == g.nx, b.j0 == 0, b.j1 == g.ny};
    const bool wraps[4] = {g.periodic_x, g.periodic_x, g.periodic_y, g.periodic_y};
    const int opposite[4] = {sim::kRight, sim::kLeft, sim::kTop, sim::kBottom};
    for (int s = 0; s < 4; ++s) {
      const std::string side = rank + " side " + std::to_string(s);
      if ((nb[s] < 0) != (edge[s] && !wraps[s])) return side + ": neighbour " + std::to_string(nb[s]);
      if (nb[s] < 0) continue;
      if (d.neighbours(nb[s])[opposite[s]] != r) return side + ": not symmetric";
      const Box n = d.box(nb[s]);
      const bool adjacent = s == sim::kLeft    ? n.i1 % g.nx == b.i0 && n.j0 == b.j0
                            : s == sim::kRight ? n.i0 == b.i1 % g.nx && n.j0 == b.j0
                            : s == sim::kBottom ? n.j1 % g.ny == b.j0 && n.i0 == b.i0
                                                : n.j0 == b.j1 % g.ny && n.i0 == b.i0;
      if (!adjacent) return side + ": neighbour " + std::to_string(nb[s]) + " is not adjacent";
    }
  }
  return "";
}

// Whether px x py fits, so that blocks(d, px, py) must succeed.
bool fits(const Domain& g, int px, int py) { return px <= g.nx && py <= g.ny; }

}  // namespace

TEST_CASE("decomposition: every cell and face owned once, neighbours symmetric, for slabs and blocks") {
  int checked = 0;
  for (int nx = 1; nx <= 9; ++nx)
    for (int ny = 1; ny <= 9; ++ny)
      for (int per = 0; per < 4; ++per)
        for (int ranks = 1; ranks <= 12; ++ranks) {
          const Domain g{nx, ny, 1.0, 1.0, (per & 1) != 0, (per & 2) != 0};
          INFO(nx, " x ", ny, " periodic ", per, ", ", ranks, " ranks");
          if (ranks <= ny) {
            const Decomposition d = Decomposition::slabs(g, ranks);
            CHECK(d.px() == 1);
            CHECK(d.py() == ranks);
            const std::string p = problems(d);
            CHECK_MESSAGE(p.empty(), where(d), ": ", p);
            ++checked;
          } else {
            CHECK_THROWS_AS(Decomposition::slabs(g, ranks), std::invalid_argument);
          }
          for (int px = 1; px <= ranks; ++px) {
            if (ranks % px != 0) continue;
            const int py = ranks / px;
            if (!fits(g, px, py)) {
              CHECK_THROWS_AS(Decomposition::blocks(g, px, py), std::invalid_argument);
              continue;
            }
            const Decomposition d = Decomposition::blocks(g, px, py);
            const std::string p = problems(d);
            CHECK_MESSAGE(p.empty(), where(d), ": ", p);
            ++checked;
          }
        }
  MESSAGE(checked, " decompositions checked");
}

TEST_CASE("decomposition: impossible splits are refused with the reason") {
  const Domain g{8, 4, 1.0, 1.0, false, false};
  CHECK_THROWS_WITH_AS(Decomposition::slabs(g, 5), "5 slabs of a 8 x 4 grid: at most one slab per row (4)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Decomposition::blocks(g, 9, 1),
                       "a 9 x 1 process grid on a 8 x 4 grid: more ranks along x than cells (at most 8 x 4)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Decomposition::blocks(g, 1, 5),
                       "a 1 x 5 process grid on a 8 x 4 grid: more ranks along y than cells (at most 8 x 4)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Decomposition::slabs(g, 0), "a decomposition needs at least one rank, not 0",
                       std::invalid_argument);
  CHECK_THROWS_AS(Decomposition::blocks(g, 0, 2), std::invalid_argument);
  CHECK_THROWS_WITH_AS(Decomposition::slabs(Domain{0, 4, 1, 1, false, false}, 1),
                       "a 0 x 4 grid: at least one cell a side", std::invalid_argument);
  CHECK_THROWS_AS(Decomposition::slabs(Domain{4, 4, 0.0, 1, false, false}, 1), std::invalid_argument);
  const Decomposition d = Decomposition::slabs(g, 2);
  CHECK_THROWS_AS(d.box(2), std::out_of_range);
  CHECK_THROWS_AS(d.neighbours(-1), std::out_of_range);
  CHECK_THROWS_AS(d.owner_of_cell(8, 0), std::out_of_range);
  CHECK_THROWS_AS(d.owner_of_cell(0, -1), std::out_of_range);
  CHECK_THROWS_AS(d.owner_of_point(std::nan(""), 0.5), std::invalid_argument);
  CHECK_THROWS_AS(d.owner_of_point(0.5, INFINITY), std::invalid_argument);
}

TEST_CASE("decomposition: owner_of_point agrees with the boxes, wraps periodic sides and clamps closed ones") {
  for (int per = 0; per < 4; ++per)
    for (int ranks : {1, 2, 3, 4, 6}) {
      const Domain g{13, 7, 2.5, 0.7, (per & 1) != 0, (per & 2) != 0};
      for (int px = 1; px <= ranks; ++px) {
        if (ranks % px != 0 || !fits(g, px, ranks / px)) continue;
        const Decomposition d = Decomposition::blocks(g, px, ranks / px);
        INFO(where(d));
        const double dx = g.lx / g.nx, dy = g.ly / g.ny;
        int wrong = 0;
        for (int r = 0; r < d.ranks(); ++r) {
          const Box b = d.box(r);
          // Just inside each corner of the box's region, and its middle.
          for (double fx : {b.i0 + 1e-3, 0.5 * (b.i0 + b.i1), b.i1 - 1e-3})
            for (double fy : {b.j0 + 1e-3, 0.5 * (b.j0 + b.j1), b.j1 - 1e-3}) {
              const double x = fx * dx, y = fy * dy;
              if (d.owner_of_point(x, y) != r) ++wrong;
              // Outside the domain: the periodic image, or the boundary box.
              for (int k : {-2, -1, 1, 3}) {
                const double ox = x + k * g.lx, oy = y + k * g.ly;
                const int cx = g.periodic_x ? d.cx(r) : k < 0 ? 0 : d.px() - 1;
                const int cy = g.periodic_y ? d.cy(r) : k < 0 ? 0 : d.py() - 1;
                if (d.owner_of_point(ox, oy) != d.rank_at(cx, cy)) ++wrong;
              }
            }
        }
        CHECK(wrong == 0);
        // The domain's far sides: the last box when closed, the first when periodic.
        const int far = d.owner_of_point(g.lx, g.ly);
        CHECK(far == d.rank_at(g.periodic_x ? 0 : d.px() - 1, g.periodic_y ? 0 : d.py() - 1));
        // Far past a closed side: still the boundary box (no int overflow).
        const int lost = d.owner_of_point(-1e300, 1e300);
        CHECK(lost >= 0);
        CHECK(lost < d.ranks());
        if (!g.periodic_x) CHECK(d.cx(lost) == 0);
        if (!g.periodic_y) CHECK(d.cy(lost) == d.py() - 1);
        // Every in-domain point: cell_of_point is floor(x / dx) and its owner's box holds it.
        for (int k = 0; k < 997; ++k) {
          const double x = g.lx * ((k * 37) % 997) / 997.0, y = g.ly * ((k * 91) % 997) / 997.0;
          const auto c = d.cell_of_point(x, y);
          if (c[0] != int(std::floor(x / dx)) || c[1] != int(std::floor(y / dy))) ++wrong;
          if (!d.box(d.owner_of_point(x, y)).contains(c[0], c[1])) ++wrong;
        }
        CHECK(wrong == 0);
      }
    }
}
