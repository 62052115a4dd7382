// Per-face and per-cell fluid physics on the MAC grid, as functions of values.
// No function here touches memory: the CPU loops and every CUDA memory
// strategy fetch the neighbours their own way and call these.
#pragma once
#include "sim/constants.hpp"
#include "sim/types.hpp"

namespace sim {

// Momentum advection of u at face (i, j) in conservative form,
//   A_u = -( d(u u)/dx + d(u v)/dy ),
// second-order central differences. Neighbours: u at w/e/s/n, v at the
// face's four corners: vsw = v(i-1, j), vse = v(i, j), vnw = v(i-1, j+1), vne = v(i, j+1).
SIM_HD real advect_u_point(real uc, real uw, real ue, real us, real un, real vsw, real vse,
                           real vnw, real vne, const Constants& k) {
  const real ue_c = real(0.5) * (uc + ue), uw_c = real(0.5) * (uw + uc);
  const real duu_dx = (ue_c * ue_c - uw_c * uw_c) * k.inv_dx;
  const real vn = real(0.5) * (vnw + vne), vs = real(0.5) * (vsw + vse);
  const real duv_dy = (vn * real(0.5) * (uc + un) - vs * real(0.5) * (us + uc)) * k.inv_dy;
  return -(duu_dx + duv_dy);
}

// Momentum advection of v at face (i, j): A_v = -( d(u v)/dx + d(v v)/dy ).
// Neighbours: v at w/e/s/n, u at the face's corners: usw = u(i, j-1),
// use = u(i+1, j-1), unw = u(i, j), une = u(i+1, j).
SIM_HD real advect_v_point(real vc, real vw, real ve, real vs, real vn, real usw, real use,
                           real unw, real une, const Constants& k) {
  const real ue = real(0.5) * (use + une), uw = real(0.5) * (usw + unw);
  const real duv_dx = (ue * real(0.5) * (vc + ve) - uw * real(0.5) * (vw + vc)) * k.inv_dx;
  const real vn_c = real(0.5) * (vc + vn), vs_c = real(0.5) * (vs + vc);
  const real dvv_dy = (vn_c * vn_c - vs_c * vs_c) * k.inv_dy;
  return -(duv_dx + dvv_dy);
}

// The advection of the momentum stage, over a face's neighbourhood: `n(q, di, dj)`
// is velocity component q (0 = u, 1 = v) at offset (di, dj) from the face,
// as a backend loop or a kernel's memory strategy fetches it.
template <class N>
SIM_HD real advection_u(const N& n, const Constants& k) {
  return advect_u_point(n(0, 0, 0), n(0, -1, 0), n(0, 1, 0), n(0, 0, -1), n(0, 0, 1), n(1, -1, 0), n(1, 0, 0),
                        n(1, -1, 1), n(1, 0, 1), k);
}
template <class N>
SIM_HD real advection_v(const N& n, const Constants& k) {
  return advect_v_point(n(1, 0, 0), n(1, -1, 0), n(1, 1, 0), n(1, 0, -1), n(1, 0, 1), n(0, 0, -1), n(0, 1, -1),
                        n(0, 0, 0), n(0, 1, 0), k);
}

// Five-point Laplacian of a face or cell value.
SIM_HD real laplacian_point(real c, real w, real e, real s, real n, const Constants& k) {
  return (w - real(2) * c + e) * k.inv_dx2 + (s - real(2) * c + n) * k.inv_dy2;
}

// The momentum tendency L = A(u) + nu lap(u) + f of a u face (v face),
// the right-hand side of both stages of the time step. A tangential
// neighbour that is a solid face (one touching an obstacle cell: the
// faces across j -+ 1 for u, across i -+ 1 for v) is replaced in the
// Laplacian by the mirror ghost -c, so that no-slip holds at the solid's
// face, half a cell away, as the halo does at a domain wall. Normal
// neighbours on a solid are wall faces themselves and hold 0.
template <class N>
SIM_HD real momentum_u(const N& n, bool solid_s, bool solid_n, const Constants& k) {
  const real c = n(0, 0, 0);
  const real s = solid_s ? -c : n(0, 0, -1), nn = solid_n ? -c : n(0, 0, 1);
  return advection_u(n, k) + k.nu * laplacian_point(c, n(0, -1, 0), n(0, 1, 0), s, nn, k) + k.force_x;
}
template <class N>
SIM_HD real momentum_v(const N& n, bool solid_w, bool solid_e, const Constants& k) {
  const real c = n(1, 0, 0);
  const real w = solid_w ? -c : n(1, -1, 0), e = solid_e ? -c : n(1, 1, 0);
  return advection_v(n, k) + k.nu * laplacian_point(c, w, e, n(1, 0, -1), n(1, 0, 1), k) + k.force_y;
}

// One stage of the time step (Heun / SSP-RK2, each stage projected):
//   stage 1: u1 = P(u + dt L(u))                      (a = 0, b = 1)
//   stage 2: u' = P(u/2 + (u1 + dt L(u1))/2)          (a = b = 1/2)
// out = a base + b (in + dt L(in)). At a steady state P L(u) = 0, so both
// stages return u whatever dt is.
SIM_HD real stage_point(real base, real in, real tendency, real a, real b, const Constants& k) {
  const real next = in + k.dt * tendency;
  return a == real(0) ? b * next : a * base + b * next;
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

// Prescribed normal velocity on a closed or inflow side; `into` is +1 when
// positive velocity points into the domain (left, bottom), -1 otherwise.
SIM_HD real normal_face_value(int kind, real speed, real into) {
  return static_cast<BoundaryKind>(kind) == BoundaryKind::inflow ? into * speed : real(0);
}

}  // namespace sim
