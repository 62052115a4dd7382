// SPDX-License-Identifier: MIT
// The rank split as a backend sees it: the rows of the grid this process
// computes, and the collective steps that keep its rows and particles those
// of one process holding the whole grid. Every backend holds one, never
// null, and calls it unconditionally:
//   OneRank (below): a run of one process; the rows are the whole grid,
//     every reduction is the local fold, every exchange nothing.
//   SlabRows (sim/ranks/slab_rows.hpp): a rank of a run split into slabs
//     of rows over MPI.
// Both give the same bits for the same rows: a reduction over rows folds
// the rows' values in global row order starting from 0, a scalar reduction
// over one rank is the value itself.
//
// What a backend does with it: every kernel runs over the rows [j0, j1)
// (cells, u faces) and [j0, face_end) (v faces); a field's boundary fill is
// followed by exchange_halo (and exchange_wide for the quick advection's
// rows two out); a sum or max over rows goes through sum_rows / max_rows, a
// per-rank scalar through sum / max; a deposit onto faces is folded onto
// their owners (fold) and read back (refresh); particles are kept by the
// rank owning their position (owns_point, and compact_owned / settle or
// keep_owned in sim/ranks/split_particles.hpp); download gathers through gather_state.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/model/grid.hpp"
#include "sim/model/particles.hpp"
#include "sim/model/state.hpp"
#include "sim/ranks/halo_exchange.hpp"

namespace sim {

class SlabRows;

// A backend's own transport between the ranks (the GPU's device rows),
// attached to the split so that comm_ms and comm_calls count it too.
class SplitTransport {
 public:
  virtual ~SplitTransport() = default;
  virtual double transport_ms() = 0;  // may synchronise
  virtual int64_t transport_calls() const = 0;
};

class RankSplit {
 public:
  virtual ~RankSplit() = default;

  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  bool alone() const { return ranks() == 1; }
  bool root() const { return rank() == 0; }

  // Rows this rank computes: cells and u faces in [j0, j1), v faces in
  // [j0, face_end) (ny + 1 on the top rank).
  virtual int j0() const = 0;
  virtual int j1() const = 0;
  virtual int face_end() const = 0;
  virtual bool periodic_y() const = 0;
  virtual int first_row(int rank) const = 0;
  virtual int end_row(int rank) const = 0;
  // Storage range [first, last) (points of g) of the rows this rank's
  // stages and deposits touch: its face rows and two either side; the
  // whole grid alone, or with a periodic y (quick's rows two out and the
  // deposits wrap to the far side).
  std::pair<size_t, size_t> near_rows(const Grid& g) const;

  // `values[r]`: row first + r of this rank's rows, in order; every rank
  // gets the fold over all ranks' rows in row order from 0: a + b, or the
  // NaN-propagating max.
  virtual double sum_rows(const double* values, int n) const = 0;
  virtual double max_rows(const double* values, int n) const = 0;
  // A sum and a NaN-propagating max of one value per rank, in rank order.
  virtual double sum(double x) const = 0;
  virtual double max(double x) const = 0;
  virtual int64_t sum(int64_t x) const = 0;

  // A field in the storage of the whole grid: its halo rows from the
  // neighbours, after the field's boundary fill.
  virtual void exchange_halo(float* field, Stagger s) const = 0;
  virtual void exchange_halo(double* field, Stagger s) const = 0;
  // fluid.advection = "quick": the velocity rows two out of this rank's
  // face rows (SlabRows::wide_plan), after exchange_halo.
  virtual void exchange_wide(real* field) const = 0;
  // Deposits near a slab's side: added onto the faces' owners (fold), and
  // the owners' values copied back (refresh). Cells as u faces.
  virtual void fold(real* field, Stagger s) const = 0;
  virtual void refresh(real* field, Stagger s) const = 0;

  // One storage row to copy to a rank: row `dst` there (its own index,
  // -1 .. ny) takes row `src` of `owner`.
  struct RowCopy {
    int dst, src, owner;
  };
  using RowPlan = std::vector<std::vector<RowCopy>>;
  // Every rank q's wanted[q] rows of a field with `pitch` values a row
  // (copies from q itself are skipped); nothing for one rank.
  virtual void copy_rows(float* field, int pitch, const RowPlan& wanted) const = 0;
  virtual void copy_rows(double* field, int pitch, const RowPlan& wanted) const = 0;

  // Whether this rank owns a particle at (x, y): alone always; split, the
  // slab holding a finite position.
  virtual bool owns_point(double x, double y) const = 0;
  // Owner of a particle position; -1 for a non-finite one.
  virtual int owner_of_point(double x, double y) const = 0;
  // Particles that left this rank to their owners: the arrivals by
  // ascending source rank (none alone).
  virtual std::vector<Particle> send_to_owners(const std::vector<Particle>& leaving) const = 0;
  // Rank 0's copy of a state (this rank's own: fields in the storage of the
  // whole grid, its particles, in `capacity` slots or as the live records
  // of a compacted store, and counters) made whole: every rank's rows of u,
  // v and phi, and the live particles in `capacity` slots; every rank's
  // counters summed.
  virtual void gather_state(SimState& s, int64_t capacity) const = 0;

  // Wall time spent in collective calls (waits for other ranks included)
  // and in the attached transport, and how many calls there were; 0 alone.
  double comm_ms() const { return collective_ms() + (transport_ ? transport_->transport_ms() : 0.0); }
  int64_t comm_calls() const { return collective_calls() + (transport_ ? transport_->transport_calls() : 0); }
  // Attaches a backend's transport (null: none) for as long as it lives.
  void attach(SplitTransport* t) const { transport_ = t; }
  // For a backend's name: empty alone, else " per rank, N MPI ranks in
  // slabs of rows".
  virtual std::string describe() const = 0;
  // The slab split, for a transport of its own (the GPU's device rows, the
  // split transform solve, the multigrid level plans); null alone.
  virtual const SlabRows* slabs() const = 0;

 protected:
  virtual double collective_ms() const = 0;
  virtual int64_t collective_calls() const = 0;

 private:
  mutable SplitTransport* transport_ = nullptr;
};

// One process holding the whole grid: the identity of every operation.
class OneRank final : public RankSplit {
 public:
  OneRank(int ny, bool periodic_y) : ny_(ny), periodic_y_(periodic_y) {}

  int rank() const override { return 0; }
  int ranks() const override { return 1; }
  int j0() const override { return 0; }
  int j1() const override { return ny_; }
  int face_end() const override { return ny_ + 1; }
  bool periodic_y() const override { return periodic_y_; }
  int first_row(int) const override { return 0; }
  int end_row(int) const override { return ny_; }

  double sum_rows(const double* values, int n) const override;
  double max_rows(const double* values, int n) const override;
  double sum(double x) const override { return x; }
  double max(double x) const override { return x; }
  int64_t sum(int64_t x) const override { return x; }

  void exchange_halo(float*, Stagger) const override {}
  void exchange_halo(double*, Stagger) const override {}
  void exchange_wide(real*) const override {}
  void fold(real*, Stagger) const override {}
  void refresh(real*, Stagger) const override {}
  void copy_rows(float*, int, const RowPlan&) const override {}
  void copy_rows(double*, int, const RowPlan&) const override {}

  bool owns_point(double, double) const override { return true; }
  int owner_of_point(double x, double y) const override;
  std::vector<Particle> send_to_owners(const std::vector<Particle>&) const override { return {}; }
  void gather_state(SimState&, int64_t) const override {}

  std::string describe() const override { return {}; }
  const SlabRows* slabs() const override { return nullptr; }

 private:
  double collective_ms() const override { return 0; }
  int64_t collective_calls() const override { return 0; }
  int ny_;
  bool periodic_y_;
};

// `ranks` when it spans more than one rank, else OneRank over `ny` rows.
std::shared_ptr<const RankSplit> rank_split_or_one(std::shared_ptr<const RankSplit> ranks, int ny, bool periodic_y);

}  // namespace sim
