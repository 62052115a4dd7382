// The command line: options parsed in process as main() parses them, and the
// sim binary end to end (exit statuses and the one-line messages a user sees).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "io/config_loader.hpp"
#include "support/cases.hpp"
#include "support/cli.hpp"
#include "support/io.hpp"

using namespace sim;
using test::Parsed;
using test::parse_args;

namespace {

const std::string box = test::source_path("config/box.toml");
const std::string small = " --set domain.nx=16 --set domain.ny=16 --set particles.regions[0].count=50 ";

}  // namespace

TEST_CASE("cli: options become --set overrides after the explicit ones") {
  const Parsed r = parse_args({"--steps", "5", "--layout=aos", "--set", "fluid.viscosity=0.002", "--set",
                               "run.steps=9", "--pressure-solver", "jacobi", "--block-x", "32", "--seed", "7",
                               "--output", "my \"dir\"", "--quiet", "box.toml"});
  REQUIRE(r.code == -1);
  CHECK(r.err.empty());
  CHECK(r.options.config_path == "box.toml");
  CHECK(r.options.steps == 5);
  CHECK(r.options.strategies.at("layout") == "aos");
  CHECK(r.options.quiet);
  CHECK(r.options.strategies.count("backend") == 0);
  CHECK(r.options.sets == std::vector<std::string>{"fluid.viscosity=0.002", "run.steps=9"});
  CHECK(cli_overrides(r.options) ==
        std::vector<std::string>{"fluid.viscosity=0.002", "run.steps=9", "run.steps=5", "run.seed=7",
                                 "run.output=\"my \\\"dir\\\"\"", "run.layout=\"aos\"", "pressure.solver=\"jacobi\"",
                                 "gpu.block_x=32"});
  const Config c = load_config_string("", "t.toml", cli_overrides(r.options));
  CHECK(c.steps == 5);
  CHECK(c.viscosity == 0.002);
  CHECK(c.output == "my \"dir\"");
  CHECK(c.layout == Layout::aos);
  CHECK(c.solver == PressureSolverKind::jacobi);
  CHECK(c.block_x == 32);
  CHECK(c.seed == 7u);
}

TEST_CASE("cli: a single --set does not swallow the config path") {
  const Parsed r = parse_args({"--set", "run.steps=3", "case.toml", "--restart", "snap.h5"});
  REQUIRE(r.code == -1);
  CHECK(r.options.config_path == "case.toml");
  CHECK(r.options.sets == std::vector<std::string>{"run.steps=3"});
  CHECK(r.options.restart == "snap.h5");
  CHECK(parse_args({"--layout", "soa", "--layout=aos", "case.toml"}).options.strategies.at("layout") == "aos");
  // Typed values are checked by the config loader, like the file.
  const Parsed neg = parse_args({"--steps", "-5", "case.toml"});
  REQUIRE(neg.code == -1);
  CHECK(test::config_error("", cli_overrides(neg.options)) == "--set run.steps=-5: run.steps: expected an integer >= 0, got -5");
}

TEST_CASE("cli: usage errors exit 2 with one line") {
  CHECK(parse_args({"--layout", "xyz", "box.toml"}).err == "sim: error: --layout: expected one of aos|soa, got \"xyz\"\n");
  CHECK(parse_args({"--layout", "xyz", "box.toml"}).code == 2);
  CHECK(parse_args({"--deposit=none", "box.toml"}).err == "sim: error: --deposit: expected one of atomic|sorted, got \"none\"\n");
  CHECK(parse_args({}).err == "sim: error: CONFIG is required\n");
  CHECK(parse_args({"--steps", "abc", "box.toml"}).code == 2);
  CHECK(parse_args({"--seed", "18446744073709551615", "box.toml"}).err ==
        "sim: error: --seed: expected an integer in [0, 9223372036854775807], got 18446744073709551615\n");
  CHECK(parse_args({"--bogus", "box.toml"}).code == 2);
  CHECK(parse_args({"a.toml", "b.toml"}).code == 2);
  for (const char* bad : {"--steps", "--bogus", "--seed"}) {
    const std::string err = parse_args({bad, "abc", "box.toml"}).err;
    INFO(err);
    CHECK(err.rfind("sim: error: ", 0) == 0);
    CHECK(err.find('\n') == err.size() - 1);
  }
}

TEST_CASE("cli: --version and --help print to stdout and exit 0") {
  const Parsed v = parse_args({"--version"});
  CHECK(v.code == 0);
  CHECK(v.out == "sim 0.1.0\n");
  CHECK(v.err.empty());
  const Parsed h = parse_args({"--help"});
  CHECK(h.code == 0);
  for (const char* opt : {"--steps", "--layout", "--set", "--pressure-solver", "--block-y", "CONFIG", "aos|soa"})
    CHECK(h.out.find(opt) != std::string::npos);
}

TEST_CASE("cli: a config error is one line naming file, line and column, with status 2") {
  const std::string bad = test::scratch_dir("cli_config_error") + "/bad.toml";
  test::write_text(bad, "[fluid]\nviscosity = -1.0\n");
  const test::SimResult r = test::run_sim(bad);
  CHECK(r.status == 2);
  CHECK(test::count_lines(r.out) == 1);
  CHECK(r.out == "sim: error: " + bad + ":2:13: fluid.viscosity: expected a number >= 0, got -1.0\n");
}

TEST_CASE("cli: --backend auto runs, and says in one line when it runs on the CPU") {
  const std::string out = test::scratch_dir("cli_auto");
  const test::SimResult r = test::run_sim("--backend auto --steps 3 --output " + out + small + box);
  CHECK(r.status == 0);
  const bool on_gpu = r.out.find("backend: cuda") != std::string::npos;
  if (!on_gpu) CHECK(r.out.find("running on the CPU backend") != std::string::npos);
  CHECK(r.out.find("3 steps") != std::string::npos);
}

TEST_CASE("cli: an unwritable output directory stops the run before its first step") {
  const test::SimResult r = test::run_sim("--backend cpu --steps 3 --output /proc/sim_cannot_write" + small + box);
  CHECK(r.status == 1);
  CHECK(test::count_lines(r.out) == 1);
  CHECK(r.out.find("/proc/sim_cannot_write") != std::string::npos);
}

TEST_CASE("cli: --backend cuda without CUDA support or without a device is a one-line error") {
  const std::string out = test::scratch_dir("cli_cuda");
  const test::SimResult r = test::run_sim("--backend cuda --steps 1 --output " + out + small + box);
  if (r.out.find("backend: cuda") != std::string::npos) return;  // a GPU is present
  CHECK(r.status == 1);
  CHECK(test::count_lines(r.out) == 1);
  CHECK((r.out.find("no CUDA device available") != std::string::npos ||
         r.out.find("built without CUDA") != std::string::npos));
}
