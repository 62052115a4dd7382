// SPDX-License-Identifier: MIT
// The transform solves' 1-D eigenbases as dense matrices, for grids small
// enough that a product with an n x n matrix costs less than the launches of
// an FFT (the GPU's small-grid engine, cuda/dense_transform.cuh).
//
// Every axis the transform solves take (sim/model/poisson_fft.hpp,
// sim/model/helmholtz_fft.hpp) has a 1-D operator L = c (x_{i-1} - 2 x_i +
// x_{i+1}) over its n unknowns with an orthonormal eigenbasis Q: L = Q diag(l)
// Q^T. Q's columns, k in [0, n):
//   periodic   1/sqrt(n); then per frequency f = 1, 2, ...: sqrt(2/n) cos(2 pi f i / n),
//              sqrt(2/n) sin(2 pi f i / n); n even: the last (-1)^i / sqrt(n)
//              l = -4 c sin^2(pi f / n)
//   cosine     (Neumann, DCT-II)   sqrt(2/n) cos(pi k (i + 1/2) / n), k = 0: 1/sqrt(n)
//              l = -4 c sin^2(pi k / (2 n))
//   sine       (Dirichlet half a cell out, DST-II)  sqrt(2/n) sin(pi (k + 1) (i + 1/2) / n),
//              k = n - 1: sqrt(1/n) (-1)^i;  l = -4 c sin^2(pi (k + 1) / (2 n))
//   nodes      (Dirichlet at the ends' nodes, DST-I over n = cells - 1 faces)
//              sqrt(2/cells) sin(pi (k + 1) (i + 1) / cells);  l = -4 c sin^2(pi (k + 1) / (2 cells))
// A 2-D solve is then x = Qx (Qx^T b Qy ./ D) Qy^T with D the divisor of mode
// (kx, ky) (lambda_x + lambda_y, or 1 - g (lambda_x + lambda_y)).
#pragma once
#include <vector>

#include "sim/model/helmholtz_fft.hpp"
#include "sim/model/poisson_fft.hpp"

namespace sim {

enum class DenseAxis : int { periodic = 0, cosine = 1, sine = 2, nodes = 3 };

struct DenseBasis {
  int n = 0;                  // unknowns
  std::vector<double> q;      // n x n, row i (the unknown) column k (the mode): q[i * n + k]
  std::vector<double> lambda; // eigenvalue of column k
};

// The basis of `a` over n unknowns with coefficient c (for `nodes`, n = cells - 1).
DenseBasis dense_basis(DenseAxis a, int n, double c);
// The pressure's axis (FftAxis) and the viscous step's (HelmholtzLine).
DenseBasis dense_basis(FftAxis a, int n, double c);
DenseBasis dense_basis(const HelmholtzLine& l);

// The 1-D operator L of `a` over n unknowns applied to x (the test's truth):
// what lies beyond the ends by the axis's rule (wrap, copy, negate, zero).
std::vector<double> dense_axis_apply(DenseAxis a, const std::vector<double>& x, double c);

}  // namespace sim
