// The implicit viscous solve of a stage (sim/model/time_scheme.hpp):
// (I - gamma dt nu lap) x = b for both velocity components, by Chebyshev
// iteration over the backend's passes (Backend::helmholtz_start,
// chebyshev_iteration, helmholtz_finish; the physics in
// sim/model/fluid_physics.hpp), so every backend runs the same iterates.
#pragma once
#include "sim/model/backend.hpp"

namespace sim {

struct ViscousStats {
  int iterations = 0;
  double relative = 0;  // ||b - A x|| / ||b|| after the solve (0 when b = 0)
  bool converged = true;
};

// The iteration count: enough that the bound ||r_K|| <= ||r_0|| / T_K(sigma)
// reaches tolerance ||b||, from the measured initial residual of x = b.
SIM_HD ChebyshevPlan viscous_plan(double g, double b2, double r2, double tolerance, const Constants& k) {
  if (!(b2 > 0.0)) return ChebyshevPlan{};
  return chebyshev_plan(g, k, sqrt(r2 / b2) / tolerance);
}

// A solve is converged at tolerance, with the float32 floor of the
// iterates as slack: the bound holds in exact arithmetic.
constexpr double kViscousSlack = 4.0;

// Solves in place in `f` (b in, x out, halo filled); g = gamma dt nu from
// the backend's constants `k`.
ViscousStats solve_viscous(Backend& b, VelocityField f, real gamma, double tolerance, const Constants& k);

}  // namespace sim
