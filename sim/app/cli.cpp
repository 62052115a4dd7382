// SPDX-License-Identifier: MIT
#include "sim/app/cli.hpp"
#include "sim/app/version.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iostream>
#include <limits>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "io/config_schema.hpp"
#include "io/config_writer.hpp"
#include "sim/model/strategies.hpp"

namespace sim {
namespace {

// Every integer option takes the same forms: decimal digits with an
// optional sign (+ or -). Not CLI11's (strtoll base 0): no hexadecimal
// ("0x10"), no octal ("010" is ten), no binary, no spaces.
enum class IntForm { ok, empty, malformed, out_of_range };

IntForm parse_decimal(const std::string& v, int64_t& x) {
  if (v.empty()) return IntForm::empty;
  const char* p = v.data();
  const char* end = p + v.size();
  if (*p == '+') ++p;
  if (p == end || !(*p == '-' ? p == v.data() && p + 1 != end && std::isdigit(static_cast<unsigned char>(p[1]))
                              : std::isdigit(static_cast<unsigned char>(*p)) != 0))
    return IntForm::malformed;
  const auto [q, ec] = std::from_chars(p, end, x);
  if (q != end) return IntForm::malformed;
  if (ec == std::errc::result_out_of_range) return IntForm::out_of_range;
  return ec == std::errc() ? IntForm::ok : IntForm::malformed;
}

// The value as a message shows it.
std::string got(const std::string& v) { return v.empty() ? std::string("an empty value") : shown_value(v); }

// TOML integers are signed 64-bit, so a seed must fit in one.
CLI::Validator seed_range() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        int64_t x = 0;
        if (parse_decimal(v, x) == IntForm::ok && x >= 0) {
          v = std::to_string(x);  // what CLI11 converts: plain decimal
          return {};
        }
        return "expected an integer in [0, " + std::to_string(std::numeric_limits<int64_t>::max()) + "], got " +
               got(v);
      },
      "");
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return error_line(s);
}

// A whole 64-bit integer (sign allowed: the config loader words the range
// error, as for the file); CLI11 alone saturates 99999999999999999999 to
// INT64_MAX, takes "" as 0 and "010" as 8.
std::string int64_error(IntForm form, const std::string& v) {
  if (form == IntForm::out_of_range) return "out of range of a 64-bit integer: " + shown_value(v);
  return "expected an integer, got " + got(v);
}

CLI::Validator int64_value() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        int64_t x = 0;
        const IntForm form = parse_decimal(v, x);
        if (form != IntForm::ok) return int64_error(form, v);
        v = std::to_string(x);  // what CLI11 converts: plain decimal
        return {};
      },
      "");
}

// A path: not empty, no control characters (checked again by the run, for
// paths that come from the config file or --set).
CLI::Validator path_value() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        if (v.empty()) return "expected a path, got an empty value";
        try {
          check_path("path", v);
        } catch (const std::exception& e) {
          return std::string(e.what()).substr(6);  // without "path: "
        }
        return {};
      },
      "");
}

template <class T>
void take(const CLI::Option* opt, const T& value, std::optional<T>& into) {
  if (opt->count() > 0) into = value;
}

// Parses, turning help, version and usage errors into the exit status
// (-1 go on, 0 printed, 2 usage error).
int parse_app(CLI::App& app, int argc, char** argv, std::ostream& out, std::ostream& err) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    err << "sim: error: " << one_line(e.what()) << "\n";
    return 2;
  }
  return -1;
}

// An integer, or a count with a K (2^10) or M (2^20) suffix when `suffixes`
// (out_of_range when the suffix takes it past 64 bits).
IntForm parse_count(const std::string& v, bool suffixes, int64_t& out) {
  std::string digits = v;
  int64_t scale = 1;
  if (suffixes && !v.empty() && (v.back() == 'K' || v.back() == 'M')) {
    scale = v.back() == 'K' ? int64_t(1) << 10 : int64_t(1) << 20;
    digits.pop_back();
    if (digits.empty()) return IntForm::malformed;
  }
  int64_t x = 0;
  const IntForm form = parse_decimal(digits, x);
  if (form != IntForm::ok) return form;
  if (x > std::numeric_limits<int64_t>::max() / scale || x < std::numeric_limits<int64_t>::min() / scale)
    return IntForm::out_of_range;
  out = x * scale;
  return IntForm::ok;
}

CLI::Validator count_in(int64_t lo, int64_t hi, bool suffixes) {
  return CLI::Validator(
      [lo, hi, suffixes](std::string& v) -> std::string {
        int64_t x = 0;
        const IntForm form = parse_count(v, suffixes, x);
        if (form == IntForm::ok && x >= lo && x <= hi) {
          v = std::to_string(x);  // plain decimal, the suffix applied
          return {};
        }
        if (form == IntForm::out_of_range) return "out of range of a 64-bit integer: " + shown_value(v);
        const std::string range = hi == std::numeric_limits<int64_t>::max()
                                      ? ">= " + std::to_string(lo)
                                      : "in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
        return "expected an integer " + range + (suffixes ? " (K and M suffixes allowed)" : "") + ", got " + got(v);
      },
      "");
}

CLI::Validator count_at_least(int64_t lo, bool suffixes) {
  return count_in(lo, std::numeric_limits<int64_t>::max(), suffixes);
}

// A number of seconds: decimal, finite, >= 0 (CLI11's NonNegativeNumber
// takes "nan", "inf" and hexadecimal floats).
CLI::Validator seconds_value() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        const char* p = v.data() + (!v.empty() && v[0] == '+');
        const char* end = v.data() + v.size();
        double x = 0;
        const auto [q, ec] = p == end || !(std::isdigit(static_cast<unsigned char>(*p)) || *p == '.')
                                 ? std::from_chars_result{p, std::errc::invalid_argument}
                                 : std::from_chars(p, end, x);
        if (ec == std::errc() && q == end && std::isfinite(x) && x >= 0) {
          v = std::string(p, end);
          return {};
        }
        return "expected a finite number >= 0, got " + got(v);
      },
      "");
}

// A number for a key the config loader checks, which words a range error
// as for the file: decimal, finite, either sign (CLI11 alone takes "nan",
// "inf" and hexadecimal floats); passed on as TOML spells a float.
CLI::Validator number_value() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        const char* p = v.data() + (!v.empty() && v[0] == '+');
        const char* end = v.data() + v.size();
        double x = 0;
        const auto [q, ec] = p == end || !(std::isdigit(static_cast<unsigned char>(*p)) || *p == '.' || *p == '-')
                                 ? std::from_chars_result{p, std::errc::invalid_argument}
                                 : std::from_chars(p, end, x);
        if (ec == std::errc() && q == end && std::isfinite(x)) {
          v = format_number(x);
          if (v.find_first_of(".eE") == std::string::npos) v += ".0";
          return {};
        }
        return "expected a finite number, got " + got(v);
      },
      "");
}

// The largest --copy-mib: 1 TiB a buffer (two are allocated), far past any
// host's or GPU's memory today; run_bench checks it against what is there.
constexpr int64_t kMaxCopyMiB = int64_t(1) << 20;

template <class E>
std::vector<E> enums_of(const std::vector<std::string>& names) {
  std::vector<E> out;
  for (const std::string& n : names)
    if (const auto e = parse_enum<E>(n); e && std::find(out.begin(), out.end(), *e) == out.end()) out.push_back(*e);
  return out;
}

std::string joined(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : "|") + std::string(n);
  return out;
}

// Whether an integer option also takes the word "auto" (its config key does).
bool takes_auto(const StrategyOption& o) {
  const FieldInfo* f = config_schema().find(o.key);
  return o.choices.empty() && f && f->auto_value;
}

// One of the option's names, or (no names) an integer or, where the key
// takes it, "auto"; worded as the config loader, so both front ends read alike.
CLI::Validator strategy_value(const StrategyOption& o) {
  return CLI::Validator(
      [&o](std::string& v) -> std::string {
        if (o.choices.empty()) {
          if (v == "auto" && takes_auto(o)) return {};
          int64_t x = 0;
          const IntForm form = parse_decimal(v, x);
          if (form == IntForm::out_of_range || (form != IntForm::ok && !takes_auto(o))) return int64_error(form, v);
          if (form != IntForm::ok) return "expected an integer or \"auto\", got " + got(v);
          v = std::to_string(x);
          return {};
        }
        if (std::find(o.choices.begin(), o.choices.end(), v) != o.choices.end()) return {};
        return "expected one of " + joined(o.choices) + ", got " + shown_value(toml_string_literal(v));
      },
      "");
}

std::string help_of(const StrategyOption& o) { return std::string(o.help) + " (" + std::string(o.key) + ")"; }
std::string type_of(const StrategyOption& o) {
  return o.choices.empty() ? (takes_auto(o) ? "N|auto" : "N") : joined(o.choices);
}

// A typed option per strategy (the last of repeats wins), gathered into `into` after parsing.
struct StrategyFlags {
  std::vector<std::pair<const StrategyOption*, std::string>> values;
  void add(CLI::App& app, const StrategyOption& o) {
    values.emplace_back(&o, std::string());
    app.add_option(std::string(o.flag), values.back().second, help_of(o))->type_name(type_of(o))->transform(strategy_value(o));
  }
  void take(CLI::App& app, std::map<std::string, std::string, std::less<>>& into) const {
    for (const auto& [o, v] : values)
      if (app.get_option(std::string(o->flag))->count() > 0) into[std::string(o->name)] = v;
  }
};

// A comma-separated, repeatable list of an axis's values.
CLI::Option* axis_list(CLI::App& app, const StrategyOption& o, std::vector<std::string>& into) {
  return app.add_option(std::string(o.flag), into, std::string(o.help) + "; comma-separated or repeated, default all")
      ->type_name(type_of(o) + ",...")
      ->delimiter(',')
      ->transform(strategy_value(o))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

int parse_bench(int argc, char** argv, CliOptions& options, std::ostream& out, std::ostream& err) {
  CLI::App app{"Benchmark the run-time strategies of a case against each other, or (--micro) single kernels.\n"
               "Every variant starts from the same initial state on a fresh backend.",
               "sim bench"};
  app.footer("Results: docs/PERFORMANCE.md. --set, --backend, --block-x/-y and --sort-every change the config as in\n"
             "`sim CONFIG`; the strategy lists are the axes of the matrix.");
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  CliOptions r;
  r.command = Command::bench;
  BenchOptions& b = r.bench;
  std::string steps = "50", warmup = "10", repeats = "3", copy_mib;
  std::vector<std::string> sizes, particles;
  std::map<std::string, std::vector<std::string>, std::less<>> axes;
  StrategyFlags flags;
  flags.values.reserve(strategy_options().size());

  app.add_option("CONFIG", r.config_path, "TOML config file (--micro: physical constants and backend only)")
      ->required()->check(path_value());
  for (const StrategyOption& o : strategy_options())
    if (o.bench_axis) axis_list(app, o, axes[std::string(o.name)]);
  app.add_option("--steps", steps, "Timed steps per variant (--micro: fewest repeats per trial)")
      ->type_name("N")->transform(count_at_least(1, false))->capture_default_str();
  app.add_option("--warmup", warmup, "Untimed steps (--micro: calls) before timing")
      ->type_name("W")->transform(count_at_least(0, false))->capture_default_str();
  app.add_option("--repeats", repeats, "Timed blocks of --steps steps per variant: each row's min, median and max")
      ->type_name("R")->transform(count_at_least(1, false))->capture_default_str();
  app.add_option("--csv", b.csv, "Write the results as CSV")->type_name("FILE")->check(path_value());
  app.add_option("--json", b.json, "Write the results as JSON")->type_name("FILE")->check(path_value());
  app.add_flag("--micro", b.micro, "Micro-benchmarks: pressure sweeps and the particle step");
  app.add_option("--micro-sizes", sizes, "Grid sides n of the n x n sweep benchmarks (default 2048,8192,16384)")
      ->type_name("N,...")->delimiter(',')->transform(count_in(8, std::numeric_limits<int>::max(), false))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--micro-particles", particles, "Particle counts of the particle-step benchmark (default 16M,64M)")
      ->type_name("N,...")->delimiter(',')->transform(count_at_least(1, true))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--max-seconds", b.max_seconds, "Start no variant after this many seconds; the rest are reported as skipped")
      ->type_name("S")->transform(seconds_value());
  app.add_option("--copy-mib", copy_mib, "Buffer size of the copy-bandwidth ceiling (default 1024 GPU, 512 CPU)")
      ->type_name("MIB")->transform(count_in(1, kMaxCopyMiB, false));
  for (const StrategyOption& o : strategy_options())
    if (!o.bench_axis) flags.add(app, o);
  app.add_option("--set", r.sets, "Override a config key; repeatable")
      ->type_name("KEY=VALUE")->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--quiet", b.quiet, "Print only the table");

  // argv[0] is "sim", argv[1] "bench": CLI11 takes argv[0] as the program name.
  const int rc = parse_app(app, argc - 1, argv + 1, out, err);
  if (rc >= 0) return rc;

  flags.take(app, r.strategies);
  b.layouts = enums_of<Layout>(axes["layout"]);
  b.stencils = enums_of<Stencil>(axes["stencil"]);
  b.constants = enums_of<ConstantsIn>(axes["constants"]);
  b.samplings = enums_of<Sampling>(axes["sampling"]);
  b.deposits = enums_of<Deposit>(axes["deposit"]);
  b.solvers = enums_of<PressureSolverKind>(axes["pressure_solver"]);
  b.advections = enums_of<AdvectionScheme>(axes["advection"]);
  // The validators left plain decimal integers in range.
  parse_count(steps, false, b.steps);
  parse_count(warmup, false, b.warmup);
  parse_count(repeats, false, b.repeats);
  if (!copy_mib.empty()) parse_count(copy_mib, false, b.copy_mib);
  for (const std::string& v : sizes) {
    int64_t n = 0;
    parse_count(v, false, n);
    b.micro_sizes.push_back(static_cast<int>(n));
  }
  for (const std::string& v : particles) {
    int64_t n = 0;
    parse_count(v, false, n);
    b.micro_particles.push_back(n);
  }
  r.quiet = b.quiet;
  options = std::move(r);
  return -1;
}

}  // namespace

std::string shown_value(const std::string& value) {
  constexpr size_t kMax = 40;
  return value.size() <= kMax ? value : value.substr(0, kMax) + "...";
}

std::string error_line(const std::string& message) {
  // Long messages lose their middle, never their end: a long path is cut
  // inside, and the reason after it ("Permission denied") stays.
  constexpr size_t kMax = 1024, kHead = 320, kTail = kMax - kHead;
  std::string s = message.size() <= kMax
                      ? message
                      : message.substr(0, kHead) + " [...] " + message.substr(message.size() - kTail);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

void check_path(const std::string& what, const std::string& path) {
  for (const char c : path)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      throw std::runtime_error(what + ": the path holds a control character (" +
                               (c == 0 ? std::string("NUL") : "byte " + std::to_string(int(c))) + "): " +
                               shown_value(path));
}

int parse_cli(int argc, char** argv, CliOptions& options, std::ostream& out, std::ostream& err) {
  if (argc > 1 && std::string(argv[1]) == "bench") return parse_bench(argc, argv, options, out, err);
  CLI::App app{"2D incompressible Navier-Stokes (MAC grid) with inertial particles.", "sim"};
  app.set_version_flag("--version", version_line());
  app.footer("Typed options are shorthands for --set KEY=VALUE and are validated like the config file;\n"
             "they are applied after every --set. Keys, units and ranges: docs/CONFIG.md.\n"
             "sim bench [OPTIONS] CONFIG times the strategies against each other (sim bench --help).");

  // A repeated option takes its last value, as a repeated --set does.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  CliOptions r;
  int64_t steps = 0, snapshot_every = 0;
  uint64_t seed = 0;
  std::string output, restart;
  StrategyFlags flags;
  flags.values.reserve(strategy_options().size());

  app.add_option("CONFIG", r.config_path, "TOML config file")->required()->check(path_value());
  auto* o_steps = app.add_option("--steps", steps, "Time steps to run (run.steps)")->type_name("N")->transform(int64_value());
  std::string end_time;
  auto* o_end = app.add_option("--end-time", end_time,
                               "Simulated time to stop at, the last step landing on it; run.steps then caps the run "
                               "only when given (run.end_time)")
                    ->type_name("T")->transform(number_value());
  auto* o_output =
      app.add_option("--output", output, "Output directory (run.output)")->type_name("DIR")->check(path_value());
  auto* o_snap = app.add_option("--snapshot-every", snapshot_every, "Snapshot interval (run.snapshot_every)")
                     ->type_name("N")->transform(int64_value());
  app.add_option("--set", r.sets, "Override a config key; repeatable (value parsed as TOML, bare words as strings)")
      ->type_name("KEY=VALUE")->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  auto* o_seed = app.add_option("--seed", seed, "Random seed (run.seed)")->type_name("N")->transform(seed_range());
  app.add_flag("--quiet", r.quiet, "Print only errors");
  auto* o_restart =
      app.add_option("--restart", restart, "Continue from a snapshot file")->type_name("FILE")->check(path_value());
  std::string summary_json;
  auto* o_json = app.add_option("--summary-json", summary_json,
                                "Also write the end-of-run summary as JSON to FILE (replaced whole, or left as it was)")
                     ->type_name("FILE")->check(path_value());
  double progress_every = 10;
  auto* o_progress = app.add_option("--progress-every", progress_every,
                                    "In a batch run (output not a terminal): a progress line on stderr every S seconds "
                                    "(default 10; 0: none)")
                         ->type_name("S")->check(CLI::Range(0.0, 1e9));
  app.add_flag("--overwrite", r.overwrite,
               "Replace an earlier run's snapshots and sim.xdmf in the output directory (kept aside until this run has results)");
  for (const StrategyOption& o : strategy_options()) flags.add(app, o);

  const int rc = parse_app(app, argc, argv, out, err);
  if (rc >= 0) return rc;

  take(o_steps, steps, r.steps);
  take(o_end, end_time, r.end_time);
  take(o_output, output, r.output);
  take(o_snap, snapshot_every, r.snapshot_every);
  take(o_seed, seed, r.seed);
  take(o_restart, restart, r.restart);
  take(o_json, summary_json, r.summary_json);
  take(o_progress, progress_every, r.progress_every);
  flags.take(app, r.strategies);
  options = std::move(r);
  return -1;
}

int parse_cli(int argc, char** argv, CliOptions& options, std::ostream& err) {
  return parse_cli(argc, argv, options, std::cout, err);
}

std::vector<std::string> cli_overrides(const CliOptions& o) {
  std::vector<std::string> v = o.sets;
  auto number = [&](const char* key, const auto& opt) {
    if (opt) v.push_back(std::string(key) + "=" + std::to_string(*opt));
  };
  auto text = [&](const char* key, const std::optional<std::string>& opt) {
    if (opt) v.push_back(std::string(key) + "=" + toml_string_literal(*opt));
  };
  number("run.steps", o.steps);
  if (o.end_time) v.push_back("run.end_time=" + *o.end_time);
  number("run.seed", o.seed);
  number("run.snapshot_every", o.snapshot_every);
  text("run.output", o.output);
  for (const StrategyOption& s : strategy_options()) {
    const auto given = o.strategies.find(s.name);
    if (given == o.strategies.end()) continue;
    const bool number = s.choices.empty() && given->second != "auto";
    v.push_back(std::string(s.key) + "=" + (number ? given->second : toml_string_literal(given->second)));
  }
  return v;
}

}  // namespace sim
