// sim [OPTIONS] CONFIG: run a case; sim bench [OPTIONS] CONFIG: benchmark it.
// See README.md, docs/CONFIG.md and docs/PERFORMANCE.md.
#include <iostream>

#include "io/config_loader.hpp"
#include "sim/app/bench/bench.hpp"
#include "sim/app/cli.hpp"
#include "sim/app/run.hpp"

int main(int argc, char** argv) {
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
