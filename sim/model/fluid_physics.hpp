// SPDX-License-Identifier: MIT
// Per-face and per-cell fluid physics on the MAC grid, as functions of values.
// No function here touches memory: the CPU loops and every CUDA memory
// strategy fetch the neighbours their own way and call these.
#pragma once
#include <math.h>

#include "sim/model/constants.hpp"
#include "sim/model/inflow.hpp"
#include "sim/model/types.hpp"

namespace sim {

// The advective fluxes of a face's momentum through the four sides of its
// control volume (w, e at x -+ h/2; s, n at y -+ h/2), each the product of
// the advecting and the advected velocity there. A flux between two faces
// is the same number in both faces' sums (the scheme is conservative), so
// what crosses a side of a face that borders a held face or a domain side
// is momentum the fluid exchanges with that boundary (sim/model/boundary_flux.hpp).
struct Fluxes {
  real w, e, s, n;
};

// The advection -(dF/dx + dG/dy) of a face from its fluxes.
SIM_HD real flux_divergence(const Fluxes& f, const Constants& k) {
  return -((f.e - f.w) * k.inv_dx + (f.n - f.s) * k.inv_dy);
}

// Momentum advection of u at face (i, j) in conservative form,
//   A_u = -( d(u u)/dx + d(u v)/dy ),
// second-order central differences. Neighbours: u at w/e/s/n, v at the
// face's four corners: vsw = v(i-1, j), vse = v(i, j), vnw = v(i-1, j+1), vne = v(i, j+1).
SIM_HD Fluxes central_fluxes_u(real uc, real uw, real ue, real us, real un, real vsw, real vse, real vnw, real vne) {
  const real ue_c = real(0.5) * (uc + ue), uw_c = real(0.5) * (uw + uc);
  const real vn = real(0.5) * (vnw + vne), vs = real(0.5) * (vsw + vse);
  return {uw_c * uw_c, ue_c * ue_c, vs * real(0.5) * (us + uc), vn * real(0.5) * (uc + un)};
}
SIM_HD real advect_u_point(real uc, real uw, real ue, real us, real un, real vsw, real vse,
                           real vnw, real vne, const Constants& k) {
  return flux_divergence(central_fluxes_u(uc, uw, ue, us, un, vsw, vse, vnw, vne), k);
}

// Momentum advection of v at face (i, j): A_v = -( d(u v)/dx + d(v v)/dy ).
// Neighbours: v at w/e/s/n, u at the face's corners: usw = u(i, j-1),
// use = u(i+1, j-1), unw = u(i, j), une = u(i+1, j).
SIM_HD Fluxes central_fluxes_v(real vc, real vw, real ve, real vs, real vn, real usw, real use, real unw, real une) {
  const real ue = real(0.5) * (use + une), uw = real(0.5) * (usw + unw);
  const real vn_c = real(0.5) * (vc + vn), vs_c = real(0.5) * (vs + vc);
  return {uw * real(0.5) * (vw + vc), ue * real(0.5) * (vc + ve), vs_c * vs_c, vn_c * vn_c};
}
SIM_HD real advect_v_point(real vc, real vw, real ve, real vs, real vn, real usw, real use,
                           real unw, real une, const Constants& k) {
  return flux_divergence(central_fluxes_v(vc, vw, ve, vs, vn, usw, use, unw, une), k);
}

// ---- fluid.advection = "quick" ----------------------------------------
//
// The same conservative flux form, A_u = -(dF/dx + dG/dy), every flux
// F = w phi taken at its flux point from the line of four points through it
// (two on each side, along the direction of the flux):
//   w    the advecting (normal) velocity: the fourth-order midpoint
//        (-a + 9 b + 9 c - d) / 16 of its line;
//   phi  the advected component: QUICK (Leonard 1979), the quadratic
//        through the two neighbours and the next point upwind,
//        3/8 c + 6/8 b - 1/8 a when w >= 0, 3/8 b + 6/8 c - 1/8 d when w < 0;
// less h^2/24 times the flux's second derivative along the line (second
// order is enough). A flux difference (F(x + h/2) - F(x - h/2)) / h is
// F'(x) + h^2/24 F'''(x): with point values at the flux points, as plain
// QUICK takes them, the operator stays second order (measured:
// tests/advection_test.cpp); this correction removes that term, so the
// operator is third order, and leaves QUICK's upwind damping, |w| h^3/16
// times the fourth derivative, as it is. Where a flux point's lines leave
// the data the scheme trusts (AdvectionReach below), that flux is the
// central one of advect_*_point.

// The four fluxes of a face: true where the flux takes the wide (QUICK)
// form, false where it stays central; w/e are the x fluxes, s/n the y fluxes.
struct AdvectionReach {
  bool w, e, s, n;
};

// Fourth-order value midway between b and c on the evenly spaced line a, b, c, d.
SIM_HD real midpoint4(real a, real b, real c, real d) { return (real(9) * (b + c) - (a + d)) * real(0.0625); }

// QUICK value midway between b and c, upwind by the sign of the advecting
// velocity w (both candidates computed, then selected: no branch on the sign).
SIM_HD real quick_value(real a, real b, real c, real d, real w) {
  const real from_left = real(0.375) * c + real(0.75) * b - real(0.125) * a;
  const real from_right = real(0.375) * b + real(0.75) * c - real(0.125) * d;
  return w >= real(0) ? from_left : from_right;
}

// The wide flux through the point midway between b and c of the advected
// line a, b, c, d, carried by the advecting line p, q, r, s (the same points
// for a normal component); `h2_f2` is h^2 times the second derivative of the
// flux w phi at the flux point.
SIM_HD real quick_flux(real a, real b, real c, real d, real p, real q, real r, real s, real h2_f2) {
  const real w = midpoint4(p, q, r, s);
  return w * quick_value(a, b, c, d, w) - h2_f2 * real(1.0 / 24.0);
}

// The central flux of advect_*_point: (q + r)/2 carrying (b + c)/2.
SIM_HD real central_flux(real b, real c, real q, real r) { return real(0.5) * (q + r) * (real(0.5) * (b + c)); }

// The flux of a normal component along its own line a, b, c, d (u in x,
// v in y): (a^2 - b^2 - c^2 + d^2) / 2 is h^2 times the second derivative
// of the flux at the midpoint.
SIM_HD real normal_flux(bool wide, real a, real b, real c, real d) {
  if (!wide) return central_flux(b, c, b, c);
  return quick_flux(a, b, c, d, a, b, c, d, real(0.5) * ((a * a + d * d) - (b * b + c * c)));
}

// Product of the two-point averages of the components at a corner, the
// flux of the central scheme there: (u1 + u2)/2 (v1 + v2)/2.
SIM_HD real corner_product(real u1, real u2, real v1, real v2) { return real(0.25) * (u1 + u2) * (v1 + v2); }

// Which cells the scheme trusts: the cells [i0, i1] of a row (j0..j1 of a
// column) lie in the domain, or the axis is periodic (storage holds one
// halo cell, so the neighbourhood reads the periodic image of a point two
// cells out: wide_offset).
SIM_HD bool cells_inside_x(int i0, int i1, const Constants& k) {
  return is_periodic(k, kLeft) || (i0 >= 0 && i1 <= k.nx - 1);
}
SIM_HD bool cells_inside_y(int j0, int j1, const Constants& k) {
  return is_periodic(k, kBottom) || (j0 >= 0 && j1 <= k.ny - 1);
}

// Obstacle clearance of the flux points at a storage point, one bit each
// (precomputed from the open mask by advection_clearance, read only when the
// case has obstacles):
enum : int {
  kClearUx = 1,      // the x flux of u at cell (i, j): cells (i-1..i+1, j) open
  kClearVy = 2,      // the y flux of v at cell (i, j): cells (i, j-1..j+1) open
  kClearCorner = 4,  // the corner (i, j): cells (i-2..i+1, j-2..j+1) open
};

// Open flag of cell (i, j) for the clearance: periodic axes wrap, a cell
// outside a closed side counts as open (cells_inside_* rules the sides).
template <class Mask>
SIM_HD bool clearance_open(const Mask& open, int i, int j, const Constants& k) {
  if (is_periodic(k, kLeft)) i = ((i % k.nx) + k.nx) % k.nx;
  else if (i < 0 || i >= k.nx) return true;
  if (is_periodic(k, kBottom)) j = ((j % k.ny) + k.ny) % k.ny;
  else if (j < 0 || j >= k.ny) return true;
  return open[at(k, i, j)] != real(0);
}

// The clearance bits of storage point (i, j), i in [-1, pitch - 2], j in [-1, rows - 2].
template <class Mask>
SIM_HD int advection_clearance(const Mask& open, int i, int j, const Constants& k) {
  bool ux = true, vy = true, corner = true;
  for (int d = -1; d <= 1; ++d) {
    ux = ux && clearance_open(open, i + d, j, k);
    vy = vy && clearance_open(open, i, j + d, k);
  }
  for (int dj = -2; dj <= 1; ++dj)
    for (int di = -2; di <= 1; ++di) corner = corner && clearance_open(open, i + di, j + dj, k);
  return (ux ? kClearUx : 0) | (vy ? kClearVy : 0) | (corner ? kClearCorner : 0);
}

// No obstacle: every flux point is clear.
struct AllClear {
  SIM_HD real operator[](int) const { return real(kClearUx | kClearVy | kClearCorner); }
};

SIM_HD bool clear(real flags, int bit) { return (static_cast<int>(flags) & bit) != 0; }

// The reach of u face (i, j) at storage index c: its x fluxes sit at cells
// i-1 and i (their lines: u faces i-2..i+1 and i-1..i+2), its y fluxes at
// the corners (i, j) and (i, j+1) (u rows j-2..j+1 and j-1..j+2, advected
// by v faces i-2..i+1). `clearance` holds advection_clearance per storage
// point (AllClear without obstacles).
template <class Flags>
SIM_HD AdvectionReach reach_u(int i, int j, int c, const Flags& clearance, const Constants& k) {
  const bool corner_x = cells_inside_x(i - 2, i + 1, k);
  return {cells_inside_x(i - 2, i, k) && clear(clearance[c - 1], kClearUx),
          cells_inside_x(i - 1, i + 1, k) && clear(clearance[c], kClearUx),
          corner_x && cells_inside_y(j - 2, j + 1, k) && clear(clearance[c], kClearCorner),
          corner_x && cells_inside_y(j - 1, j + 2, k) && clear(clearance[c + k.pitch], kClearCorner)};
}

// The reach of v face (i, j): y fluxes at cells j-1 and j, x fluxes at the
// corners (i, j) and (i+1, j).
template <class Flags>
SIM_HD AdvectionReach reach_v(int i, int j, int c, const Flags& clearance, const Constants& k) {
  const bool corner_y = cells_inside_y(j - 2, j + 1, k);
  return {corner_y && cells_inside_x(i - 2, i + 1, k) && clear(clearance[c], kClearCorner),
          corner_y && cells_inside_x(i - 1, i + 2, k) && clear(clearance[c + 1], kClearCorner),
          cells_inside_y(j - 2, j, k) && clear(clearance[c - k.pitch], kClearVy),
          cells_inside_y(j - 1, j + 1, k) && clear(clearance[c], kClearVy)};
}

// QUICK fluxes of u at a face, over its neighbourhood (offsets up to 2).
// The y fluxes sit at the corners j and j+1 (j: the face's own row); their
// second derivatives come from corner_product at corners j-1 .. j+2.
template <class N>
SIM_HD Fluxes quick_fluxes_u(const N& n, const AdvectionReach& r) {
  const real um2 = n(0, -2, 0), um1 = n(0, -1, 0), u0 = n(0, 0, 0), up1 = n(0, 1, 0), up2 = n(0, 2, 0);
  const real fe = normal_flux(r.e, um1, u0, up1, up2);
  const real fw = normal_flux(r.w, um2, um1, u0, up1);
  const real us2 = n(0, 0, -2), us1 = n(0, 0, -1), un1 = n(0, 0, 1), un2 = n(0, 0, 2);
  const real vn_w = n(1, -1, 1), vn_e = n(1, 0, 1), vs_w = n(1, -1, 0), vs_e = n(1, 0, 0);
  real gn, gs;
  if (r.n) {  // corner j + 1
    const real g0 = corner_product(u0, un1, vn_w, vn_e);
    const real below = corner_product(us1, u0, vs_w, vs_e);
    const real above = corner_product(un1, un2, n(1, -1, 2), n(1, 0, 2));
    gn = quick_flux(us1, u0, un1, un2, n(1, -2, 1), vn_w, vn_e, n(1, 1, 1), below - real(2) * g0 + above);
  } else {
    gn = central_flux(u0, un1, vn_w, vn_e);
  }
  if (r.s) {  // corner j
    const real g0 = corner_product(us1, u0, vs_w, vs_e);
    const real below = corner_product(us2, us1, n(1, -1, -1), n(1, 0, -1));
    const real above = corner_product(u0, un1, vn_w, vn_e);
    gs = quick_flux(us2, us1, u0, un1, n(1, -2, 0), vs_w, vs_e, n(1, 1, 0), below - real(2) * g0 + above);
  } else {
    gs = central_flux(us1, u0, vs_w, vs_e);
  }
  return {fw, fe, gs, gn};
}

// QUICK fluxes of v at a face: x fluxes at the corners i and i+1.
template <class N>
SIM_HD Fluxes quick_fluxes_v(const N& n, const AdvectionReach& r) {
  const real vm2 = n(1, 0, -2), vm1 = n(1, 0, -1), v0 = n(1, 0, 0), vp1 = n(1, 0, 1), vp2 = n(1, 0, 2);
  const real gn = normal_flux(r.n, vm1, v0, vp1, vp2);
  const real gs = normal_flux(r.s, vm2, vm1, v0, vp1);
  const real vw2 = n(1, -2, 0), vw1 = n(1, -1, 0), ve1 = n(1, 1, 0), ve2 = n(1, 2, 0);
  const real ue_s = n(0, 1, -1), ue_n = n(0, 1, 0), uw_s = n(0, 0, -1), uw_n = n(0, 0, 0);
  real fe, fw;
  if (r.e) {  // corner i + 1
    const real g0 = corner_product(ue_s, ue_n, v0, ve1);
    const real left = corner_product(uw_s, uw_n, vw1, v0);
    const real right = corner_product(n(0, 2, -1), n(0, 2, 0), ve1, ve2);
    fe = quick_flux(vw1, v0, ve1, ve2, n(0, 1, -2), ue_s, ue_n, n(0, 1, 1), left - real(2) * g0 + right);
  } else {
    fe = central_flux(v0, ve1, ue_s, ue_n);
  }
  if (r.w) {  // corner i
    const real g0 = corner_product(uw_s, uw_n, vw1, v0);
    const real left = corner_product(n(0, -1, -1), n(0, -1, 0), vw2, vw1);
    const real right = corner_product(ue_s, ue_n, v0, ve1);
    fw = quick_flux(vw2, vw1, v0, ve1, n(0, 0, -2), uw_s, uw_n, n(0, 0, 1), left - real(2) * g0 + right);
  } else {
    fw = central_flux(vw1, v0, uw_s, uw_n);
  }
  return {fw, fe, gs, gn};
}

// Storage offset of the point di cells from index i along an axis of n
// cells, for the wide stencil's points two cells out: on a periodic axis a
// point outside [0, n] is read at its periodic image (storage holds one halo
// cell; faces and their halo copies repeat with period n); on a closed axis
// the point is clamped into storage [-1, last], so no read leaves the arrays
// (the reach rules never use such a point).
SIM_HD int wide_offset(int i, int di, int n, bool periodic, int last) {
  const int g = i + di;
  if (periodic) return g < 0 ? di + n : g > n ? di - n : di;
  return g < -1 ? -1 - i : g > last ? last - i : di;
}

// A face's neighbourhood read straight from the arrays: velocity component
// q (0 = u, 1 = v) at offset (di, dj) from the face (i, j) at storage index
// c; offsets two cells out through wide_offset (periodic images).
struct FaceNeighbours {
  static constexpr int kRadius = 2;
  const real* u;
  const real* v;
  int c, i, j;
  const Constants& k;
  SIM_HD real operator()(int q, int di, int dj) const {
    if (di < -1 || di > 1) di = wide_offset(i, di, k.nx, is_periodic(k, kLeft), k.pitch - 2);
    if (dj < -1 || dj > 1) dj = wide_offset(j, dj, k.ny, is_periodic(k, kBottom), k.rows - 2);
    return (q == 0 ? u : v)[c + di + dj * k.pitch];
  }
};

// The advective fluxes of the momentum stage, over a face's neighbourhood:
// `n(q, di, dj)` is velocity component q (0 = u, 1 = v) at offset (di, dj)
// from the face, as a backend loop or a kernel's memory strategy fetches
// it. A neighbourhood of radius 1 (N::kRadius) serves only the central
// scheme; quick needs radius 2 and the face's reach.
template <class N>
SIM_HD Fluxes advection_fluxes_u(const N& n, const AdvectionReach& r, const Constants& k) {
  if constexpr (N::kRadius >= 2)
    if (k.advection == static_cast<int>(AdvectionScheme::quick)) return quick_fluxes_u(n, r);
  return central_fluxes_u(n(0, 0, 0), n(0, -1, 0), n(0, 1, 0), n(0, 0, -1), n(0, 0, 1), n(1, -1, 0), n(1, 0, 0),
                          n(1, -1, 1), n(1, 0, 1));
}
template <class N>
SIM_HD Fluxes advection_fluxes_v(const N& n, const AdvectionReach& r, const Constants& k) {
  if constexpr (N::kRadius >= 2)
    if (k.advection == static_cast<int>(AdvectionScheme::quick)) return quick_fluxes_v(n, r);
  return central_fluxes_v(n(1, 0, 0), n(1, -1, 0), n(1, 1, 0), n(1, 0, -1), n(1, 0, 1), n(0, 0, -1), n(0, 1, -1),
                          n(0, 0, 0), n(0, 1, 0));
}
template <class N>
SIM_HD real advection_u(const N& n, const AdvectionReach& r, const Constants& k) {
  return flux_divergence(advection_fluxes_u(n, r, k), k);
}
template <class N>
SIM_HD real advection_v(const N& n, const AdvectionReach& r, const Constants& k) {
  return flux_divergence(advection_fluxes_v(n, r, k), k);
}

// Five-point Laplacian of a face or cell value.
SIM_HD real laplacian_point(real c, real w, real e, real s, real n, const Constants& k) {
  return (w - real(2) * c + e) * k.inv_dx2 + (s - real(2) * c + n) * k.inv_dy2;
}

// The momentum tendency L = A(u) + f + nu lap(u) of a face in its two
// parts: the explicit one, advection and body force, and the viscous one,
// which an implicit stage solves for (viscous_solve). `r` is the face's
// advection reach (reach_u / reach_v; not read by the central scheme).
struct Tendency {
  real explicit_part;  // A(u) + f
  real viscous;        // nu lap(u)
};

// The Laplacian of a u face (v face) as the momentum stage takes it: a
// tangential neighbour that is a solid face (one touching an obstacle cell:
// the faces across j -+ 1 for u, across i -+ 1 for v) is replaced by the
// mirror ghost -c, so that no-slip holds at the solid's face, half a cell
// away, as the halo does at a domain wall. Normal neighbours on a solid are
// wall faces themselves and hold 0.
template <class N>
SIM_HD real face_laplacian_u(const N& n, bool solid_s, bool solid_n, const Constants& k) {
  const real c = n(0, 0, 0);
  const real s = solid_s ? -c : n(0, 0, -1), nn = solid_n ? -c : n(0, 0, 1);
  return laplacian_point(c, n(0, -1, 0), n(0, 1, 0), s, nn, k);
}
template <class N>
SIM_HD real face_laplacian_v(const N& n, bool solid_w, bool solid_e, const Constants& k) {
  const real c = n(1, 0, 0);
  const real w = solid_w ? -c : n(1, -1, 0), e = solid_e ? -c : n(1, 1, 0);
  return laplacian_point(c, w, e, n(1, 0, -1), n(1, 0, 1), k);
}

template <class N>
SIM_HD Tendency momentum_u(const N& n, const AdvectionReach& r, bool solid_s, bool solid_n, const Constants& k) {
  return {advection_u(n, r, k) + k.force_x, k.nu * face_laplacian_u(n, solid_s, solid_n, k)};
}
template <class N>
SIM_HD Tendency momentum_v(const N& n, const AdvectionReach& r, bool solid_w, bool solid_e, const Constants& k) {
  return {advection_v(n, r, k) + k.force_y, k.nu * face_laplacian_v(n, solid_w, solid_e, k)};
}

// One explicit stage of the time step (sim/model/time_scheme.hpp):
//   out = a base + b in + dt (c (A + f)(in) + cv nu lap(in)),
// as a base + b (in + dt L(in)) when c == b == cv (the stages of the
// explicit scheme, every term of L weighted alike).
SIM_HD real stage_point(real base, real in, Tendency t, real a, real b, real c, real cv, const Constants& k) {
  if (b == c && cv == c) {
    const real next = in + k.dt * (t.explicit_part + t.viscous);
    return a == real(0) ? b * next : a * base + b * next;
  }
  const real sum = a == real(0) ? b * in : a * base + b * in;
  return sum + k.dt * (c * t.explicit_part + cv * t.viscous);
}

// ---- The implicit viscous stage: (I - g lap) x = b, g = gamma dt nu ----
//
// On the active faces of u and v, with the Laplacian of the momentum stage
// (face_laplacian_*: halo ghosts at the domain sides, mirrors at solid
// faces), so the operator is symmetric and its spectrum lies in
// [1, 1 + 4 g (1/dx^2 + 1/dy^2)] (Gershgorin: every row of -lap, ghosts
// folded in, sums to at most 4/dx^2 + 4/dy^2 in absolute value). Chebyshev
// iteration on that interval needs no inner products, so a device runs it
// without a host round trip, and its error bound is known in advance:
// after K iterations the residual is at most ||r_0|| / T_K(sigma),
// sigma = (top + 1) / (top - 1), T_K the Chebyshev polynomial.

// The residual b - (x - g lap x) of a u face (v face) at x's neighbourhood n.
template <class N>
SIM_HD real helmholtz_residual_u(const N& n, real b, real g, bool solid_s, bool solid_n, const Constants& k) {
  return b - (n(0, 0, 0) - g * face_laplacian_u(n, solid_s, solid_n, k));
}
template <class N>
SIM_HD real helmholtz_residual_v(const N& n, real b, real g, bool solid_w, bool solid_e, const Constants& k) {
  return b - (n(1, 0, 0) - g * face_laplacian_v(n, solid_w, solid_e, k));
}

// The iteration of a solve: its count and the interval's centre and half width.
struct ChebyshevPlan {
  int iterations = 0;
  double theta = 1, delta = 0, mu = 0;  // centre, half width, acosh(theta / delta)
};

// The plan that reduces the residual by `reduction` (>= 1: the initial
// residual over the one wanted) for g = gamma dt nu; no iteration where
// g <= 0 (no viscosity: x = b) or nothing is to be reduced.
SIM_HD ChebyshevPlan chebyshev_plan(double g, const Constants& k, double reduction) {
  ChebyshevPlan p;
  if (!(g > 0.0) || !(reduction > 1.0)) return p;
  const double top = 1.0 + 4.0 * g * (static_cast<double>(k.inv_dx2) + static_cast<double>(k.inv_dy2));
  p.theta = 0.5 * (top + 1.0);
  p.delta = 0.5 * (top - 1.0);
  p.mu = acosh(p.theta / p.delta);
  const double n = ceil(acosh(reduction) / p.mu);
  p.iterations = n < 1.0 ? 1 : n > 100000.0 ? 100000 : static_cast<int>(n);
  return p;
}

// The weights of iteration `it` (0 first):
//   x_1 = x_0 + r_0 / theta,
//   x_{k+1} = x_k + rho_k rho_{k-1} (x_k - x_{k-1}) + (2 rho_k / delta) r_k,
// rho_k = T_k(sigma) / T_{k+1}(sigma) = cosh(k mu) / cosh((k + 1) mu),
// in closed form (no recurrence to carry), overflow-free.
struct ChebyshevWeights {
  real alpha, beta;  // of (x_k - x_{k-1}) and of r_k
};
SIM_HD double chebyshev_rho(const ChebyshevPlan& p, int k) {
  const double e = exp(-2.0 * p.mu * k);
  return exp(-p.mu) * (1.0 + e) / (1.0 + e * exp(-2.0 * p.mu));
}
SIM_HD ChebyshevWeights chebyshev_weights(const ChebyshevPlan& p, int it) {
  if (it == 0) return {real(0), static_cast<real>(1.0 / p.theta)};
  const double r = chebyshev_rho(p, it);
  return {static_cast<real>(r * chebyshev_rho(p, it - 1)), static_cast<real>(2.0 * r / p.delta)};
}

// x_{k+1} of one face; `prev` (x_{k-1}) is not read on the first iteration.
SIM_HD real chebyshev_point(real x, real prev, real r, const ChebyshevWeights& w) {
  return w.alpha == real(0) ? x + w.beta * r : x + w.alpha * (x - prev) + w.beta * r;
}

// Divergence of the face velocities around cell (i, j).
SIM_HD real divergence_point(real u_w, real u_e, real v_s, real v_n, const Constants& k) {
  return (u_e - u_w) * k.inv_dx + (v_n - v_s) * k.inv_dy;
}

// Pressure Poisson equation lap(phi) = rhs with rhs = div(u**) / dt.
// Neighbours inside a solid obstacle are closed (o* = 0): homogeneous
// Neumann there. Domain boundaries are handled by the halo values.
// Jacobi update:  phi = (ax (ow pw + oe pe) + ay (os ps + on pn) - rhs) / (ax (ow+oe) + ay (os+on)).
SIM_HD real jacobi_point(real pw, real pe, real ps, real pn, real rhs, real ow, real oe, real os,
                         real on, const Constants& k) {
  const real diag = k.inv_dx2 * (ow + oe) + k.inv_dy2 * (os + on);
  const real off = k.inv_dx2 * (ow * pw + oe * pe) + k.inv_dy2 * (os * ps + on * pn);
  return diag > real(0) ? (off - rhs) / diag : real(0);
}

// Over-relaxed (SOR) update of one cell from its Jacobi value.
SIM_HD real sor_point(real pc, real pw, real pe, real ps, real pn, real rhs, real ow, real oe,
                      real os, real on, const Constants& k) {
  const real pj = jacobi_point(pw, pe, ps, pn, rhs, ow, oe, os, on, k);
  return pc + k.omega * (pj - pc);
}

// Residual rhs - lap(phi) of one cell, with the same closed-neighbour rule.
SIM_HD real residual_point(real pc, real pw, real pe, real ps, real pn, real rhs, real ow,
                           real oe, real os, real on, const Constants& k) {
  const real lap = k.inv_dx2 * (ow * (pw - pc) + oe * (pe - pc)) +
                   k.inv_dy2 * (os * (ps - pc) + on * (pn - pc));
  return rhs - lap;
}

// Projection of one face: u = u** - dt dphi/dn, across the face from the
// cell behind (pb) to the cell ahead (pa); inv_h is 1/dx for u, 1/dy for v.
SIM_HD real project_point(real vel, real pb, real pa, real inv_h, const Constants& k) {
  return vel - k.dt * (pa - pb) * inv_h;
}

// The same from the float64 pressure of the multigrid and transform solves:
// the update in double, rounded once, so that float32 rounding of the
// pressure does not limit the divergence left behind.
SIM_HD real project_point(real vel, double pb, double pa, real inv_h, const Constants& k) {
  return static_cast<real>(vel - static_cast<double>(k.dt) * (pa - pb) * static_cast<double>(inv_h));
}

// Halo value across a side for the velocity component tangential to it:
// no-slip wall moving at `speed` (value mirrored about the wall speed),
// free-slip and outflow (zero gradient), inflow (no tangential velocity).
SIM_HD real tangential_ghost(int kind, real interior, real speed) {
  switch (static_cast<BoundaryKind>(kind)) {
    case BoundaryKind::wall: return real(2) * speed - interior;
    case BoundaryKind::inflow: return -interior;
    default: return interior;  // free_slip, outflow
  }
}

// Halo value of the pressure correction: Neumann everywhere but at an
// outflow, where phi = 0 on the boundary face.
SIM_HD real pressure_ghost(int kind, real interior) {
  return static_cast<BoundaryKind>(kind) == BoundaryKind::outflow ? -interior : interior;
}

// Prescribed normal velocity on a closed or inflow side at face f of the n
// along it (sim/model/inflow.hpp); `into` is +1 when positive velocity points
// into the domain (left, bottom), -1 otherwise.
SIM_HD real normal_face_value(int kind, int profile, real speed, real into, int f, int n) {
  return static_cast<BoundaryKind>(kind) == BoundaryKind::inflow ? into * inflow_face_speed(profile, speed, f, n)
                                                                  : real(0);
}

}  // namespace sim
