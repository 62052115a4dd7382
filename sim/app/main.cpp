// sim [OPTIONS] CONFIG: run a case; sim bench [OPTIONS] CONFIG: benchmark it.
// See README.md, docs/CONFIG.md and docs/PERFORMANCE.md.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include "io/config_loader.hpp"
#include "sim/app/bench/bench.hpp"
#include "sim/app/cli.hpp"
#include "sim/app/run.hpp"
#include "sim/parallel/comm.hpp"

namespace {

// OpenMP reads OMP_WAIT_POLICY once, as the program loads. Unset, libgomp's
// idle threads spin at every barrier: on a machine whose cores other
// processes are using, the many short parallel regions of a step then wait
// for spinning threads to be scheduled (config/box.toml beside two busy
// processes on 2 cores: 300 steps in 60 s, 5.2 s with the passive policy).
// So, unless the user chose a policy (or a spin count), sim starts itself
// again with OMP_WAIT_POLICY=passive; if that fails it runs on as it is.
void prefer_passive_openmp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT") || std::getenv("SIM_OPENMP_POLICY_SET")) return;
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0 || setenv("SIM_OPENMP_POLICY_SET", "1", 1) != 0) return;
  execv("/proc/self/exe", argv);  // returns only on failure
}

// Started by mpirun (Open MPI, or a PMI launcher): the rank's variables
// are set. Only then does sim start MPI; a plain run never touches it.
const char* launcher_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* r = std::getenv(v)) return r;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  prefer_passive_openmp(argv);
  const char* rank = launcher_rank();
  // Every rank parses the same command line and config: ranks other than 0
  // keep their copies of the same one-line error to themselves.
  std::ostream null_stream(nullptr);
  std::ostream& errors = rank && std::string(rank) != "0" ? null_stream : std::cerr;
  sim::CliOptions cli;
  const int rc = sim::parse_cli(argc, argv, cli, errors);
  if (rc >= 0) return rc;
  std::optional<sim::MpiSession> mpi;
  if (rank && sim::MpiSession::built_with_mpi()) mpi.emplace(&argc, &argv);
  try {
    const sim::Config cfg = sim::load_config(cli.config_path, sim::cli_overrides(cli));
    sim::RunOptions opts;
    if (mpi) opts.comm = sim::Comm::world();
    if (cli.command == sim::Command::bench) {
      if (opts.comm.size() > 1) return sim::run_bench_ranks(cfg, cli.bench, opts.comm, std::cout, std::cerr);
      return sim::run_bench(cfg, cli.bench, std::cout, std::cerr);
    }
    opts.quiet = cli.quiet;
    if (cli.restart) opts.restart = *cli.restart;
    opts.overwrite = cli.overwrite;
    return sim::run_simulation(cfg, opts, std::cout, std::cerr);
  } catch (const sim::ConfigError& e) {
    errors << "sim: error: " << sim::error_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    errors << "sim: error: " << sim::error_line(e.what()) << "\n";
    return 1;
  }
}
