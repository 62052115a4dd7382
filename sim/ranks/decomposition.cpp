// SPDX-License-Identifier: MIT
#include "sim/ranks/decomposition.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace sim {

namespace {

std::string size_text(const Domain& d) { return std::to_string(d.nx) + " x " + std::to_string(d.ny) + " grid"; }

// First cell of part c when n cells are cut into p parts: floor(c n / p),
// so part sizes are floor(n / p) or one more.
int cut(int c, int n, int p) { return static_cast<int>(int64_t(c) * n / p); }

// The part holding cell i: the largest c with cut(c) <= i.
int part_of(int i, int n, int p) { return static_cast<int>((int64_t(i + 1) * p - 1) / n); }

void check_domain(const Domain& d, int ranks) {
  if (d.nx < 1 || d.ny < 1) throw std::invalid_argument("a " + size_text(d) + ": at least one cell a side");
  if (!(d.lx > 0) || !(d.ly > 0) || !std::isfinite(d.lx) || !std::isfinite(d.ly))
    throw std::invalid_argument("a domain of " + std::to_string(d.lx) + " x " + std::to_string(d.ly) +
                                ": positive, finite lengths");
  if (ranks < 1) throw std::invalid_argument("a decomposition needs at least one rank, not " + std::to_string(ranks));
}

}  // namespace

Decomposition::Decomposition(const Domain& d, int px, int py) : d_(d), px_(px), py_(py) {}

Decomposition Decomposition::slabs(const Domain& d, int ranks) {
  check_domain(d, ranks);
  if (ranks > d.ny)
    throw std::invalid_argument(std::to_string(ranks) + " slabs of a " + size_text(d) + ": at most one slab per row (" +
                                std::to_string(d.ny) + ")");
  return Decomposition(d, 1, ranks);
}

Decomposition Decomposition::blocks(const Domain& d, int px, int py) {
  check_domain(d, px >= 1 && py >= 1 ? px * py : 0);
  if (px > d.nx || py > d.ny)
    throw std::invalid_argument("a " + std::to_string(px) + " x " + std::to_string(py) + " process grid on a " +
                                size_text(d) + ": more ranks along " + (px > d.nx ? "x" : "y") +
                                " than cells (at most " + std::to_string(d.nx) + " x " + std::to_string(d.ny) + ")");
  return Decomposition(d, px, py);
}

void Decomposition::check_rank(int rank) const {
  if (rank < 0 || rank >= ranks())
    throw std::out_of_range("rank " + std::to_string(rank) + " of a decomposition into " + std::to_string(ranks()));
}

Box Decomposition::box(int rank) const {
  check_rank(rank);
  const int x = cx(rank), y = cy(rank);
  return Box{cut(x, d_.nx, px_), cut(x + 1, d_.nx, px_), cut(y, d_.ny, py_), cut(y + 1, d_.ny, py_)};
}

std::array<int, 4> Decomposition::neighbours(int rank) const {
  check_rank(rank);
  const int x = cx(rank), y = cy(rank);
  std::array<int, 4> n{};
  n[kLeft] = x > 0 ? rank_at(x - 1, y) : d_.periodic_x ? rank_at(px_ - 1, y) : -1;
  n[kRight] = x < px_ - 1 ? rank_at(x + 1, y) : d_.periodic_x ? rank_at(0, y) : -1;
  n[kBottom] = y > 0 ? rank_at(x, y - 1) : d_.periodic_y ? rank_at(x, py_ - 1) : -1;
  n[kTop] = y < py_ - 1 ? rank_at(x, y + 1) : d_.periodic_y ? rank_at(x, 0) : -1;
  return n;
}

Grid Decomposition::local_grid(int rank) const {
  const Box b = box(rank);
  Grid g = Grid::make(b.nx(), b.ny(), b.nx() * (d_.lx / d_.nx), b.ny() * (d_.ly / d_.ny));
  // The global spacing, bit for bit (the local lengths over the local counts may round differently).
  g.dx = static_cast<real>(d_.lx / d_.nx);
  g.dy = static_cast<real>(d_.ly / d_.ny);
  return g;
}

Box Decomposition::owned_u(int rank) const {
  Box b = box(rank);
  if (cx(rank) == px_ - 1 && !d_.periodic_x) b.i1 += 1;
  return b;
}

Box Decomposition::owned_v(int rank) const {
  Box b = box(rank);
  if (cy(rank) == py_ - 1 && !d_.periodic_y) b.j1 += 1;
  return b;
}

int Decomposition::owner_of_cell(int i, int j) const {
  if (i < 0 || i >= d_.nx || j < 0 || j >= d_.ny)
    throw std::out_of_range("cell (" + std::to_string(i) + ", " + std::to_string(j) + ") outside the " +
                            size_text(d_));
  return rank_at(part_of(i, d_.nx, px_), part_of(j, d_.ny, py_));
}

std::array<int, 2> Decomposition::cell_of_point(double x, double y) const {
  if (!std::isfinite(x) || !std::isfinite(y))
    throw std::invalid_argument("no cell holds the point (" + std::to_string(x) + ", " + std::to_string(y) + ")");
  return {cell_along(x, d_.lx, d_.nx, d_.periodic_x), cell_along(y, d_.ly, d_.ny, d_.periodic_y)};
}

int Decomposition::owner_of_point(double x, double y) const {
  const std::array<int, 2> c = cell_of_point(x, y);
  return owner_of_cell(c[0], c[1]);
}

}  // namespace sim
