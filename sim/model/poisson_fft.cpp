// SPDX-License-Identifier: MIT
#include "sim/model/poisson_fft.hpp"

#include <cmath>
#include <stdexcept>

namespace sim {

namespace {
FftAxis axis_of(GhostRule r) {
  switch (r) {
    case GhostRule::wrap: return FftAxis::periodic;
    case GhostRule::negate: return FftAxis::dirichlet;
    case GhostRule::copy: break;
  }
  return FftAxis::neumann;
}
}  // namespace

FftProblem fft_problem(const PoissonHierarchy& h) {
  const std::string why = fft_unsupported_reason(h, false);
  if (!why.empty()) throw std::invalid_argument("the transform solve does not apply: " + why);
  if (h.levels.empty()) throw std::invalid_argument("the transform solve needs level 0 of the Poisson hierarchy");
  const PoissonLevel& l = h.levels[0];
  FftProblem p;
  p.nx = l.nx;
  p.ny = l.ny;
  p.pitch = l.pitch;
  p.ax = axis_of(h.ghost[kLeft]);
  p.ay = axis_of(h.ghost[kBottom]);
  p.singular = h.singular;
  for (int s = 0; s < 4; ++s) p.ghost[s] = h.ghost[s];
  p.cx = l.cx[l.index(0, 0)];
  p.cy = l.cy[l.index(0, 0)];
  // The eigenvalues hold only for one coefficient per axis (no obstacle).
  for (int j = 0; j < l.ny; ++j)
    for (int i = 0; i <= l.nx; ++i)
      if (l.cx[l.index(i, j)] != l.cx[l.index(0, 0)])
        throw std::invalid_argument("the transform solve does not apply: the x face coefficients are not uniform (obstacles)");
  for (int j = 0; j <= l.ny; ++j)
    for (int i = 0; i < l.nx; ++i)
      if (l.cy[l.index(i, j)] != l.cy[l.index(0, 0)])
        throw std::invalid_argument("the transform solve does not apply: the y face coefficients are not uniform (obstacles)");
  if (!(p.cx > 0) || !(p.cy > 0))
    throw std::invalid_argument("the transform solve does not apply: a face coefficient is not positive");
  return p;
}

double fft_axis_eigenvalue(FftAxis a, int k, int n, double c) {
  const double pi = 3.14159265358979323846;
  double s = 0;
  switch (a) {
    case FftAxis::periodic: s = std::sin(pi * k / n); break;
    case FftAxis::neumann: s = std::sin(pi * k / (2.0 * n)); break;
    case FftAxis::dirichlet: s = std::sin(pi * (k + 1) / (2.0 * n)); break;
  }
  return -4.0 * c * s * s;
}

}  // namespace sim
