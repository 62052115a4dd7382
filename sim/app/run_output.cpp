// SPDX-License-Identifier: MIT
#include "sim/app/run_output.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <system_error>

#include "io/snapshot_files.hpp"
#include "sim/model/elapsed.hpp"
#include "sim/ranks/agree.hpp"
#include "sim/ranks/rank_split.hpp"

namespace sim {
using Clock = SteadyClock;

bool same_directory(const std::string& file, const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::absolute(file, ec).parent_path();
  return !ec && std::filesystem::equivalent(parent, dir, ec) && !ec;
}

RunOutput::RunOutput(const Config& cfg, const SimState& start, const RunOptions& opts, const Backend& backend,
                     const std::string& solver, SetAsideSeries* aside)
    : aside_(aside),
      first_step_(start.step),
      fresh_(opts.restart.empty()),
      initial_snapshot_(cfg.snapshot_initial),
      comm_(opts.comm),
      root_(opts.comm.rank() == 0),
      collective_(opts.comm.size() > 1 && cfg.collective && collective_snapshots_available()),
      dir_(cfg.output) {
  every_ = cfg.snapshot_every;
  diagnostics_every_ = cfg.diagnostics_every;
  if (!fresh_) last_written_ = start.step;  // the restart file itself
  const std::string strategies = backend.name() + " | " + backend.strategies() + " | pressure solver " + solver;
  if (collective_) meta_ = make_snapshot_meta(cfg, strategies);
  if (!root_) return;
  SnapshotSeries series(cfg.output);
  // Restarting inside the output directory continues its series in sim.xdmf
  // and diagnostics.csv.
  const bool continues = !fresh_ && same_directory(opts.restart, cfg.output);
  if (continues) series.adopt_existing(start.step, start.grid.nx, start.grid.ny);
  if (diagnostics_every_ > 0)
    csv_.emplace(cfg.output, static_cast<int>(cfg.obstacles.size()), continues ? start.step : -1);
  if (collective_) series_.emplace(std::move(series));
  else writer_.emplace(make_snapshot_meta(cfg, strategies), std::move(series));
}

RunOutput::~RunOutput() {
  if (!aside_ || aside_->committed()) return;
  writer_.reset();  // its pending writes done
  csv_.reset();
  for (const std::string& n : series_files(dir_)) ::unlink(join_path(dir_, n).c_str());
}

void RunOutput::start(Simulation& sim) {
  if (!fresh_) return;
  if (initial_snapshot_) write(sim);
  if (diagnostics_every_ > 0) row(sim);
}

void RunOutput::after_step(Simulation& sim) {
  const int64_t step = sim.step_index();
  if ((every_ > 0 && step % every_ == 0) || sim.landed_on_interval()) write(sim);
  if (diagnostics_every_ > 0 && step % diagnostics_every_ == 0) row(sim);
  if (aside_ && !aside_->committed()) commit_if_written();
}

void RunOutput::finish(Simulation& sim) {
  if (last_written_ != sim.step_index()) write(sim);
  if (writer_) {
    const auto t0 = Clock::now();
    writer_->finish();
    main_ms_ += ms_since(t0);
  }
  if (aside_) commit_if_written();
}

// The old series goes once a snapshot of this run after its first step
// is on disk. A snapshot of the start itself is written before the first
// step (run.snapshot_initial) or by a run that made no step (finish), so
// any snapshot written after one was submitted past the start is such a
// snapshot.
void RunOutput::commit_if_written() {
  const int64_t done = writer_ ? writer_->timing().written : collective_written_;
  if (submitted_after_first_ && done >= 1) aside_->commit();
}

void RunOutput::write(Simulation& sim) {
  if (sim.step_index() > first_step_) submitted_after_first_ = true;
  const auto t0 = Clock::now();
  if (collective_) {
    const SimState part = sim.download_own();
    const int j0 = sim.backend().ranks().j0(), j1 = sim.backend().ranks().j1();
    const std::string path = join_path(dir_, snapshot_file_name(part.step));
    agree(comm_, [&] {
      if (series_) series_->ensure_index();
    });
    write_snapshot_collective(path, part, j0, j1, meta_, comm_);
    agree(comm_, [&] {
      if (series_) series_->add(path);
    });
    ++collective_written_;
  } else {
    std::unique_ptr<PendingState> state = sim.begin_download();
    if (writer_) writer_->submit(std::move(state));
  }
  main_ms_ += ms_since(t0);
  last_written_ = sim.step_index();
}

// One row of diagnostics.csv: the sums on every rank, the line on rank 0.
// An asynchronous backend is drained first (its clock, the step's solves):
// only the steps with a row pay for it. The wait for the queued steps is
// not the output's: their kernels' time is in their phases already (a GPU
// times its phases with events), so the output phase starts after it.
void RunOutput::row(Simulation& sim) {
  sim.drain();
  sim.backend().synchronize();
  const auto t0 = Clock::now();
  DiagnosticsRow r;
  r.d = sim.diagnostics();
  r.step = sim.step_index();
  r.time = sim.time();
  r.dt = sim.step_index() > 0 ? sim.dt() : 0.0;
  const PressureStats& p = sim.last_pressure();
  r.pressure_iterations = sim.step_index() > first_step_ ? double(p.iterations) / kStepSolves : 0.0;
  r.pressure_residual = sim.step_index() > first_step_ ? p.residual : 0.0;
  agree(comm_, [&] {
    if (csv_) csv_->write(r);
  });
  main_ms_ += ms_since(t0);
}

}  // namespace sim
