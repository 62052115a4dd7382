// SPDX-License-Identifier: MIT
// The `sim CONFIG` job: build the state, step, report.
#pragma once
#include <algorithm>
#include <iosfwd>
#include <string>

#include "sim/model/backend.hpp"
#include "sim/model/config.hpp"
#include "sim/ranks/comm.hpp"
#include "sim/ranks/decomposition.hpp"

namespace sim {

struct RunOptions {
  bool quiet = false;
  std::string restart;  // snapshot to continue from; empty = initial condition
  bool overwrite = false;  // remove another run's series from the output directory first
  // The ranks of the run (mpirun): more than one splits the grid into slabs
  // of rows on the CPU backend; rank 0 writes the snapshots and prints.
  Comm comm = Comm::serial();
  // What the config loader chose for the GPU strategies the config left
  // automatic (load_config's case_choices), reported on a CUDA backend.
  std::string case_choices;
  // --summary-json: rank 0 writes the summary as JSON there (summary_json),
  // through a temporary file renamed over it; empty = none.
  std::string summary_json;
  // A batch run's progress line on stderr every this many seconds (0: none).
  double progress_every = 10;
};

// SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 from now on stop a run after
// its current step, with its snapshot, and status 128 + the signal's number
// (one that comes before the stepping stops it before its first step).
void install_stop_signals();

// Returns the process exit status; errors are one line on `err`.
int run_simulation(const Config& cfg, const RunOptions& opts, std::ostream& out, std::ostream& err);

// The check of a run's answer: after the last projection, max |div u| h /
// max |u| must stay below divergence_limit(pressure.tolerance), the larger
// of kDivergencePerTolerance times the tolerance and kDivergenceRoundings
// float32 roundings (2^-24). The shipped cases end at 6.2e-8 to 8.1e-8 (1.0
// to 1.4 roundings, whatever the solver reached: the float32 faces bound it);
// two facing inflows with no outflow end at 0.03-0.07. Empty when the check
// passes, else the one-line reason.
constexpr double kDivergencePerTolerance = 10.0;
constexpr double kDivergenceRoundings = 16.0;
inline double divergence_limit(double tolerance) {
  return std::max(kDivergencePerTolerance * tolerance, kDivergenceRoundings * 0x1p-24);
}
std::string divergence_failure(const Config& cfg, const Diagnostics& d, double h);

// A run over `ranks` ranks: what it cannot do (throws its one-line error),
// and the domain its slabs split.
void check_split_run(const Config& cfg, int ranks);
Domain domain_of(const Config& cfg);

}  // namespace sim
