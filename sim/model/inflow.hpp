// SPDX-License-Identifier: MIT
// The normal velocity of an inflow side as a function of the place along the
// side, written once: the halo fill of both backends (sim/model/halo.hpp)
// sets the side's faces from it, and everything else (the pressure's
// right-hand side, the transform Helmholtz solve's boundary values, the
// boundary momentum flux, the coupled step's held faces) reads those faces.
// Particles injected at an inflow take the same profile (sim/model/injection.hpp).
#pragma once
#include <math.h>

#include "sim/model/strategies.hpp"
#include "sim/model/types.hpp"

namespace sim {

// The profile's value over its mean at xi = s / L in [0, 1] along the side:
// 1 (uniform), or 6 xi (1 - xi) (parabolic: zero at both ends, 1.5 at the middle).
SIM_HD real inflow_shape(int profile, real xi) {
  if (static_cast<InflowProfile>(profile) != InflowProfile::parabolic) return real(1);
  return real(6) * xi * (real(1) - xi);
}

// The normal speed of face f of the n faces along an inflow side whose mean
// normal speed is `speed`. uniform: `speed`. parabolic: the exact mean of
// 6 U xi (1 - xi) over the face, xi in [f, f + 1] / n,
//
//   U (3 m (2n - m) - 1) / (2 n^2),   m = 2 f + 1
//
// (the midpoint value less U / (2 n^2), the curvature's share), not its value
// at the face centre: summed over the n faces the bracket is 2 n^3 exactly,
// so the side's discrete volume flux, sum_f speed_f L / n, is U L exactly
// (each face then rounded once to float32), the same flux a uniform inflow of
// speed U brings. The integers are exact in double (m (2n - m) <= n^2 < 2^53).
// Faces past the side's ends (the halo's corners) mirror the ones inside,
// as a no-slip wall beside the inflow mirrors its tangential velocity.
SIM_HD real inflow_face_speed(int profile, real speed, int f, int n) {
  if (static_cast<InflowProfile>(profile) != InflowProfile::parabolic) return speed;
  double sign = 1;
  if (f < 0) f = -1 - f, sign = -1;
  if (f >= n) f = 2 * n - 1 - f, sign = -sign;
  const double m = 2.0 * f + 1.0, nn = n;
  return static_cast<real>(sign * static_cast<double>(speed) * (3.0 * m * (2.0 * nn - m) - 1.0) / (2.0 * nn * nn));
}

// Draws xi in [a, b] from the density proportional to inflow_shape, given a
// uniform r in [0, 1): uniform for a uniform profile; for a parabolic one the
// inverse of its cumulative 3 xi^2 - 2 xi^3 (a smoothstep, whose inverse is
// 1/2 - sin(asin(1 - 2c) / 3)), so injected particles cross the side as the
// volume flux does.
SIM_HD real inflow_draw(int profile, real a, real b, real r) {
  if (static_cast<InflowProfile>(profile) != InflowProfile::parabolic) return a + (b - a) * r;
  auto cdf = [](real x) { return x * x * (real(3) - real(2) * x); };
  const real c = cdf(a) + (cdf(b) - cdf(a)) * r;
  const real x = real(0.5) - sinf(asinf(fminf(fmaxf(real(1) - real(2) * c, real(-1)), real(1))) / real(3));
  return fminf(fmaxf(x, a), b);
}

}  // namespace sim
