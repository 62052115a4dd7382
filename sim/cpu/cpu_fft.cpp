// SPDX-License-Identifier: MIT
#include "sim/cpu/cpu_fft.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <string>

#include "sim/cpu/fft_blocks.hpp"

namespace sim {

namespace {
constexpr int kBlock = kFftBlock;

// The FFTW planner is not thread safe; execution of a made plan is.
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

fftw_r2r_kind forward_kind(FftAxis a) {
  switch (a) {
    case FftAxis::periodic: return FFTW_R2HC;
    case FftAxis::neumann: return FFTW_REDFT10;
    case FftAxis::dirichlet: break;
  }
  return FFTW_RODFT10;
}
fftw_r2r_kind inverse_kind(FftAxis a) {
  switch (a) {
    case FftAxis::periodic: return FFTW_HC2R;
    case FftAxis::neumann: return FFTW_REDFT01;
    case FftAxis::dirichlet: break;
  }
  return FFTW_RODFT01;
}
// HC2R(R2HC(x)) = n x; REDFT01(REDFT10(x)) = RODFT01(RODFT10(x)) = 2n x.
double round_trip_factor(FftAxis a, int n) { return a == FftAxis::periodic ? n : 2.0 * n; }

// The eigenvalue of output position k of the forward transform. R2HC puts
// the cosine part of wavenumber k at k and the sine part at n - k; both have
// lambda_k, and sin^2(pi k / n) = sin^2(pi (n - k) / n), so the position
// itself gives the eigenvalue. The DCT and DST outputs are indexed by k.
std::vector<double> axis_eigenvalues(FftAxis a, int n, double c) {
  std::vector<double> l(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) l[static_cast<size_t>(k)] = fft_axis_eigenvalue(a, k, n, c);
  return l;
}
}  // namespace

// One plan per direction for full blocks and one for the last, shorter block.
struct CpuFftPoisson::Plans {
  fftw_plan row[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}};  // [inverse][last block]
  fftw_plan col[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}};
  ~Plans() {
    std::lock_guard<std::mutex> lock(planner_mutex());
    for (auto* set : {&row, &col})
      for (auto& d : *set)
        for (fftw_plan& q : d)
          if (q) fftw_destroy_plan(q);
  }
};

CpuFftPoisson::CpuFftPoisson(const PoissonHierarchy& h) : p_(fft_problem(h)), l0_(h.levels[0]) {
  const int nx = p_.nx, ny = p_.ny;
  wp_ = (nx + 7) / 8 * 8;
  work_ = static_cast<double*>(fftw_malloc(sizeof(double) * static_cast<size_t>(wp_) * ny));
  if (!work_) throw std::runtime_error("fftw_malloc: out of memory for the transform work array");
  lambda_x_ = axis_eigenvalues(p_.ax, nx, p_.cx);
  lambda_y_ = axis_eigenvalues(p_.ay, ny, p_.cy);
  scale_ = 1.0 / (round_trip_factor(p_.ax, nx) * round_trip_factor(p_.ay, ny));
  plans_ = std::make_unique<Plans>();
  std::lock_guard<std::mutex> lock(planner_mutex());
  for (int inv = 0; inv < 2; ++inv) {
    const fftw_r2r_kind kx = inv ? inverse_kind(p_.ax) : forward_kind(p_.ax);
    const fftw_r2r_kind ky = inv ? inverse_kind(p_.ay) : forward_kind(p_.ay);
    // Rows: ny transforms of length nx, contiguous, rows wp_ apart.
    const int full_rows = std::min(kBlock, ny), last_rows = ny % kBlock;
    plans_->row[inv][0] = fftw_plan_many_r2r(1, &p_.nx, full_rows, work_, nullptr, 1, wp_, work_, nullptr, 1, wp_,
                                             &kx, FFTW_ESTIMATE);
    if (last_rows && ny > kBlock) {
      double* at = work_ + static_cast<size_t>(ny - last_rows) * wp_;
      plans_->row[inv][1] = fftw_plan_many_r2r(1, &p_.nx, last_rows, at, nullptr, 1, wp_, at, nullptr, 1, wp_, &kx,
                                               FFTW_ESTIMATE);
    }
    // Columns: nx transforms of length ny, stride wp_, neighbours 1 apart.
    const int full_cols = std::min(kBlock, nx), last_cols = nx % kBlock;
    plans_->col[inv][0] = fftw_plan_many_r2r(1, &p_.ny, full_cols, work_, nullptr, wp_, 1, work_, nullptr, wp_, 1,
                                             &ky, FFTW_ESTIMATE);
    if (last_cols && nx > kBlock) {
      double* at = work_ + (nx - last_cols);
      plans_->col[inv][1] = fftw_plan_many_r2r(1, &p_.ny, last_cols, at, nullptr, wp_, 1, at, nullptr, wp_, 1, &ky,
                                               FFTW_ESTIMATE);
    }
  }
  for (auto* set : {&plans_->row, &plans_->col})
    for (auto& d : *set)
      if (!d[0]) throw std::runtime_error("FFTW could not plan the transform solve");
}

CpuFftPoisson::~CpuFftPoisson() {
  plans_.reset();
  fftw_free(work_);
}

// Blocks of kBlock rows (columns) at fixed positions: the last, shorter
// block has its own plan; a grid narrower than kBlock is one block.
void CpuFftPoisson::row_blocks(bool forward, int b0, int b1) {
  const int inv = forward ? 0 : 1, ny = p_.ny;
  const int blocks = (ny + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
  for (int b = b0; b < b1; ++b) {
    double* at = work_ + static_cast<size_t>(b) * kBlock * wp_;
    const bool last = ny > kBlock && b == blocks - 1 && ny % kBlock != 0;
    fftw_execute_r2r(plans_->row[inv][last ? 1 : 0], at, at);
  }
}

void CpuFftPoisson::col_blocks(bool forward, int b0, int b1) {
  const int inv = forward ? 0 : 1, nx = p_.nx;
  const int blocks = (nx + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
  for (int b = b0; b < b1; ++b) {
    double* at = work_ + static_cast<size_t>(b) * kBlock;
    const bool last = nx > kBlock && b == blocks - 1 && nx % kBlock != 0;
    fftw_execute_r2r(plans_->col[inv][last ? 1 : 0], at, at);
  }
}

void CpuFftPoisson::transform(bool forward) {
  const int rows = (p_.ny + kBlock - 1) / kBlock, cols = (p_.nx + kBlock - 1) / kBlock;
  if (forward) {
    row_blocks(true, 0, rows);
    col_blocks(true, 0, cols);
  } else {
    col_blocks(false, 0, cols);
    row_blocks(false, 0, rows);
  }
}

// x_hat = b_hat / (lambda_x + lambda_y) in columns [c0, c1); the constant
// mode (eigenvalue 0, singular only) is set to 0: the mean of b is
// dropped, x is mean-free.
void CpuFftPoisson::divide(int c0, int c1) {
#pragma omp parallel for schedule(static)
  for (int j = 0; j < p_.ny; ++j)
    for (int i = c0; i < c1; ++i) {
      const double lam = lambda_x_[static_cast<size_t>(i)] + lambda_y_[static_cast<size_t>(j)];
      double& w = work_[static_cast<size_t>(j) * wp_ + i];
      w = lam != 0.0 ? w * scale_ / lam : 0.0;
    }
}

// Row j of the work array into x and, rounded, phi.
void CpuFftPoisson::store_row(int j, double* x, real* phi) const {
  const int P = p_.pitch;
  for (int i = 0; i < p_.nx; ++i) {
    const double v = work_[static_cast<size_t>(j) * wp_ + i];
    x[(i + 1) + (j + 1) * P] = v;
    phi[(i + 1) + (j + 1) * P] = static_cast<real>(v);
  }
}

void CpuFftPoisson::solve(const real* rhs, double* x, real* phi) {
  if (split_) return solve_split(rhs, x, phi);
  const int nx = p_.nx, ny = p_.ny, P = p_.pitch;
#pragma omp parallel for schedule(static)
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) work_[static_cast<size_t>(j) * wp_ + i] = rhs[(i + 1) + (j + 1) * P];
  transform(true);
  divide(0, nx);
  transform(false);
#pragma omp parallel for schedule(static)
  for (int j = 0; j < ny; ++j) store_row(j, x, phi);
  fill_poisson_halo(x, nx, ny, P, p_.ghost);
  fill_poisson_halo(phi, nx, ny, P, p_.ghost);
}

// ---- over several ranks ------------------------------------------------

// Who transforms what (sim/cpu/fft_blocks.hpp): the row blocks whose first
// row a rank owns, the column blocks shared out evenly.
struct CpuFftPoisson::Split {
  std::shared_ptr<const RankSplit> owner;
  const SlabRows* ranks = nullptr;  // owner's slabs
  FftBlocks b;
};

void CpuFftPoisson::split(std::shared_ptr<const RankSplit> split) {
  const SlabRows* ranks = split ? split->slabs() : nullptr;
  if (!ranks || ranks->ranks() == 1) return;
  auto s = std::make_unique<Split>();
  std::vector<int> first, end;
  for (int h = 0; h < ranks->ranks(); ++h) {
    first.push_back(ranks->first_row(h));
    end.push_back(ranks->end_row(h));
  }
  s->b = FftBlocks::make(first, end, ranks->rank(), p_.nx, p_.ny);
  s->owner = std::move(split);
  s->ranks = ranks;
  split_ = std::move(s);
}

void CpuFftPoisson::solve_split(const real* rhs, double* x, real* phi) {
  const Split& s = *split_;
  const SlabRows& sr = *s.ranks;
  const int me = sr.rank(), n = sr.ranks(), nx = p_.nx, ny = p_.ny, P = p_.pitch;
  const int j0 = sr.j0(), j1 = sr.j1();
  auto overlap = [](int a0, int a1, int b0, int b1, int& o0, int& o1) {
    o0 = std::max(a0, b0);
    o1 = std::min(a1, b1);
    return o0 < o1;
  };
#pragma omp parallel for schedule(static)
  for (int j = j0; j < j1; ++j)
    for (int i = 0; i < nx; ++i) work_[static_cast<size_t>(j) * wp_ + i] = rhs[(i + 1) + (j + 1) * P];
  // The rows of each row block to the rank that transforms it.
  const FftBlocks& b = s.b;
  move_pieces(sr, work_, wp_, b.rows_out, b.rows_in);
  row_blocks(true, b.rb0[me], b.rb1[me]);
  // Rows of blocks to columns of blocks, and back after the column solve.
  move_pieces(sr, work_, wp_, b.to_cols, b.from_rows);
  col_blocks(true, b.cb0[me], b.cb1[me]);
  divide(b.c0[me], b.c1[me]);
  col_blocks(false, b.cb0[me], b.cb1[me]);
  move_pieces(sr, work_, wp_, b.from_rows, b.to_cols);
  row_blocks(false, b.rb0[me], b.rb1[me]);
  // Each rank's rows and the halo rows next to them (wrapped on a periodic
  // y) from the ranks that transformed them.
  const bool periodic_y = p_.ay == FftAxis::periodic;
  auto wanted = [&](int q) {
    std::vector<std::pair<int, int>> r{{std::max(sr.first_row(q) - 1, 0), std::min(sr.end_row(q) + 1, ny)}};
    if (periodic_y && sr.first_row(q) == 0) r.push_back({ny - 1, ny});
    if (periodic_y && sr.end_row(q) == ny) r.push_back({0, 1});
    return r;
  };
  std::vector<FftPiece> out, in;
  int o0 = 0, o1 = 0;
  for (int q = 0; q < n; ++q) {
    for (const auto& [a, z] : wanted(q))
      if (overlap(a, z, b.h0[me], b.h1[me], o0, o1)) out.push_back({q, o0, o1, 0, nx});
    for (const auto& [a, z] : wanted(me))
      if (overlap(a, z, b.h0[q], b.h1[q], o0, o1)) in.push_back({q, o0, o1, 0, nx});
  }
  move_pieces(sr, work_, wp_, out, in);
  for (const auto& [a, z] : wanted(me)) {
#pragma omp parallel for schedule(static)
    for (int j = a; j < z; ++j) {
      store_row(j, x, phi);
      poisson_halo_x(x, j, nx, P, p_.ghost);
      poisson_halo_x(phi, j, nx, P, p_.ghost);
    }
  }
  // The y sides' ghost rows from rows the bottom and top ranks now hold;
  // elsewhere rows -1 and ny are not read.
  for (int i = -1; i <= nx; ++i) {
    poisson_halo_y(x, i, ny, P, p_.ghost);
    poisson_halo_y(phi, i, ny, P, p_.ghost);
  }
}

double CpuFftPoisson::residual_norm(const real* rhs, const double* x, const real* open) const {
  const int nx = p_.nx, ny = p_.ny;
  const PoissonLevel& l = l0_;
  if (static_cast<int>(row_sum_.size()) < 2 * ny) row_sum_.resize(static_cast<size_t>(2 * ny));
  auto fluid = [&](int c) { return open == nullptr || open[c] != 0; };
  // Sums per row, then over rows in order: the same for any thread count.
  double mean = 0;
  if (p_.singular) {
#pragma omp parallel for schedule(static)
    for (int j = 0; j < ny; ++j) {
      double s = 0, n = 0;
      for (int i = 0; i < nx; ++i) {
        const int c = l.index(i, j);
        if (fluid(c)) {
          s += rhs[c];
          n += 1;
        }
      }
      row_sum_[static_cast<size_t>(2 * j)] = s;
      row_sum_[static_cast<size_t>(2 * j + 1)] = n;
    }
    double s = 0, n = 0;
    for (int j = 0; j < ny; ++j) {
      s += row_sum_[static_cast<size_t>(2 * j)];
      n += row_sum_[static_cast<size_t>(2 * j + 1)];
    }
    mean = n > 0 ? s / n : 0.0;
  }
  const int P = l.pitch;
#pragma omp parallel for schedule(static)
  for (int j = 0; j < ny; ++j) {
    double acc = 0;
    for (int i = 0; i < nx; ++i) {
      const int c = l.index(i, j);
      if (!fluid(c)) continue;
      const double ax = poisson_apply_point(x[c], x[c - 1], x[c + 1], x[c - P], x[c + P], l.cx[c], l.cx[c + 1],
                                            l.cy[c], l.cy[c + P]);
      const double r = (static_cast<double>(rhs[c]) - mean) - ax;
      acc += r * r;
    }
    row_sum_[static_cast<size_t>(j)] = acc;
  }
  double s2 = 0;
  for (int j = 0; j < ny; ++j) s2 += row_sum_[static_cast<size_t>(j)];
  return std::sqrt(s2);
}

}  // namespace sim
