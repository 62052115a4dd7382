// SPDX-License-Identifier: MIT
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
  std::optional<std::string> end_time;  // --end-time, as typed (the loader checks it as run.end_time)
  std::optional<std::string> output;
  std::optional<int64_t> snapshot_every;
  std::vector<std::string> sets;  // --set KEY=VALUE, in command-line order
  std::optional<uint64_t> seed;
  bool quiet = false;
  std::optional<std::string> restart;
  bool overwrite = false;  // --overwrite: replace another run's snapshots in the output directory
  std::optional<std::string> summary_json;  // --summary-json FILE: the summary as JSON too
  std::optional<double> progress_every;     // --progress-every S: a batch run's progress interval [s]
  // Strategy options given (sim/model/strategies.hpp): option name -> value as typed.
  std::map<std::string, std::string, std::less<>> strategies;
  BenchOptions bench;  // `sim bench` only: the matrix axes, steps, outputs
};

// -1: go on; 0: --help or --version printed to `out`; 2: usage error, one
// line "sim: error: ..." on `err`. A first argument `bench` selects the
// bench command and its options.
int parse_cli(int argc, char** argv, CliOptions& options, std::ostream& out, std::ostream& err);
// As above, printing --help and --version to std::cout.
int parse_cli(int argc, char** argv, CliOptions& options, std::ostream& err);

// An error message as one line: control characters shown as '?'; past
// 1024 characters its middle gives way to " [...] " (an argument of
// megabytes must not come back to the terminal), its first 320 and last
// 697 characters kept, so the reason at the end of a long path survives.
std::string error_line(const std::string& message);

// `value` for a message: cut to a few dozen characters with "...".
std::string shown_value(const std::string& value);

// Throws std::runtime_error "<what>: ..." when `path` holds a NUL or another
// control character (a NUL would cut the path short at the system call).
void check_path(const std::string& what, const std::string& path);

// The explicit --set values, then the typed options as KEY=VALUE (typed win).
std::vector<std::string> cli_overrides(const CliOptions& options);

}  // namespace sim
