#include "sim/model/viscous.hpp"

#include <cmath>

namespace sim {

ViscousStats solve_viscous(Backend& b, VelocityField f, real gamma, double tolerance, const Constants& k) {
  ViscousStats s;
  const real g = gamma * k.dt * k.nu;
  if (!(g > real(0))) return s;
  const Backend::HelmholtzNorms n = b.helmholtz_start(f, g);
  const ChebyshevPlan plan = viscous_plan(g, n.b2, n.r2, tolerance, k);
  for (int it = 0; it < plan.iterations; ++it) b.chebyshev_iteration(f, g, chebyshev_weights(plan, it));
  const double r2 = b.helmholtz_finish(f, g);
  s.iterations = plan.iterations;
  const double scale = viscous_scale(n.b2, n.r2);
  s.relative = scale > 0 ? std::sqrt(r2 / scale) : 0.0;
  s.converged = viscous_converged(s.relative, g, tolerance, k);
  return s;
}

}  // namespace sim
