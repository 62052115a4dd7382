// SPDX-License-Identifier: MIT
// The passes of a transform solve by dense 1-D eigenbases
// (sim/model/dense_basis.hpp), written once for the device's kernels
// (cuda/dense_transform.cuh) and the host, which runs them serially to check
// the kernels' index and sign arithmetic against the FFT solvers
// (tests/dense_passes_test.cpp):
//   rows:    t(k, j) = sum_i Qx(i, k) b(i, j)                    a block a row j
//   columns: s(k, m) = sum_j Qy(j, m) t(k, j) / D(k, m),
//            t(k, j) = sum_m Qy(j, m) s(k, m)                    a block a column k
//   rows:    x(i, j) = sum_k Qx(i, k) t(k, j)                    a block an output row
// t is column-major (k * ny + j). Each function is one phase of one block,
// between the block's barriers; its threads split the phase's loop (first,
// stride: the thread index and count; on the host 0 and 1). The ends are the
// callers' functors: Load (b(i, j)), Divide (value, lambda_x + lambda_y), and
// Store (the output rows and columns, each with its source row or column and
// sign, and where a value goes).
#pragma once
#include <cmath>

#include "sim/model/constants.hpp"
#include "sim/model/poisson.hpp"
#include "sim/model/types.hpp"

namespace sim {

struct DenseAxisView {
  const double* q;    // n x n, q[i * n + k]
  const double* lam;  // eigenvalue of mode k
  int n;
};

// sum_i a[i] b[i * step], in order.
SIM_HD double dense_dot(const double* a, const double* b, int n, int step) {
  double acc = 0.0;
#if defined(__CUDA_ARCH__)
#pragma unroll 8
#endif
  for (int i = 0; i < n; ++i) acc = fma(a[i], b[static_cast<long long>(i) * step], acc);
  return acc;
}

// Rows forward, block j: b's row into `row`, then t(k, j).
template <class Load>
SIM_HD void dense_load_row(const Load& load, int j, int n, double* row, int first, int stride) {
  for (int i = first; i < n; i += stride) row[i] = load(i, j);
}
SIM_HD void dense_forward_row(const double* row, DenseAxisView x, int j, int ny, double* t, int first, int stride) {
  for (int k = first; k < x.n; k += stride) t[static_cast<long long>(k) * ny + j] = dense_dot(row, x.q + k, x.n, x.n);
}

// Columns, block k: column k of t into `col`; its spectrum divided into
// `spec`; back into t.
SIM_HD void dense_load_column(const double* t, int k, int ny, double* col, int first, int stride) {
  for (int j = first; j < ny; j += stride) col[j] = t[static_cast<long long>(k) * ny + j];
}
template <class Divide>
SIM_HD void dense_column_spectrum(const double* col, DenseAxisView x, DenseAxisView y, int k, const Divide& divide,
                                  double* spec, int first, int stride) {
  const double lx = x.lam[k];
  for (int m = first; m < y.n; m += stride) spec[m] = divide(dense_dot(col, y.q + m, y.n, y.n), lx + y.lam[m]);
}
SIM_HD void dense_column_back(const double* spec, DenseAxisView y, int k, double* t, int first, int stride) {
  for (int j = first; j < y.n; j += stride)
    t[static_cast<long long>(k) * y.n + j] = dense_dot(spec, y.q + static_cast<long long>(j) * y.n, y.n, 1);
}

// Rows back, block r of store.rows(): the coefficients of its source row
// into `coef` (returns the row's sign), then each output column's value.
template <class Store>
SIM_HD double dense_load_coefficients(const Store& store, int r, DenseAxisView x, int ny, const double* t,
                                      double* coef, int first, int stride) {
  double sign = 1.0;
  const int j = store.row(r, sign);
  for (int k = first; k < x.n; k += stride) coef[k] = t[static_cast<long long>(k) * ny + j];
  return sign;
}
template <class Store>
SIM_HD void dense_inverse_row(const Store& store, int r, double row_sign, DenseAxisView x, const double* coef,
                              int first, int stride) {
  const int cols = store.cols();
  for (int c = first; c < cols; c += stride) {
    double sign = row_sign;
    const int i = store.col(c, sign);
    store.put(r, c, sign * dense_dot(coef, x.q + static_cast<long long>(i) * x.n, x.n, 1));
  }
}

// ---- the pressure's ends (the transform Poisson solve) ----

// The interior cell a halo cell copies, and the sign: the ghost rules of
// sim/model/poisson.hpp (copy, negate, wrap), i in [-1, n].
SIM_HD int ghost_source(int i, int n, GhostRule lo, GhostRule hi, double& sign) {
  if (i < 0) {
    if (lo == GhostRule::wrap) return n - 1;
    if (lo == GhostRule::negate) sign = -sign;
    return 0;
  }
  if (i >= n) {
    if (hi == GhostRule::wrap) return 0;
    if (hi == GhostRule::negate) sign = -sign;
    return n - 1;
  }
  return i;
}

// b from the float rhs in the grid's layout.
struct DenseLoadRhs {
  const real* rhs;
  int pitch;
  SIM_HD double operator()(int i, int j) const { return static_cast<double>(rhs[(i + 1) + (j + 1) * pitch]); }
};
// By the eigenvalue; the constant mode of a singular operator (0) to 0.
struct DensePoissonDivide {
  SIM_HD double operator()(double v, double lam) const { return lam != 0.0 ? v / lam : 0.0; }
};
// x and phi = (float) x on cells and halo: nx + 2 columns by ny + 2 rows,
// each halo value its ghost rule's source with its sign (corners compose
// both axes, as filling the x sides and then the y sides does).
struct DenseStoreHalo {
  double* x;
  real* phi;
  int nx, ny, pitch;
  GhostRule ghost[4];
  SIM_HD int rows() const { return ny + 2; }
  SIM_HD int row(int r, double& sign) const { return ghost_source(r - 1, ny, ghost[kBottom], ghost[kTop], sign); }
  SIM_HD int cols() const { return nx + 2; }
  SIM_HD int col(int c, double& sign) const { return ghost_source(c - 1, nx, ghost[kLeft], ghost[kRight], sign); }
  SIM_HD void put(int r, int c, double v) const {
    const int q = c + r * pitch;
    x[q] = v;
    phi[q] = static_cast<real>(v);
  }
};

// ---- the viscous step's ends (the transform Helmholtz correction) ----

SIM_HD double dense_g(real g, const real* g_dev) { return static_cast<double>(g_dev != nullptr ? *g_dev : g); }

// r = b - (x - g lap x) at unknown (mx, my) in float64, the unknowns from
// (fx, fy) in the grid's layout.
struct DenseLoadResidual {
  const real* b;
  const real* x;
  int pitch, fx, fy;
  double cx, cy;
  real g;
  const real* g_dev;
  SIM_HD double operator()(int mx, int my) const {
    const int c = (fx + mx + 1) + (fy + my + 1) * pitch;
    const double xc = x[c];
    const double lap = (static_cast<double>(x[c - 1]) - 2.0 * xc + x[c + 1]) * cx +
                       (static_cast<double>(x[c - pitch]) - 2.0 * xc + x[c + pitch]) * cy;
    return static_cast<double>(b[c]) - (xc - dense_g(g, g_dev) * lap);
  }
};
// By 1 - g lambda.
struct DenseHelmholtzDivide {
  real g;
  const real* g_dev;
  SIM_HD double operator()(double v, double lam) const { return v / (1.0 - dense_g(g, g_dev) * lam); }
};
// x += e at the nx x ny unknowns.
struct DenseCorrect {
  real* x;
  int pitch, fx, fy, nx, ny;
  SIM_HD int rows() const { return ny; }
  SIM_HD int row(int r, double&) const { return r; }
  SIM_HD int cols() const { return nx; }
  SIM_HD int col(int c, double&) const { return c; }
  SIM_HD void put(int r, int c, double e) const {
    const int q = (fx + c + 1) + (fy + r + 1) * pitch;
    x[q] = static_cast<real>(static_cast<double>(x[q]) + e);
  }
};

// A whole solve on the host, serially (the device's three launches, one
// block after another): the check of the passes above.
template <class Load, class Divide, class Store>
void dense_solve_host(DenseAxisView x, DenseAxisView y, const Load& load, const Divide& divide, const Store& store,
                      double* t, double* scratch) {
  for (int j = 0; j < y.n; ++j) {
    dense_load_row(load, j, x.n, scratch, 0, 1);
    dense_forward_row(scratch, x, j, y.n, t, 0, 1);
  }
  for (int k = 0; k < x.n; ++k) {
    dense_load_column(t, k, y.n, scratch, 0, 1);
    dense_column_spectrum(scratch, x, y, k, divide, scratch + y.n, 0, 1);
    dense_column_back(scratch + y.n, y, k, t, 0, 1);
  }
  for (int r = 0; r < store.rows(); ++r) {
    const double sign = dense_load_coefficients(store, r, x, y.n, t, scratch, 0, 1);
    dense_inverse_row(store, r, sign, x, scratch, 0, 1);
  }
}

}  // namespace sim
