// The `sim CONFIG` job: build the state, step, report.
#pragma once
#include <iosfwd>
#include <string>

#include "sim/config.hpp"
#include "sim/parallel/comm.hpp"
#include "sim/parallel/decomposition.hpp"

namespace sim {

struct RunOptions {
  bool quiet = false;
  std::string restart;  // snapshot to continue from; empty = initial condition
  bool overwrite = false;  // remove another run's series from the output directory first
  // The ranks of the run (mpirun): more than one splits the grid into slabs
  // of rows on the CPU backend; rank 0 writes the snapshots and prints.
  Comm comm = Comm::serial();
};

// Returns the process exit status; errors are one line on `err`.
int run_simulation(const Config& cfg, const RunOptions& opts, std::ostream& out, std::ostream& err);

// A run over `ranks` ranks: what it cannot do (throws its one-line error),
// and the domain its slabs split.
void check_split_run(const Config& cfg, int ranks);
Domain domain_of(const Config& cfg);

}  // namespace sim
