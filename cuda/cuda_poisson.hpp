// SPDX-License-Identifier: MIT
// The CUDA side of the MGPCG primitives of sim/model/backend.hpp (PressureOps):
// owns the device levels of a PoissonHierarchy (face bits, or coefficients
// where a level is not uniform; e and f in float32) and the float64 Krylov
// vectors x, r, p, q on the grid layout. CudaBackend forwards to it; the
// backend's rhs, open and phi arrays are passed per call (phi may move:
// the Jacobi sweep swaps it with its twin).
//
// Only the calls that return a double synchronise the stream, each reading
// back one double through pinned memory. Two things are deferred to cut
// launches and bytes, invisibly to the caller: mg_load_residual is fused
// into the first level-0 half-sweep that follows it, and the operations on
// the smallest levels (the tail: the coarsest level, and the levels of at
// most gpu.block_level_cells cells) are queued and run by one single-block launch at
// the next other primitive (cuda/poisson_kernels.hpp, TailProgram). Any
// primitive flushes what is pending first, so the results equal those of
// running each call at once, bit for bit.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/device_buffer.hpp"
#include "cuda/device_rows.hpp"
#include "cuda/poisson_kernels.hpp"
#include "sim/model/grid.hpp"
#include "sim/ranks/level_rows.hpp"
#include "sim/model/poisson.hpp"

namespace sim::cuda {

class CudaPoisson final : public MultigridOps {
 public:
  // tail_cells: the levels of at most this many cells form the tail, and
  // the coarsest level whenever it has at most 16384; 0: no tail, every
  // operation its own launch (Config::block_level_cells).
  // pair_cells: on levels of at least this many cells out of the tail, a
  // red and a black half-sweep that follow each other run as one pass
  // (mg_smooth_pair) where no side wraps; the level's e then alternates
  // between two arrays (Config::paired_smoothing_cells; 0: never).
  //
  // rows: this process is one rank of a run split into slabs
  // (cuda/device_rows.hpp), or null. Each rank then updates its rows of
  // each level (sim/ranks/level_rows.hpp, as the CPU backend), copies in
  // the halo, parent and child rows it reads from the other ranks, and
  // adds the reductions over ranks. The levels of at most `replicated_cells`
  // cells (pressure.replicated_cells; -1: kReplicatedCells) are replicated: every rank
  // runs them whole, as one GPU does, tail and paired sweeps included;
  // the levels shared out have neither (each half-sweep is followed by its
  // halo exchange).
  static constexpr int64_t kReplicatedCells = int64_t(1) << 20;
  CudaPoisson(const PoissonHierarchy& h, cudaStream_t stream, int64_t tail_cells, int64_t pair_cells,
              DeviceRows* rows = nullptr, int64_t replicated_cells = -1);

  // Device bytes of the hierarchy of a grid (an upper bound: every coarse
  // level counted with its coefficient arrays), for the memory plan.
  static size_t bytes(const Grid& g);

  double start(const float* rhs, const float* open);  // pcg_start
  void load_residual();                               // mg_load_residual
  void smooth(int level, int color);                  // mg_smooth
  void restrict_from(int level);                      // mg_restrict
  void prolong_to(int level);                         // mg_prolong
  double dot_rz();                                    // pcg_dot_rz
  void direction(double beta);                        // pcg_direction
  double apply();                                     // pcg_apply
  double update(double alpha);                        // pcg_update
  double residual_norm(const float* rhs, const float* open);  // poisson_residual_norm
  void finish(float* phi);                            // pcg_finish

  // MultigridOps on the arrays bound here (the backend's rhs, open mask and phi).
  void bind(const float* rhs, const float* open, float* phi) {
    rhs_ = rhs;
    open_ = open;
    phi_ = phi;
  }
  double pcg_start() override { return start(rhs_, open_); }
  void mg_load_residual() override { load_residual(); }
  void mg_smooth(int level, int color) override { smooth(level, color); }
  void mg_restrict(int level) override { restrict_from(level); }
  void mg_prolong(int level) override { prolong_to(level); }
  double pcg_dot_rz() override { return dot_rz(); }
  void pcg_direction(double beta) override { direction(beta); }
  double pcg_apply() override { return apply(); }
  double pcg_update(double alpha) override { return update(alpha); }
  double poisson_residual_norm() override { return residual_norm(rhs_, open_); }
  void pcg_finish() override { finish(phi_); }

  // The loop's scalars on the device (PressureOps::pcg_start_on_device...):
  // rhs2 is the device ||rhs||^2 of this solve; the record pointers take the
  // iterations and the relative residual.
  void start_on_device(const float* rhs, const float* open, const double* rhs2, double tolerance, int max_iterations,
                       int64_t* rec_iterations, double* rec_relative);
  void step_on_device(double tolerance, int max_iterations, int64_t* rec_iterations, double* rec_relative);
  void load_condition(cudaGraphConditionalHandle h);  // the while node's condition: go on
  // The stream the launches go to (a recorded loop body is captured from a second one).
  cudaStream_t stream() const { return stream_; }
  void set_stream(cudaStream_t s) { stream_ = s; }

  const double* x() const { return x_.data(); }
  int levels() const { return static_cast<int>(levels_.size()); }

 private:
  const float* rhs_ = nullptr;  // bind()
  const float* open_ = nullptr;
  float* phi_ = nullptr;

  struct LevelBuffers {
    DeviceBuffer<float> cx, cy, e, f, e2;  // e2: the other array of a level smoothed in pairs
    DeviceBuffer<float> res;               // over ranks: f - A e for the restriction
    DeviceBuffer<uint8_t> faces;
  };

  // The constructor's steps: level l of n from the hierarchy's (its buffers
  // and DeviceLevel); the levels the tail holds and those smoothed in pairs.
  void setup_level(const PoissonLevel& hl, int l, int n);
  void place_tail(int64_t tail_cells, int64_t pair_cells, int first_alone);
  void check_level(int level, int last_allowed, const char* what) const;
  void flush();            // the pending load and tail operations
  void flush_load();
  void flush_tail();
  void flush_smooth();     // a half-sweep held back for a pair, alone
  void launch_smooth(int level, int color);
  void queue(int level, TailKind kind, int color = 0);  // a tail operation (level >= tail_from_)
  double read_scalar(int slot);  // synchronises
  double finish_sum(int n_partials, int slot);  // partials -> scal_[slot], read back (summed over ranks)
  void exchange_e(int level);  // over ranks: the halo rows of level's e
  // launch(rows) over the rows of `l` this rank updates, then over ranks
  // the copy of `list`'s rows of `field`: through NCCL on levels of at least
  // kOverlapCells own cells, the two edge rows first and their copy beside
  // the interior rows' launch (the copy reads only the edge rows and writes
  // only halo rows, which the interior neither writes nor reads). Every
  // launch here is per cell over l.j_lo .. l.j_hi, so the values are the
  // same as one launch's.
  template <class T, class Launch>
  void rows_then_copy(const DeviceLevel& l, Launch launch, T* field,
                      const std::vector<std::vector<SlabRows::RowCopy>>& list);
  // Own cells from which a level's halo copy goes beside its interior rows
  // (a guess, not yet measured on two GPUs: below it the interior launch is
  // too short to hide a message behind, and the edge launches cost two).
  static constexpr int64_t kOverlapCells = int64_t(1) << 18;
  const double* mean_on_device(const float* rhs);  // scal_ + 3, or null when not singular

  cudaStream_t stream_;
  Ghosts ghosts_{};
  bool singular_ = true;
  int64_t fluid_cells_ = 0;
  std::vector<LevelBuffers> buffers_;
  std::vector<DeviceLevel> levels_;
  std::vector<bool> halo_races_;  // per level: smoothing needs a separate halo launch
  DeviceRows* rows_ = nullptr;     // over ranks, else null
  std::vector<LevelRows> split_;  // each level's rows and row copies (over ranks)
  DeviceBuffer<double> x_, r_, p_, q_;
  DeviceBuffer<double> partials_;
  DeviceBuffer<double> scal_;  // [0] a result, [2] the rhs sum, [3] its mean
  DeviceBuffer<PcgState> pcg_;  // the loop's scalars on the device (first start_on_device)
  PinnedBuffer<double> host_{1, "MGPCG read-back"};
  int n_partials_ = 0;
  bool load_pending_ = false;
  int tail_from_ = 0;  // the first level of the tail (levels() when none)
  std::vector<float*> other_;  // per level: the array e is not (pairs only), else null
  int held_level_ = -1, held_color_ = 0;  // a half-sweep waiting for its pair
  TailLevels tail_{};
  TailProgram prog_{};
};

}  // namespace sim::cuda
