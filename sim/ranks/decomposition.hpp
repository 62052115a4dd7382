// SPDX-License-Identifier: MIT
// How a global nx x ny grid is split among N ranks: a px x py process grid
// of boxes, rank = cx + cy * px (x fastest, as the grid index). Along each
// axis the cells are cut as evenly as integers allow, so two boxes of a
// column (row) of ranks differ by at most one cell; boxes of one process row
// share their rows, boxes of one process column their columns, so a side has
// one neighbour and a corner is reached through two sides.
//
//   slabs    px = 1, py = N: bands of whole rows (contiguous in memory).
//   blocks   a given px x py (the process grid of the particle exchange,
//            particle_exchange.hpp, which runs on blocks as well as slabs).
//
// Ownership (half-open ranges of global indices; the local Grid of a box
// is Grid::make of its size, local (i, j) = global (i0 + i, j0 + j)):
//   cells    [i0, i1) x [j0, j1).
//   u faces  the left face of each owned cell, i in [i0, i1), j in [j0, j1),
//            plus face nx when the box touches the right side of the
//            domain and x is not periodic (periodic: face nx is face 0,
//            owned with cell 0). So every face is owned exactly once, and
//            a box's local face i1 - i0 is its right neighbour's first face.
//   v faces  likewise in y: j in [j0, j1), plus face ny at a closed top.
// Neighbours per Side (kLeft, kRight, kBottom, kTop of sim/model/constants.hpp):
// the adjacent box's rank, wrapping across a periodic side (possibly the
// rank itself, or one rank on both sides), -1 at a closed domain side.
#pragma once
#include <array>
#include <cstdint>

#include <cmath>

#include "sim/model/constants.hpp"
#include "sim/model/grid.hpp"
#include "sim/model/types.hpp"

namespace sim {

// The cell along one axis that holds coordinate p of a finite point: the
// axis of `len` metres in n cells, wrapped when periodic, clamped to the
// first or last cell past a closed side. One function for the host's
// owner_of_point and the GPU's particle migration, so both place a
// particle on the same rank.
SIM_HD int cell_along(double p, double len, int n, bool periodic) {
  if (periodic) p -= len * floor(p / len);
  const double f = floor(p / (len / n));
  // Clamped in double first: a point far outside a closed side has no int cell.
  const int c = static_cast<int>(fmin(fmax(f, -1.0), double(n)));
  if (periodic) return c < 0 ? n - 1 : c >= n ? 0 : c;  // rounding at the seam
  return c < 0 ? 0 : c >= n ? n - 1 : c;
}

// Owned index ranges [i0, i1) x [j0, j1).
struct Box {
  int i0 = 0, i1 = 0, j0 = 0, j1 = 0;
  int nx() const { return i1 - i0; }
  int ny() const { return j1 - j0; }
  bool contains(int i, int j) const { return i >= i0 && i < i1 && j >= j0 && j < j1; }
  int64_t count() const { return int64_t(nx()) * ny(); }
};

// The global domain: cells, lengths and which axes wrap.
struct Domain {
  int nx = 0, ny = 0;
  double lx = 1, ly = 1;
  bool periodic_x = false, periodic_y = false;
};

class Decomposition {
 public:
  // Throws std::invalid_argument when the grid cannot give every rank a
  // cell per row and column of its box (more slabs than rows, no px x py =
  // ranks with px <= nx and py <= ny), or for a domain without cells.
  static Decomposition slabs(const Domain& d, int ranks);
  static Decomposition blocks(const Domain& d, int px, int py);

  const Domain& domain() const { return d_; }
  int ranks() const { return px_ * py_; }
  int px() const { return px_; }
  int py() const { return py_; }
  // Process-grid coordinates of a rank and back.
  int cx(int rank) const { return rank % px_; }
  int cy(int rank) const { return rank / px_; }
  int rank_at(int cx, int cy) const { return cx + cy * px_; }

  Box box(int rank) const;
  std::array<int, 4> neighbours(int rank) const;  // by Side; -1 = closed domain side
  // The box's own Grid: its cells, the global dx and dy.
  Grid local_grid(int rank) const;
  // Owned faces (see above), as index ranges of the global faces.
  Box owned_u(int rank) const;
  Box owned_v(int rank) const;

  // Owner of global cell (i, j), i in [0, nx), j in [0, ny); throws outside.
  int owner_of_cell(int i, int j) const;
  // Global cell of a point: floor(x / dx), floor(y / dy) with dx = lx / nx,
  // dy = ly / ny in double; a periodic axis wraps the point into the domain
  // first, a closed one clamps the cell to [0, n) (a particle on a wall, or
  // past it before the wall rule, belongs to the boundary box). Throws for a
  // non-finite coordinate.
  std::array<int, 2> cell_of_point(double x, double y) const;
  int owner_of_point(double x, double y) const;

 private:
  Decomposition(const Domain& d, int px, int py);
  void check_rank(int rank) const;

  Domain d_;
  int px_ = 1, py_ = 1;
};

}  // namespace sim
