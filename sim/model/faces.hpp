// SPDX-License-Identifier: MIT
// Which MAC faces the step updates, which carry no flow, and what an owned
// face adds to the diagnostics: the rules every backend loop and kernel
// applies per face.
#pragma once
#include <math.h>

#include "sim/model/constants.hpp"
#include "sim/model/types.hpp"

namespace sim {

// Active faces are the fluid unknowns; the others are set by boundary conditions.
SIM_HD bool active_u(int i, int j, const Constants& k) { return i >= k.u_i_begin && i < k.u_i_end && j < k.ny; }
SIM_HD bool active_v(int i, int j, const Constants& k) { return j >= k.v_j_begin && j < k.v_j_end && i < k.nx; }

// A face touching a solid cell carries no flow. `open[c]` is the open flag
// of the cell at storage index c: a pointer, or a kernel's loading view.
template <class Mask>
SIM_HD bool solid_u(const Mask& open, int c) {
  return open[c - 1] == real(0) || open[c] == real(0);
}
template <class Mask>
SIM_HD bool solid_v(const Mask& open, int c, int pitch) {
  return open[c - pitch] == real(0) || open[c] == real(0);
}

// The CFL rate |u|/dx + |v|/dy of face point (i, j), i in [0, nx], j in
// [0, ny], at storage index c: the faces of the grid only, u (j < ny) and
// v (i < nx), interior and boundary; not the halo, whose mirrored values
// (twice a lid's speed) are no velocity of the flow.
SIM_HD double face_rate(const real* u, const real* v, int i, int j, int c, const Constants& k) {
  const double a = j < k.ny ? fabs(static_cast<double>(u[c])) * k.inv_dx : 0.0;
  const double b = i < k.nx ? fabs(static_cast<double>(v[c])) * k.inv_dy : 0.0;
  return a + b;
}

// Momentum, kinetic energy and speed summed over the owned (active) faces.
struct FaceSums {
  double momentum[2];
  double kinetic_energy;
  double max_speed;
};

// Adds the owned faces of face point (i, j) at storage index c.
SIM_HD void add_face_point(FaceSums& s, int i, int j, int c, const real* u, const real* v, const Constants& k) {
  const real* vel[2] = {u, v};
  const bool owned[2] = {active_u(i, j, k), active_v(i, j, k)};
  for (int q = 0; q < 2; ++q) {
    if (!owned[q]) continue;
    const real w = vel[q][c];
    s.momentum[q] += static_cast<double>(k.cell_mass) * w;
    s.kinetic_energy += 0.5 * k.rho_f * k.dx * k.dy * double(w) * w;
    s.max_speed = fmax(s.max_speed, fabs(static_cast<double>(w)));
  }
}

}  // namespace sim
