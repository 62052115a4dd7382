// SPDX-License-Identifier: MIT
#include "sim/model/dense_basis.hpp"

#include <cmath>
#include <stdexcept>

namespace sim {

namespace {
constexpr double kPi = 3.14159265358979323846;

double sin2(double t) {
  const double s = std::sin(t);
  return s * s;
}
}  // namespace

DenseBasis dense_basis(DenseAxis a, int n, double c) {
  if (n < 1) throw std::invalid_argument("dense_basis: an axis needs one unknown at least");
  DenseBasis b;
  b.n = n;
  b.q.assign(static_cast<size_t>(n) * n, 0.0);
  b.lambda.assign(static_cast<size_t>(n), 0.0);
  const double dn = n;
  auto set = [&](int i, int k, double v) { b.q[static_cast<size_t>(i) * n + k] = v; };
  switch (a) {
    case DenseAxis::periodic: {
      for (int i = 0; i < n; ++i) set(i, 0, 1.0 / std::sqrt(dn));
      int k = 1;
      for (int f = 1; 2 * f < n; ++f, k += 2) {
        for (int i = 0; i < n; ++i) {
          // the angle reduced modulo 2 pi in integers: exact for every n
          const double t = 2.0 * kPi * static_cast<double>((static_cast<long long>(f) * i) % n) / dn;
          set(i, k, std::sqrt(2.0 / dn) * std::cos(t));
          set(i, k + 1, std::sqrt(2.0 / dn) * std::sin(t));
        }
        b.lambda[static_cast<size_t>(k)] = b.lambda[static_cast<size_t>(k) + 1] = -4.0 * c * sin2(kPi * f / dn);
      }
      if (n % 2 == 0) {
        for (int i = 0; i < n; ++i) set(i, n - 1, (i % 2 ? -1.0 : 1.0) / std::sqrt(dn));
        b.lambda[static_cast<size_t>(n) - 1] = -4.0 * c;
      }
      break;
    }
    case DenseAxis::cosine:
      for (int k = 0; k < n; ++k) {
        const double s = k == 0 ? std::sqrt(1.0 / dn) : std::sqrt(2.0 / dn);
        for (int i = 0; i < n; ++i) set(i, k, s * std::cos(kPi * k * (i + 0.5) / dn));
        b.lambda[static_cast<size_t>(k)] = -4.0 * c * sin2(kPi * k / (2.0 * dn));
      }
      break;
    case DenseAxis::sine:
      for (int k = 0; k < n; ++k) {
        const double s = k == n - 1 ? std::sqrt(1.0 / dn) : std::sqrt(2.0 / dn);
        for (int i = 0; i < n; ++i) set(i, k, s * std::sin(kPi * (k + 1) * (i + 0.5) / dn));
        b.lambda[static_cast<size_t>(k)] = -4.0 * c * sin2(kPi * (k + 1) / (2.0 * dn));
      }
      break;
    case DenseAxis::nodes: {
      const double cells = n + 1.0;
      for (int k = 0; k < n; ++k) {
        for (int i = 0; i < n; ++i) set(i, k, std::sqrt(2.0 / cells) * std::sin(kPi * (k + 1) * (i + 1) / cells));
        b.lambda[static_cast<size_t>(k)] = -4.0 * c * sin2(kPi * (k + 1) / (2.0 * cells));
      }
      break;
    }
  }
  return b;
}

DenseBasis dense_basis(FftAxis a, int n, double c) {
  switch (a) {
    case FftAxis::periodic: return dense_basis(DenseAxis::periodic, n, c);
    case FftAxis::neumann: return dense_basis(DenseAxis::cosine, n, c);
    case FftAxis::dirichlet: return dense_basis(DenseAxis::sine, n, c);
  }
  throw std::invalid_argument("dense_basis: unknown axis");
}

DenseBasis dense_basis(const HelmholtzLine& l) {
  switch (l.kind) {
    case HelmholtzAxis::periodic: return dense_basis(DenseAxis::periodic, l.unknowns, l.c);
    case HelmholtzAxis::dct2: return dense_basis(DenseAxis::cosine, l.unknowns, l.c);
    case HelmholtzAxis::dst2: return dense_basis(DenseAxis::sine, l.unknowns, l.c);
    case HelmholtzAxis::dst1: return dense_basis(DenseAxis::nodes, l.unknowns, l.c);
  }
  throw std::invalid_argument("dense_basis: unknown axis");
}

std::vector<double> dense_axis_apply(DenseAxis a, const std::vector<double>& x, double c) {
  const int n = static_cast<int>(x.size());
  std::vector<double> y(x.size());
  auto at = [&](int i) -> double {
    if (i >= 0 && i < n) return x[static_cast<size_t>(i)];
    const int edge = i < 0 ? 0 : n - 1;
    switch (a) {
      case DenseAxis::periodic: return x[static_cast<size_t>((i + n) % n)];
      case DenseAxis::cosine: return x[static_cast<size_t>(edge)];
      case DenseAxis::sine: return -x[static_cast<size_t>(edge)];
      case DenseAxis::nodes: return 0.0;
    }
    return 0.0;
  };
  for (int i = 0; i < n; ++i) y[static_cast<size_t>(i)] = c * (at(i - 1) - 2.0 * at(i) + at(i + 1));
  return y;
}

}  // namespace sim
