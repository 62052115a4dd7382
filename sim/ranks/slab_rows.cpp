// SPDX-License-Identifier: MIT
// Slab rows over Comm: reductions gathered and folded on rank 0 and
// broadcast (so their order is the rows' order), whole-row messages for
// gathers and the deposit fold.
#include "sim/ranks/slab_rows.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "sim/model/fluid_physics.hpp"
#include "sim/ranks/split_particles.hpp"

namespace sim {

namespace {

using Clock = std::chrono::steady_clock;

// Adds the wall time of a scope to a counter, and counts the scope.
class Timed {
 public:
  explicit Timed(double& total, int64_t& calls) : total_(total), t0_(Clock::now()) { ++calls; }
  ~Timed() { total_ += std::chrono::duration<double, std::milli>(Clock::now() - t0_).count(); }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  double& total_;
  Clock::time_point t0_;
};

}  // namespace

SlabRows::SlabRows(const Comm& comm, const Domain& d)
    : comm_(comm), dec_(Decomposition::slabs(d, comm.size())) {
  const Box b = dec_.box(comm.rank());
  local_ = dec_.local_grid(comm.rank());
  j0_ = b.j0;
  j1_ = b.j1;
  ny_ = d.ny;
  pitch_ = static_cast<int>(Grid::pitch_for(d.nx));
  rows_ = static_cast<int>(Grid::rows_for(d.ny));
  periodic_y_ = d.periodic_y;
  // The fold's and the refresh's row lists, once: what each rank sends and takes.
  for (const Stagger st : {Stagger::u_face, Stagger::v_face}) {
    auto& fold = st == Stagger::u_face ? fold_u_ : fold_v_;
    auto& refresh = st == Stagger::u_face ? refresh_u_ : refresh_v_;
    fold.assign(static_cast<size_t>(comm.size()), {});
    refresh.assign(static_cast<size_t>(comm.size()), {});
    for (int q = 0; q < comm.size(); ++q)
      for (const int r : borrowed_rows(q, st)) {
        const int o = owner_of_row(r, st);
        fold[static_cast<size_t>(o)].push_back({r, r, q});
        refresh[static_cast<size_t>(q)].push_back({r, r, o});
        if (q == comm.rank()) (st == Stagger::u_face ? borrowed_u_ : borrowed_v_).push_back(r);
      }
  }
  // The halo rows: j0 - 1 and j1 of every field, j1 + 1 of v faces (the
  // second face row above, which a one-row neighbour's neighbour owns).
  for (const Stagger st : {Stagger::cell, Stagger::u_face, Stagger::v_face}) {
    auto& plan = st == Stagger::v_face ? halo_v_ : st == Stagger::u_face ? halo_u_ : halo_cell_;
    plan.assign(static_cast<size_t>(comm.size()), {});
    const int last = (st == Stagger::v_face && !periodic_y_) ? ny_ : ny_ - 1;  // the last row with an owner
    for (int q = 0; q < comm.size(); ++q) {
      std::vector<int> rows{first_row(q) - 1, end_row(q)};
      if (st == Stagger::v_face) rows.push_back(end_row(q) + 1);
      for (const int dst : rows) {
        const int src = periodic_y_ ? ((dst % ny_) + ny_) % ny_ : dst;
        if (src < 0 || src > last) continue;
        const int o = owner_of_row(src, st);
        if (o != q || dst != src) plan[static_cast<size_t>(q)].push_back({dst, src, o});
      }
    }
  }
  // Two rows out of every face row of each rank (wide_plan).
  const int n = comm.size(), last = rows_ - 2;
  auto holder = [&](int r) { return r < 0 ? 0 : r >= ny_ ? n - 1 : dec_.owner_of_cell(0, r); };
  wide_.assign(static_cast<size_t>(n), {});
  for (int q = 0; q < n; ++q) {
    const int a = first_row(q), b = end_row(q);
    const int fe = b == ny_ ? ny_ + 1 : b;
    std::vector<int> rows;
    for (int j = a; j < fe; ++j)
      for (int dj = -2; dj <= 2; ++dj)
        rows.push_back(j + (dj < -1 || dj > 1 ? wide_offset(j, dj, ny_, periodic_y_, last) : dj));
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    for (const int r : rows)
      if (holder(r) != q && !(r >= a && r < fe)) wide_[static_cast<size_t>(q)].push_back({r, r, holder(r)});
  }
}

int SlabRows::owner_of_point(double x, double y) const {
  if (!std::isfinite(x) || !std::isfinite(y)) return -1;
  return dec_.owner_of_point(x, y);
}

double SlabRows::fold_values(const std::vector<double>& values, bool max) const {
  Timed t(comm_ms_, comm_calls_);
  const std::vector<double> all = comm_.gatherv(values);
  double acc = 0;
  if (comm_.rank() == 0)
    for (const double v : all) acc = max ? max_nan(acc, v) : acc + v;
  return root_value(acc);
}

double SlabRows::root_value(double x) const {
  std::vector<char> bytes(sizeof x);
  std::memcpy(bytes.data(), &x, sizeof x);
  comm_.broadcast(bytes, 0);
  std::memcpy(&x, bytes.data(), sizeof x);
  return x;
}

double SlabRows::sum_rows(const std::vector<double>& values) const { return fold_values(values, false); }
double SlabRows::max_rows(const std::vector<double>& values) const { return fold_values(values, true); }
double SlabRows::sum_rows(const double* values, int n) const {
  return fold_values(std::vector<double>(values, values + n), false);
}
double SlabRows::max_rows(const double* values, int n) const {
  return fold_values(std::vector<double>(values, values + n), true);
}
double SlabRows::sum(double x) const {
  Timed t(comm_ms_, comm_calls_);
  return comm_.deterministic_sum(x);
}
double SlabRows::max(double x) const {
  Timed t(comm_ms_, comm_calls_);
  double m = 0;
  for (const double v : comm_.allgather(x)) m = max_nan(m, v);
  return m;
}
int64_t SlabRows::sum(int64_t x) const {
  Timed t(comm_ms_, comm_calls_);
  return comm_.allreduce_sum(x);
}

double SlabRows::broadcast(double x) const {
  Timed t(comm_ms_, comm_calls_);
  return root_value(x);
}

template <class T>
void SlabRows::exchange_halo_t(T* field, Stagger s) const {
  Timed t(comm_ms_, comm_calls_);
  // Storage row j0 - 1 of the whole grid is the box's row -1.
  exchange_halo_y(comm_, dec_, field + static_cast<size_t>(j0_) * pitch_, local_, s);
}

template <class T>
void SlabRows::gather(T* field) const {
  Timed t(comm_ms_, comm_calls_);
  // Storage rows (row j at j + 1) this rank sends.
  const int lo = j0_ == 0 ? 0 : j0_ + 1;
  const int hi = top() ? rows_ : j1_ + 1;
  const size_t row_bytes = static_cast<size_t>(pitch_) * sizeof(T);
  const std::vector<char> all = comm_.gatherv(field + static_cast<size_t>(lo) * pitch_, (hi - lo) * row_bytes);
  if (comm_.rank() != 0) return;
  if (all.size() != static_cast<size_t>(rows_) * row_bytes)
    throw std::logic_error("slab gather: " + std::to_string(all.size()) + " bytes for " + std::to_string(rows_) +
                           " rows");
  std::memcpy(field, all.data(), all.size());
}

std::vector<SlabRows::RowRun> SlabRows::row_runs(const std::vector<RowCopy>& list, int rank) {
  std::vector<RowRun> runs;
  size_t slot = 0;
  bool open = false;  // the last run may grow
  for (const RowCopy& w : list) {
    if (w.owner == rank) {
      open = false;
      continue;
    }
    RowRun* r = open ? &runs.back() : nullptr;
    if (r && r->owner == w.owner && w.dst == r->dst + r->count && w.src == r->src + r->count) ++r->count;
    else runs.push_back({w.dst, w.src, 1, w.owner, slot});
    open = true;
    ++slot;
  }
  return runs;
}

bool SlabRows::moves(const std::vector<std::vector<RowCopy>>& wanted) const {
  const int me = comm_.rank();
  for (size_t q = 0; q < wanted.size(); ++q)
    for (const RowCopy& w : wanted[q])
      if (w.owner != static_cast<int>(q) && (static_cast<int>(q) == me || w.owner == me)) return true;
  return false;
}

template <class T>
void SlabRows::copy_rows_t(T* field, int pitch, const RowPlan& wanted) const {
  if (!moves(wanted)) return;
  Timed t(comm_ms_, comm_calls_);
  transfer_rows(field, pitch, wanted, false);
}

// One message per pair of ranks, rows in list order; arrivals copied (or
// added) in list order.
template <class T>
void SlabRows::transfer_rows(T* field, int pitch, const std::vector<std::vector<RowCopy>>& wanted, bool add) const {
  const int me = comm_.rank(), n = comm_.size();
  const size_t row = static_cast<size_t>(pitch);
  auto at_row = [&](int r) { return field + static_cast<size_t>(r + 1) * row; };
  std::vector<std::vector<T>> out(static_cast<size_t>(n)), in(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    for (const RowCopy& w : wanted[static_cast<size_t>(q)])
      if (w.owner == me) out[static_cast<size_t>(q)].insert(out[static_cast<size_t>(q)].end(), at_row(w.src), at_row(w.src) + row);
  }
  for (const RowCopy& w : wanted[static_cast<size_t>(me)])
    if (w.owner != me) in[static_cast<size_t>(w.owner)].resize(in[static_cast<size_t>(w.owner)].size() + row);
  std::vector<SendBuffer> sends;
  std::vector<RecvBuffer> recvs;
  for (int q = 0; q < n; ++q) {
    auto& o = out[static_cast<size_t>(q)];
    auto& i = in[static_cast<size_t>(q)];
    if (!o.empty()) sends.push_back({q, 5, o.data(), o.size() * sizeof(T)});
    if (!i.empty()) recvs.push_back({q, 5, i.data(), i.size() * sizeof(T)});
  }
  comm_.exchange(sends, recvs);
  std::vector<size_t> next(static_cast<size_t>(n), 0);
  for (const RowCopy& w : wanted[static_cast<size_t>(me)]) {
    if (w.owner == me) continue;
    const T* src = in[static_cast<size_t>(w.owner)].data() + next[static_cast<size_t>(w.owner)]++ * row;
    T* dst = at_row(w.dst);
    if (add)
      for (size_t c = 0; c < row; ++c) dst[c] += src[c];
    else
      std::copy(src, src + row, dst);
  }
}

int SlabRows::owner_of_row(int row, Stagger s) const {
  if (row == ny_ && s == Stagger::v_face) return comm_.size() - 1;  // the closed top's face row
  return dec_.owner_of_cell(0, row);
}

std::vector<int> SlabRows::borrowed_rows(int rank, Stagger s) const {
  const int a = first_row(rank), b = end_row(rank);
  std::vector<int> rows{a - 1, b};
  if (s == Stagger::v_face) rows.push_back(b + 1);
  std::vector<int> out;
  for (int r : rows) {
    if (periodic_y_) r = ((r % ny_) + ny_) % ny_;
    const int last = (s == Stagger::v_face && !periodic_y_) ? ny_ : ny_ - 1;
    if (r < 0 || r > last) continue;
    if (owner_of_row(r, s) == rank) continue;
    out.push_back(r);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Fold: each owner takes, from every rank q in ascending order, the rows
// q borrowed from it, adds them to its own, and q zeroes what it sent.
void SlabRows::fold(real* field, Stagger s) const {
  Timed t(comm_ms_, comm_calls_);
  const bool u = s != Stagger::v_face;  // cells reach the rows u faces do
  transfer_rows(field, pitch_, u ? fold_u_ : fold_v_, true);
  for (const int r : u ? borrowed_u_ : borrowed_v_)
    std::fill(field + static_cast<size_t>(r + 1) * pitch_, field + static_cast<size_t>(r + 2) * pitch_, real(0));
}

// Refresh: each rank takes its borrowed rows back from their owners.
void SlabRows::refresh(real* field, Stagger s) const {
  Timed t(comm_ms_, comm_calls_);
  transfer_rows(field, pitch_, s != Stagger::v_face ? refresh_u_ : refresh_v_, false);
}

void SlabRows::gather_state(SimState& s, int64_t capacity) const {
  for (std::vector<real>* f : {&s.u, &s.v, &s.phi}) gather(f->data());
  gather_particles(*this, s, capacity);
}

std::vector<Particle> SlabRows::send_to_owners(const std::vector<Particle>& leaving) const {
  return sim::send_to_owners(*this, leaving);
}

std::string SlabRows::describe() const {
  return " per rank, " + std::to_string(ranks()) + " MPI ranks in slabs of rows";
}

template void SlabRows::gather<float>(float*) const;
template void SlabRows::gather<double>(double*) const;
template void SlabRows::exchange_halo_t<float>(float*, Stagger) const;
template void SlabRows::exchange_halo_t<double>(double*, Stagger) const;
template void SlabRows::copy_rows_t<float>(float*, int, const RowPlan&) const;
template void SlabRows::copy_rows_t<double>(double*, int, const RowPlan&) const;

}  // namespace sim
