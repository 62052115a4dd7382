// Explicit time-step limits of the scheme (Heun's method, SSP-RK2, for
// advection and diffusion: the same real-axis limit as forward Euler). Used by config validation (fixed dt) and by the
// adaptive step, so the two cannot disagree.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>

namespace sim {

// Viscous limit of explicit diffusion on a 2D grid: dt <= 1 / (2 nu (1/dx^2 + 1/dy^2)).
inline double viscous_dt_limit(double nu, double dx, double dy) {
  if (nu <= 0.0) return std::numeric_limits<double>::infinity();
  return 1.0 / (2.0 * nu * (1.0 / (dx * dx) + 1.0 / (dy * dy)));
}

// Advective (CFL = 1) limit: dt <= 1 / (|u|/dx + |v|/dy).
inline double advective_dt_limit(double umax, double vmax, double dx, double dy) {
  const double rate = std::abs(umax) / dx + std::abs(vmax) / dy;
  if (rate <= 0.0) return std::numeric_limits<double>::infinity();
  return 1.0 / rate;
}

}  // namespace sim
