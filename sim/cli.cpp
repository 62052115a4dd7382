#include "sim/cli.hpp"

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

}  // namespace

int parse_cli(int argc, char** argv, CliOptions& options, std::ostream& out, std::ostream& err) {
  CLI::App app{"2D incompressible Navier-Stokes (MAC grid) with inertial particles.", "sim"};
  app.set_version_flag("--version", std::string("sim ") + SIM_VERSION);
  app.footer("Typed options are shorthands for --set KEY=VALUE and are validated like the config file;\n"
             "they are applied after every --set. Keys, units and ranges: docs/CONFIG.md.");

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
