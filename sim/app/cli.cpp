#include "sim/app/cli.hpp"

#include <algorithm>
#include <iostream>
#include <limits>

#include <CLI/CLI.hpp>

#include "io/config_writer.hpp"
#include "sim/strategies.hpp"

namespace sim {
namespace {

// Same wording as the config loader, so both front ends read alike.
template <class E>
CLI::Validator choice_of() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        if (parse_enum<E>(v)) return {};
        return "expected one of " + enum_choices<E>() + ", got " + toml_string_literal(v);
      },
      "");
}

// TOML integers are signed 64-bit, so a seed must fit in one.
CLI::Validator seed_range() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        uint64_t x = 0;
        if (!v.empty() && v[0] != '-' && CLI::detail::lexical_cast(v, x) &&
            x <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          return {};
        return "expected an integer in [0, " + std::to_string(std::numeric_limits<int64_t>::max()) + "], got " + v;
      },
      "");
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
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

// An integer >= lo, or a count with a K (2^10) or M (2^20) suffix when `suffixes`.
bool parse_count(const std::string& v, int64_t lo, bool suffixes, int64_t& out) {
  std::string digits = v;
  int64_t scale = 1;
  if (suffixes && !v.empty() && (v.back() == 'K' || v.back() == 'M')) {
    scale = v.back() == 'K' ? int64_t(1) << 10 : int64_t(1) << 20;
    digits.pop_back();
  }
  int64_t x = 0;
  if (digits.empty() || digits[0] == '-' || !CLI::detail::lexical_cast(digits, x)) return false;
  if (x > std::numeric_limits<int64_t>::max() / scale || x * scale < lo) return false;
  out = x * scale;
  return true;
}

CLI::Validator count_at_least(int64_t lo, bool suffixes) {
  return CLI::Validator(
      [lo, suffixes](std::string& v) -> std::string {
        int64_t x = 0;
        if (parse_count(v, lo, suffixes, x)) return {};
        return "expected an integer >= " + std::to_string(lo) + (suffixes ? " (K and M suffixes allowed)" : "") +
               ", got " + v;
      },
      "");
}

template <class E>
std::vector<E> enums_of(const std::vector<std::string>& names) {
  std::vector<E> out;
  for (const std::string& n : names)
    if (const auto e = parse_enum<E>(n); e && std::find(out.begin(), out.end(), *e) == out.end()) out.push_back(*e);
  return out;
}

// A comma-separated, repeatable list of enum names.
template <class E>
CLI::Option* enum_list(CLI::App& app, const std::string& name, std::vector<std::string>& into, const std::string& what) {
  return app.add_option(name, into, what + "; comma-separated or repeated, default all")
      ->type_name(enum_choices<E>() + ",...")
      ->delimiter(',')
      ->check(choice_of<E>())
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
  std::string backend, steps = "50", warmup = "10", copy_mib;
  int block_x = 0, block_y = 0;
  int64_t sort_every = 0;
  std::vector<std::string> layouts, stencils, constants, samplings, deposits, solvers, sizes, particles;

  app.add_option("CONFIG", r.config_path, "TOML config file (--micro: physical constants and backend only)")->required();
  enum_list<Layout>(app, "--layout", layouts, "Particle layouts");
  enum_list<Stencil>(app, "--stencil", stencils, "GPU stencil kernels");
  enum_list<ConstantsIn>(app, "--constants", constants, "Where GPU kernels read the run constants");
  enum_list<Sampling>(app, "--sampling", samplings, "GPU velocity sampling");
  enum_list<Deposit>(app, "--deposit", deposits, "GPU two-way deposit");
  enum_list<PressureSolverKind>(app, "--pressure-solver", solvers, "Pressure solvers");
  app.add_option("--steps", steps, "Timed steps per variant (--micro: fewest repeats per trial)")
      ->type_name("N")->check(count_at_least(1, false))->capture_default_str();
  app.add_option("--warmup", warmup, "Untimed steps (--micro: calls) before timing")
      ->type_name("W")->check(count_at_least(0, false))->capture_default_str();
  app.add_option("--csv", b.csv, "Write the results as CSV")->type_name("FILE");
  app.add_option("--json", b.json, "Write the results as JSON")->type_name("FILE");
  app.add_flag("--micro", b.micro, "Micro-benchmarks: pressure sweeps and the particle step");
  app.add_option("--micro-sizes", sizes, "Grid sides n of the n x n sweep benchmarks (default 2048,8192,16384)")
      ->type_name("N,...")->delimiter(',')->check(count_at_least(8, false))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--micro-particles", particles, "Particle counts of the particle-step benchmark (default 16M,64M)")
      ->type_name("N,...")->delimiter(',')->check(count_at_least(1, true))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--max-seconds", b.max_seconds, "Start no variant after this many seconds; the rest are reported as skipped")
      ->type_name("S")->check(CLI::NonNegativeNumber);
  app.add_option("--copy-mib", copy_mib, "Buffer size of the copy-bandwidth ceiling (default 1024 GPU, 512 CPU)")
      ->type_name("MIB")->check(count_at_least(1, false));
  auto* o_backend = app.add_option("--backend", backend, "Backend (run.backend)")
                        ->type_name(enum_choices<BackendKind>())->check(choice_of<BackendKind>());
  app.add_option("--set", r.sets, "Override a config key; repeatable")
      ->type_name("KEY=VALUE")->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  auto* o_bx = app.add_option("--block-x", block_x, "GPU block width (gpu.block_x)")->type_name("N");
  auto* o_by = app.add_option("--block-y", block_y, "GPU block height (gpu.block_y)")->type_name("N");
  auto* o_sort = app.add_option("--sort-every", sort_every, "Sort particles every K steps (gpu.sort_every)")->type_name("K");
  app.add_flag("--quiet", b.quiet, "Print only the table");

  // argv[0] is "sim", argv[1] "bench": CLI11 takes argv[0] as the program name.
  const int rc = parse_app(app, argc - 1, argv + 1, out, err);
  if (rc >= 0) return rc;

  take(o_backend, backend, r.backend);
  take(o_bx, block_x, r.block_x);
  take(o_by, block_y, r.block_y);
  take(o_sort, sort_every, r.sort_every);
  b.layouts = enums_of<Layout>(layouts);
  b.stencils = enums_of<Stencil>(stencils);
  b.constants = enums_of<ConstantsIn>(constants);
  b.samplings = enums_of<Sampling>(samplings);
  b.deposits = enums_of<Deposit>(deposits);
  b.solvers = enums_of<PressureSolverKind>(solvers);
  parse_count(steps, 1, false, b.steps);
  parse_count(warmup, 0, false, b.warmup);
  if (!copy_mib.empty()) parse_count(copy_mib, 1, false, b.copy_mib);
  for (const std::string& v : sizes) {
    int64_t n = 0;
    parse_count(v, 8, false, n);
    if (n > std::numeric_limits<int>::max()) {
      err << "sim: error: --micro-sizes: " << v << " is too large\n";
      return 2;
    }
    b.micro_sizes.push_back(static_cast<int>(n));
  }
  for (const std::string& v : particles) {
    int64_t n = 0;
    parse_count(v, 1, true, n);
    b.micro_particles.push_back(n);
  }
  r.quiet = b.quiet;
  options = std::move(r);
  return -1;
}

}  // namespace

int parse_cli(int argc, char** argv, CliOptions& options, std::ostream& out, std::ostream& err) {
  if (argc > 1 && std::string(argv[1]) == "bench") return parse_bench(argc, argv, options, out, err);
  CLI::App app{"2D incompressible Navier-Stokes (MAC grid) with inertial particles.", "sim"};
  app.set_version_flag("--version", std::string("sim ") + SIM_VERSION);
  app.footer("Typed options are shorthands for --set KEY=VALUE and are validated like the config file;\n"
             "they are applied after every --set. Keys, units and ranges: docs/CONFIG.md.\n"
             "sim bench [OPTIONS] CONFIG times the strategies against each other (sim bench --help).");

  // A repeated option takes its last value, as a repeated --set does.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  CliOptions r;
  int64_t steps = 0, snapshot_every = 0, sort_every = 0;
  uint64_t seed = 0;
  int block_x = 0, block_y = 0;
  std::string layout, backend, output, restart, stencil, constants, sampling, deposit, solver;

  app.add_option("CONFIG", r.config_path, "TOML config file")->required();
  auto* o_steps = app.add_option("--steps", steps, "Time steps to run (run.steps)")->type_name("N");
  auto* o_layout = app.add_option("--layout", layout, "Particle layout (run.layout)")
                       ->type_name(enum_choices<Layout>())->check(choice_of<Layout>());
  auto* o_backend = app.add_option("--backend", backend, "Backend (run.backend)")
                        ->type_name(enum_choices<BackendKind>())->check(choice_of<BackendKind>());
  auto* o_output = app.add_option("--output", output, "Output directory (run.output)")->type_name("DIR");
  auto* o_snap = app.add_option("--snapshot-every", snapshot_every, "Snapshot interval (run.snapshot_every)")->type_name("N");
  app.add_option("--set", r.sets, "Override a config key; repeatable (value parsed as TOML, bare words as strings)")
      ->type_name("KEY=VALUE")->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  auto* o_seed = app.add_option("--seed", seed, "Random seed (run.seed)")->type_name("N")->check(seed_range());
  app.add_flag("--quiet", r.quiet, "Print only errors");
  auto* o_restart = app.add_option("--restart", restart, "Continue from a snapshot file")->type_name("FILE");
  auto* o_stencil = app.add_option("--stencil", stencil, "GPU stencil kernels (gpu.stencil)")
                        ->type_name(enum_choices<Stencil>())->check(choice_of<Stencil>());
  auto* o_constants = app.add_option("--constants", constants, "GPU run constants (gpu.constants)")
                          ->type_name(enum_choices<ConstantsIn>())->check(choice_of<ConstantsIn>());
  auto* o_sampling = app.add_option("--sampling", sampling, "GPU velocity sampling (gpu.sampling)")
                         ->type_name(enum_choices<Sampling>())->check(choice_of<Sampling>());
  auto* o_deposit = app.add_option("--deposit", deposit, "GPU force deposit (gpu.deposit)")
                        ->type_name(enum_choices<Deposit>())->check(choice_of<Deposit>());
  auto* o_sort = app.add_option("--sort-every", sort_every, "Sort particles every K steps (gpu.sort_every)")->type_name("K");
  auto* o_solver = app.add_option("--pressure-solver", solver, "Pressure solver (pressure.solver)")
                       ->type_name(enum_choices<PressureSolverKind>())->check(choice_of<PressureSolverKind>());
  auto* o_bx = app.add_option("--block-x", block_x, "GPU block width (gpu.block_x)")->type_name("N");
  auto* o_by = app.add_option("--block-y", block_y, "GPU block height (gpu.block_y)")->type_name("N");

  const int rc = parse_app(app, argc, argv, out, err);
  if (rc >= 0) return rc;

  take(o_steps, steps, r.steps);
  take(o_layout, layout, r.layout);
  take(o_backend, backend, r.backend);
  take(o_output, output, r.output);
  take(o_snap, snapshot_every, r.snapshot_every);
  take(o_seed, seed, r.seed);
  take(o_restart, restart, r.restart);
  take(o_stencil, stencil, r.stencil);
  take(o_constants, constants, r.constants);
  take(o_sampling, sampling, r.sampling);
  take(o_deposit, deposit, r.deposit);
  take(o_sort, sort_every, r.sort_every);
  take(o_solver, solver, r.pressure_solver);
  take(o_bx, block_x, r.block_x);
  take(o_by, block_y, r.block_y);
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
  number("run.seed", o.seed);
  number("run.snapshot_every", o.snapshot_every);
  text("run.output", o.output);
  text("run.layout", o.layout);
  text("run.backend", o.backend);
  text("pressure.solver", o.pressure_solver);
  text("gpu.stencil", o.stencil);
  text("gpu.constants", o.constants);
  text("gpu.sampling", o.sampling);
  text("gpu.deposit", o.deposit);
  number("gpu.sort_every", o.sort_every);
  number("gpu.block_x", o.block_x);
  number("gpu.block_y", o.block_y);
  return v;
}

}  // namespace sim
