// SPDX-License-Identifier: MIT
// The momentum the fluid exchanges with each domain side and each obstacle:
// the force on an obstacle (drag and lift) and what an inflow, an outflow or
// a wall gives or takes, exactly as the step moves it.
//
// The momentum stage is conservative: every advective, viscous and pressure
// flux between two free faces appears in both faces' tendencies with
// opposite signs, so the sum over the free faces of the fluid's tendency is
// the sum of the fluxes through the sides of free faces that border
// something else: a held face (a solid face, or a domain side's normal face)
// or the halo beyond a side. Each such side of a free face is a link, owned
// by the obstacle of the solid face or by the domain side. The force on
// obstacle k is minus what its links give the fluid; a side's links give
// the fluid what enters through that side (inflow and outflow momentum
// flux, pressure, wall shear). Each term of the step enters with its
// weight in u' (sim/model/time_scheme.hpp): the step's rate is
//   F = sum over stages of  b_s A(U_s) + w_s V(U_s) + gamma_s w V(U_s*) - p_s G phi_s
// over the links, so with the body force, the particles' drag and what
// particles carry in and out, it accounts for every change of the
// mixture's momentum.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/model/config.hpp"
#include "sim/model/constants.hpp"
#include "sim/model/faces.hpp"
#include "sim/model/fluid_physics.hpp"
#include "sim/model/grid.hpp"

namespace sim {

// Owners of links: the domain sides (Side), then obstacle k at kSides + k.
constexpr int kSides = 4;
constexpr int kBoundaryOwners = kSides + kMaxObstacles;

// The four sides of a face's control volume.
enum FaceSide : int { kFaceW = 0, kFaceE = 1, kFaceS = 2, kFaceN = 3 };

struct BoundaryLink {
  int32_t i, j;   // the free face
  int8_t q;       // 0: u face (x momentum), 1: v face (y momentum)
  int8_t side;    // FaceSide
  int16_t owner;  // Side, or kSides + obstacle index
};

// The tendency [m/s^2] a free face's L (advection and diffusion, no body
// force) takes through one side of its control volume, in its explicit
// (advective) and viscous parts; the four sides add up to momentum_u /
// momentum_v less the body force. `solid_lo`/`solid_hi` are the tangential
// neighbours' solid flags as momentum_u (s, n) and momentum_v (w, e) take them.
template <class N>
SIM_HD Tendency link_tendency(const N& n, const AdvectionReach& r, int q, int side, bool solid_lo, bool solid_hi,
                              const Constants& k) {
  if (q == 0) {
    const Fluxes f = advection_fluxes_u(n, r, k);
    const real c = n(0, 0, 0);
    switch (side) {
      case kFaceW: return {f.w * k.inv_dx, k.nu * (n(0, -1, 0) - c) * k.inv_dx2};
      case kFaceE: return {-f.e * k.inv_dx, k.nu * (n(0, 1, 0) - c) * k.inv_dx2};
      case kFaceS: return {f.s * k.inv_dy, k.nu * ((solid_lo ? -c : n(0, 0, -1)) - c) * k.inv_dy2};
      default: return {-f.n * k.inv_dy, k.nu * ((solid_hi ? -c : n(0, 0, 1)) - c) * k.inv_dy2};
    }
  }
  const Fluxes f = advection_fluxes_v(n, r, k);
  const real c = n(1, 0, 0);
  switch (side) {
    case kFaceW: return {f.w * k.inv_dx, k.nu * ((solid_lo ? -c : n(1, -1, 0)) - c) * k.inv_dx2};
    case kFaceE: return {-f.e * k.inv_dx, k.nu * ((solid_hi ? -c : n(1, 1, 0)) - c) * k.inv_dx2};
    case kFaceS: return {f.s * k.inv_dy, k.nu * (n(1, 0, -1) - c) * k.inv_dy2};
    default: return {-f.n * k.inv_dy, k.nu * (n(1, 0, 1) - c) * k.inv_dy2};
  }
}

// link_tendency of link l (its face at storage index c) from the arrays u,
// v, its parts weighted by w_explicit and w_viscous: the face's advection reach (from `clear`, the advection clearance, or
// all clear when null) and its tangential neighbours' solid flags as the
// momentum stage takes them.
SIM_HD double link_flux(const BoundaryLink& l, int c, const real* u, const real* v, const real* open,
                        const real* clear, real w_explicit, real w_viscous, const Constants& k) {
  const FaceNeighbours n{u, v, c, l.i, l.j, k};
  AdvectionReach r{};
  if (k.advection == static_cast<int>(AdvectionScheme::quick))
    r = l.q == 0 ? (clear ? reach_u(l.i, l.j, c, clear, k) : reach_u(l.i, l.j, c, AllClear{}, k))
                 : (clear ? reach_v(l.i, l.j, c, clear, k) : reach_v(l.i, l.j, c, AllClear{}, k));
  const bool solids = k.has_solids != 0;
  const int P = k.pitch;
  const bool lo = solids && (l.q == 0 ? solid_u(open, c - P) : solid_v(open, c - 1, P));
  const bool hi = solids && (l.q == 0 ? solid_u(open, c + P) : solid_v(open, c + 1, P));
  const Tendency t = link_tendency(n, r, l.q, l.side, lo, hi, k);
  return static_cast<double>(w_explicit) * t.explicit_part + static_cast<double>(w_viscous) * t.viscous;
}

// The projection's tendency -d phi/dn of a face at storage index c, split
// over its two normal sides: +phi behind / h through the back side, -phi
// ahead / h through the front one (project_point's difference); nothing
// through the tangential sides. `P`: float32 phi or the float64 pressure.
template <class P>
SIM_HD double link_pressure(const P* p, int c, int q, int side, const Constants& k) {
  if (q == 0) {
    if (side == kFaceW) return static_cast<double>(p[c - 1]) * k.inv_dx;
    if (side == kFaceE) return -static_cast<double>(p[c]) * k.inv_dx;
    return 0.0;
  }
  if (side == kFaceS) return static_cast<double>(p[c - k.pitch]) * k.inv_dy;
  if (side == kFaceN) return -static_cast<double>(p[c]) * k.inv_dy;
  return 0.0;
}

// The links of the free faces in face rows [j0, j1), grouped by owner in
// owner order (within an owner in row-major face order, u before v);
// `first[o]` .. `first[o + 1]` are owner o's. Obstacle k owns the solid
// faces whose solid cell lies inside it (the first obstacle in config order
// where they overlap). Empty unless the case has an obstacle or an inflow
// or outflow side (`measures_boundaries`).
struct BoundaryLinks {
  std::vector<BoundaryLink> links;
  std::vector<int> first;  // kBoundaryOwners + 1 offsets
};
bool measures_boundaries(const Config& cfg);
// At least the number of links of the whole grid (the device memory plan).
int64_t boundary_link_bound(const Config& cfg);
BoundaryLinks boundary_links(const Config& cfg, const Grid& g, const Constants& k, const std::vector<real>& open,
                             int j0, int j1);

// The parts of a step's exchange, each [owner][component] summed over the
// links as rho dx dy times the weighted tendency [N/m]: the explicit and
// viscous terms of each stage's input, the viscous term of each implicit
// solve's result, the pressure of each stage's projection
// (Simulation::step, weights from sim/model/time_scheme.hpp).
enum BoundaryPart : int {
  kPartFlux0 = 0,      // stage s's input: kPartFlux0 + s
  kPartSolved0 = 3,    // stage s's implicit solve: kPartSolved0 + s (kViscousSolves of them)
  kPartPressure0 = 6,  // stage s's projection: kPartPressure0 + s
  kBoundaryParts = 9
};
static_assert(kPartSolved0 + 3 <= kPartPressure0 && kPartPressure0 + 3 == kBoundaryParts,
              "one part for each stage's input, implicit solve and projection");
struct BoundarySums {
  double part[kBoundaryParts][kBoundaryOwners][2] = {};
};

// The step's rate per owner [N/m], what the fluid took in: the sum of the
// (weighted) parts.
void boundary_rates(const BoundarySums& s, double rate[kBoundaryOwners][2]);

struct Diagnostics;
// Diagnostics' side intakes and obstacle forces from this rank's sums of
// the step; `over_ranks` adds a value over the ranks of a split run (every
// rank calls it for the same values in the same order), or returns it.
void set_boundary_diagnostics(const BoundarySums& s, int obstacles, Diagnostics& d,
                              const std::function<double(double)>& over_ranks);

}  // namespace sim
