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

#include "sim/types.hpp"

namespace sim {

struct Grid {
  static constexpr int halo = 1;
  int nx = 0, ny = 0;
  int pitch = 0;  // floats per row, >= nx + 1 + 2 * halo
  int rows = 0;   // ny + 1 + 2 * halo
  real dx = 0, dy = 0;

  static Grid make(int nx, int ny, double lx, double ly) {
    Grid g;
    g.nx = nx;
    g.ny = ny;
    g.pitch = ((nx + 1 + 2 * halo) + 31) / 32 * 32;
    g.rows = ny + 1 + 2 * halo;
    g.dx = static_cast<real>(lx / nx);
    g.dy = static_cast<real>(ly / ny);
    return g;
  }
  SIM_HD size_t size() const { return static_cast<size_t>(pitch) * rows; }
  SIM_HD int idx(int i, int j) const { return (i + halo) + (j + halo) * pitch; }
};

}  // namespace sim
