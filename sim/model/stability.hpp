// SPDX-License-Identifier: MIT
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
  double end_time = 0;       // run.end_time [s]; 0 = none
  double interval = 0;       // run.snapshot_interval [s]: steps land on its multiples; 0 = none
};

struct DtChoice {
  double dt;
  bool viscous;  // the viscous limit set it
  bool capped;   // dt_max set it
};

// A step ending less than this fraction of its dt short of the end time
// would leave a sliver of a step after it (or one of rounding, as ten steps
// of 0.01 fall short of 0.1 by an ulp): it is stretched to the end instead.
// So the last step may exceed the rule's dt (a fixed time.dt too) by at most
// this fraction, once: negligible next to the explicit limits (a diffusive
// mode at the limit is amplified by |1 - 2 x 1.001| = 1.002 in that step).
constexpr double kEndSliver = 1e-3;

// The first multiple of `interval` after `time` (n interval, n an integer,
// the double product), or infinity without an interval.
SIM_HD double next_multiple(double interval, double time) {
  if (!(interval > 0)) return INFINITY;
  double n = floor(time / interval);
  double t = n * interval;
  while (t <= time) t = (n += 1.0) * interval;  // at most twice: the quotient may round either way
  return t;
}

// The next time a step must land on from `time`: the end time or the next
// multiple of the snapshot interval, the first of them (infinity: none).
SIM_HD double next_landing(const DtRule& rule, double time) {
  const double snap = next_multiple(rule.interval, time);
  return rule.end_time > 0 && rule.end_time < snap ? rule.end_time : snap;
}

// dt = min(cfl min(1/rate, viscous limit), dt_max), rate the larger of the
// field's CFL rate (max |u|/dx + |v|/dy) and the boundaries'; or the fixed dt.
// With an end time or a snapshot interval, for a step from `time`: the time
// left to the next landing (next_landing) where it is less than the dt (or
// exceeds it by less than kEndSliver of it), so the step lands on it
// (clock_after) and none is a sliver. 0 or less only from a clock already at
// the end, which no step may start from (Simulation::step).
SIM_HD DtChoice choose_dt(const DtRule& rule, double field_rate, double time) {
  DtChoice c{rule.fixed_dt, false, false};
  if (!(rule.fixed_dt > 0)) {
    const double rate = field_rate < rule.boundary_rate ? rule.boundary_rate : field_rate;
    const double adv = rate > 0 ? 1.0 / rate : INFINITY;
    const double visc = rule.viscous_limit;
    c.viscous = visc < adv && rule.cfl * visc < rule.dt_max;
    const double limit = rule.cfl * (visc < adv ? visc : adv);
    c.capped = rule.dt_max < limit;
    c.dt = c.capped ? rule.dt_max : limit;
  }
  const double land = next_landing(rule, time);
  if (land < INFINITY) {
    const double left = land - time;
    if (left < c.dt * (1.0 + kEndSliver)) c.dt = left;
  }
  return c;
}

// The clock after a step of `dt` from `time`: the landing time itself after
// the step choose_dt cut to reach it (time + (land - time) may round off it).
SIM_HD double clock_after(const DtRule& rule, double time, double dt) {
  const double land = next_landing(rule, time);
  return land < INFINITY && dt >= land - time ? land : time + dt;
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
