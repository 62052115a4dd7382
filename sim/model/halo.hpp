// SPDX-License-Identifier: MIT
// Boundary conditions as halo fills, shared by the CPU loops and the CUDA
// kernels. Each function fills the halo of one row (x sides) or one column
// (y sides); x sides first, then y sides, so corners take y-side values.
#pragma once
#include "sim/model/constants.hpp"
#include "sim/model/fluid_physics.hpp"

namespace sim {

// Left and right sides for row j: u normal, v tangential.
// u rows j in [0, ny); v rows j in [0, ny] (call with j up to ny).
SIM_HD void halo_velocity_x(real* u, real* v, int j, const Constants& k) {
  const int nx = k.nx;
  const int L = k.bc_kind[kLeft], R = k.bc_kind[kRight];
  if (j < k.ny) {
    if (L == static_cast<int>(BoundaryKind::periodic)) {
      u[at(k, nx, j)] = u[at(k, 0, j)];
      u[at(k, -1, j)] = u[at(k, nx - 1, j)];
      u[at(k, nx + 1, j)] = u[at(k, 1, j)];
    } else {
      if (L != static_cast<int>(BoundaryKind::outflow))
        u[at(k, 0, j)] = normal_face_value(L, k.bc_profile[kLeft], k.bc_speed[kLeft], real(1), j, k.ny);
      if (R != static_cast<int>(BoundaryKind::outflow))
        u[at(k, nx, j)] = normal_face_value(R, k.bc_profile[kRight], k.bc_speed[kRight], real(-1), j, k.ny);
      u[at(k, -1, j)] = u[at(k, 0, j)];
      u[at(k, nx + 1, j)] = u[at(k, nx, j)];
    }
  }
  if (L == static_cast<int>(BoundaryKind::periodic)) {
    v[at(k, -1, j)] = v[at(k, nx - 1, j)];
    v[at(k, nx, j)] = v[at(k, 0, j)];
  } else {
    v[at(k, -1, j)] = tangential_ghost(L, v[at(k, 0, j)], k.bc_speed[kLeft]);
    v[at(k, nx, j)] = tangential_ghost(R, v[at(k, nx - 1, j)], k.bc_speed[kRight]);
  }
}

// Bottom and top sides for column i: v normal, u tangential.
// u columns i in [-1, nx + 1]; v columns i in [-1, nx] (call with i up to nx + 1).
SIM_HD void halo_velocity_y(real* u, real* v, int i, const Constants& k) {
  const int ny = k.ny;
  const int B = k.bc_kind[kBottom], T = k.bc_kind[kTop];
  if (i <= k.nx) {
    if (B == static_cast<int>(BoundaryKind::periodic)) {
      v[at(k, i, ny)] = v[at(k, i, 0)];
      v[at(k, i, -1)] = v[at(k, i, ny - 1)];
      v[at(k, i, ny + 1)] = v[at(k, i, 1)];
    } else {
      if (B != static_cast<int>(BoundaryKind::outflow))
        v[at(k, i, 0)] = normal_face_value(B, k.bc_profile[kBottom], k.bc_speed[kBottom], real(1), i, k.nx);
      if (T != static_cast<int>(BoundaryKind::outflow))
        v[at(k, i, ny)] = normal_face_value(T, k.bc_profile[kTop], k.bc_speed[kTop], real(-1), i, k.nx);
      v[at(k, i, -1)] = v[at(k, i, 0)];
      v[at(k, i, ny + 1)] = v[at(k, i, ny)];
    }
  }
  if (B == static_cast<int>(BoundaryKind::periodic)) {
    u[at(k, i, -1)] = u[at(k, i, ny - 1)];
    u[at(k, i, ny)] = u[at(k, i, 0)];
  } else {
    u[at(k, i, -1)] = tangential_ghost(B, u[at(k, i, 0)], k.bc_speed[kBottom]);
    u[at(k, i, ny)] = tangential_ghost(T, u[at(k, i, ny - 1)], k.bc_speed[kTop]);
  }
}

// Pressure-correction halo, row j in [0, ny) for x sides.
SIM_HD void halo_pressure_x(real* p, int j, const Constants& k) {
  if (k.bc_kind[kLeft] == static_cast<int>(BoundaryKind::periodic)) {
    p[at(k, -1, j)] = p[at(k, k.nx - 1, j)];
    p[at(k, k.nx, j)] = p[at(k, 0, j)];
  } else {
    p[at(k, -1, j)] = pressure_ghost(k.bc_kind[kLeft], p[at(k, 0, j)]);
    p[at(k, k.nx, j)] = pressure_ghost(k.bc_kind[kRight], p[at(k, k.nx - 1, j)]);
  }
}

// Column i in [-1, nx] for y sides.
SIM_HD void halo_pressure_y(real* p, int i, const Constants& k) {
  if (k.bc_kind[kBottom] == static_cast<int>(BoundaryKind::periodic)) {
    p[at(k, i, -1)] = p[at(k, i, k.ny - 1)];
    p[at(k, i, k.ny)] = p[at(k, i, 0)];
  } else {
    p[at(k, i, -1)] = pressure_ghost(k.bc_kind[kBottom], p[at(k, i, 0)]);
    p[at(k, i, k.ny)] = pressure_ghost(k.bc_kind[kTop], p[at(k, i, k.ny - 1)]);
  }
}

}  // namespace sim
