// SPDX-License-Identifier: MIT
// The dense 1-D eigenbases of the transform solves (sim/model/dense_basis.hpp)
// against the operator itself: Q^T Q = I and Q^T L Q = diag(lambda) with L
// applied by the axis's own ghost rule, for every axis kind and awkward sizes;
// the eigenvalues are the FFT solvers' (poisson_fft, helmholtz_fft) mode for
// mode; and a 2-D solve through the bases returns a manufactured solution.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/model/dense_basis.hpp"

namespace {

using sim::DenseAxis;

const DenseAxis kAxes[] = {DenseAxis::periodic, DenseAxis::cosine, DenseAxis::sine, DenseAxis::nodes};

double column_dot(const sim::DenseBasis& b, int k, const std::vector<double>& v) {
  double s = 0;
  for (int i = 0; i < b.n; ++i) s += b.q[static_cast<size_t>(i) * b.n + k] * v[static_cast<size_t>(i)];
  return s;
}

std::vector<double> column(const sim::DenseBasis& b, int k) {
  std::vector<double> v(static_cast<size_t>(b.n));
  for (int i = 0; i < b.n; ++i) v[static_cast<size_t>(i)] = b.q[static_cast<size_t>(i) * b.n + k];
  return v;
}

}  // namespace

TEST_CASE("dense basis: orthonormal eigenvectors of each axis's operator, every kind and awkward sizes") {
  const double c = 7.5;
  for (DenseAxis a : kAxes)
    for (int n : {1, 2, 3, 4, 5, 7, 8, 16, 33, 96, 127}) {
      CAPTURE(static_cast<int>(a));
      CAPTURE(n);
      const sim::DenseBasis b = sim::dense_basis(a, n, c);
      REQUIRE(b.n == n);
      double worst_ortho = 0, worst_diag = 0;
      for (int k = 0; k < n; ++k) {
        const std::vector<double> qk = column(b, k);
        const std::vector<double> lq = sim::dense_axis_apply(a, qk, c);
        for (int m = 0; m < n; ++m) {
          worst_ortho = std::max(worst_ortho, std::abs(column_dot(b, m, qk) - (m == k ? 1.0 : 0.0)));
          worst_diag = std::max(worst_diag, std::abs(column_dot(b, m, lq) - (m == k ? b.lambda[static_cast<size_t>(k)] : 0.0)));
        }
      }
      CHECK(worst_ortho < 1e-12);
      CHECK(worst_diag < 1e-11 * 4 * c);
    }
}

TEST_CASE("dense basis: the eigenvalues are the transform solvers' (the same modes, the same divisors)") {
  const double c = 3.0;
  for (int n : {1, 2, 5, 8, 31}) {
    CAPTURE(n);
    // cosine and sine: mode k is the FFT solvers' k
    const sim::DenseBasis neu = sim::dense_basis(sim::FftAxis::neumann, n, c);
    const sim::DenseBasis dir = sim::dense_basis(sim::FftAxis::dirichlet, n, c);
    for (int k = 0; k < n; ++k) {
      CHECK(neu.lambda[static_cast<size_t>(k)] == doctest::Approx(sim::fft_axis_eigenvalue(sim::FftAxis::neumann, k, n, c)));
      CHECK(dir.lambda[static_cast<size_t>(k)] == doctest::Approx(sim::fft_axis_eigenvalue(sim::FftAxis::dirichlet, k, n, c)));
    }
    // periodic: the same multiset as the DFT's
    const sim::DenseBasis per = sim::dense_basis(sim::FftAxis::periodic, n, c);
    std::vector<double> dft(static_cast<size_t>(n)), ours = per.lambda;
    for (int k = 0; k < n; ++k) dft[static_cast<size_t>(k)] = sim::fft_axis_eigenvalue(sim::FftAxis::periodic, k, n, c);
    std::sort(dft.begin(), dft.end());
    std::sort(ours.begin(), ours.end());
    for (int k = 0; k < n; ++k) CHECK(ours[static_cast<size_t>(k)] == doctest::Approx(dft[static_cast<size_t>(k)]));
    // the viscous step's DST-I over the faces between n + 1 cells
    sim::HelmholtzLine l;
    l.kind = sim::HelmholtzAxis::dst1;
    l.cells = n + 1;
    l.unknowns = n;
    l.c = c;
    const sim::DenseBasis nodes = sim::dense_basis(l);
    for (int k = 0; k < n; ++k) CHECK(nodes.lambda[static_cast<size_t>(k)] == doctest::Approx(sim::helmholtz_eigenvalue(l, k)));
  }
}

TEST_CASE("dense basis: a 2-D Helmholtz solve through the bases returns the manufactured solution") {
  // (I - g (Lx + Ly)) x = b over nx x ny unknowns, x* integers: b by the
  // operator, x by Qx ((Qx^T b Qy) ./ (1 - g (lx + ly))) Qy^T.
  const int nx = 13, ny = 10;
  const double g = 0.37, cx = 2.0, cy = 5.0;
  for (DenseAxis ax : kAxes)
    for (DenseAxis ay : kAxes) {
      CAPTURE(static_cast<int>(ax));
      CAPTURE(static_cast<int>(ay));
      const sim::DenseBasis bx = sim::dense_basis(ax, nx, cx), by = sim::dense_basis(ay, ny, cy);
      std::vector<double> xs(static_cast<size_t>(nx) * ny), b(xs.size());
      for (size_t q = 0; q < xs.size(); ++q) xs[q] = static_cast<double>(static_cast<int>((q * 7919u) % 23) - 11);
      // b = x - g (Lx x + Ly x), row j holds the x line
      for (int j = 0; j < ny; ++j) {
        std::vector<double> row(xs.begin() + j * nx, xs.begin() + (j + 1) * nx);
        const std::vector<double> lr = sim::dense_axis_apply(ax, row, cx);
        for (int i = 0; i < nx; ++i) b[static_cast<size_t>(j) * nx + i] = xs[static_cast<size_t>(j) * nx + i] - g * lr[static_cast<size_t>(i)];
      }
      for (int i = 0; i < nx; ++i) {
        std::vector<double> col(static_cast<size_t>(ny));
        for (int j = 0; j < ny; ++j) col[static_cast<size_t>(j)] = xs[static_cast<size_t>(j) * nx + i];
        const std::vector<double> lc = sim::dense_axis_apply(ay, col, cy);
        for (int j = 0; j < ny; ++j) b[static_cast<size_t>(j) * nx + i] -= g * lc[static_cast<size_t>(j)];
      }
      // forward: t = Qx^T per row, then Qy^T per column; divide; back
      std::vector<double> t(xs.size(), 0.0), s(xs.size(), 0.0), x(xs.size(), 0.0);
      for (int j = 0; j < ny; ++j)
        for (int k = 0; k < nx; ++k)
          for (int i = 0; i < nx; ++i) t[static_cast<size_t>(j) * nx + k] += bx.q[static_cast<size_t>(i) * nx + k] * b[static_cast<size_t>(j) * nx + i];
      for (int m = 0; m < ny; ++m)
        for (int k = 0; k < nx; ++k) {
          for (int j = 0; j < ny; ++j) s[static_cast<size_t>(m) * nx + k] += by.q[static_cast<size_t>(j) * ny + m] * t[static_cast<size_t>(j) * nx + k];
          s[static_cast<size_t>(m) * nx + k] /= 1.0 - g * (bx.lambda[static_cast<size_t>(k)] + by.lambda[static_cast<size_t>(m)]);
        }
      std::fill(t.begin(), t.end(), 0.0);
      for (int j = 0; j < ny; ++j)
        for (int k = 0; k < nx; ++k)
          for (int m = 0; m < ny; ++m) t[static_cast<size_t>(j) * nx + k] += by.q[static_cast<size_t>(j) * ny + m] * s[static_cast<size_t>(m) * nx + k];
      double worst = 0;
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          for (int k = 0; k < nx; ++k) x[static_cast<size_t>(j) * nx + i] += bx.q[static_cast<size_t>(i) * nx + k] * t[static_cast<size_t>(j) * nx + k];
          worst = std::max(worst, std::abs(x[static_cast<size_t>(j) * nx + i] - xs[static_cast<size_t>(j) * nx + i]));
        }
      CHECK(worst < 1e-11);
    }
}
