// SPDX-License-Identifier: MIT
#include "sim/cpu/cpu_poisson.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace sim {

namespace {
// Below this many rows a level's loops run on one thread: the fork costs
// more than the work.
constexpr int kParallelRows = 64;
}  // namespace

void CpuPoisson::setup_operator(const PoissonHierarchy& h, const real* open) {
  levels_.clear();
  for (int s = 0; s < 4; ++s) ghost_[s] = h.ghost[s];
  singular_ = h.singular;
  fluid_cells_ = h.fluid_cells;
  Level l0;
  l0.op = h.levels.at(0);
  l0.open.assign(l0.op.size(), 0);
  for (int j = 0; j < l0.op.ny; ++j)
    for (int i = 0; i < l0.op.nx; ++i) l0.open[l0.op.index(i, j)] = open[l0.op.index(i, j)] != 0;
  levels_.push_back(std::move(l0));
  const size_t n = levels_[0].op.size();
  for (auto* v : {&x_, &r_, &p_, &q_}) v->assign(n, 0.0);
  row_sum_.assign(static_cast<size_t>(levels_[0].op.ny), 0.0);
  plan_split();
}

// Each level's rows per rank and the rows copied in (sim/ranks/level_rows.hpp).
void CpuPoisson::plan_split() {
  std::vector<int> level_nx, level_ny;
  for (const Level& L : levels_) {
    level_nx.push_back(L.op.nx);
    level_ny.push_back(L.op.ny);
  }
  // The CPU replicates only by the row rule unless told: its ranks' messages
  // cost little next to its sweeps.
  std::vector<LevelRows> rows = split_levels(ranks_->slabs(), level_nx, level_ny, replicated_cells_);
  for (size_t l = 0; l < levels_.size(); ++l) {
    Level& L = levels_[l];
    L.replicated = rows[l].replicated;
    L.shared = rows[l].shared;
    L.lo = rows[l].lo;
    L.hi = rows[l].hi;
    L.f_lo = rows[l].f_lo;
    L.f_hi = rows[l].f_hi;
    L.halo = std::move(rows[l].halo);
    L.below = std::move(rows[l].below);
    L.parents = std::move(rows[l].parents);
    L.gather = std::move(rows[l].gather);
  }
}

void CpuPoisson::setup(const PoissonHierarchy& h, const real* open) {
  setup_operator(h, open);
  for (size_t l = 1; l < h.levels.size(); ++l) {
    const Level& fine = levels_.back();
    Level c;
    c.op = h.levels[l];
    c.open.assign(c.op.size(), 0);
    // A coarse cell holds fluid where any of its (up to four) children does.
    for (int j = 0; j < fine.op.ny; ++j)
      for (int i = 0; i < fine.op.nx; ++i)
        if (fine.open[fine.op.index(i, j)]) c.open[c.op.index(i / 2, j / 2)] = 1;
    levels_.push_back(std::move(c));
  }
  for (Level& l : levels_) {
    l.e.assign(l.op.size(), real(0));
    l.f.assign(l.op.size(), real(0));
  }
  plan_split();
  for (Level& l : levels_)
    if (l.shared) l.res.assign(l.op.size(), real(0));
}

template <class T>
void CpuPoisson::fill_halo(int level, T* a) {
  const Level& V = levels_[level];
  const PoissonLevel& L = V.op;
  const GhostRule* ghost = ghost_;
  const int lo = V.lo, hi = V.hi;
#pragma omp parallel if (L.ny >= kParallelRows)
  {
#pragma omp for schedule(static)
    for (int j = lo; j < hi; ++j) poisson_halo_x(a, j, L.nx, L.pitch, ghost);
#pragma omp for schedule(static)
    for (int i = -1; i <= L.nx; ++i) poisson_halo_y(a, i, L.ny, L.pitch, ghost);
  }
  ranks_->copy_rows(a, L.pitch, V.halo);
}

// Rows summed in parallel, then over rows in order: the same sum for any
// thread count.
// Split: this rank's rows of level 0, then all ranks' rows in order.
template <class RowFn>
double CpuPoisson::sum_rows(int, RowFn row) {
  const int lo = levels_[0].lo, n = levels_[0].hi - lo;
  if (static_cast<int>(row_sum_.size()) < n) row_sum_.resize(n);
#pragma omp parallel for schedule(static)
  for (int j = 0; j < n; ++j) row_sum_[j] = row(lo + j);
  return ranks_->sum_rows(row_sum_.data(), n);
}

double CpuPoisson::mean_rhs(const real* rhs) {
  if (!singular_ || fluid_cells_ == 0) return 0.0;
  const Level& L = levels_[0];
  const double s = sum_rows(L.op.ny, [&](int j) {
    double acc = 0;
    for (int i = 0; i < L.op.nx; ++i) {
      const int c = L.op.index(i, j);
      if (L.open[c]) acc += rhs[c];
    }
    return acc;
  });
  return s / static_cast<double>(fluid_cells_);
}

// x = 0; r = b, where b is rhs less its mean when A is singular (a
// compatible right-hand side: the solve then converges in the range of A).
double CpuPoisson::pcg_start() {
  const real* rhs = rhs_;
  const Level& L = levels_[0];
  const double mean = mean_rhs(rhs);
  std::fill(x_.begin(), x_.end(), 0.0);
  std::fill(r_.begin(), r_.end(), 0.0);
  return std::sqrt(sum_rows(L.op.ny, [&](int j) {
    double acc = 0;
    for (int i = 0; i < L.op.nx; ++i) {
      const int c = L.op.index(i, j);
      const double b = L.open[c] ? rhs[c] - mean : 0.0;
      r_[c] = b;
      acc += b * b;
    }
    return acc;
  }));
}

// f_0 = r rounded to float32, e_0 = 0.
void CpuPoisson::mg_load_residual() {
  Level& L = levels_[0];
  real* f = L.f.data();
  real* e = L.e.data();
  const int P = L.op.pitch;
  const int j0 = std::max(-1, L.lo - 1), j1 = std::min(L.op.ny, L.hi);  // alone: -1 .. ny
#pragma omp parallel for schedule(static)
  for (int j = j0; j <= j1; ++j)
    for (int c = (j + 1) * P; c < (j + 2) * P; ++c) {
      f[c] = static_cast<real>(r_[c]);
      e[c] = real(0);
    }
}

// One colour of red-black Gauss-Seidel on A_l e_l = f_l: the cells of one
// colour depend only on the other, so the update is order-independent. One
// parallel region: each row's x halo right after the row, the y halo after
// the barrier (as fill_halo).
void CpuPoisson::mg_smooth(int level, int color) {
  Level& L = levels_[level];
  const PoissonLevel& o = L.op;
  const int P = o.pitch, nx = o.nx, ny = o.ny;
  real* e = L.e.data();
  const real* f = L.f.data();
  const real* cx = o.cx.data();
  const real* cy = o.cy.data();
  const GhostRule* ghost = ghost_;
  const int lo = L.lo, hi = L.hi;
#pragma omp parallel if (ny >= kParallelRows)
  {
#pragma omp for schedule(static)
    for (int j = lo; j < hi; ++j) {
      for (int i = (j + color) & 1; i < nx; i += 2) {
        const int c = o.index(i, j);
        e[c] = poisson_relax_point(e[c - 1], e[c + 1], e[c - P], e[c + P], f[c], cx[c], cx[c + 1], cy[c], cy[c + P]);
      }
      poisson_halo_x(e, j, nx, P, ghost);
    }
#pragma omp for schedule(static)
    for (int i = -1; i <= nx; ++i) poisson_halo_y(e, i, ny, P, ghost);
  }
  ranks_->copy_rows(e, P, L.halo);
}

// f_{l+1} = sum over the open children of (f_l - A_l e_l); e_{l+1} = 0.
// Split over ranks: f - A e first on this rank's fine rows (the same float
// values), the row past the slab from its owner, then this rank's coarse
// rows from those; into the first replicated level, the other ranks'
// coarse rows copied in after. A replicated fine level restricts alone.
void CpuPoisson::mg_restrict(int level) {
  Level& F = levels_[level];
  Level& C = levels_[level + 1];
  const PoissonLevel& fo = F.op;
  const int P = fo.pitch;
  const real* e = F.e.data();
  const real* f = F.f.data();
  const real* cx = fo.cx.data();
  const real* cy = fo.cy.data();
  std::fill(C.e.begin(), C.e.end(), real(0));
  auto residual = [=](int c) {
    return f[c] - poisson_apply_point(e[c], e[c - 1], e[c + 1], e[c - P], e[c + P], cx[c], cx[c + 1], cy[c], cy[c + P]);
  };
  if (!F.shared) {
    restrict_rows(F, C, residual);
    return;
  }
  real* res = F.res.data();
#pragma omp parallel for schedule(static) if (fo.ny >= kParallelRows)
  for (int j = F.lo; j < F.hi; ++j)
    for (int i = 0; i < fo.nx; ++i) {
      const int c = fo.index(i, j);
      res[c] = F.open[c] ? residual(c) : real(0);
    }
  ranks_->copy_rows(res, P, F.below);
  restrict_rows(F, C, [res](int c) { return res[c]; });
  ranks_->copy_rows(C.f.data(), C.op.pitch, C.gather);
}

// C.f over the coarse rows the rank restricts (f_lo .. f_hi): each cell the sum of child(c) over its
// open children, in the order (0, 0), (1, 0), (0, 1), (1, 1).
template <class Child>
void CpuPoisson::restrict_rows(const Level& F, Level& C, Child child) {
  const PoissonLevel& fo = F.op;
  const PoissonLevel& co = C.op;
#pragma omp parallel for schedule(static) if (co.ny >= kParallelRows / 2)
  for (int J = C.f_lo; J < C.f_hi; ++J)
    for (int I = 0; I < co.nx; ++I) {
      real s = 0;
      for (int dj = 0; dj < 2; ++dj)
        for (int di = 0; di < 2; ++di) {
          const int i = 2 * I + di, j = 2 * J + dj;
          if (i >= fo.nx || j >= fo.ny) continue;
          const int c = fo.index(i, j);
          if (!F.open[c]) continue;
          s += child(c);
        }
      C.f[co.index(I, J)] = s;
    }
}

// e_l += e_{l+1} of the parent on open cells (piecewise-constant prolongation).
void CpuPoisson::mg_prolong(int level) {
  Level& F = levels_[level];
  Level& C = levels_[level + 1];
  const PoissonLevel& fo = F.op;
  const PoissonLevel& co = C.op;
  ranks_->copy_rows(C.e.data(), co.pitch, C.parents);  // the parents of this rank's rows
  real* e = F.e.data();
  const real* E = C.e.data();
#pragma omp parallel for schedule(static) if (fo.ny >= kParallelRows)
  for (int j = F.lo; j < F.hi; ++j)
    for (int i = 0; i < fo.nx; ++i) {
      const int c = fo.index(i, j);
      if (F.open[c]) e[c] += E[co.index(i / 2, j / 2)];
    }
  fill_halo(level, e);
}

double CpuPoisson::pcg_dot_rz() {
  const Level& L = levels_[0];
  const real* e = L.e.data();
  return sum_rows(L.op.ny, [&](int j) {
    double acc = 0;
    for (int i = 0; i < L.op.nx; ++i) {
      const int c = L.op.index(i, j);
      acc += r_[c] * static_cast<double>(e[c]);
    }
    return acc;
  });
}

// p = z + beta p with z = e_0 the preconditioned residual.
void CpuPoisson::pcg_direction(double beta) {
  const Level& L = levels_[0];
  const real* e = L.e.data();
#pragma omp parallel for schedule(static)
  for (int j = L.lo; j < L.hi; ++j)
    for (int i = 0; i < L.op.nx; ++i) {
      const int c = L.op.index(i, j);
      p_[c] = beta == 0.0 ? static_cast<double>(e[c]) : static_cast<double>(e[c]) + beta * p_[c];
    }
  fill_halo(0, p_.data());
}

// q = A p in float64; returns <p, q>.
double CpuPoisson::pcg_apply() {
  const PoissonLevel& o = levels_[0].op;
  const int P = o.pitch;
  const double* p = p_.data();
  const real* cx = o.cx.data();
  const real* cy = o.cy.data();
  return sum_rows(o.ny, [&](int j) {
    double acc = 0;
    for (int i = 0; i < o.nx; ++i) {
      const int c = o.index(i, j);
      const double q = poisson_apply_point(p[c], p[c - 1], p[c + 1], p[c - P], p[c + P], cx[c], cx[c + 1], cy[c], cy[c + P]);
      q_[c] = q;
      acc += p[c] * q;
    }
    return acc;
  });
}

// x += alpha p, r -= alpha q; returns ||r||.
double CpuPoisson::pcg_update(double alpha) {
  const PoissonLevel& o = levels_[0].op;
  return std::sqrt(sum_rows(o.ny, [&](int j) {
    double acc = 0;
    for (int i = 0; i < o.nx; ++i) {
      const int c = o.index(i, j);
      x_[c] += alpha * p_[c];
      const double r = r_[c] - alpha * q_[c];
      r_[c] = r;
      acc += r * r;
    }
    return acc;
  }));
}

// ||b - A x|| recomputed in float64 from x (not the recurrence's r).
double CpuPoisson::poisson_residual_norm() {
  const real* rhs = rhs_;
  const Level& L = levels_[0];
  const PoissonLevel& o = L.op;
  const int P = o.pitch;
  const double mean = mean_rhs(rhs);
  fill_halo(0, x_.data());
  const double* x = x_.data();
  const real* cx = o.cx.data();
  const real* cy = o.cy.data();
  return std::sqrt(sum_rows(o.ny, [&](int j) {
    double acc = 0;
    for (int i = 0; i < o.nx; ++i) {
      const int c = o.index(i, j);
      if (!L.open[c]) continue;
      const double r = (rhs[c] - mean) -
                       poisson_apply_point(x[c], x[c - 1], x[c + 1], x[c - P], x[c + P], cx[c], cx[c + 1], cy[c], cy[c + P]);
      acc += r * r;
    }
    return acc;
  }));
}

void CpuPoisson::pcg_finish() {
  real* phi = phi_;
  fill_halo(0, x_.data());
  const Level& L = levels_[0];
  const int P = L.op.pitch;
  // alone: every storage row of x (rows -1 .. ny); split: the rank's rows and halo rows
  const size_t c0 = static_cast<size_t>(std::max(-1, L.lo - 1) + 1) * P;
  const size_t c1 = static_cast<size_t>(std::min(L.op.ny, L.hi) + 2) * P;
#pragma omp parallel for schedule(static)
  for (size_t c = c0; c < c1; ++c) phi[c] = static_cast<real>(x_[c]);
}

}  // namespace sim
