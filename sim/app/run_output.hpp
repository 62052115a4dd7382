// SPDX-License-Identifier: MIT
// What a run writes as it steps: its snapshots (the series index, the
// writer) and diagnostics.csv, with the main-thread time they cost.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "io/diagnostics_csv.hpp"
#include "io/output_lock.hpp"
#include "io/snapshot_series.hpp"
#include "io/snapshot_thread.hpp"
#include "io/snapshot_writer.hpp"
#include "sim/app/run.hpp"
#include "sim/model/simulation.hpp"

namespace sim {

// Whether `file` lies in directory `dir`.
bool same_directory(const std::string& file, const std::string& dir);

// Snapshots of one run: the series index, the writer, and the main-thread
// time they cost (download and waits). One rank writes on a thread of its
// own while the stepping goes on. Over several ranks, with parallel HDF5
// every rank writes its own rows and particles into the file together
// (write_snapshot_collective) on the main thread, MPI being called from
// that thread only; without it every rank takes part in each download (it
// gathers the state onto rank 0) and rank 0 writes on its thread. Rank 0
// keeps the index and diagnostics.csv either way; every rank takes part in
// a row's sums (Simulation::diagnostics).
class RunOutput {
 public:
  // `aside`: the series --overwrite set aside (rank 0, or null), committed
  // once a snapshot after the first step is on disk.
  RunOutput(const Config& cfg, const SimState& start, const RunOptions& opts, const Backend& backend,
            const std::string& solver, SetAsideSeries* aside);
  // A run that ends with the old series still set aside (it failed, or a
  // signal stopped it, before it had results) takes back what it wrote into
  // the directory, so the old series returns whole.
  ~RunOutput();
  RunOutput(const RunOutput&) = delete;
  RunOutput& operator=(const RunOutput&) = delete;

  // Before the first step of a fresh run: the initial snapshot
  // (run.snapshot_initial) and the first row of diagnostics.csv.
  void start(Simulation& sim);
  void after_step(Simulation& sim);
  // The final state, unless it is already on disk; then waits for the writer.
  void finish(Simulation& sim);

  double main_thread_ms() const { return main_ms_; }
  // The writer thread's; a collective write runs on the main thread, all of
  // it in main_thread_ms, none hidden.
  SnapshotTiming timing() const { return writer_ ? writer_->timing() : SnapshotTiming{}; }
  bool collective() const { return collective_; }

 private:
  void commit_if_written();
  void write(Simulation& sim);
  void row(Simulation& sim);

  SetAsideSeries* aside_ = nullptr;
  int64_t first_step_ = 0;
  bool fresh_ = true;  // from the initial condition, not a restart
  bool initial_snapshot_ = true;
  bool submitted_after_first_ = false;
  int64_t collective_written_ = 0;
  Comm comm_;
  bool root_ = true, collective_ = false;
  std::string dir_;
  SnapshotMeta meta_;                      // collective: every rank's copy
  std::optional<SnapshotSeries> series_;   // collective: rank 0's index
  std::optional<SnapshotThread> writer_;   // otherwise: rank 0's writer
  std::optional<DiagnosticsCsv> csv_;      // rank 0's, with run.diagnostics_every > 0
  int64_t every_ = 0, diagnostics_every_ = 0;
  int64_t last_written_ = -1;
  double main_ms_ = 0;
};

}  // namespace sim
