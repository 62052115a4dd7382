// SPDX-License-Identifier: MIT
#include "sim/model/viscous.hpp"

#include <cmath>
#include <stdexcept>

#include "sim/model/helmholtz_fft.hpp"

namespace sim {

bool viscous_takes_transform(const Config& cfg, const Constants& k, bool ranks) {
  if (cfg.viscous_solver == ViscousSolver::chebyshev) return false;
  const std::string why = helmholtz_transform_refusal(k, ranks);
  if (why.empty()) return true;
  if (cfg.viscous_solver == ViscousSolver::transform)
    throw std::invalid_argument("fluid.viscous_solver = \"transform\": the transform solve does not apply: " + why +
                                " (auto or chebyshev solves it iteratively)");
  return false;
}

ViscousStats solve_viscous(Backend& b, VelocityField f, real gamma, double tolerance, const Constants& k) {
  ViscousStats s;
  const real g = gamma * k.dt * k.nu;
  if (!(g > real(0))) return s;
  const Backend::HelmholtzNorms n = b.helmholtz_start(f, g);
  if (b.viscous_transform()) {
    b.helmholtz_correct(f, g);
    s.iterations = 1;
  } else {
    const ChebyshevPlan plan = viscous_plan(g, n.b2, n.r2, tolerance, k);
    for (int it = 0; it < plan.iterations; ++it) b.chebyshev_iteration(f, g, chebyshev_weights(plan, it));
    s.iterations = plan.iterations;
  }
  const double r2 = b.helmholtz_finish(f, g);
  const double scale = viscous_scale(n.b2, n.r2);
  s.relative = scale > 0 ? std::sqrt(r2 / scale) : 0.0;
  s.converged = viscous_converged(s.relative, g, tolerance, k);
  return s;
}

}  // namespace sim
