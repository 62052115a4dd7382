// sim [OPTIONS] CONFIG: run a case; sim bench [OPTIONS] CONFIG: benchmark it.
// See README.md, docs/CONFIG.md and docs/PERFORMANCE.md.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "io/config_loader.hpp"
#include "sim/app/bench/bench.hpp"
#include "sim/app/cli.hpp"
#include "sim/app/run.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  prefer_passive_openmp(argv);
  sim::CliOptions cli;
  const int rc = sim::parse_cli(argc, argv, cli, std::cerr);
  if (rc >= 0) return rc;
  try {
    const sim::Config cfg = sim::load_config(cli.config_path, sim::cli_overrides(cli));
    if (cli.command == sim::Command::bench) return sim::run_bench(cfg, cli.bench, std::cout, std::cerr);
    sim::RunOptions opts;
    opts.quiet = cli.quiet;
    if (cli.restart) opts.restart = *cli.restart;
    opts.overwrite = cli.overwrite;
    return sim::run_simulation(cfg, opts, std::cout, std::cerr);
  } catch (const sim::ConfigError& e) {
    std::cerr << "sim: error: " << sim::error_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "sim: error: " << sim::error_line(e.what()) << "\n";
    return 1;
  }
}
