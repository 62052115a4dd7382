// Per-particle physics as functions of values: fluid-velocity sampling
// weights, Stokes drag with gravity and buoyancy, walls, obstacles.
#pragma once
#include <math.h>

#include "sim/constants.hpp"
#include "sim/types.hpp"

namespace sim {

constexpr real kPi = real(3.14159265358979323846);

// Bilinear stencil on a staggered component: lower-left node (i, j) and weights.
struct BilinearStencil {
  int i, j;
  real wx, wy;
};

SIM_HD int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// u lives at (i dx, (j + 1/2) dy): i0 in [-1, nx], j0 in [-1, ny - 1].
SIM_HD BilinearStencil stencil_u(real x, real y, const Constants& k) {
  const real fx = x * k.inv_dx, fy = y * k.inv_dy - real(0.5);
  const int i = clampi(static_cast<int>(floorf(fx)), -1, k.nx);
  const int j = clampi(static_cast<int>(floorf(fy)), -1, k.ny - 1);
  return {i, j, fminf(fmaxf(fx - i, real(0)), real(1)), fminf(fmaxf(fy - j, real(0)), real(1))};
}

// v lives at ((i + 1/2) dx, j dy): i0 in [-1, nx - 1], j0 in [-1, ny].
SIM_HD BilinearStencil stencil_v(real x, real y, const Constants& k) {
  const real fx = x * k.inv_dx - real(0.5), fy = y * k.inv_dy;
  const int i = clampi(static_cast<int>(floorf(fx)), -1, k.nx - 1);
  const int j = clampi(static_cast<int>(floorf(fy)), -1, k.ny);
  return {i, j, fminf(fmaxf(fx - i, real(0)), real(1)), fminf(fmaxf(fy - j, real(0)), real(1))};
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

// Stokes relaxation time tau_p = rho_p d^2 / (18 mu).
SIM_HD real relaxation_time(real d, const Constants& k) { return k.rho_p * d * d / (real(18) * k.mu); }

SIM_HD real particle_mass(real d, const Constants& k) { return k.rho_p * kPi / real(6) * d * d * d; }

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

// dv/dt = (u_f - v)/tau + g_eff, integrated exactly over dt with u_f frozen:
//   v(dt) = w + (v0 - w) e^{-dt/tau},  w = u_f + g_eff tau (the terminal velocity),
//   x(dt) = x0 + w dt + (v0 - w) tau (1 - e^{-dt/tau}).
// Unconditionally stable, exact for tau << dt (v -> w) and for tau >> dt.
SIM_HD ParticleMotion drag_step(ParticleMotion s, real d, real ufx, real ufy, const Constants& k) {
  const real tau = relaxation_time(d, k);
  const real r = k.dt / tau;
  const real decay = expf(-r);
  // tau (1 - e^{-r}) without cancellation for small r
  const real one_minus = r < real(1e-3) ? r * (real(1) - real(0.5) * r) : real(1) - decay;
  const real wx = ufx + k.g_eff_x * tau, wy = ufy + k.g_eff_y * tau;
  ParticleMotion o;
  o.vx = wx + (s.vx - wx) * decay;
  o.vy = wy + (s.vy - wy) * decay;
  o.x = s.x + wx * k.dt + (s.vx - wx) * tau * one_minus;
  o.y = s.y + wy * k.dt + (s.vy - wy) * tau * one_minus;
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
    s.x = fminf(fmaxf(s.x, L == BoundaryKind::outflow ? real(0) : lo), R == BoundaryKind::outflow ? k.lx : hi);
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
    s.y = fminf(fmaxf(s.y, B == BoundaryKind::outflow ? real(0) : lo), T == BoundaryKind::outflow ? k.ly : hi);
  }
  return true;
}

// Push a particle out of an obstacle it entered and reflect its normal velocity.
SIM_HD void apply_obstacle(ParticleMotion& s, real rad, const ObstacleShapeData& o, real e) {
  if (o.shape == 0) {
    const real dx = s.x - o.x, dy = s.y - o.y;
    const real reach = o.radius + rad;
    const real dist2 = dx * dx + dy * dy;
    if (dist2 >= reach * reach) return;
    const real dist = sqrtf(dist2);
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
  if (s.x <= x0 || s.x >= x1 || s.y <= y0 || s.y >= y1) return;
  // leave through the nearest side
  const real dl = s.x - x0, dr = x1 - s.x, db = s.y - y0, dt = y1 - s.y;
  const real m = fminf(fminf(dl, dr), fminf(db, dt));
  if (m == dl) bounce(s.x, s.vx, x0, e);
  else if (m == dr) bounce(s.x, s.vx, x1, e);
  else if (m == db) bounce(s.y, s.vy, y0, e);
  else bounce(s.y, s.vy, y1, e);
}

// The whole per-particle update after sampling the fluid velocity u_f:
// drag and gravity, then obstacles and the domain sides. `ax, ay` is the
// drag momentum the particle took from the fluid, as an acceleration of one
// cell of fluid over dt (what two-way coupling deposits); `inside` is false
// when the particle left through an outflow.
struct ParticleUpdate {
  ParticleMotion s;
  real ax, ay;
  bool inside;
};

SIM_HD ParticleUpdate update_particle(ParticleMotion s, real d, real ufx, real ufy, const Constants& k) {
  ParticleUpdate u;
  u.s = drag_step(s, d, ufx, ufy, k);
  const real m_over = particle_mass(d, k) / (k.cell_mass * k.dt);
  u.ax = -m_over * (u.s.vx - s.vx - k.g_eff_x * k.dt);
  u.ay = -m_over * (u.s.vy - s.vy - k.g_eff_y * k.dt);
  const real rad = real(0.5) * d;
  for (int o = 0; o < k.n_obstacles; ++o) apply_obstacle(u.s, rad, k.obstacles[o], k.restitution);
  u.inside = apply_domain_boundaries(u.s, rad, k);
  return u;
}

// Map a u face touched by a deposit to the face that owns its momentum
// (periodic duplicates and halo wrap onto the interior); -1 = not a fluid unknown.
SIM_HD int deposit_face_u(int i, int j, const Constants& k) {
  if (is_periodic(k, kLeft)) i = (i + k.nx) % k.nx;
  if (is_periodic(k, kBottom)) j = (j + k.ny) % k.ny;
  if (i < k.u_i_begin || i >= k.u_i_end || j < 0 || j >= k.ny) return -1;
  return (i + 1) + (j + 1) * k.pitch;
}

SIM_HD int deposit_face_v(int i, int j, const Constants& k) {
  if (is_periodic(k, kLeft)) i = (i + k.nx) % k.nx;
  if (is_periodic(k, kBottom)) j = (j + k.ny) % k.ny;
  if (j < k.v_j_begin || j >= k.v_j_end || i < 0 || i >= k.nx) return -1;
  return (i + 1) + (j + 1) * k.pitch;
}

// Spreads an acceleration (ax, ay) at (x, y) onto the 4 u and 4 v faces
// around it with the sampling weights, so the momentum the particles take
// is what the fluid loses; emit(corner, u face or -1, wu ax, v face or -1, wv ay)
// with the storage index of each face that owns its momentum.
template <class Emit>
SIM_HD void for_each_deposit_face(real x, real y, real ax, real ay, const Constants& k, Emit&& emit) {
  const BilinearStencil su = stencil_u(x, y, k), sv = stencil_v(x, y, k);
  SIM_UNROLL
  for (int dj = 0; dj < 2; ++dj) {
    SIM_UNROLL
    for (int di = 0; di < 2; ++di) {
      const real wu = (di ? su.wx : real(1) - su.wx) * (dj ? su.wy : real(1) - su.wy);
      const real wv = (di ? sv.wx : real(1) - sv.wx) * (dj ? sv.wy : real(1) - sv.wy);
      emit(2 * dj + di, deposit_face_u(su.i + di, su.j + dj, k), wu * ax, deposit_face_v(sv.i + di, sv.j + dj, k),
           wv * ay);
    }
  }
}

}  // namespace sim
