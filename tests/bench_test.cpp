// SPDX-License-Identifier: MIT
// `sim bench`: the byte model against hand-computed values, the command
// line, and the outputs (table, CSV, JSON) of tiny CPU runs. No timing is
// asserted: only that every number is there and positive.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "io/config_loader.hpp"
#include "sim/app/bench/bench.hpp"
#include "sim/app/bench/traffic.hpp"
#include "sim/app/memory_check.hpp"
#include "support/cases.hpp"
#include "support/cli.hpp"
#include "support/io.hpp"

using namespace sim;
using test::Parsed;
using test::parse_args;

namespace {

std::string box() { return test::source_path("config/box.toml"); }

// One thread: the tests stay fast on a loaded machine (no timing is checked).
struct OneThread {
  int before = omp_get_max_threads();
  OneThread() { omp_set_num_threads(1); }
  ~OneThread() { omp_set_num_threads(before); }
};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

// `sim bench ARGS` in process, as main() runs it.
int bench(const std::vector<std::string>& args, std::string& out) {
  const Parsed p = parse_args(args);
  REQUIRE(p.code == -1);
  REQUIRE(p.options.command == Command::bench);
  const Config cfg = load_config(p.options.config_path, cli_overrides(p.options));
  std::ostringstream os, es;
  const int rc = run_bench(cfg, p.options.bench, os, es);
  out = os.str();
  INFO(es.str());
  CHECK(es.str().empty());
  return rc;
}

// Python reads the JSON and checks the row count (skipped without Python).
void check_json(const std::string& path, size_t rows, const std::string& suite) {
  const std::string python = test::python_with("json");
  if (python.empty()) return;
  const std::string cmd = python + " -c 'import json,sys; d=json.load(open(sys.argv[1])); "
                          "sys.exit(0 if len(d[\"rows\"]) == " + std::to_string(rows) + " and d[\"suite\"] == \"" +
                          suite + "\" and d[\"ceiling\"][\"gbps\"] > 0 else 1)' " + test::quoted(path);
  CHECK(test::shell(cmd) == 0);
}

}  // namespace

TEST_CASE("bench: the byte model gives the hand-computed bytes") {
  const Grid g = Grid::make(16, 8, 1.0, 1.0);
  const double cells = 16 * 8, faces = 17 * 9;
  CHECK(traffic::cells(g) == cells);
  CHECK(traffic::faces(g) == faces);
  CHECK(traffic::jacobi_sweep(cells).bytes == 12 * 16 * 8);
  CHECK(traffic::jacobi_sweep(cells, true).bytes == 16 * 16 * 8);  // + the solid mask
  CHECK(traffic::sor_half_sweep(cells).bytes == 12 * cells);
  CHECK(traffic::sor_sweep(cells).bytes == 24 * cells);
  CHECK(traffic::residual(cells).bytes == 8 * cells);
  CHECK(traffic::rhs(cells).bytes == 12 * cells);
  // three stages: the copies 48 B, the stages 16 + 24 + 24 B
  CHECK(traffic::momentum(faces).bytes == (48 + 64) * faces);
  CHECK(traffic::momentum(faces).flops == 210 * faces);
  // quick: the same bytes without obstacles, 8 B more per stage with them (the mask and the clearance field)
  CHECK(traffic::momentum(faces, false, AdvectionScheme::quick).bytes == (48 + 64) * faces);
  CHECK(traffic::momentum(faces, true, AdvectionScheme::quick).bytes == (48 + 64 + 3 * 8) * faces);
  CHECK(traffic::momentum(faces, false, AdvectionScheme::quick).flops == 702 * faces);
  // the implicit viscous solves: 72 B per solve, 32 B per iteration
  CHECK(traffic::viscous(faces, 2, 5).bytes == (2 * 72 + 5 * 32) * faces);
  CHECK(traffic::stage(faces, false).bytes == 16 * faces);
  CHECK(traffic::stage(faces, true, true).bytes == 28 * faces);
  CHECK(traffic::project(faces).bytes == 20 * faces);
  CHECK(traffic::particle_step(1000, 0, Layout::aos, false).bytes == 64 * 1000);
  CHECK(traffic::particle_step(1000, 0, Layout::soa, false).bytes == 40 * 1000);
  CHECK(traffic::particle_step(0, 10, Layout::soa, false).bytes == 4 * 10);
  CHECK(traffic::particle_step(0, 10, Layout::aos, false).bytes == 32 * 10);
  CHECK(traffic::jacobi_sweep(cells).flops == 10 * cells);
  CHECK(traffic::key_bits(1216) == 11);
  CHECK(traffic::radix_passes(11) == 2);
  CHECK(traffic::radix_passes(26) == 4);

  // A whole step: three solves of 10 Jacobi sweeps and 2 residuals in all, two viscous solves of 5
  // iterations in all; 100 alive SoA particles, one-way.
  Config c;
  c.nx = 16;
  c.ny = 8;
  c.solver = PressureSolverKind::jacobi;
  c.two_way = false;
  c.layout = Layout::soa;
  traffic::StepCounts n;
  n.alive = 100;
  n.sweeps = 10;
  n.residuals = 2;
  n.viscous_iterations = 5;
  const traffic::StepCost s = traffic::step_cost(c, g, n);
  CHECK(s.pressure.bytes == 3 * 12 * cells + 2 * 8 * cells + 10 * 12 * cells);
  CHECK(s.particles.bytes == 100 * 40 + 8 * faces);
  CHECK(s.dt.bytes == 8 * faces);  // adaptive dt reads u and v
  CHECK(s.total().bytes ==
        s.dt.bytes + s.particles.bytes + (112 + 2 * 72 + 5 * 32 + 3 * 20) * faces + s.pressure.bytes);

  // Sorted deposit on this grid: 2 * (32 x 11) = 704 < 2^10 keys, 2 radix passes;
  // 8 pairs per slot at 8 + 4 + 2 x 16 + 8 = 52 B, runs at most 2 per face point at 24 B.
  CHECK(g.size() == 32u * 11u);
  CHECK(traffic::deposit(Deposit::sorted, 10, g).bytes == 80 * 52 + 80 * 24);
  CHECK(traffic::deposit(Deposit::atomic, 10, g).bytes == 16 * faces);
  // Gather: keys 4 x (18 x 9) = 648 < 2^10, 2 radix passes: per slot 8 + 4 + 2 x 16 + 8 + 20 + 24 = 96 B,
  // 16 B per stencil node (zeroed, read), 16 B per face point.
  CHECK(traffic::deposit(Deposit::gather, 10, g).bytes == 10 * 96 + 18 * 9 * 16 + 16 * faces);
}

TEST_CASE("bench: the command line takes lists, comma-separated or repeated") {
  const Parsed p = parse_args({"bench", "--stencil", "naive,ldg", "--stencil", "shared", "--layout=aos", "--steps",
                               "7", "--warmup", "0", "--micro-sizes", "64,128", "--micro-particles", "16M,1000",
                               "--csv", "a.csv", "--set", "domain.nx=32", "--backend", "cpu", "box.toml"});
  REQUIRE(p.code == -1);
  CHECK(p.err.empty());
  const BenchOptions& b = p.options.bench;
  CHECK(p.options.command == Command::bench);
  CHECK(p.options.config_path == "box.toml");
  CHECK(b.stencils == std::vector<Stencil>{Stencil::naive, Stencil::ldg, Stencil::shared});
  CHECK(b.layouts == std::vector<Layout>{Layout::aos});
  CHECK(b.solvers.empty());  // all
  CHECK(b.steps == 7);
  CHECK(b.warmup == 0);
  CHECK(b.micro_sizes == std::vector<int>{64, 128});
  CHECK(b.micro_particles == std::vector<int64_t>{16 << 20, 1000});
  CHECK(b.csv == "a.csv");
  CHECK(b.advections.empty());  // the config's scheme
  CHECK(parse_args({"bench", "--advection", "quick,central", "box.toml"}).options.bench.advections ==
        std::vector<AdvectionScheme>{AdvectionScheme::quick, AdvectionScheme::central});
  CHECK(cli_overrides(p.options) == std::vector<std::string>{"domain.nx=32", "run.backend=\"cpu\""});

  CHECK(parse_args({"bench", "--stencil", "naive,fast", "box.toml"}).err ==
        "sim: error: --stencil: expected one of auto|naive|ldg|shared|vector|temporal, got \"fast\"\n");
  CHECK(parse_args({"bench", "--steps", "0", "box.toml"}).code == 2);
  CHECK(parse_args({"bench", "--micro-sizes", "4", "box.toml"}).code == 2);
  CHECK(parse_args({"bench"}).err == "sim: error: CONFIG is required\n");
  const Parsed help = parse_args({"bench", "--help"});
  CHECK(help.code == 0);
  for (const char* opt : {"--stencil", "--pressure-solver", "--micro", "--csv", "--json", "--warmup"})
    CHECK(help.out.find(opt) != std::string::npos);
  CHECK(parse_args({"--help"}).out.find("sim bench") != std::string::npos);
  // The run command is unchanged.
  CHECK(parse_args({"box.toml"}).options.command == Command::run);
}

TEST_CASE("bench: every option is validated: nan and inf seconds, empty paths, copy sizes past any memory") {
  auto err = [](std::vector<std::string> args) {
    args.insert(args.begin(), "bench");
    const Parsed p = parse_args(args);
    CHECK(p.code == 2);
    return p.err;
  };
  // --max-seconds took nan and inf (CLI::NonNegativeNumber) and hexadecimal floats.
  for (const char* v : {"nan", "NaN", "inf", "-inf", "infinity", "-1", "-0.5", "1e999", "0x1p3", " 1", "1s", "+-1"}) {
    CAPTURE(v);
    CHECK(err({std::string("--max-seconds=") + v, "box.toml"}) ==
          "sim: error: --max-seconds: expected a finite number >= 0, got " + std::string(v) + "\n");
  }
  CHECK(err({"--max-seconds", "", "box.toml"}) ==
        "sim: error: --max-seconds: expected a finite number >= 0, got an empty value\n");
  CHECK(parse_args({"bench", "--max-seconds", "1.5", "box.toml"}).options.bench.max_seconds == 1.5);
  CHECK(parse_args({"bench", "--max-seconds", "+2e1", "box.toml"}).options.bench.max_seconds == 20.0);
  CHECK(parse_args({"bench", "--max-seconds", "0", "box.toml"}).options.bench.max_seconds == 0.0);
  CHECK(parse_args({"bench", "--max-seconds", ".25", "box.toml"}).options.bench.max_seconds == 0.25);

  // Empty paths (no file was written and the exit status was 0).
  CHECK(err({"--csv", "", "box.toml"}) == "sim: error: --csv: expected a path, got an empty value\n");
  CHECK(err({"--json", "", "box.toml"}) == "sim: error: --json: expected a path, got an empty value\n");
  CHECK(err({"--csv", std::string("a\x01.csv"), "box.toml"}).rfind(
            "sim: error: --csv: the path holds a control character (byte 1): ", 0) == 0);
  CHECK(err({""}) == "sim: error: CONFIG: expected a path, got an empty value\n");

  // --copy-mib 99999999999 ended in std::bad_alloc.
  CHECK(err({"--copy-mib", "99999999999", "box.toml"}) ==
        "sim: error: --copy-mib: expected an integer in [1, 1048576], got 99999999999\n");
  CHECK(err({"--copy-mib", "1048577", "box.toml"}) ==
        "sim: error: --copy-mib: expected an integer in [1, 1048576], got 1048577\n");
  CHECK(err({"--copy-mib", "0", "box.toml"}) == "sim: error: --copy-mib: expected an integer in [1, 1048576], got 0\n");
  CHECK(err({"--copy-mib", "", "box.toml"}) ==
        "sim: error: --copy-mib: expected an integer in [1, 1048576], got an empty value\n");
  CHECK(parse_args({"bench", "--copy-mib", "1048576", "box.toml"}).options.bench.copy_mib == 1048576);
}

TEST_CASE("bench: a --copy-mib past the host's memory is one line naming the option, before anything is allocated") {
  const uint64_t available = host_memory_available();
  if (available == 0 || available >= (uint64_t(2) << 40)) return;  // unknown, or 2 TiB of memory: nothing to refuse
  const Parsed p = parse_args({"bench", "--backend", "cpu", "--copy-mib", "1048576", box()});
  REQUIRE(p.code == -1);
  const Config cfg = load_config(p.options.config_path, cli_overrides(p.options));
  for (const bool micro : {false, true}) {
    BenchOptions opts = p.options.bench;
    opts.micro = micro;
    opts.quiet = true;
    std::ostringstream os, es;
    CHECK(run_bench(cfg, opts, os, es) == 1);
    INFO(es.str());
    CHECK(es.str().rfind("sim: error: --copy-mib 1048576: the copy-bandwidth buffers need 2 x 1.00 TiB of host memory, ",
                         0) == 0);
    CHECK(es.str().find(" available\n") == es.str().size() - 11);
    CHECK(test::count_lines(es.str()) == 1);
  }
}

TEST_CASE("bench: the variant matrix, with the axes that cannot matter collapsed") {
  const Config cfg = load_config(box());
  BenchOptions all;
  std::vector<std::string> notes;
  // layout stencil constants sampling deposit solver (jacobi, sor, multigrid, fft: the closed box allows fft)
  // stencils x solvers: 4 x 4 and temporal with jacobi only (its other solvers run as vector)
  CHECK(bench_variants(cfg, all, true, &notes).size() == 2 * 2 * 3 * 4 * (4 * 4 + 1));
  CHECK(notes.empty());
  CHECK(bench_variants(cfg, all, false, &notes).size() == 2 * 4);  // CPU: layout x solver
  CHECK(notes.size() == 4);
  Config one_way = cfg;
  one_way.two_way = false;
  CHECK(bench_variants(one_way, all, true, nullptr).size() == 2 * 2 * 3 * (4 * 4 + 1));
  Config grid_only = cfg;
  grid_only.regions.clear();
  CHECK(bench_variants(grid_only, all, true, nullptr).size() == (4 * 4 + 1) * 2);
  Config obstacle = cfg;  // no transform solve around an obstacle: three solvers
  obstacle.obstacles.push_back({});
  CHECK(bench_variants(obstacle, all, false, nullptr).size() == 2 * 3);
  BenchOptions subset;
  subset.stencils = {Stencil::naive, Stencil::ldg};
  subset.solvers = {PressureSolverKind::jacobi};
  subset.layouts = {Layout::soa};
  const std::vector<Config> v = bench_variants(cfg, subset, true, nullptr);
  REQUIRE(v.size() == 2 * 2 * 3 * 4);
  CHECK(variant_name(v.front(), true) == "soa/naive/constant/software/atomic/jacobi/central");
  CHECK(variant_name(v.front(), false) == "soa/jacobi/central");
  // The advection scheme is the config's unless listed: it changes the flow, not only the cost.
  Config quick = cfg;
  quick.advection = AdvectionScheme::quick;
  CHECK(variant_name(bench_variants(quick, subset, false, nullptr).front(), false) == "soa/jacobi/quick");
  BenchOptions both = subset;
  both.advections = {AdvectionScheme::central, AdvectionScheme::quick};
  const std::vector<Config> w = bench_variants(cfg, both, false, nullptr);
  REQUIRE(w.size() == 2);
  CHECK(variant_name(w[1], false) == "soa/jacobi/quick");
}

TEST_CASE("bench: a tiny CPU matrix prints the table and writes CSV and JSON with one row per variant") {
  OneThread one;
  const std::string dir = test::scratch_dir("bench_matrix");
  std::string out;
  const int rc = bench({"bench", box(), "--backend", "cpu", "--set", "domain.nx=16", "--set", "domain.ny=16", "--set",
                        "particles.regions[0].count=200", "--steps", "2", "--warmup", "1", "--copy-mib", "4", "--csv",
                        dir + "/m.csv", "--json", dir + "/m.json"},
                       out);
  CHECK(rc == 0);
  INFO(out);
  for (const char* s : {"ceiling", "variant", "it/step", "pressure", "GB/s", "%copy", "aos/jacobi", "soa/sor", "aos/multigrid", "soa/fft"})
    CHECK(out.find(s) != std::string::npos);

  const std::vector<std::string> csv = test::read_lines(dir + "/m.csv");
  REQUIRE(csv.size() == 1 + 8);
  CHECK(csv[0] == joined(matrix_columns()));
  CHECK(csv[0].rfind("variant,backend,layout,stencil,constants,sampling,deposit,pressure_solver,advection,steps,", 0) ==
        0);
  for (size_t k = 1; k < csv.size(); ++k) {
    INFO(csv[k]);
    CHECK(csv[k].back() == ',');  // empty error column
  }
  check_json(dir + "/m.json", 8, "matrix");
}

TEST_CASE("bench: the micro suite on the CPU at tiny sizes") {
  OneThread one;
  const std::string dir = test::scratch_dir("bench_micro");
  std::string out;
  const int rc = bench({"bench", box(), "--micro", "--backend", "cpu", "--micro-sizes", "16", "--micro-particles",
                        "500", "--steps", "1", "--warmup", "0", "--copy-mib", "4", "--csv", dir + "/u.csv", "--json",
                        dir + "/u.json", "--quiet"},
                       out);
  CHECK(rc == 0);
  INFO(out);
  for (const char* s : {"jacobi_sweep", "sor_sweep", "particle_step", "16^2", "cells", "particles", "GB/s"})
    CHECK(out.find(s) != std::string::npos);
  const std::vector<std::string> csv = test::read_lines(dir + "/u.csv");
  // jacobi, sor; one V-cycle and one multigrid solve; particle step aos, soa, each in random and cell-sorted order;
  // one momentum stage per advection scheme; the host copy (memcpy, loop)
  REQUIRE(csv.size() == 1 + 2 + 2 + 4 + 2 + 2);
  CHECK(csv[0] == joined(micro_columns()));
  CHECK(csv[1].rfind("jacobi_sweep,16,cells,", 0) == 0);
  CHECK(csv[2].rfind("sor_sweep,16,cells,", 0) == 0);
  CHECK(csv[3].rfind("mg_vcycle,16,cells,", 0) == 0);
  CHECK(csv[4].rfind("mgpcg_solve_1e-6,16,cells,", 0) == 0);
  CHECK(csv[5].rfind("particle_step,500,particles,aos,", 0) == 0);
  CHECK(csv[7].rfind("particle_step,500,particles,aos/cell-sorted,", 0) == 0);
  CHECK(csv[9].rfind("momentum_stage,16,faces,central,", 0) == 0);
  CHECK(csv[10].rfind("momentum_stage,16,faces,quick,", 0) == 0);
  CHECK(csv[11].rfind("host_copy,4,bytes,memcpy,", 0) == 0);
  CHECK(csv[12].rfind("host_copy,4,bytes,loop,", 0) == 0);
  check_json(dir + "/u.json", 12, "micro");
}

TEST_CASE("bench: the host copy bandwidth is measured") {
  OneThread one;
  const double bw = host_copy_bandwidth(1 << 20, 3);
  CHECK(std::isfinite(bw));
  CHECK(bw > 0);
}

TEST_CASE("bench: config/bench_large.toml is the large case with a fixed pressure budget") {
  const Config c = test::shipped_config("bench_large.toml");
  CHECK(c.nx == 4096);
  CHECK(c.ny == 4096);
  CHECK(c.total_seeded() == 16 << 20);
  CHECK(c.two_way);
  // Every solve runs exactly 50 sweeps: a fixed budget, not a tolerance (pressure.fixed_iterations).
  CHECK(c.solver == PressureSolverKind::jacobi);
  CHECK(c.fixed_iterations == 50);
  for (const BoundarySide* s : {&c.left, &c.right, &c.bottom, &c.top}) CHECK(s->kind == BoundaryKind::wall);
}

TEST_CASE("bench: the sim executable dispatches `sim bench`") {
  const std::string dir = test::scratch_dir("bench_dispatch");
  const std::string log = dir + "/out.txt";
  const std::string cmd = "OMP_NUM_THREADS=1 '" + std::string(SIM_EXECUTABLE) + "' bench '" + box() +
                          "' --backend cpu --set domain.nx=16 --set domain.ny=16 --set 'particles.regions[0].count=50'"
                          " --layout soa --pressure-solver jacobi --steps 1 --warmup 0 --copy-mib 4 --quiet > '" +
                          log + "' 2>&1";
  CHECK(test::shell(cmd) == 0);
  const std::string text = test::read_text(log);
  INFO(text);
  CHECK(text.find("soa/jacobi") != std::string::npos);
  CHECK(text.find("sim bench (matrix)") != std::string::npos);
  const std::string bad = "'" + std::string(SIM_EXECUTABLE) + "' bench --stencil fast x.toml > /dev/null 2>&1";
  CHECK(test::shell(bad) == 2);
}

TEST_CASE("bench: rows that missed the tolerance are ranked apart, repeats give min <= median <= max") {
  const auto row = [](double ms, const char* tolerance) {
    BenchRow r;
    r.set("total_ms", ms);
    r.set("tolerance", tolerance);
    return r;
  };
  // The fastest row missed the tolerance: it must not set the others' rank or speed.
  std::vector<BenchRow> rows = {row(4.0, "met"), row(1.0, "missed in 3 of 30 steps"), row(2.0, "fixed budget"),
                                row(8.0, "met"), row(3.0, "missed in 30 of 30 steps")};
  BenchRow failed;
  failed.set("error", "failed: out of memory");
  rows.push_back(failed);
  rank_rows(rows);
  CHECK(rows[2].number("rank") == 1);
  CHECK(rows[0].number("rank") == 2);
  CHECK(rows[3].number("rank") == 3);
  CHECK(rows[2].number("relative_speed") == doctest::Approx(4.0));
  CHECK(rows[3].number("relative_speed") == doctest::Approx(1.0));
  CHECK(rows[1].number("rank") == 1);  // first of its own group
  CHECK(rows[4].number("rank") == 2);
  CHECK(rows[1].number("relative_speed") == doctest::Approx(3.0));
  CHECK(std::isnan(rows[5].number("rank")));

  // A CPU matrix where Jacobi cannot reach the tolerance in its budget.
  OneThread one;
  const std::string dir = test::scratch_dir("bench_tolerance");
  std::string out;
  const int rc = bench({"bench", box(), "--backend", "cpu", "--set", "domain.nx=16", "--set", "domain.ny=16", "--set",
                        "particles.regions[0].count=200", "--set", "pressure.max_iterations=3", "--pressure-solver",
                        "jacobi,fft", "--layout", "soa", "--steps", "2", "--warmup", "1", "--repeats", "3",
                        "--copy-mib", "4", "--csv", dir + "/t.csv"},
                       out);
  CHECK(rc == 0);
  INFO(out);
  CHECK(out.find("missed the pressure tolerance") < out.rfind("soa/jacobi"));  // the table, after the progress lines
  CHECK(out.rfind("soa/fft") < out.find("missed the pressure tolerance"));
  const std::vector<std::string> csv = test::read_lines(dir + "/t.csv");
  REQUIRE(csv.size() == 3);
  for (size_t k = 1; k < csv.size(); ++k) {
    INFO(csv[k]);
    const bool jacobi = csv[k].find("soa/jacobi") != std::string::npos;
    CHECK((csv[k].find(",missed in 6 of 6 steps,1,") != std::string::npos) == jacobi);
    CHECK((csv[k].find(",met,1,") != std::string::npos) == !jacobi);
  }
}
