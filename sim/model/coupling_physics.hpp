// SPDX-License-Identifier: MIT
// The two-way coupling as functions of values, shared by both backends: the
// faces a deposit reaches and their weights, the coupled step's passes
// (loading, drag coefficients, deposits, the faces' update) and the
// projection's impulse shared with the particles.
#pragma once
#include <stdint.h>

#include "sim/model/particle_physics.hpp"
#include "sim/model/time_scheme.hpp"

namespace sim {

// The faces a two-way deposit reaches: every u face i in [0, nx) along a
// periodic x, [0, nx] along a closed one, rows j in [0, ny); v likewise.
// Besides the fluid unknowns that includes the boundary faces of a wall or
// an inflow (the side holds their normal velocity): there the coupled step
// keeps a "free" value (what the drag would give a fluid the side did not
// hold), which the projection's impulse then takes back from the particles
// as from any face (Backend::couple_fluid).
SIM_HD bool owns_deposit_u(int i, int j, const Constants& k) {
  return i >= 0 && i < (is_periodic(k, kLeft) ? k.nx : k.nx + 1) && j >= 0 && j < k.ny;
}
SIM_HD bool owns_deposit_v(int i, int j, const Constants& k) {
  return j >= 0 && j < (is_periodic(k, kBottom) ? k.ny : k.ny + 1) && i >= 0 && i < k.nx;
}

// Whether u face i (v face j) is a boundary face whose normal velocity the
// side fixes (a wall or an inflow), not a fluid unknown.
SIM_HD bool held_face_u(int i, const Constants& k) {
  return !is_periodic(k, kLeft) && ((i == 0 && k.u_i_begin == 1) || (i == k.nx && k.u_i_end == k.nx));
}
SIM_HD bool held_face_v(int j, const Constants& k) {
  return !is_periodic(k, kBottom) && ((j == 0 && k.v_j_begin == 1) || (j == k.ny && k.v_j_end == k.ny));
}
// The same from a storage index (i + 1) + (j + 1) pitch.
SIM_HD bool held_face_u_at(int c, const Constants& k) { return held_face_u(c % k.pitch - 1, k); }
SIM_HD bool held_face_v_at(int c, const Constants& k) { return held_face_v(c / k.pitch - 1, k); }

// The fluid mass a face's deposit is weighed against: a cell's, half of it
// on a held boundary face (its control volume ends at the side), so that a
// uniform suspension loads every face alike.
SIM_HD real face_fluid_mass(bool held, const Constants& k) {
  return held ? real(0.5) * k.cell_mass : k.cell_mass;
}

// Map a u face touched by a deposit to the face that owns its momentum
// (periodic duplicates and halo wrap onto the interior); -1 = no face a
// deposit reaches (owns_deposit_u).
SIM_HD int deposit_face_u(int i, int j, const Constants& k) {
  if (is_periodic(k, kLeft)) i = (i + k.nx) % k.nx;
  if (is_periodic(k, kBottom)) j = (j + k.ny) % k.ny;
  if (!owns_deposit_u(i, j, k)) return -1;
  return (i + 1) + (j + 1) * k.pitch;
}

SIM_HD int deposit_face_v(int i, int j, const Constants& k) {
  if (is_periodic(k, kLeft)) i = (i + k.nx) % k.nx;
  if (is_periodic(k, kBottom)) j = (j + k.ny) % k.ny;
  if (!owns_deposit_v(i, j, k)) return -1;
  return (i + 1) + (j + 1) * k.pitch;
}

// The 4 u and 4 v faces around (x, y) with their bilinear sampling weights,
// as emit(corner, u face or -1, wu, v face or -1, wv), each face given by the
// storage index of the face that owns its momentum (deposit_face_u/v). What
// the particles deposit with these weights is what their sampling reads
// back, so the momentum they take is what the fluid loses.
// The weight of corner (di, dj) in {0, 1}^2 of a bilinear stencil with
// fractional offsets (wx, wy): what a particle deposits onto that face per
// unit of a quantity, and what its sampling reads from it.
SIM_HD real corner_weight(real wx, real wy, int di, int dj) {
  return (di ? wx : real(1) - wx) * (dj ? wy : real(1) - wy);
}

template <class Emit>
SIM_HD void for_each_deposit_face(real x, real y, const Constants& k, Emit&& emit) {
  const BilinearStencil su = stencil_u(x, y, k), sv = stencil_v(x, y, k);
  SIM_UNROLL
  for (int dj = 0; dj < 2; ++dj) {
    SIM_UNROLL
    for (int di = 0; di < 2; ++di) {
      const real wu = corner_weight(su.wx, su.wy, di, dj);
      const real wv = corner_weight(sv.wx, sv.wy, di, dj);
      emit(2 * dj + di, deposit_face_u(su.i + di, su.j + dj, k), wu, deposit_face_v(sv.i + di, sv.j + dj, k), wv);
    }
  }
}

// ---- The coupled step's passes (both backends) --------------------------
// 1. every particle deposits its mass m_p onto M_u, M_v (for_each_deposit_face);
// 2. every particle samples its loading phi from M, takes its coefficients
//    and deposits coupling_deposit onto B_u, A_u and B_v, A_v;
// 3. every active fluid face not touching a solid: u = coupled_face_velocity;
//    the velocity halo is filled;
// 4. every particle samples the updated fluid, takes the same coefficients
//    (particle_coeffs on the same M) and moves (update_particle).
// One-way coupling skips 1 to 3 and uses phi = 0. A particle whose position
// or velocity is not finite deposits nothing: the watchdog stops the run at
// that step, naming it, with the fluid still finite.

// The loading of each component at (x, y): phi = sum_f w_f M_f / m_f over
// the faces a deposit at (x, y) reaches (a held boundary face weighs half a
// cell: face_fluid_mass). `mu[c]`, `mv[c]`: the deposited particle mass at
// storage index c.
template <class Field>
SIM_HD void sample_loading(const Field& mu, const Field& mv, real x, real y, const Constants& k, real& phix,
                           real& phiy) {
  real su = 0, sv = 0;
  for_each_deposit_face(x, y, k, [&](int, int fu, real wu, int fv, real wv) {
    if (fu >= 0) su += wu * (held_face_u_at(fu, k) ? real(2) * mu[fu] : mu[fu]);
    if (fv >= 0) sv += wv * (held_face_v_at(fv, k) ? real(2) * mv[fv] : mv[fv]);
  });
  phix = su / k.cell_mass;
  phiy = sv / k.cell_mass;
}

// The coefficients of a particle of diameter d at (x, y): with the loading
// sampled from M (two-way; M as deposited in pass 1) or phi = 0 (one-way,
// where mu and mv are not read).
template <class Field>
SIM_HD void particle_coeffs(const Field& mu, const Field& mv, bool two_way, real x, real y, real d, const Constants& k,
                            CouplingCoeffs& cx, CouplingCoeffs& cy) {
  real phix = 0, phiy = 0;
  if (two_way) sample_loading(mu, mv, x, y, k, phix, phiy);
  const real r = drag_rate(d, k);
  cx = coupling_coeffs(r, phix);
  cy = coupling_coeffs(r, phiy);
}

// What a particle of mass m deposits in pass 2, per component, from its
// slip (sx, sy) = v - u(x_p) against the fluid of the step's start sampled
// at it: m alpha onto B and m (alpha s - (beta - 1) g dt) onto A (each times
// the face weight). Pass 3 then solves, face by face,
//   (m_f + B_f) (u~_f - u_f) = A_f,
// the implicit drag sum_p w_pf m_p alpha_p (v_p - I_p(u~)) with the
// particles' coupling of neighbouring faces (I_p(u~) - I_p(u) = sum_g w_pg
// (u~_g - u_g)) lumped onto the face itself, on the increment only. So a
// particle moving with the fluid it samples (v = I(u), every particle once
// dt >> tau_p) changes nothing, whatever the loading varies like: lumping
// the whole velocity instead (u~ = (m_f u + sum w m alpha v) / (m_f + B))
// averaged the loaded fluid towards what the particles interpolate from it
// in every step, a grid-scale filter applied once per step, which made the
// answer depend on dt. A uniform suspension (u and v uniform) gets the
// same u~ either way, the exact two-body solution.
struct CouplingDeposit {
  real bu, au, bv, av;
};

SIM_HD CouplingDeposit coupling_deposit(real m, real sx, real sy, const CouplingCoeffs& cx, const CouplingCoeffs& cy,
                                        const Constants& k) {
  CouplingDeposit q;
  q.bu = m * cx.alpha;
  q.au = m * (cx.alpha * sx - cx.beta_m1 * (k.g_eff_x * k.dt));
  q.bv = m * cy.alpha;
  q.av = m * (cy.alpha * sy - cy.beta_m1 * (k.g_eff_y * k.dt));
  return q;
}

// Pass 2 for one particle: its coefficients from the loading in M
// (particle_coeffs, two-way), its slip against the fluid (u, v) of the
// step's start (sample_velocity) and what it deposits, per unit face weight
// (coupling_deposit).
template <class Field, class Velocity>
SIM_HD CouplingDeposit particle_drag_deposit(const Field& mu, const Field& mv, const Velocity& u, const Velocity& v,
                                             real x, real y, real vx, real vy, real d, const Constants& k) {
  CouplingCoeffs cx, cy;
  particle_coeffs(mu, mv, true, x, y, d, k, cx, cy);
  real ufx, ufy;
  sample_velocity(u, v, x, y, k, ufx, ufy);
  return coupling_deposit(particle_mass(d, k), vx - ufx, vy - ufy, cx, cy, k);
}

// Pass 3 on one face of fluid mass m_f (a held boundary face: half a
// cell's, face_fluid_mass): u~ = u + A / (m_f + B), so a face no particle
// reaches (A = B = 0) keeps its value bit for bit. The fluid's gain sums to
// what the particles lose to drag against u~ exactly: sum_f B_f (u~_f - u_f)
// = sum_p m_p alpha_p (I_p(u~) - I_p(u)), as the sampling weights are the
// deposit weights.
SIM_HD real coupled_face_velocity(real u, real a, real b, real m_f) { return u + a / (m_f + b); }

// ---- The projection's impulse, shared with the particles ---------------
//
// The implicit drag above moves the fluid as if it were free. The
// projection that follows takes back the part the walls and the pressure
// forbid: the impulse du = u(after) - u(before) on every face, and on a
// held boundary face du = (its fixed value) - (its free value). The
// particles must lose their share of it, as they would had the pressure
// acted during the drag: for a uniform suspension under a constant fluid
// force F (the exact two-body solution) the fluid gains c F dt and each
// particle c_p F dt over dt, c + phi c_p = 1, so a particle gains kappa =
// c_p / c times the fluid's gain,
//   kappa = (1 - q) / (1 + phi q),   q = (1 - e^-z) / z
// (CouplingCoeffs::kappa, per component): from 1 - q at phi = 0 (the lag
// behind a fluid speeding up evenly) to 1 for locked phases. The pressure
// that holds a fluid is no constant force while the drag builds up: the
// share a particle takes is impulse_share (below), exact where the fluid is
// held. What it takes, m_p s du(x_p), the faces around it pay back
// (reaction_share): momentum is conserved, and for a uniform suspension
// fluid and particles end where the exact solution with the pressure puts
// them (in a closed box: fluid at rest, particles at v_t, at any dt and
// loading).

// The projection's impulse at face c: `after` - `before`, or, on a held
// boundary face, `after` (its fixed value) - `free` (its free value).
template <class Field>
SIM_HD real projection_impulse(const Field& after, const Field& before, const Field& free, int c, bool held) {
  return after[c] - (held ? free[c] : before[c]);
}

// The projection's impulse at (x, y), sampled with the deposit weights.
template <class Field>
SIM_HD void sample_impulse(const Field& u_after, const Field& v_after, const Field& u_before, const Field& v_before,
                           const Field& u_free, const Field& v_free, real x, real y, const Constants& k, real& dux,
                           real& duy) {
  real sx = 0, sy = 0;
  for_each_deposit_face(x, y, k, [&](int, int fu, real wu, int fv, real wv) {
    if (fu >= 0) sx += wu * projection_impulse(u_after, u_before, u_free, fu, held_face_u_at(fu, k));
    if (fv >= 0) sy += wv * projection_impulse(v_after, v_before, v_free, fv, held_face_v_at(fv, k));
  });
  dux = sx;
  duy = sy;
}


// The fluid's reaction to the particles' share of the projection's impulse,
// on one fluid face of mass m_f: the particles around it took `took` (sum_p
// w_pf m_p s_p du(x_p), s_p their impulse_share, deposited) and it pays that
// back, at most its own impulse du times its mass (its velocity gain back to
// zero; a face whose particles outweigh it, phi s > 1, pays only that). Paid where
// taken, the pressure's impulse on a cloud is shared by both phases there
// (the mixture's inertia), whatever dt / tau_p is; spread evenly over the
// domain instead, it moved momentum from the cloud to the whole fluid, by a
// share that depended on dt / tau_p (the main job's kinetic energy
// moved 2% from dt to dt/10). Paying more than its impulse would reverse
// a face's gain and feed the impulse back into the slip around a dense cloud,
// growing step by step (a periodic cloud at loading 10 blew up in 15 steps).
SIM_HD real reaction_share(real took, real du, const Constants& k) {
  const real most = k.cell_mass * fabsf(du);
  return clampf(took, -most, most);
}

// What no face could pay (reaction_share), spread evenly as the velocity
// every fluid face (of `faces`) gains: -left / (faces m_f). Its gradient part
// is projected out and its mean keeps the momentum.
SIM_HD real reaction_velocity(double left, int64_t faces, const Constants& k) {
  return faces > 0 ? static_cast<real>(-left / (static_cast<double>(faces) * static_cast<double>(k.cell_mass))) : real(0);
}

// The particle's share of the projection's impulse du (per unit du, one
// component), exact where the fluid is held. The projection's pressure acts
// through the whole step, and the particle's response to it depends on how
// it builds up: kappa (above) is the response to a constant force. Where
// the pressure holds the fluid (a uniform suspension in a closed box: the
// fluid stays at rest), it cancels the drag on the fluid at every instant,
// so it grows as the slip does, and the particle must end at the one-way
// solution against the held fluid, v_h = u + s e^{-r} + g tau_p (1 - e^{-r}).
// The free two-body step moved the fluid by G = a1 s + a2 g dt (slip s = v -
// u at the step's start; the projection takes G back) and the particle
// by b1 s + b2 g dt more than v_h:
//   a1 = phi (1 - E) / (1 + phi),        b1 = a1 + E - e^{-r},
//   a2 = phi (1 - q) / (1 + phi),        b2 = a2 + q - (1 - e^{-r}) / r,
// so each part has its own share, b1 / a1 (from the slip) and b2 / a2 (from
// gravity). The share is their mean weighted by |a1 s| and |a2 g dt|: exactly
// (b1 s + b2 g dt) / G where the two parts pull the same way (settling from
// rest towards v_t), and between the two otherwise. The slip at the start
// comes from the slip against the free fluid, s~ = v - u~(x_p): s = s~ + G,
// G = (a1 s~ + a2 g dt) / (1 - a1). In a closed box this makes every step
// exact, the first from rest included, at any dt (the constant-force kappa
// left 7e-3 of v_t at loading 10 after two steps of 10 tau_p); where the
// particles are locked to the fluid (dt >> tau_p) both shares are 1, as kappa
// is. Below a loading of 1e-3 the fluid takes no impulse worth sharing
// (G ~ phi) and the two parts cancel in float: kappa there.
// `er` = e^{-r}, r = dt / tau_p (the same for both components of a particle).
SIM_HD real impulse_share(const CouplingCoeffs& c, real er, real slip_free, real g_dt) {
  const real phi = c.phi, z = c.z;
  if (!(phi >= real(1e-3)) || !(z > real(0))) return c.kappa;
  // e^{-z}, 1 - e^{-z} and q from the coefficients (alpha = (1 - E)/(1 + phi E))
  const real e = (real(1) - c.alpha) / (real(1) + phi * c.alpha);
  const real den = real(1) + phi * e;
  const real one_minus_e = c.alpha * den, q = real(1) + c.beta_m1 * den;
  const real r = z / (real(1) + phi), pr = z - r;  // pr = phi r
  // e^{-phi r} - 1 without cancellation; E - e^{-r} = e^{-r} (e^{-phi r} - 1)
  const real t = pr < real(0.5) ? expm1f(-pr) : (er > real(0) ? e / er - real(1) : real(-1));
  const real p1 = r < real(1e-2) ? real(1) - r * (real(0.5) - r * (real(1) / real(6))) : (real(1) - er) / r;
  const real shared = phi / (real(1) + phi);
  const real a1 = shared * one_minus_e, a2 = shared * (real(1) - q);
  const real b1 = a1 + er * t, b2 = a2 + (q - p1);
  const real gain = (a1 * slip_free + a2 * g_dt) / (real(1) - a1);
  const real ws = fabsf(slip_free + gain), wg = fabsf(g_dt);
  const real w = ws * a1 + wg * a2;
  if (!(w > real(0))) return c.kappa;
  return (ws * b1 + wg * b2) / w;
}

// The particle update of a coupled step: the drag step against the free
// fluid (ufx, ufy), then its share (impulse_share) of the projection's
// impulse (dux, duy), which it returns in (took_x, took_y) for the fluid to
// give back, then obstacles and the domain sides.
SIM_HD ParticleUpdate update_coupled_particle(ParticleMotion s, real d, real ufx, real ufy, real dux, real duy,
                                              const CouplingCoeffs& cx, const CouplingCoeffs& cy, const Constants& k,
                                              real& took_x, real& took_y) {
  ParticleUpdate u;
  u.s = coupled_drag_step(s, ufx, ufy, cx, cy, k);
  const real er = expf(-drag_rate(d, k));
  const real dvx = impulse_share(cx, er, s.vx - ufx, k.g_eff_x * k.dt) * dux;
  const real dvy = impulse_share(cy, er, s.vy - ufy, k.g_eff_y * k.dt) * duy;
  took_x = dvx;
  took_y = dvy;
  u.s.vx += dvx;
  u.s.vy += dvy;
  u.s.x += k.dt * cx.resp_w * dvx;
  u.s.y += k.dt * cy.resp_w * dvy;
  const real rad = real(0.5) * d;
  for (int o = 0; o < k.n_obstacles; ++o) apply_obstacle(u.s, rad, k.obstacles[o], k.restitution);
  u.inside = apply_domain_boundaries(u.s, rad, k);
  return u;
}

}  // namespace sim
