// SPDX-License-Identifier: MIT
// Direct solve of the pressure Poisson equation A x = rhs on level 0 with
// FFTW in float64 (sim/model/poisson_fft.hpp has the eigen decomposition): per
// axis a real DFT (R2HC / HC2R) where periodic, DCT-II / DCT-III (REDFT10 /
// REDFT01) where Neumann, DST-II / DST-III (RODFT10 / RODFT01) where
// Dirichlet; divide by lambda_kx + lambda_ky; transform back.
//
// Threads: the plans are made once for fixed blocks of rows and of columns
// and each block runs through fftw_execute_r2r (thread safe) on whichever
// OpenMP thread takes it, so every row and column is transformed by the same
// plan whatever the thread count: the result is bit for bit the same for any
// number of threads (FFTW's own threaded plans may split differently).
#pragma once
#include <memory>
#include <vector>

#include "sim/ranks/slab_rows.hpp"
#include "sim/model/poisson_fft.hpp"

namespace sim {

class CpuFftPoisson {
 public:
  explicit CpuFftPoisson(const PoissonHierarchy& h);  // plans (FFTW_ESTIMATE) and the work array
  ~CpuFftPoisson();
  CpuFftPoisson(const CpuFftPoisson&) = delete;
  CpuFftPoisson& operator=(const CpuFftPoisson&) = delete;

  // Level-0 arrays (the Grid's layout). x = A^-1 rhs in float64 (the mean of
  // rhs dropped and x mean-free if singular), phi = x rounded; the halos of
  // x and phi filled with the ghost rules.
  void solve(const real* rhs, double* x, real* phi);

  // ||b - A x||_2 over fluid cells in float64, b = rhs minus its mean over
  // fluid cells if singular; x with its halo filled; open = the mask (null:
  // all fluid).
  double residual_norm(const real* rhs, const double* x, const real* open) const;

  const FftProblem& problem() const { return p_; }

  // A run over several ranks (slabs of rows, sim/ranks/slab_rows.hpp):
  // from then on solve() is collective; one rank (or null) leaves it alone. rhs is read in the rank's own rows;
  // x and phi are written in its rows and the halo rows next to them. The
  // blocks of rows go to the rank owning their first row, the blocks of
  // columns are shared out evenly, and the work array moves between the
  // two by all-to-all exchanges; every block is transformed by the plan one
  // rank uses for it, so the solution is one rank's, bit for bit.
  void split(std::shared_ptr<const RankSplit> split);

 private:
  struct Plans;
  struct Split;
  void transform(bool forward);
  void solve_split(const real* rhs, double* x, real* phi);
  void row_blocks(bool forward, int b0, int b1);
  void col_blocks(bool forward, int b0, int b1);
  void divide(int c0, int c1);
  void store_row(int j, double* x, real* phi) const;
  FftProblem p_;
  PoissonLevel l0_;  // level 0 coefficients, for the residual
  int wp_ = 0;       // work row pitch: nx rounded up to 8 doubles (64-byte aligned rows)
  double* work_ = nullptr;  // ny rows of wp_ doubles (fftw_malloc)
  std::vector<double> lambda_x_, lambda_y_;  // per-axis eigenvalues in FFTW's output order
  double scale_ = 1;  // 1 / (norm_x norm_y): FFTW's inverse returns norm (n or 2n) times the input per axis
  std::unique_ptr<Plans> plans_;
  std::unique_ptr<Split> split_;
  mutable std::vector<double> row_sum_;
};

// Halo of a level-0 array from the ghost rules (x sides, then y sides).
template <class T>
void fill_poisson_halo(T* p, int nx, int ny, int pitch, const GhostRule* ghost) {
#pragma omp parallel for schedule(static)
  for (int j = 0; j < ny; ++j) poisson_halo_x(p, j, nx, pitch, ghost);
#pragma omp parallel for schedule(static)
  for (int i = -1; i <= nx; ++i) poisson_halo_y(p, i, ny, pitch, ghost);
}

}  // namespace sim
