// SPDX-License-Identifier: MIT
// Per-particle physics as functions of values: fluid-velocity sampling
// weights, Stokes drag with gravity and buoyancy coupled both ways to the
// fluid, walls, obstacles.
#pragma once
#include <math.h>

#include "sim/model/constants.hpp"
#include "sim/model/obstacle.hpp"
#include "sim/model/types.hpp"

namespace sim {

constexpr real kPi = real(3.14159265358979323846);

// Bilinear stencil on a staggered component: lower-left node (i, j) and weights.
struct BilinearStencil {
  int i, j;
  real wx, wy;
};

SIM_HD int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// fminf(fmaxf(v, lo), hi) for lo <= hi, NaN included (it gives lo), as a
// compare and select: on the host fminf and fmaxf are calls into libm (their
// NaN rules keep the compiler from using minss / maxss), a tenth of the
// particle phase.
SIM_HD real clampf(real v, real lo, real hi) { return v > lo ? (v < hi ? v : hi) : lo; }

// The lower-left node of a stencil along one axis, for a face coordinate
// f (position / h, less 1/2 for a component sampled across the axis).
// Along a periodic axis the stencil may reach the halo, which wraps.
// Along a closed one (wall, inflow, outflow) it stays on stored faces:
// `tangential` (the component lives at cell centres along this axis, as u
// does along y) keeps both nodes on the interior faces [0, n - 1], so a
// particle within h/2 of the side samples the nearest face alone (its value
// extended to the side) and never the ghost face beyond it, which is no
// fluid unknown: what it exchanges with the fluid stays in the fluid (the
// wall takes momentum only through the fluid's own shear). A normal
// component (u along x) spans the boundary face at 0 or n, whose value is
// the side's (0 at a wall): nodes [0, n - 1].
SIM_HD int stencil_node(real f, int n, bool periodic, bool tangential) {
  const int lo = periodic ? -1 : 0;
  const int hi = periodic ? (tangential ? n - 1 : n) : (tangential ? (n > 1 ? n - 2 : 0) : n - 1);
  return clampi(static_cast<int>(floorf(f)), lo, hi);
}

// u lives at (i dx, (j + 1/2) dy): i0 in [-1, nx] periodic, [0, nx - 1]
// closed; j0 in [-1, ny - 1] periodic, [0, ny - 2] closed.
SIM_HD BilinearStencil stencil_u(real x, real y, const Constants& k) {
  const real fx = x * k.inv_dx, fy = y * k.inv_dy - real(0.5);
  const int i = stencil_node(fx, k.nx, is_periodic(k, kLeft), false);
  const int j = stencil_node(fy, k.ny, is_periodic(k, kBottom), true);
  return {i, j, clampf(fx - i, real(0), real(1)), clampf(fy - j, real(0), real(1))};
}

// v lives at ((i + 1/2) dx, j dy): i0 in [-1, nx - 1] periodic, [0, nx - 2]
// closed; j0 in [-1, ny] periodic, [0, ny - 1] closed.
SIM_HD BilinearStencil stencil_v(real x, real y, const Constants& k) {
  const real fx = x * k.inv_dx - real(0.5), fy = y * k.inv_dy;
  const int i = stencil_node(fx, k.nx, is_periodic(k, kLeft), true);
  const int j = stencil_node(fy, k.ny, is_periodic(k, kBottom), false);
  return {i, j, clampf(fx - i, real(0), real(1)), clampf(fy - j, real(0), real(1))};
}

// The face coordinate a texture filter samples a tangential component at:
// f clamped to [0, n - 1] along a closed axis (the interior faces), as
// stencil_u / stencil_v weigh it.
SIM_HD real tangential_coordinate(real f, int n, bool periodic) {
  return periodic ? f : clampf(f, real(0), real(n - 1));
}

SIM_HD real bilinear(real f00, real f10, real f01, real f11, real wx, real wy) {
  return (real(1) - wy) * ((real(1) - wx) * f00 + wx * f10) + wy * ((real(1) - wx) * f01 + wx * f11);
}

// The fluid velocity at (x, y), bilinear in each staggered component.
// `u[c]`, `v[c]`: the face values at storage index c (a pointer, or a
// kernel's loading view).
template <class Field>
SIM_HD void sample_velocity(const Field& u, const Field& v, real x, real y, const Constants& k, real& ufx, real& ufy) {
  const BilinearStencil su = stencil_u(x, y, k), sv = stencil_v(x, y, k);
  const int cu = at(k, su.i, su.j), cv = at(k, sv.i, sv.j), P = k.pitch;
  ufx = bilinear(u[cu], u[cu + 1], u[cu + P], u[cu + 1 + P], su.wx, su.wy);
  ufy = bilinear(v[cv], v[cv + 1], v[cv + P], v[cv + 1 + P], sv.wx, sv.wy);
}

SIM_HD real particle_mass(real d, const Constants& k) { return k.rho_p * kPi / real(6) * d * d * d; }

// dt / tau_p with the Stokes relaxation time tau_p = rho_p d^2 / (18 mu),
// written as a rate so that an inviscid fluid (mu = 0) gives 0 (no drag),
// never an infinite tau.
SIM_HD real drag_rate(real d, const Constants& k) { return k.dt * (real(18) * k.mu) / (k.rho_p * d * d); }

struct ParticleMotion {
  real x, y, vx, vy;
};

// Position and velocity all finite. The particle steps count the particles
// for which this fails (before or after their update; a NaN position is
// clamped back into the domain by the walls, a NaN velocity is not), which
// is the particle half of Simulation's non-finite watchdog.
SIM_HD bool finite_motion(const ParticleMotion& s) {
  return isfinite(s.x) && isfinite(s.y) && isfinite(s.vx) && isfinite(s.vy);
}

// ---- Drag with two-way coupling, one velocity component at a time ------
//
// A particle of mass m_p, slip relaxation rate r = dt / tau_p, and phi =
// the particle mass around it over the fluid mass of a cell (sampled from
// the deposited particle mass, 0 for one-way coupling). For a uniform
// suspension both phases follow the exact two-body solution of
//   dv/dt = (u - v)/tau_p + g,   du/dt = -phi (u - v)/tau_p
// over dt: the slip v - u decays by E = exp(-(1 + phi) r) towards
// g tau_p / (1 + phi), and the mixture momentum gains m_p g dt. Written as
//   fluid face:  (m_f + sum_p w m_p alpha) (u' - u) = sum_p w m_p (alpha (v_p - u(x_p)) - (beta - 1) g dt)
//   particle:    v' = v + alpha (u~' - v) + beta g dt,  u~' the updated fluid sampled at the particle,
// with alpha = (1 - E)/(1 + phi E) and beta = (phi E + q)/(1 + phi E),
// q = (1 - e^{-z})/z, z = (1 + phi) r (coupling_deposit below: the slip is
// taken against the fluid the particle samples): stable at any dt and
// loading, and as the sampling weights are the deposit weights the fluid
// gains exactly the momentum the particles lose to drag. phi = 0 is the exact one-way step
// (alpha = 1 - e^{-r}, beta g dt = g tau_p (1 - e^{-r})); r = 0 (mu = 0) is
// ballistic: alpha = 0, beta = 1.
struct CouplingCoeffs {
  real alpha;    // share of the slip to the updated fluid velocity removed over dt
  real beta;     // share of g dt the particle gains
  real beta_m1;  // beta - 1, without cancellation: what the fluid takes, per unit particle mass, of g dt
  real z;        // (1 + phi) r, the slip decay exponent of the step
  real kappa;    // the particle's share of the fluid's gain from a force on it (the projection's impulse, below)
  real phi;      // the loading the coefficients are for
  real mean_w;   // exp_mean_weight(z)
  real resp_w;   // response_mean_weight_of(z): the position's share of a velocity gain (below)
};

// The weights below from one exponential: e^{-z} and 1 - e^{-z}.
SIM_HD real exp_mean_weight_of(real z, real e, real one_minus_e);
SIM_HD real response_mean_weight_of(real z, real one_minus_e);

SIM_HD CouplingCoeffs coupling_coeffs(real r, real phi) {
  CouplingCoeffs c;
  const real z = (real(1) + phi) * r;
  const real e = expf(-z);
  // 1 - e^{-z} without cancellation; past z = 2 the subtraction loses
  // under an ulp (e < 0.14), one transcendental call fewer per component
  const real one_minus_e = z < real(2) ? -expm1f(-z) : real(1) - e;
  const real den = real(1) + phi * e;
  // q = (1 - e^{-z})/z to a few ulp of itself (it is small for large z);
  // q - 1 to a few ulp of 1 (it only scales g dt), by its series
  // -z/2 + z^2/6 - z^3/24 where the quotient would cancel
  const bool small = z < real(1e-2);
  const real q_m1 = small ? z * (real(-0.5) + z * (real(1) / real(6) - z * (real(1) / real(24))))
                          : (one_minus_e - z) / z;
  const real q = small ? real(1) + q_m1 : one_minus_e / z;
  c.alpha = one_minus_e / den;
  c.beta = (phi * e + q) / den;
  c.beta_m1 = q_m1 / den;
  c.z = z;
  c.kappa = -q_m1 / (real(1) + phi * q);  // (1 - q) / (1 + phi q)
  c.phi = phi;
  c.mean_w = exp_mean_weight_of(z, e, one_minus_e);
  c.resp_w = response_mean_weight_of(z, one_minus_e);
  return c;
}

// f(z) = 1/z - 1/(e^z - 1): over a step in which the velocity approaches
// its end value v' exponentially with exponent z, the mean velocity is
// v' + (v - v') f(z). f(0) = 1/2 (constant acceleration), f -> 1/z for large z.
// 1/(e^z - 1) = e^{-z} / (1 - e^{-z}).
SIM_HD real exp_mean_weight_of(real z, real e, real one_minus_e) {
  if (z < real(0.5)) {
    const real z2 = z * z;
    return real(0.5) - z * (real(1) / real(12)) + z * z2 * (real(1) / real(720)) - z * z2 * z2 * (real(1) / real(30240));
  }
  return real(1) / z - e / one_minus_e;
}
SIM_HD real exp_mean_weight(real z) {
  const real e = expf(-z);
  return exp_mean_weight_of(z, e, z < real(2) ? -expm1f(-z) : real(1) - e);
}

// The position's share of a velocity gain dv whose fluid cause built up
// evenly over the step: the particle's mean gain over dt is omega dv, with
// omega = (1/2 - (1 - q)/z) / (1 - q): 1/3 for z -> 0, 1/2 for z -> inf.
SIM_HD real response_mean_weight_of(real z, real one_minus_e) {
  if (z < real(0.1)) return (real(1) / real(6) - z * (real(1) / real(24) - z * (real(1) / real(120)))) /
                             (real(0.5) - z * (real(1) / real(6) - z * (real(1) / real(24))));
  const real one_minus_q = real(1) - one_minus_e / z;
  return (real(0.5) - one_minus_q / z) / one_minus_q;
}

// The particle's velocity and position after dt, given the fluid velocity
// (ufx, ufy) sampled from the coupled (already updated) fluid. Over the step
// the two-body velocity is v(t) = a + b e^{-z t/dt} + c t: the slip decays
// while the mixture gains c = phi/(1 + phi) g_eff. Its mean is
// v' + (v - v') f(z) - c dt (1/2 - f(z)): the exponential part alone would
// move a particle of a heavy suspension by c dt^2 / 2 too far each step
// (in a closed box, where the pressure takes that acceleration back, a
// first-order error in the positions).
SIM_HD ParticleMotion coupled_drag_step(ParticleMotion s, real ufx, real ufy, const CouplingCoeffs& cx,
                                        const CouplingCoeffs& cy, const Constants& k) {
  ParticleMotion o;
  o.vx = s.vx + cx.alpha * (ufx - s.vx) + cx.beta * (k.g_eff_x * k.dt);
  o.vy = s.vy + cy.alpha * (ufy - s.vy) + cy.beta * (k.g_eff_y * k.dt);
  const real fx = cx.mean_w, fy = cy.mean_w;
  const real lx = cx.phi / (real(1) + cx.phi) * k.g_eff_x * k.dt * (real(0.5) - fx);
  const real ly = cy.phi / (real(1) + cy.phi) * k.g_eff_y * k.dt * (real(0.5) - fy);
  o.x = s.x + k.dt * (o.vx + (s.vx - o.vx) * fx - lx);
  o.y = s.y + k.dt * (o.vy + (s.vy - o.vy) * fy - ly);
  return o;
}

// Reflect a coordinate about a wall at `wall` with normal restitution e.
SIM_HD void bounce(real& pos, real& vel, real wall, real e) {
  pos = wall + (wall - pos) * e;
  vel = -e * vel;
}

// Domain sides for a particle of radius rad: bounce on closed and inflow
// sides, wrap on periodic ones, leave through an outflow (returns false).
SIM_HD bool apply_domain_boundaries(ParticleMotion& s, real rad, const Constants& k) {
  const real e = k.restitution;
  const BoundaryKind L = static_cast<BoundaryKind>(k.bc_kind[kLeft]);
  const BoundaryKind R = static_cast<BoundaryKind>(k.bc_kind[kRight]);
  const BoundaryKind B = static_cast<BoundaryKind>(k.bc_kind[kBottom]);
  const BoundaryKind T = static_cast<BoundaryKind>(k.bc_kind[kTop]);
  if (L == BoundaryKind::periodic) {
    s.x -= k.lx * floorf(s.x / k.lx);
    if (s.x >= k.lx) s.x = real(0);
  } else {
    if (s.x < real(0) && L == BoundaryKind::outflow) return false;
    if (s.x > k.lx && R == BoundaryKind::outflow) return false;
    const real lo = fminf(rad, real(0.5) * k.lx), hi = k.lx - lo;
    if (L != BoundaryKind::outflow && s.x < lo) bounce(s.x, s.vx, lo, e);
    if (R != BoundaryKind::outflow && s.x > hi) bounce(s.x, s.vx, hi, e);
    s.x = clampf(s.x, L == BoundaryKind::outflow ? real(0) : lo, R == BoundaryKind::outflow ? k.lx : hi);
  }
  if (B == BoundaryKind::periodic) {
    s.y -= k.ly * floorf(s.y / k.ly);
    if (s.y >= k.ly) s.y = real(0);
  } else {
    if (s.y < real(0) && B == BoundaryKind::outflow) return false;
    if (s.y > k.ly && T == BoundaryKind::outflow) return false;
    const real lo = fminf(rad, real(0.5) * k.ly), hi = k.ly - lo;
    if (B != BoundaryKind::outflow && s.y < lo) bounce(s.y, s.vy, lo, e);
    if (T != BoundaryKind::outflow && s.y > hi) bounce(s.y, s.vy, hi, e);
    s.y = clampf(s.y, B == BoundaryKind::outflow ? real(0) : lo, T == BoundaryKind::outflow ? k.ly : hi);
  }
  return true;
}

// Push a particle out of an obstacle it entered (inside_obstacle,
// sim/model/obstacle.hpp, grown by its radius) and reflect its normal velocity.
SIM_HD void apply_obstacle(ParticleMotion& s, real rad, const ObstacleShapeData& o, real e) {
  if (!inside_obstacle(o, s.x, s.y, rad)) return;
  if (o.shape == 0) {
    const real dx = s.x - o.x, dy = s.y - o.y;
    const real reach = o.radius + rad;
    const real dist = sqrtf(dx * dx + dy * dy);
    const real nx = dist > real(0) ? dx / dist : real(1), ny = dist > real(0) ? dy / dist : real(0);
    const real depth = reach - dist;
    s.x += nx * depth * (real(1) + e);
    s.y += ny * depth * (real(1) + e);
    const real vn = s.vx * nx + s.vy * ny;
    if (vn < real(0)) {
      s.vx -= (real(1) + e) * vn * nx;
      s.vy -= (real(1) + e) * vn * ny;
    }
    return;
  }
  const real x0 = o.x0 - rad, x1 = o.x1 + rad, y0 = o.y0 - rad, y1 = o.y1 + rad;
  // leave through the nearest side
  const real dl = s.x - x0, dr = x1 - s.x, db = s.y - y0, dt = y1 - s.y;
  const real m = fminf(fminf(dl, dr), fminf(db, dt));
  if (m == dl) bounce(s.x, s.vx, x0, e);
  else if (m == dr) bounce(s.x, s.vx, x1, e);
  else if (m == db) bounce(s.y, s.vy, y0, e);
  else bounce(s.y, s.vy, y1, e);
}

// The whole per-particle update after sampling the coupled fluid velocity
// (ufx, ufy): drag and gravity, then obstacles and the domain sides.
// `inside` is false when the particle left through an outflow.
struct ParticleUpdate {
  ParticleMotion s;
  bool inside;
};

SIM_HD ParticleUpdate update_particle(ParticleMotion s, real d, real ufx, real ufy, const CouplingCoeffs& cx,
                                      const CouplingCoeffs& cy, const Constants& k) {
  ParticleUpdate u;
  u.s = coupled_drag_step(s, ufx, ufy, cx, cy, k);
  const real rad = real(0.5) * d;
  for (int o = 0; o < k.n_obstacles; ++o) apply_obstacle(u.s, rad, k.obstacles[o], k.restitution);
  u.inside = apply_domain_boundaries(u.s, rad, k);
  return u;
}

// Writes an update into slot i of a particle view (AoS or SoA); true when
// the particle left through an outflow (its slot is marked dead), for the
// caller's count.
template <class View>
SIM_HD bool store_update(const View& p, int64_t i, const ParticleUpdate& up) {
  p.x(i) = up.s.x;
  p.y(i) = up.s.y;
  p.vx(i) = up.s.vx;
  p.vy(i) = up.s.vy;
  if (up.inside) return false;
  p.alive(i) = 0;
  return true;
}

}  // namespace sim
