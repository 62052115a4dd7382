// SPDX-License-Identifier: MIT
// What the direct transform solve of the pressure Poisson equation needs to
// know about the operator, shared by the CPU (FFTW) and CUDA (cuFFT) solvers.
//
// Without obstacles every face coefficient of level 0 is the same per axis
// (cx = 1/dx^2, cy = 1/dy^2 as float), and each axis has one ghost rule on
// both sides, so A = Ax (x) I + I (x) Ay with 1-D operators
//   (Ax phi)_i = cx (phi_{i-1} - 2 phi_i + phi_{i+1}),  ghosts by the rule,
// and A is diagonal in the product of the 1-D eigenbases:
//   periodic  (wrap)    DFT,       lambda_k = -4 c sin^2(pi k / n)
//   Neumann   (copy)    DCT-II,    lambda_k = -4 c sin^2(pi k / (2 n)),     basis cos(pi k (i + 1/2) / n)
//   Dirichlet (negate)  DST-II,    lambda_k = -4 c sin^2(pi (k + 1) / (2 n)), basis sin(pi (k + 1) (i + 1/2) / n)
// for k in [0, n). The eigenvalue of mode (kx, ky) is lambda_kx + lambda_ky;
// it is 0 only for the constant mode of a singular operator, whose
// coefficient is set to 0 (that removes the mean of the right-hand side and
// gives the mean-free solution).
#pragma once
#include <string>

#include "sim/model/poisson.hpp"

namespace sim {

enum class FftAxis : int { periodic = 0, neumann = 1, dirichlet = 2 };

struct FftProblem {
  int nx = 0, ny = 0, pitch = 0;  // level 0 shape (the Grid's)
  FftAxis ax = FftAxis::periodic, ay = FftAxis::periodic;
  double cx = 0, cy = 0;          // the float coefficients of level 0, promoted
  bool singular = true;
  GhostRule ghost[4] = {GhostRule::copy, GhostRule::copy, GhostRule::copy, GhostRule::copy};
};

// The problem of level 0 of `h`. Throws std::invalid_argument when the
// transform solve does not apply (an axis with different sides, or face
// coefficients that are not uniform, as next to an obstacle).
FftProblem fft_problem(const PoissonHierarchy& h);

// lambda_k of one axis of n cells with coefficient c (table above), float64.
double fft_axis_eigenvalue(FftAxis a, int k, int n, double c);

}  // namespace sim
