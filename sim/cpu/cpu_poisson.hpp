// SPDX-License-Identifier: MIT
// The multigrid-preconditioned conjugate gradient primitives of PressureOps
// (sim/model/backend.hpp) on the CPU: the level arrays of sim/model/poisson.hpp in
// float32, the Krylov vectors in float64 on the Grid layout. CpuBackend owns
// one and forwards to it. Loops run over rows with OpenMP; every sum is taken
// per row and then over rows in order, so results do not depend on the
// number of threads.
//
// Split over ranks (split(), sim/ranks/level_rows.hpp): every rank holds
// every level whole and updates its rows of each: level 0 the slab's rows,
// level l + 1 the rows whose first child row it owns (so a rank may own
// none of a coarse level), and the coarsest levels (under 4 rows a rank, or
// at most pressure.replicated_cells cells) all of them, on every rank. Each
// operation that changes a level's halo rows ends with the neighbours'
// rows copied in; the restriction first copies in the residual rows of its
// coarse rows' children that others own (into the first replicated level:
// then the other ranks' coarse rows), the prolongation the parent rows of
// its fine rows; sums are folded in row order over all ranks. Every value
// is then the one a single rank computes, bit for bit.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/ranks/level_rows.hpp"
#include "sim/ranks/rank_split.hpp"
#include "sim/model/poisson.hpp"

namespace sim {

class CpuPoisson final : public MultigridOps {
 public:
  // The operator of level 0 and the float64 pressure x (what an FFT solve
  // also needs); `open` is the grid's open mask.
  void setup_operator(const PoissonHierarchy& h, const real* open);
  // setup_operator plus every level's arrays.
  void setup(const PoissonHierarchy& h, const real* open);
  bool active() const { return !levels_.empty(); }
  // Before setup: the rank split whose rows this process updates (one
  // process unless set). `replicated_cells`: pressure.replicated_cells, -1
  // for the CPU's own (none).
  void split(std::shared_ptr<const RankSplit> ranks, int64_t replicated_cells) {
    ranks_ = std::move(ranks);
    replicated_cells_ = replicated_cells < 0 ? 0 : replicated_cells;
  }

  // The backend's rhs and phi, which the solve reads and writes (after setup).
  void bind(const real* rhs, real* phi) {
    rhs_ = rhs;
    phi_ = phi;
  }

  double pcg_start() override;
  void mg_load_residual() override;
  void mg_smooth(int level, int color) override;
  void mg_restrict(int level) override;
  void mg_prolong(int level) override;
  double pcg_dot_rz() override;
  void pcg_direction(double beta) override;
  double pcg_apply() override;
  double pcg_update(double alpha) override;
  double poisson_residual_norm() override;  // ||b - A x||, b mean-free if singular
  void pcg_finish() override;               // x halo; phi = x rounded, halo included

  // The float64 pressure on the Grid layout (halo filled after finish()).
  const std::vector<double>& x() const { return x_; }
  std::vector<double>& x() { return x_; }

 private:
  struct Level {
    PoissonLevel op;               // nx, ny, pitch, rows, cx, cy
    std::vector<uint8_t> open;     // 1 where a cell holds fluid (any child open, on coarse levels)
    std::vector<real> e, f;        // correction and right-hand side, float32
    std::vector<real> res;         // split: f - A e on the rank's rows, for the restriction
    bool replicated = false;       // split: every rank updates every row (LevelRows)
    bool shared = false;           // split over ranks: the rows shared out (not replicated)
    int lo = 0, hi = 0;            // the rows this rank smooths and prolongs into
    int f_lo = 0, f_hi = 0;        // the rows whose right-hand side it restricts
    // split: rows each rank copies in: halo rows; the residual rows its coarse
    // rows' children need (restriction); this level's rows its finer rows need
    // (prolongation); the other ranks' restricted rows (first replicated level)
    std::vector<std::vector<SlabRows::RowCopy>> halo, below, parents, gather;
  };
  void plan_split();
  template <class Child>
  void restrict_rows(const Level& F, Level& C, Child child);
  template <class T>
  void fill_halo(int level, T* a);
  double mean_rhs(const real* rhs);  // mean over fluid cells (0 unless singular)
  template <class RowFn>
  double sum_rows(int ny, RowFn row);

  std::vector<Level> levels_;
  GhostRule ghost_[4] = {};
  bool singular_ = true;
  int64_t fluid_cells_ = 0;
  std::vector<double> x_, r_, p_, q_;
  std::vector<double> row_sum_;
  std::shared_ptr<const RankSplit> ranks_ = std::make_shared<const OneRank>(0, false);
  int64_t replicated_cells_ = 0;
  const real* rhs_ = nullptr;  // bind()
  real* phi_ = nullptr;
};

}  // namespace sim
