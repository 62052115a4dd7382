// SPDX-License-Identifier: MIT
// A rank of a run split into slabs of rows (Decomposition::slabs), the
// RankSplit (sim/ranks/rank_split.hpp) both backends hold over several
// ranks; its plans are also what the GPU's device rows move
// (cuda/device_rows.hpp). Every rank keeps each field in the storage of the
// whole grid (global indices, so the shared physics, boundary rules and
// obstacles run unchanged), computes only the rows it owns, and keeps the
// halo rows next to them current with its neighbours' values. Memory per
// rank is that of the whole grid; the work per rank is its share.
//
// Rows owned: cells and u faces in rows [j0, j1); v faces in [j0, j1),
// plus face row ny on the top rank when y is closed (face_end()).
//
// Everything here is collective over the communicator, in the same order on
// every rank. Reductions over rows fold the rows' values in global row
// order on one rank, so their bits are those of one rank folding all rows:
// a decomposed run computes the same norms, CFL rate and divergence as one
// rank, bit for bit.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/model/grid.hpp"
#include "sim/ranks/comm.hpp"
#include "sim/ranks/decomposition.hpp"
#include "sim/ranks/halo_exchange.hpp"
#include "sim/ranks/rank_split.hpp"

namespace sim {

class SlabRows final : public RankSplit {
 public:
  // Decomposition::slabs of `d` over the communicator's ranks; throws
  // std::invalid_argument when there are more ranks than rows.
  SlabRows(const Comm& comm, const Domain& d);

  const Comm& comm() const { return comm_; }
  int rank() const override { return comm_.rank(); }
  int ranks() const override { return comm_.size(); }
  int nx() const { return local_.nx; }
  int j0() const override { return j0_; }
  int j1() const override { return j1_; }
  bool top() const { return j1_ == ny_; }
  bool periodic_y() const override { return periodic_y_; }
  // End of the face rows this rank updates: j1, or ny + 1 on the top rank
  // (the v faces of row ny; a rule that skips inactive faces skips the rest).
  int face_end() const override { return top() ? ny_ + 1 : j1_; }
  int first_row(int rank) const override { return dec_.box(rank).j0; }
  int end_row(int rank) const override { return dec_.box(rank).j1; }
  // Owner of a particle position (Decomposition::owner_of_point); -1 for a
  // non-finite one.
  int owner_of_point(double x, double y) const override;
  bool owns_point(double x, double y) const override { return owner_of_point(x, y) == rank(); }

  // Each rank passes the values of its rows in order (`values[r]` for row
  // first + r); every rank gets the fold over all ranks' rows in rank (so
  // row) order, starting from 0: a + b, or the NaN-propagating max.
  double sum_rows(const std::vector<double>& values) const;
  double max_rows(const std::vector<double>& values) const;
  double sum_rows(const double* values, int n) const override;
  double max_rows(const double* values, int n) const override;
  // Rank 0's value on every rank.
  double broadcast(double x) const;
  // A sum and a NaN-propagating max of one value per rank, in rank order.
  double sum(double x) const override;
  double max(double x) const override;
  int64_t sum(int64_t x) const override;

  // The halo rows of a field (storage of the whole grid) from the
  // neighbours: exchange_halo_y over the rank's rows. Call after the
  // field's boundary fill, as halo_exchange.hpp says.
  void exchange_halo(float* field, Stagger s) const override { exchange_halo_t(field, s); }
  void exchange_halo(double* field, Stagger s) const override { exchange_halo_t(field, s); }
  void exchange_wide(real* field) const override { copy_rows_t(field, pitch_, wide_); }
  // Rank 0's field gets every rank's owned storage rows (the bottom rank's
  // from row -1, the top rank's up to row ny + 1): the whole field as one
  // rank holding all rows would. Other ranks' fields are left as they are.
  template <class T>
  void gather(T* field) const;

  // The whole state on rank 0 (gather of u, v, phi; gather_particles).
  void gather_state(SimState& s, int64_t capacity) const override;

  // Every rank q's wanted[q] rows (copies from q itself are skipped) of a
  // field with `pitch` values a row, whose row j is storage row j + 1.
  void copy_rows(float* field, int pitch, const RowPlan& wanted) const override { copy_rows_t(field, pitch, wanted); }
  void copy_rows(double* field, int pitch, const RowPlan& wanted) const override { copy_rows_t(field, pitch, wanted); }
  // The copies of one rank's list (wanted[q], with rank = q) that follow
  // each other in it, come from one owner and whose source and destination
  // rows both follow on, as runs: one message each for a transport that
  // moves rows in place (the GPU's). Copies from `rank` itself are skipped
  // and end a run. Sender and receiver cut the same list alike, so their
  // messages match. `slot`: the run's first copy among the list's copies
  // from other ranks (its place in an inbox of arrivals).
  struct RowRun {
    int dst, src, count, owner;
    size_t slot;
  };
  static std::vector<RowRun> row_runs(const std::vector<RowCopy>& list, int rank);
  // Whether `wanted` has a row for this rank to send or receive (a copy
  // without one is no call at all: the messages are point to point).
  bool moves(const std::vector<std::vector<RowCopy>>& wanted) const;

  // exchange_halo as row copies, for a transport that moves whole rows
  // (the GPU's): after its own boundary fill, each rank q takes wanted[q]
  // (its rows j0 - 1 and j1, and j1 + 1 of v faces; a periodic y wraps the
  // source row, a closed side's ghost rows stay the rank's own). A wrap
  // onto the rank's own row is listed too (owner = q): its periodic
  // boundary fill already makes that copy, and copy_rows skips it.
  const std::vector<std::vector<RowCopy>>& halo_plan(Stagger s) const {
    return s == Stagger::v_face ? halo_v_ : s == Stagger::u_face ? halo_u_ : halo_cell_;
  }
  // The fold's and the refresh's row lists (fold: owner o takes the rows
  // rank q borrowed from it; refresh: q takes them back), and the rows this
  // rank's deposits borrow, for a transport of its own.
  const std::vector<std::vector<RowCopy>>& fold_plan(Stagger s) const {
    return s != Stagger::v_face ? fold_u_ : fold_v_;
  }
  const std::vector<std::vector<RowCopy>>& refresh_plan(Stagger s) const {
    return s != Stagger::v_face ? refresh_u_ : refresh_v_;
  }
  const std::vector<int>& borrowed(Stagger s) const { return s != Stagger::v_face ? borrowed_u_ : borrowed_v_; }
  // fluid.advection = "quick": the velocity rows each rank's faces read two
  // rows out (FaceNeighbours, through wide_offset's wrap or clamp), beyond
  // the one halo row the exchange brings, from the rank that holds them
  // current: a row's owner, rank 0 for the bottom halo row -1, the top rank
  // for rows ny and ny + 1. After the halo exchange, for copy_rows.
  const std::vector<std::vector<RowCopy>>& wide_plan() const { return wide_; }

  // Deposits (the coupled particle step; u faces and cells alike for
  // Stagger::u_face and cell): a rank's particles add to face rows next to
  // its own (j0 - 1, j1 and, for v, j1 + 1; wrapped on a periodic y). fold adds what landed on those rows to their owners'
  // (each owner: its own value, then the arrivals by ascending rank) and
  // zeroes them where they landed; refresh copies the owners' values back.
  void fold(real* field, Stagger s) const override;
  void refresh(real* field, Stagger s) const override;

  // Particles to their owners (sim/ranks/split_particles.hpp).
  std::vector<Particle> send_to_owners(const std::vector<Particle>& leaving) const override;

  // Runs `f` (a caller's own messages through comm(), as the split
  // transform solve and the particle migration send), its time counted in
  // comm_ms.
  template <class F>
  void timed(F&& f) const {
    ++comm_calls_;
    const auto t0 = std::chrono::steady_clock::now();
    f();
    comm_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  std::string describe() const override;
  const SlabRows* slabs() const override { return this; }

 private:
  // Wall time spent in this object's calls (waits for other ranks included),
  // and how many there were.
  double collective_ms() const override { return comm_ms_; }
  int64_t collective_calls() const override { return comm_calls_; }
  template <class T>
  void exchange_halo_t(T* field, Stagger s) const;
  template <class T>
  void copy_rows_t(T* field, int pitch, const RowPlan& wanted) const;
  // Rows (global, in [0, ny] ) that `rank`'s deposits reach and another
  // rank owns, deduplicated, in ascending order.
  std::vector<int> borrowed_rows(int rank, Stagger s) const;
  int owner_of_row(int row, Stagger s) const;
  template <class T>
  void transfer_rows(T* field, int pitch, const std::vector<std::vector<RowCopy>>& wanted, bool add) const;
  double fold_values(const std::vector<double>& values, bool max) const;
  double root_value(double x) const;  // rank 0's x on every rank (untimed)

  Comm comm_;
  Decomposition dec_;
  Grid local_;  // the rank's box (Decomposition::local_grid): the exchange's frame
  int j0_ = 0, j1_ = 0, ny_ = 0, pitch_ = 0, rows_ = 0;
  bool periodic_y_ = false;
  // The fold's lists (owner o takes rows from q) and the refresh's (q takes
  // rows from their owners), for u and v faces, and this rank's borrowed rows.
  std::vector<std::vector<RowCopy>> fold_u_, fold_v_, refresh_u_, refresh_v_;
  std::vector<int> borrowed_u_, borrowed_v_;
  std::vector<std::vector<RowCopy>> halo_cell_, halo_u_, halo_v_, wide_;
  mutable double comm_ms_ = 0;
  mutable int64_t comm_calls_ = 0;
};

}  // namespace sim
