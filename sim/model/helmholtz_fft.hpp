// SPDX-License-Identifier: MIT
// The transform solve of the implicit viscous step's Helmholtz problems
// (I - g lap) x = r, one per velocity component, shared by the CPU (FFTW)
// and CUDA (cuFFT) solvers.
//
// Without obstacles the Laplacian of a component is Lx (x) I + I (x) Ly,
// each 1-D operator c (x_{i-1} - 2 x_i + x_{i+1}) over the component's
// unknowns along that axis, with what lies beyond them fixed by the sides:
//   periodic sides              DFT over n unknowns       lambda_k = -4 c sin^2(pi k / n)
//   normal component, closed    DST-I over n - 1 faces    lambda_k = -4 c sin^2(pi (k + 1) / (2 n))
//     sides (the boundary faces hold prescribed values: Dirichlet at the nodes)
//   tangential, both sides no-slip or inflow (the ghost mirrors about the wall
//     value: Dirichlet half a cell out)  DST-II over n   lambda_k = -4 c sin^2(pi (k + 1) / (2 n))
//   tangential, both sides free-slip or outflow (the ghost copies: Neumann)
//                                DCT-II over n             lambda_k = -4 c sin^2(pi k / (2 n))
// for n cells along the axis. (I - g lap) is then diagonal in the product
// basis with eigenvalues 1 - g (lambda_kx + lambda_ky) >= 1.
//
// The prescribed values (a moving lid, an inflow) make the operator
// affine, so a solve is one defect correction with the linear part:
// x = b + (I - g lap_0)^-1 (b - A b), A the stage's operator with its
// boundary values (the residual pass of the Chebyshev solve). That is exact
// up to rounding, whatever the boundary values.
#pragma once
#include <string>

#include "sim/model/constants.hpp"

namespace sim {

enum class HelmholtzAxis : int { periodic = 0, dct2 = 1, dst2 = 2, dst1 = 3 };

// One axis of one component: its kind, the cells along it, the unknowns
// and the index (i or j) of the first, and the coefficient 1/h^2.
struct HelmholtzLine {
  HelmholtzAxis kind = HelmholtzAxis::periodic;
  int cells = 0, unknowns = 0, first = 0;
  double c = 0;
};
struct HelmholtzComponent {
  HelmholtzLine x, y;
};

// Why the transform solve does not apply to the run with constants `k`
// (obstacles, GPU ranks (`ranks`; CPU ranks run it), an outflow side, sides
// whose rules differ); empty when it does.
std::string helmholtz_transform_refusal(const Constants& k, bool ranks);

// Component q (0: u, 1: v) of the run; requires an empty refusal.
HelmholtzComponent helmholtz_component(const Constants& k, int q);

// lambda of mode m of the axis, m in [0, unknowns), in the order of FFTW's
// forward transform (R2HC: position m; the sine and cosine transforms: m).
double helmholtz_eigenvalue(const HelmholtzLine& l, int m);

// What FFTW's inverse returns per axis: that many times the input.
double helmholtz_round_trip(const HelmholtzLine& l);

}  // namespace sim
