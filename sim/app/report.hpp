// SPDX-License-Identifier: MIT
// The end-of-run summary table and the progress line.
#pragma once
#include <array>
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/model/backend.hpp"
#include "sim/model/simulation.hpp"

namespace sim {

struct RunSummary {
  std::string config, backend, strategies, pressure_solver;
  std::string advection = "central";  // fluid.advection
  int64_t steps = 0;
  double sim_time = 0, wall_s = 0;
  double start_time = 0;  // simulated time at the start (a restart's), for simulated s per wall s
  double end_time = 0;    // run.end_time; 0 = none
  std::array<double, kPhaseCount> phase_ms{};
  double pressure_iterations_mean = 0;
  PressureStats last_pressure;
  double tolerance = 0;
  int64_t pressure_unconverged = 0;      // solves that missed the tolerance
  double pressure_worst_residual = 0;    // the largest relative residual among them
  int64_t viscous_limited_steps = 0;     // adaptive steps set by the viscous limit (explicit viscosity)
  int64_t dt_max_steps = 0;              // adaptive steps set by time.dt_max
  bool fixed_dt = false;                 // time.dt given
  bool implicit_viscosity = true;        // the viscous term in force (Config::implicit_viscosity)
  bool implicit_asked = true;            // fluid.viscous = implicit
  double viscous_iterations_mean = 0;    // Chebyshev iterations (transform: solves) of the implicit solves per step
  bool viscous_transform = false;        // the implicit solves are transform solves (fluid.viscous_solver)
  int fixed_iterations = 0;              // pressure.fixed_iterations (0: solves run to the tolerance)
  int64_t viscous_unconverged = 0;       // implicit solves that missed the tolerance
  double viscous_worst_residual = 0;
  Diagnostics diag;
  std::vector<std::string> obstacles;  // each obstacle's shape, config order (its force is in diag)
  double h = 0;
  double output_hidden_ms = 0;  // part of the output time overlapped with stepping
  // The snapshots the writer thread wrote: count, bytes, and its time by
  // part (SnapshotTiming: the device copy's arrival, fields, HDF5, fsync).
  int64_t snapshots = 0;
  uint64_t snapshot_bytes = 0;
  double snapshot_take_ms = 0, snapshot_fields_ms = 0, snapshot_hdf5_ms = 0, snapshot_sync_ms = 0;
  // A run over several ranks: their count, rows per rank, and each rank's
  // time in communication (reductions, halo rows, gathers, migration).
  int ranks = 1;
  std::vector<int> rank_rows;
  std::vector<double> rank_comm_ms;
  double comm_calls_max = 0;  // exchanges and reductions of the busiest rank, all steps
  bool collective_output = false;  // snapshots written by all ranks together (parallel HDF5)
  std::string answer_check;        // why the answer fails its check (divergence_failure); empty: it passes
};

void print_summary(std::ostream& os, const RunSummary& s);
// "step 120/1000  t = ...": `total` INT64_MAX (no step limit) leaves it out;
// `end_time` > 0 adds it after t.
std::string progress_line(int64_t step, int64_t total, double sim_time, double ms_per_step, double eta_s,
                          double end_time = 0);
// "1000 steps, simulated time 1.36 s (0.168 s per wall second), wall 8.057 s, 124.1 steps/s": the line
// scripts read (the figures' places: scripts/dt-convergence.sh, cpu-ranks.sh, bench-pressure.sh).
std::string steps_line(const RunSummary& s);
// The summary as a JSON object (OUTPUT/summary.json, and `sim --summary-json
// FILE`): the same figures as print_summary, one key each
// (sim/app/summary_json.cpp; the keys in docs/OUTPUT.md). format_version
// changes when a key is renamed or removed, not when one is added.
constexpr int kSummaryFormatVersion = 1;
std::string summary_json(const RunSummary& s);

}  // namespace sim
