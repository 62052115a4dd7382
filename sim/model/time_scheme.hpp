// SPDX-License-Identifier: MIT
// The time step of the fluid: an IMEX Runge-Kutta scheme with a projection
// per stage. Its explicit part (advection, body force) is the three-stage
// SSP-RK3 of Shu and Osher, stable on the imaginary axis up to |z| = sqrt(3)
// (central advection's eigenvalues lie there: the step damps them by
// |R|^2 = 1 - z^4/12 + z^6/36, it never amplifies them). The viscous term
// is either explicit in the same stages (fluid.viscous = "explicit": plain
// SSP-RK3, dt then also bounded by the viscous limit) or implicit
// (fluid.viscous = "implicit", the default), one Helmholtz solve a stage:
//
//   U1 = P S1 (u + dt A(u) + dt/2 V(u)),                         S1 = (I - dt/2 V)^-1
//   U2 = P S2 (3/4 u + 1/4 U1 + dt/4 A(U1) - dt V(U1)),          S2 = (I - 5 dt/4 V)^-1
//   u' = P S3 (1/3 u + 2/3 U2 + 2 dt/3 A(U2)),                   S3 = (I - 2 dt/3 V)^-1
//
// A = advection + body force, V = nu lap, P the projection, its pressure
// taken with the stage's weight of A (1, 1/4, 2/3 of dt), so phi is the
// kinematic pressure of any stage. Before each solve the last projection's
// pressure gradient, with that weight, is taken out of the right-hand side
// and put back after it (an incremental pressure): the solve then diffuses
// nothing a pressure holds (a body force, the particles' drag in a closed
// box). The weights (e_k of V explicit, g_k implicit) are chosen so that
//   - each stage is consistent: e_k + g_k = the stage's weight of A, so a
//     steady state (A + V - G p = 0) passes every stage unchanged whatever
//     dt is;
//   - the step is second order for the coupled terms (IMEX order conditions
//     with SSP-RK3 fixed: with g3 = 2/3 they leave the family
//     e2 = e1/2 - 5/4, of which e1 = 1/2 is the one with Crank-Nicolson as
//     its first stage);
//   - the last stage is fully implicit, so the step is L-stable: R(-inf) = 0
//     for V alone and for any advective z with it. A checkerboard mode at
//     100 times the explicit viscous limit (z = -200) is multiplied by
//     -0.0014 a step where Crank-Nicolson gives -0.98 (the ringing of the
//     impulsively started cavity); |R| <= 1 for imaginary z up to sqrt(3)
//     and any V <= 0 (scanned).
#pragma once
#include "sim/model/types.hpp"

namespace sim {

// The coefficients of one stage: out = a base + b in + dt (c A(in) + cv V(in)),
// then (I - gamma dt V) out = that when gamma > 0, then the projection with
// pressure_weight dt. The boundary_flux weights of the stage's input, and
// of its solve's result (weight of V there: gamma times the stage's weight
// in u'), are the Butcher weights of the scheme.
struct StageCoefficients {
  real a, b, c, cv;      // the explicit stage (Backend::rk_stage)
  real gamma;            // the implicit solve (0: none)
  real pressure_weight;  // the projection's dt, in units of dt
  real flux_explicit;    // weight of A(in) in u'
  real flux_viscous;     // weight of V(in) in u'
  real flux_solved;      // weight of V(solve's result) in u'
};

struct TimeScheme {
  StageCoefficients stage[3];
};

// What the particles pay back (the two-way step, after the first
// projection) enters stages 2 and 3 like a body force, with A's weights:
// 2/3 * 1/4 + 2/3 = 5/6 of it reaches u'. Paid 6/5 times, it weighs 1.
constexpr real kBasePayback = real(1.2);

// The last stage's weight of u: 1 - 2/3 in float, so that its weights add
// up to 1 exactly. real(1.0/3) + real(2.0/3) is 1 + 3e-8: a bias every step
// that grew the energy of an inviscid flow by 6e-8 a step and set a floor
// of about 1e-4 under the temporal error of a 2560-step run.
constexpr real kThird = real(1) - real(2.0 / 3);

inline TimeScheme time_scheme(bool implicit_viscosity) {
  TimeScheme s{};
  if (!implicit_viscosity) {
    s.stage[0] = {0, 1, 1, 1, 0, 1, real(1.0 / 6), real(1.0 / 6), 0};
    s.stage[1] = {real(0.75), real(0.25), real(0.25), real(0.25), 0, real(0.25), real(1.0 / 6), real(1.0 / 6), 0};
    s.stage[2] = {kThird, real(2.0 / 3), real(2.0 / 3), real(2.0 / 3), 0, real(2.0 / 3), real(2.0 / 3),
                  real(2.0 / 3), 0};
    return s;
  }
  // e = (1/2, -1, 0), g = (1/2, 5/4, 2/3); in u' (through the later stages'
  // b): V(u) 1/2 * 1/6, V(U1*) 1/2 * 1/6, V(U1) -1 * 2/3, V(U2*) 5/4 * 2/3,
  // V(u'*) 2/3: sum 1.
  s.stage[0] = {0, 1, 1, real(0.5), real(0.5), 1, real(1.0 / 6), real(1.0 / 12), real(1.0 / 12)};
  s.stage[1] = {real(0.75), real(0.25), real(0.25), real(-1.0), real(1.25), real(0.25), real(1.0 / 6),
                real(-2.0 / 3), real(5.0 / 6)};
  s.stage[2] = {kThird, real(2.0 / 3), real(2.0 / 3), 0, real(2.0 / 3), real(2.0 / 3), real(2.0 / 3), 0,
                real(2.0 / 3)};
  return s;
}

}  // namespace sim
