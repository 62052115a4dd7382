// Time-step limits of the scheme (sim/model/time_scheme.hpp): SSP-RK3 for
// advection (imaginary axis to sqrt(3), the CFL number below 1 keeps
// within it); explicit diffusion has forward Euler's real-axis limit
// (SSP-RK3 reaches -2.51, the limit below keeps Euler's -2 as the stages'
// own); implicit diffusion none (the step is L-stable).
// Used by config validation (fixed dt) and by the adaptive step, so the two
// cannot disagree.
#pragma once
#include <math.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sim/model/types.hpp"

namespace sim {

// How a step chooses dt: the rule of the adaptive step as data, applied by
// choose_dt on the host (Simulation::next_dt) and on the device (a step
// recorded as a graph), so both clocks take the same bits.
struct DtRule {
  double fixed_dt = 0;       // > 0: this dt every step
  double cfl = 0.5, dt_max = 0;
  double boundary_rate = 0;  // max |boundary speed| / h
  double viscous_limit = 0;  // viscous_dt_limit of the config; infinite with implicit viscosity
  double inject_rate = 0;    // particles.inject.rate [1/s]
};

struct DtChoice {
  double dt;
  bool viscous;  // the viscous limit set it
  bool capped;   // dt_max set it
};

// dt = min(cfl min(1/rate, viscous limit), dt_max), rate the larger of the
// field's CFL rate (max |u|/dx + |v|/dy) and the boundaries'; or the fixed dt.
SIM_HD DtChoice choose_dt(const DtRule& rule, double field_rate) {
  if (rule.fixed_dt > 0) return {rule.fixed_dt, false, false};
  const double rate = field_rate < rule.boundary_rate ? rule.boundary_rate : field_rate;
  const double adv = rate > 0 ? 1.0 / rate : INFINITY;
  const double visc = rule.viscous_limit;
  const bool viscous = visc < adv && rule.cfl * visc < rule.dt_max;
  const double c = rule.cfl * (visc < adv ? visc : adv);
  return {rule.dt_max < c ? rule.dt_max : c, viscous, rule.dt_max < c};
}

// The particles injected at `rate` per second between t0 and t1 (ids in
// order), into `count`; false when the count reaches 2^53, past which
// neither the double nor the count is exact (a double at or past 2^63 does
// not even convert to int64_t).
SIM_HD bool injected_between(double rate, double t0, double t1, int64_t& count) {
  count = 0;
  if (rate <= 0.0) return true;
  constexpr double kExact = 9007199254740992.0;  // 2^53
  const double a = floor(rate * t0), b = floor(rate * t1);
  if (!(b < kExact)) return false;
  count = static_cast<int64_t>(b) - static_cast<int64_t>(a);
  return true;
}

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
