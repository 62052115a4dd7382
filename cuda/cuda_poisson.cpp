// SPDX-License-Identifier: MIT
#include "cuda/cuda_poisson.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda/check.hpp"

namespace sim::cuda {
namespace {

// The coarsest level is in the block-resident tail whenever it has at most
// this many cells (always, for the hierarchies of sim/model/poisson.cpp, unless
// one side is thousands of times the other): its solve is thousands of
// half-sweeps.
constexpr int64_t kCoarseTailCells = 16384;

// The one nonzero value of a coefficient array over the faces of a level,
// or 0 (with `uniform` false) when it holds two different nonzero values.
float single_value(const std::vector<real>& c, const PoissonLevel& l, int i_end, int j_end, bool& uniform) {
  float v = 0;
  for (int j = 0; j < j_end; ++j)
    for (int i = 0; i < i_end; ++i) {
      const float a = c[static_cast<size_t>(l.index(i, j))];
      if (a == 0) continue;
      if (v == 0) v = a;
      else if (a != v) uniform = false;
    }
  return v;
}

}  // namespace

size_t CudaPoisson::bytes(const Grid& g) {
  // level 0: x r p q (float64), e f and e's twin for pair smoothing
  // (float32), face bits; coarse levels as sim/model/poisson.cpp builds them,
  // each with e f cx cy, e's twin and face bits.
  size_t b = g.size() * (4 * sizeof(double) + 3 * sizeof(float) + 1);
  int nx = g.nx, ny = g.ny;
  while (!(std::min(nx, ny) <= kCoarsestSide || nx < 2 || ny < 2)) {
    nx = (nx + 1) / 2;
    ny = (ny + 1) / 2;
    const size_t size = static_cast<size_t>((nx + 2 + 31) / 32 * 32) * static_cast<size_t>(ny + 2);
    b += size * (5 * sizeof(float) + 1);
  }
  b += static_cast<size_t>(pcg_partial_count(g.nx, g.ny)) * sizeof(double) + 4 * sizeof(double);
  return b;
}

CudaPoisson::CudaPoisson(const PoissonHierarchy& h, cudaStream_t stream, int64_t tail_cells, int64_t pair_cells,
                         DeviceRows* rows, int64_t replicated_cells)
    : stream_(stream), singular_(h.singular), fluid_cells_(h.fluid_cells), rows_(rows) {
  if (h.levels.empty()) throw std::invalid_argument("cuda: poisson_setup with an empty hierarchy");
  std::vector<int> level_nx, level_ny;
  for (const PoissonLevel& l : h.levels) {
    level_nx.push_back(l.nx);
    level_ny.push_back(l.ny);
  }
  const int64_t replicated = !rows_ ? 0 : replicated_cells < 0 ? kReplicatedCells : replicated_cells;
  split_ = split_levels(rows_ ? &rows_->slabs() : nullptr, level_nx, level_ny, replicated);
  // over ranks the levels shared out run every operation as its own launch,
  // followed by its exchange; the tail and the pairs are for replicated ones
  int first_alone = 0;
  if (rows_)
    while (first_alone < static_cast<int>(split_.size()) && !split_[static_cast<size_t>(first_alone)].replicated)
      ++first_alone;
  for (int s = 0; s < 4; ++s) ghosts_.rule[s] = h.ghost[s];
  const int n = static_cast<int>(h.levels.size());
  buffers_.resize(n);
  levels_.resize(n);
  halo_races_.resize(n);
  for (int l = 0; l < n; ++l) setup_level(h.levels[l], l, n);
  const DeviceLevel& l0 = levels_[0];
  const size_t size0 = static_cast<size_t>(l0.pitch) * l0.rows;
  for (DeviceBuffer<double>* v : {&x_, &r_, &p_, &q_}) {
    v->allocate(size0, "MGPCG vectors");
    v->zero(stream_);  // halos and padding stay 0 where nothing writes them
  }
  n_partials_ = pcg_partial_count(l0);
  partials_.allocate(static_cast<size_t>(std::max(n_partials_, 1)), "MGPCG partial sums");
  scal_.allocate(4, "MGPCG scalars");
  scal_.zero(stream_);
  place_tail(tail_cells, pair_cells, first_alone);
  // the host vectors uploaded above are pageable: wait before they go
  SIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaPoisson::setup_level(const PoissonLevel& hl, int l, int n) {
  if (hl.nx < 1 || hl.ny < 1 || hl.pitch < hl.nx + 2 || hl.rows < hl.ny + 2 || hl.cx.size() != hl.size() ||
      hl.cy.size() != hl.size())
    throw std::invalid_argument("cuda: poisson_setup: level " + std::to_string(l) + " has an inconsistent shape");
  LevelBuffers& b = buffers_[l];
  DeviceLevel& d = levels_[l];
  d.nx = hl.nx;
  d.ny = hl.ny;
  d.j_lo = split_[static_cast<size_t>(l)].lo;
  d.j_hi = split_[static_cast<size_t>(l)].hi;
  d.pitch = hl.pitch;
  d.rows = hl.rows;
  bool uniform = true;
  d.cx_value = single_value(hl.cx, hl, hl.nx + 1, hl.ny, uniform);
  d.cy_value = single_value(hl.cy, hl, hl.nx, hl.ny + 1, uniform);
  d.uniform = uniform;
  // Face bits of every cell (0 in the halo and padding).
  std::vector<uint8_t> bits(hl.size(), 0);
  for (int j = 0; j < hl.ny; ++j)
    for (int i = 0; i < hl.nx; ++i) {
      const size_t c = static_cast<size_t>(hl.index(i, j));
      bits[c] = static_cast<uint8_t>((hl.cx[c] != 0 ? kFaceW : 0) | (hl.cx[c + 1] != 0 ? kFaceE : 0) |
                                     (hl.cy[c] != 0 ? kFaceS : 0) |
                                     (hl.cy[c + static_cast<size_t>(hl.pitch)] != 0 ? kFaceN : 0));
    }
  b.faces.allocate(hl.size(), "multigrid face bits");
  b.faces.upload(bits.data(), bits.size(), stream_);
  if (!uniform) {
    b.cx.allocate(hl.size(), "multigrid coefficients");
    b.cy.allocate(hl.size(), "multigrid coefficients");
    b.cx.upload(hl.cx.data(), hl.size(), stream_);
    b.cy.upload(hl.cy.data(), hl.size(), stream_);
  }
  b.e.allocate(hl.size(), "multigrid levels");
  b.f.allocate(hl.size(), "multigrid levels");
  b.e.zero(stream_);
  b.f.zero(stream_);
  if (rows_ && l + 1 < n && !split_[static_cast<size_t>(l)].replicated) {
    b.res.allocate(hl.size(), "multigrid residuals");
    b.res.zero(stream_);
  }
  d.cx = b.cx.data();
  d.cy = b.cy.data();
  d.faces = b.faces.data();
  d.e = b.e.data();
  d.f = b.f.data();
  halo_races_[l] = smooth_halo_races(d, ghosts_);
}

void CudaPoisson::place_tail(int64_t tail_cells, int64_t pair_cells, int first_alone) {
  const int n = static_cast<int>(levels_.size());
  auto cells = [&](int l) { return static_cast<int64_t>(levels_[l].nx) * levels_[l].ny; };
  tail_from_ = n;
  while (tail_from_ > first_alone && n - tail_from_ < kTailMaxLevels && cells(tail_from_ - 1) <= tail_cells)
    --tail_from_;
  if (tail_from_ == n && n - 1 >= first_alone && tail_cells > 0 && cells(n - 1) <= kCoarseTailCells) tail_from_ = n - 1;
  tail_.n = n - tail_from_;
  for (int l = tail_from_; l < n; ++l) tail_.l[l - tail_from_] = levels_[l];
  other_.assign(n, nullptr);
  if (pair_cells > 0 && smooth_pair_applies(ghosts_))
    for (int l = first_alone; l < tail_from_ && cells(l) >= pair_cells; ++l) {
      buffers_[l].e2.allocate(buffers_[l].e.size(), "multigrid levels");
      buffers_[l].e2.zero(stream_);
      other_[l] = buffers_[l].e2.data();
    }
}

void CudaPoisson::check_level(int level, int last_allowed, const char* what) const {
  if (level < 0 || level > last_allowed)
    throw std::out_of_range(std::string("cuda: ") + what + "(" + std::to_string(level) + "): the hierarchy has " +
                            std::to_string(levels_.size()) + " levels");
}

double CudaPoisson::read_scalar(int slot) {
  SIM_CUDA_CHECK(cudaMemcpyAsync(host_.data(), scal_.data() + slot, sizeof(double), cudaMemcpyDeviceToHost, stream_));
  SIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return host_[0];
}

double CudaPoisson::finish_sum(int n_partials, int slot) {
  pcg_final_sum(stream_, partials_.data(), n_partials, scal_.data() + slot, 0.0);
  const double mine = read_scalar(slot);
  return rows_ ? rows_->slabs().sum(mine) : mine;
}

void CudaPoisson::exchange_e(int level) {
  if (rows_) rows_->copy_rows(levels_[level].e, levels_[level].pitch, split_[static_cast<size_t>(level)].halo);
}

template <class T, class Launch>
void CudaPoisson::rows_then_copy(const DeviceLevel& l, Launch launch, T* field,
                                 const std::vector<std::vector<SlabRows::RowCopy>>& list) {
  const int rows = l.j_hi - l.j_lo;
  if (!rows_ || !rows_->overlaps() || rows < 3 || static_cast<int64_t>(l.nx) * rows < kOverlapCells ||
      !rows_->slabs().moves(list)) {
    launch(l);
    if (rows_) rows_->copy_rows(field, l.pitch, list);
    return;
  }
  DeviceLevel part = l;
  part.j_hi = l.j_lo + 1;
  launch(part);
  part.j_lo = l.j_hi - 1;
  part.j_hi = l.j_hi;
  launch(part);
  rows_->copy_rows_beside(field, l.pitch, list);
  part.j_lo = l.j_lo + 1;
  part.j_hi = l.j_hi - 1;
  launch(part);
  rows_->join();
}

const double* CudaPoisson::mean_on_device(const float* rhs) {
  if (!singular_ || fluid_cells_ <= 0) return nullptr;
  pcg_sum_rhs(stream_, levels_[0], rhs, partials_.data());
  if (!rows_) {
    pcg_final_sum(stream_, partials_.data(), n_partials_, scal_.data() + 2, static_cast<double>(fluid_cells_));
    return scal_.data() + 3;
  }
  // over ranks: every rank's sum, added in rank order, then the mean
  const double mean = finish_sum(n_partials_, 2) / static_cast<double>(fluid_cells_);
  SIM_CUDA_CHECK(cudaMemcpyAsync(scal_.data() + 3, &mean, sizeof mean, cudaMemcpyHostToDevice, stream_));
  SIM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before `mean` goes
  return scal_.data() + 3;
}

void CudaPoisson::flush_load() {
  if (!load_pending_) return;
  load_pending_ = false;
  mg_load(stream_, levels_[0], r_.data());
}

void CudaPoisson::launch_smooth(int level, int color) {
  const DeviceLevel& l = levels_[level];
  if (halo_races_[level]) {  // the halo after the whole sweep: nothing to send before it
    cuda::mg_smooth(stream_, l, ghosts_, color, false);
    mg_halo(stream_, l, ghosts_);
    exchange_e(level);
    return;
  }
  rows_then_copy(l, [&](const DeviceLevel& part) { cuda::mg_smooth(stream_, part, ghosts_, color, true); }, l.e,
                 split_[static_cast<size_t>(level)].halo);
}

void CudaPoisson::flush_smooth() {
  if (held_level_ < 0) return;
  launch_smooth(held_level_, held_color_);
  held_level_ = -1;
}

void CudaPoisson::flush_tail() {
  if (prog_.count == 0) return;
  mg_tail(stream_, tail_, ghosts_, prog_, r_.data());
  prog_.count = 0;
}

void CudaPoisson::queue(int level, TailKind kind, int color) {
  flush_smooth();
  if (prog_.count == kTailOps) flush_tail();
  prog_.op[prog_.count++] = tail_op(level - tail_from_, kind, color);
}

void CudaPoisson::flush() {
  flush_load();
  flush_smooth();
  flush_tail();
}

double CudaPoisson::start(const float* rhs, const float* open) {
  flush();
  const DeviceLevel& l0 = levels_[0];
  x_.zero(stream_);
  const double* mean = mean_on_device(rhs);
  cuda::pcg_start(stream_, l0, rhs, open, mean, r_.data(), partials_.data());
  return std::sqrt(finish_sum(n_partials_, 0));
}

void CudaPoisson::load_residual() {
  flush();
  if (tail_from_ == 0) queue(0, kTailLoad);
  else load_pending_ = true;  // run by the next level-0 half-sweep, or at the next flush
}

void CudaPoisson::smooth(int level, int color) {
  const int last = levels() - 1;
  check_level(level, last, "mg_smooth");
  if (color != 0 && color != 1) throw std::invalid_argument("cuda: mg_smooth: colour must be 0 or 1");
  if (level >= tail_from_) {
    flush_load();
    queue(level, kTailSmooth, color);
    return;
  }
  flush_tail();
  if (level == 0 && load_pending_) {
    flush_smooth();
    load_pending_ = false;
    rows_then_copy(levels_[0], [&](const DeviceLevel& part) { mg_load_smooth(stream_, part, ghosts_, r_.data(), color); },
                   levels_[0].e, split_[0].halo);
    return;
  }
  flush_load();
  if (other_[level] == nullptr) {
    flush_smooth();
    launch_smooth(level, color);
    return;
  }
  if (held_level_ == level && held_color_ != color) {  // the pair: one pass into the other array
    held_level_ = -1;
    DeviceLevel& l = levels_[level];
    mg_smooth_pair(stream_, l, ghosts_, other_[level], 1 - color);
    std::swap(l.e, other_[level]);
    return;
  }
  flush_smooth();
  held_level_ = level;
  held_color_ = color;
}

void CudaPoisson::restrict_from(int level) {
  check_level(level, levels() - 2, "mg_restrict");
  if (level >= tail_from_) return queue(level, kTailRestrict);
  flush();
  if (!rows_) return cuda::mg_restrict(stream_, levels_[level], levels_[level + 1]);
  const LevelRows& f_rows = split_[static_cast<size_t>(level)];
  const LevelRows& c_rows = split_[static_cast<size_t>(level) + 1];
  if (f_rows.replicated) return cuda::mg_restrict(stream_, levels_[level], levels_[level + 1]);  // as one GPU
  float* res = buffers_[static_cast<size_t>(level)].res.data();
  const DeviceLevel& fine = levels_[level];
  mg_residual_rows(stream_, fine, res);
  rows_->copy_rows(res, fine.pitch, f_rows.below);  // children others own
  DeviceLevel coarse = levels_[level + 1];          // its rows: the rank's share
  coarse.j_lo = c_rows.f_lo;
  coarse.j_hi = c_rows.f_hi;
  mg_restrict_rows(stream_, fine, coarse, res);
  rows_->copy_rows(coarse.f, coarse.pitch, c_rows.gather);  // into the first replicated level: the others' shares
}

void CudaPoisson::prolong_to(int level) {
  check_level(level, levels() - 2, "mg_prolong");
  if (level >= tail_from_) return queue(level, kTailProlong);
  flush();
  if (rows_)  // the parents of this rank's fine rows that others own
    rows_->copy_rows(levels_[level + 1].e, levels_[level + 1].pitch, split_[static_cast<size_t>(level) + 1].parents);
  rows_then_copy(levels_[level], [&](const DeviceLevel& part) { cuda::mg_prolong(stream_, part, levels_[level + 1], ghosts_); },
                 levels_[level].e, split_[static_cast<size_t>(level)].halo);
}

double CudaPoisson::dot_rz() {
  flush();
  pcg_dot(stream_, levels_[0], r_.data(), levels_[0].e, partials_.data());
  return finish_sum(n_partials_, 0);
}

void CudaPoisson::direction(double beta) {
  flush();
  rows_then_copy(levels_[0], [&](const DeviceLevel& part) { cuda::pcg_direction(stream_, part, ghosts_, part.e, beta, p_.data()); },
                 p_.data(), split_[0].halo);
}

double CudaPoisson::apply() {
  flush();
  cuda::pcg_apply(stream_, levels_[0], p_.data(), q_.data(), partials_.data());
  return finish_sum(n_partials_, 0);
}

double CudaPoisson::update(double alpha) {
  flush();
  cuda::pcg_update(stream_, levels_[0], alpha, p_.data(), q_.data(), x_.data(), r_.data(), partials_.data());
  return std::sqrt(finish_sum(n_partials_, 0));
}

double CudaPoisson::residual_norm(const float* rhs, const float* open) {
  flush();
  const DeviceLevel& l0 = levels_[0];
  const double* mean = mean_on_device(rhs);
  pcg_halo(stream_, l0, ghosts_, x_.data());
  if (rows_) rows_->copy_rows(x_.data(), l0.pitch, split_[0].halo);
  pcg_residual(stream_, l0, rhs, open, mean, x_.data(), partials_.data());
  return std::sqrt(finish_sum(n_partials_, 0));
}

void CudaPoisson::start_on_device(const float* rhs, const float* open, const double* rhs2, double tolerance,
                                  int max_iterations, int64_t* rec_iterations, double* rec_relative) {
  flush();
  if (pcg_.size() == 0) pcg_.allocate(1, "MGPCG device scalars");
  PcgState* st = pcg_.data();
  const DeviceLevel& l0 = levels_[0];
  x_.zero(stream_);
  const double* mean = mean_on_device(rhs);
  cuda::pcg_start(stream_, l0, rhs, open, mean, r_.data(), partials_.data());
  pcg_final_sum(stream_, partials_.data(), n_partials_, &st->r2, 0.0);
  pcg_init_on_device(stream_, st, rhs2, tolerance, max_iterations, rec_iterations, rec_relative);
}

// dot_rz, direction, apply and update as on the host, alpha and beta and
// the exit tests on the device.
void CudaPoisson::step_on_device(double tolerance, int max_iterations, int64_t* rec_iterations, double* rec_relative) {
  flush();
  PcgState* st = pcg_.data();
  const DeviceLevel& l0 = levels_[0];
  pcg_dot(stream_, l0, r_.data(), l0.e, partials_.data());
  pcg_final_sum(stream_, partials_.data(), n_partials_, &st->rz, 0.0);
  pcg_beta_on_device(stream_, st);
  cuda::pcg_direction(stream_, l0, ghosts_, l0.e, 0.0, p_.data(), &st->beta);
  cuda::pcg_apply(stream_, l0, p_.data(), q_.data(), partials_.data());
  pcg_final_sum(stream_, partials_.data(), n_partials_, &st->pq, 0.0);
  pcg_alpha_on_device(stream_, st);
  cuda::pcg_update(stream_, l0, 0.0, p_.data(), q_.data(), x_.data(), r_.data(), partials_.data(), st);
  pcg_final_sum(stream_, partials_.data(), n_partials_, &st->r2, 0.0);
  pcg_check_on_device(stream_, st, tolerance, max_iterations, rec_iterations, rec_relative);
}

void CudaPoisson::load_condition(cudaGraphConditionalHandle h) { pcg_load_condition(stream_, h, pcg_.data()); }

void CudaPoisson::finish(float* phi) {
  flush();
  const DeviceLevel& l0 = levels_[0];
  pcg_halo(stream_, l0, ghosts_, x_.data());
  if (rows_) rows_->copy_rows(x_.data(), l0.pitch, split_[0].halo);
  pcg_round(stream_, l0, x_.data(), phi);
}

}  // namespace sim::cuda
