// SPDX-License-Identifier: MIT
// The implicit viscous solve of a stage (sim/model/time_scheme.hpp):
// (I - gamma dt nu lap) x = b for both velocity components, by the
// transform solve where the domain allows it (one defect correction,
// sim/model/helmholtz_fft.hpp) or by Chebyshev iteration, over the
// backend's passes (Backend::helmholtz_start, helmholtz_correct or
// chebyshev_iteration, helmholtz_finish; the physics in
// sim/model/fluid_physics.hpp), so every backend runs the same iterates.
#pragma once
#include <string>

#include "sim/model/backend.hpp"
#include "sim/model/config.hpp"

namespace sim {

struct ViscousStats {
  int iterations = 0;
  double relative = 0;  // ||b - A x|| / sqrt(viscous_scale) after the solve (0 when nothing to solve)
  bool converged = true;
};

// The relative residual a solve aims at: the tolerance, or what float32
// iterates can show, about 2 eps times the operator's largest eigenvalue
// 1 + 4 g (1/dx^2 + 1/dy^2) (a residual computed from a rounded x carries
// that much), whichever is larger.
SIM_HD double viscous_tolerance(double tolerance, double g, const Constants& k) {
  const double top = 1.0 + 4.0 * g * (static_cast<double>(k.inv_dx2) + static_cast<double>(k.inv_dy2));
  const double floor = 2.4e-7 * top;
  return tolerance > floor ? tolerance : floor;
}

// What the residual is measured against: ||b||^2, or the initial
// residual's when that is larger (b = 0 under a moving lid: the boundary
// values alone drive the solve).
SIM_HD double viscous_scale(double b2, double r2) { return b2 > r2 ? b2 : r2; }

// The iteration count: enough that the bound ||r_K|| <= ||r_0|| / T_K(sigma)
// reaches tolerance sqrt(viscous_scale), from the measured initial residual
// of x = b (the error of x keeps falling below what a float32 residual can
// show). No iteration when b and the residual are both 0.
SIM_HD ChebyshevPlan viscous_plan(double g, double b2, double r2, double tolerance, const Constants& k) {
  const double scale = viscous_scale(b2, r2);
  if (!(scale > 0.0)) return ChebyshevPlan{};
  return chebyshev_plan(g, k, sqrt(r2 / scale) / tolerance);
}

// A solve is converged at viscous_tolerance, with slack for rounding: the
// bound holds in exact arithmetic.
constexpr double kViscousSlack = 4.0;
SIM_HD bool viscous_converged(double relative, double g, double tolerance, const Constants& k) {
  return relative <= kViscousSlack * viscous_tolerance(tolerance, g, k);
}

// Whether the run's implicit viscous solves take the transform solve:
// fluid.viscous_solver, and helmholtz_transform_refusal of its constants
// (`ranks`: split over more than one GPU rank; CPU ranks run it). Throws std::invalid_argument,
// naming the key and the reason, where transform is asked and does not
// apply.
bool viscous_takes_transform(const Config& cfg, const Constants& k, bool ranks);

// Solves in place in `f` (b in, x out, halo filled); g = gamma dt nu from
// the backend's constants `k`.
ViscousStats solve_viscous(Backend& b, VelocityField f, real gamma, double tolerance, const Constants& k);

}  // namespace sim
