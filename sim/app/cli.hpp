// Command line of the `sim` executable: `sim [OPTIONS] CONFIG` runs a case,
// `sim bench [OPTIONS] CONFIG` benchmarks strategies (sim/app/bench/bench.hpp). Every
// typed config option becomes a `--set KEY=VALUE` override, so the command
// line and the config file are validated by the same code (io/config_loader).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/app/bench/bench.hpp"

namespace sim {

enum class Command { run, bench };

struct CliOptions {
  Command command = Command::run;
  std::string config_path;
  std::optional<int64_t> steps;
  std::optional<std::string> output;
  std::optional<int64_t> snapshot_every;
  std::vector<std::string> sets;  // --set KEY=VALUE, in command-line order
  std::optional<uint64_t> seed;
  bool quiet = false;
  std::optional<std::string> restart;
  // Strategy options given (sim/strategies.hpp): option name -> value as typed.
  std::map<std::string, std::string, std::less<>> strategies;
  BenchOptions bench;  // `sim bench` only: the matrix axes, steps, outputs
};

// -1: go on; 0: --help or --version printed to `out`; 2: usage error, one
// line "sim: error: ..." on `err`. A first argument `bench` selects the
// bench command and its options.
int parse_cli(int argc, char** argv, CliOptions& options, std::ostream& out, std::ostream& err);
// As above, printing --help and --version to std::cout.
int parse_cli(int argc, char** argv, CliOptions& options, std::ostream& err);

// The explicit --set values, then the typed options as KEY=VALUE (typed win).
std::vector<std::string> cli_overrides(const CliOptions& options);

}  // namespace sim
