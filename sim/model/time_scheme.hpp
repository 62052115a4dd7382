// The time step of the fluid: an IMEX Runge-Kutta scheme with a projection
// per stage. Its explicit part (advection, body force) is the three-stage
// SSP-RK3 of Shu and Osher, stable on the imaginary axis up to |z| = sqrt(3)
// (central advection's eigenvalues lie there: the step damps them by
// |R|^2 = 1 - z^4/12 + z^6/36, it never amplifies them). The viscous term
// is either explicit in the same stages (fluid.viscous = "explicit": plain
// SSP-RK3, dt then also bounded by the viscous limit) or implicit
// (fluid.viscous = "implicit", the default), with two Helmholtz solves:
//
//   U1* = u + dt A(u),                        (I - g1 dt V) U1 = U1*,  U1 <- P U1    (dt)
//   U2  = 3/4 u + 1/4 U1 + dt (A(U1)/4 + e2 V(U1)),                    U2 <- P U2    (dt/4)
//   U3* = 1/3 u + 2/3 U2 + dt (2/3 A(U2) + e3 V(U2)),
//                                             (I - g3 dt V) u' = U3*,  u' <- P u'    (2 dt/3)
//
// A = advection + body force, V = nu lap, P the projection (its pressure
// taken with the stage's weight in brackets, so phi is the kinematic
// pressure of any stage). The weights follow from the IMEX order conditions
// with the explicit tableau fixed: second order in the coupled terms
// (c_E = c_I = (0, 1, 1/2), b = (1/6, 1/6, 2/3) for A), and L-stable for V
// alone (the middle stage's limit 3/4 - e2/g1 vanishes, so R(-inf) = 0: a
// checkerboard mode of the impulsively started cavity dies in a step where
// Crank-Nicolson would flip its sign, R = -0.98 at 100x the explicit limit).
// g1 = 3a/7, e2 = 3 g1/4, e3 = 5 g1/3, g3 = 1 - a with a the smaller root of
// 3a^2/7 - a + 1/2 = 0. For a stiff diffusive mode with advection z the step
// tends to 1.42 |z|, so the advective CFL of an implicit run stays below
// 0.7 (time.cfl's default is 0.5; the config check refuses more).
//
// A steady state (P (A + V) u = 0) passes every stage unchanged whatever
// dt is; the stages' pressure weights (1, 1/4, 2/3 of dt) and the
// boundary-flux weights below follow the same bookkeeping, so the step's
// momentum exchange with walls and obstacles is exact.
#pragma once
#include <math.h>

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

// What the particles pay back into the base (the two-way step, after the
// first projection) enters u' through the base of stages 2 and 3 only
// (1/3 + 2/3 * 3/4 = 5/6 of it): paid 6/5 times, it weighs 1.
constexpr real kBasePayback = real(1.2);

// a of the implicit scheme: the smaller root of 3a^2/7 - a + 1/2 = 0.
inline double imex_a() { return (1.0 - sqrt(1.0 / 7.0)) * 7.0 / 6.0; }

inline TimeScheme time_scheme(bool implicit_viscosity) {
  TimeScheme s{};
  if (!implicit_viscosity) {
    s.stage[0] = {0, 1, 1, 1, 0, 1, real(1.0 / 6), real(1.0 / 6), 0};
    s.stage[1] = {real(0.75), real(0.25), real(0.25), real(0.25), 0, real(0.25), real(1.0 / 6), real(1.0 / 6), 0};
    s.stage[2] = {real(1.0 / 3), real(2.0 / 3), real(2.0 / 3), real(2.0 / 3), 0, real(2.0 / 3), real(2.0 / 3),
                  real(2.0 / 3), 0};
    return s;
  }
  const double a = imex_a();
  const double g1 = 3 * a / 7, e2 = 0.75 * g1, e3 = 5 * g1 / 3, g3 = 1 - a;
  s.stage[0] = {0, 1, 1, 0, real(g1), 1, real(1.0 / 6), 0, real(g1 / 6)};
  s.stage[1] = {real(0.75), real(0.25), real(0.25), real(e2), 0, real(0.25), real(1.0 / 6), real(2 * e2 / 3), 0};
  s.stage[2] = {real(1.0 / 3), real(2.0 / 3), real(2.0 / 3), real(e3), real(g3), real(2.0 / 3), real(2.0 / 3),
                real(e3), real(g3)};
  return s;
}

}  // namespace sim
