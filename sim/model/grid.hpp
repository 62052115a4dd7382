// SPDX-License-Identifier: MIT
// MAC grid geometry with a one-cell halo.
//
// Every field (p, u, v, masks, forces) is stored in one array shape so that a
// single index function serves them all:
//   cell (i, j), i in [-1, nx], j in [-1, ny]            centre ((i+1/2)dx, (j+1/2)dy)
//   u face (i, j), i in [-1, nx+1], j in [-1, ny]        at (i dx, (j+1/2) dy)
//   v face (i, j), i in [-1, nx], j in [-1, ny+1]        at ((i+1/2) dx, j dy)
// Rows are padded to a multiple of 32 floats so each row starts aligned.
// The halo is what boundary conditions fill today and what a domain
// decomposition will exchange.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/model/types.hpp"

namespace sim {

struct Grid {
  static constexpr int halo = 1;
  int nx = 0, ny = 0;
  int pitch = 0;  // floats per row, >= nx + 1 + 2 * halo
  int rows = 0;   // ny + 1 + 2 * halo
  real dx = 0, dy = 0;

  // Storage points of every field (pitch x rows) must stay below 2^31: the
  // index (idx, at(k, i, j), i + j * pitch) is an int. pitch is a multiple
  // of 32, so this is at most 2^31 - 32 points, e.g. 46333 x 46333 cells.
  static constexpr int64_t kMaxPoints = int64_t(1) << 31;
  static constexpr int64_t pitch_for(int64_t nx) { return ((nx + 1 + 2 * halo) + 31) / 32 * 32; }
  static constexpr int64_t rows_for(int64_t ny) { return ny + 1 + 2 * halo; }
  // pitch x rows in 64 bits: exact for any int nx, ny >= 0 (below 2^63).
  static constexpr int64_t points(int64_t nx, int64_t ny) { return pitch_for(nx) * rows_for(ny); }
  static constexpr bool fits(int64_t nx, int64_t ny) { return nx >= 1 && ny >= 1 && points(nx, ny) < kMaxPoints; }

  // Throws for an empty grid, and std::length_error for one the int index
  // cannot address (io/config_loader refuses such a config first, naming the key).
  static Grid make(int nx, int ny, double lx, double ly) {
    if (nx < 1 || ny < 1)
      throw std::invalid_argument("a " + std::to_string(nx) + " x " + std::to_string(ny) +
                                  " grid: at least one cell a side");
    if (!fits(nx, ny))
      throw std::length_error("a " + std::to_string(nx) + " x " + std::to_string(ny) + " grid needs " +
                              std::to_string(pitch_for(nx)) + " x " + std::to_string(rows_for(ny)) +
                              " storage points (pitch x rows), more than the 32-bit grid index allows (< 2^31)");
    Grid g;
    g.nx = nx;
    g.ny = ny;
    g.pitch = static_cast<int>(pitch_for(nx));
    g.rows = static_cast<int>(rows_for(ny));
    g.dx = static_cast<real>(lx / nx);
    g.dy = static_cast<real>(ly / ny);
    return g;
  }
  SIM_HD size_t size() const { return static_cast<size_t>(pitch) * rows; }
  SIM_HD int idx(int i, int j) const { return (i + halo) + (j + halo) * pitch; }
};

}  // namespace sim
