// SPDX-License-Identifier: MIT
// run.end_time: the dt rule's cap (host and device share choose_dt), the
// last step landing exactly on the end, run.steps as a cap only when given,
// the key's validation, --end-time, and a restart continuing to the end.
#include <doctest/doctest.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/config_writer.hpp"
#include "io/restart.hpp"
#include "io/snapshot_files.hpp"
#include "io/snapshot_reader.hpp"
#include "sim/model/stability.hpp"
#include "support/cases.hpp"
#include "support/cli.hpp"
#include "support/compare.hpp"
#include "support/io.hpp"

using namespace sim;

namespace {

// Steps `sim` to its end time; the dt of every step in `dts`.
int64_t step_to_end(Simulation& sim, std::vector<double>& dts) {
  int64_t steps = 0;
  while (!sim.at_end()) {
    dts.push_back(sim.step().dt);
    ++steps;
    REQUIRE(steps < 100000);
  }
  return steps;
}

// A small moving flow: the Taylor-Green vortex on 16^2 cells.
Config vortex() {
  Config c = test::taylor_green(16);
  c.tolerance = 1e-4;
  return c;
}

}  // namespace

TEST_CASE("end time: choose_dt cuts the last step to the time left and splits a sliver") {
  DtRule r;
  r.fixed_dt = 0.1;
  r.end_time = 0.35;
  CHECK(choose_dt(r, 0.0, 0.0).dt == 0.1);
  const double left = 0.35 - 0.3;
  CHECK(choose_dt(r, 0.0, 0.3).dt == left);
  CHECK(clock_after(r, 0.3, left) == 0.35);  // exactly, whatever 0.3 + left rounds to
  CHECK(clock_after(r, 0.2, 0.1) == 0.2 + 0.1);

  // A full step would leave 5e-5 s, less than 1/1000 of it: stretched to the end instead.
  r.end_time = 0.30005;
  CHECK(choose_dt(r, 0.0, 0.2).dt == 0.30005 - 0.2);
  CHECK(clock_after(r, 0.2, 0.30005 - 0.2) == 0.30005);
  // 2e-4 s left after it: a full step, then a short one.
  r.end_time = 0.3002;
  CHECK(choose_dt(r, 0.0, 0.2).dt == 0.1);

  // The adaptive rule: the same cap, never above what the flow allows.
  DtRule a;
  a.cfl = 0.5;
  a.dt_max = 1.0;
  a.viscous_limit = std::numeric_limits<double>::infinity();
  a.end_time = 1.0;
  CHECK(choose_dt(a, 10.0, 0.0).dt == 0.05);
  CHECK(choose_dt(a, 10.0, 0.97).dt == 1.0 - 0.97);
  a.end_time = 0;  // none: as before
  CHECK(choose_dt(a, 10.0, 0.97).dt == 0.05);
}

TEST_CASE("end time: an adaptive run's last step lands exactly on it") {
  Config c = vortex();
  c.end_time = 0.123;
  const std::unique_ptr<Simulation> sim = test::make_sim(c);
  std::vector<double> dts;
  const int64_t steps = step_to_end(*sim, dts);
  CHECK(sim->time() == 0.123);
  CHECK(sim->step_index() == steps);
  CHECK(steps > 2);
  for (double dt : dts) CHECK(dt > 0);
  // The last step is the one cut short; none before it was.
  CHECK(dts.back() <= dts[dts.size() - 2]);
  // No step past the end.
  CHECK_THROWS_AS(sim->step(), std::logic_error);
  CHECK(sim->time() == 0.123);
}

TEST_CASE("end time: a fixed dt run lands on it, the last step shortened, no sliver step") {
  Config c = vortex();
  c.dt = 0.01;
  c.end_time = 0.105;
  {
    const std::unique_ptr<Simulation> sim = test::make_sim(c);
    std::vector<double> dts;
    CHECK(step_to_end(*sim, dts) == 11);
    CHECK(sim->time() == 0.105);
    for (size_t k = 0; k + 1 < dts.size(); ++k) CHECK(dts[k] == 0.01);
    CHECK(dts.back() == doctest::Approx(0.005));
  }
  // Ten steps of 0.01 sum to 0.1 less an ulp: the tenth step ends on 0.1,
  // no eleventh of 1e-17 s (nor two halves).
  c.end_time = 0.1;
  const std::unique_ptr<Simulation> sim = test::make_sim(c);
  std::vector<double> dts;
  CHECK(step_to_end(*sim, dts) == 10);
  CHECK(sim->time() == 0.1);
  CHECK(dts.back() == doctest::Approx(0.01));
}

TEST_CASE("end time: run.steps caps an end-time run only when given") {
  const Config none = load_config_string("[run]\nend_time = 2.5\n", "t.toml", {});
  CHECK(none.end_time == 2.5);
  CHECK_FALSE(none.steps_given);
  CHECK(none.step_limit() == std::numeric_limits<int64_t>::max());
  const Config in_file = load_config_string("[run]\nend_time = 2.5\nsteps = 7\n", "t.toml", {});
  CHECK(in_file.steps_given);
  CHECK(in_file.step_limit() == 7);
  const Config by_set = load_config_string("[run]\nend_time = 2.5\n", "t.toml", {"run.steps=9"});
  CHECK(by_set.step_limit() == 9);
  // Without an end time the default still applies.
  CHECK(load_config_string("", "t.toml", {}).step_limit() == 1000);

  // A whole run: 1001 steps of 1 ms reach t = 1.0005 s past the default 1000...
  Config c = test::quiet_box(8);
  c.dt = 1e-3;
  c.end_time = 1.0005;
  c.snapshot_every = 0;
  c.output = test::scratch_dir("end_time_default_steps");
  std::string report;
  REQUIRE(test::run_case(c, "", nullptr, &report) == 0);
  CHECK(report.find("\n1001 steps, simulated time 1.0005 s (end time 1.0005 s, ") != std::string::npos);
  CHECK(report.find(" s per wall second), wall ") != std::string::npos);
  // ...which, given, stop it first.
  c.output = test::scratch_dir("end_time_given_steps");
  c.steps = 400;
  c.steps_given = true;
  REQUIRE(test::run_case(c, "", nullptr, &report) == 0);
  CHECK(report.find("\n400 steps, simulated time 0.4 s (end time 1.0005 s, ") != std::string::npos);
}

TEST_CASE("end time: bad values are refused naming the key") {
  CHECK(test::config_error("[run]\nend_time = 0\n") == "t.toml:2:12: run.end_time: expected a number > 0, got 0");
  CHECK(test::config_error("[run]\nend_time = -1.5\n") ==
        "t.toml:2:12: run.end_time: expected a number > 0, got -1.5");
  CHECK(test::config_error("[run]\nend_time = \"1 s\"\n").find("t.toml:2:12: run.end_time: expected a number > 0") ==
        0);
  CHECK(test::config_error("[run]\nend_time = inf\n").find("run.end_time: expected a finite number > 0") !=
        std::string::npos);
  CHECK(test::config_error("", {"run.end_time=0"}) == "--set run.end_time=0: run.end_time: expected a number > 0, got 0");
  // The default (none) is written as a comment: the resolved config reads back.
  const std::string toml = config_to_toml(Config{});
  CHECK(toml.find("# end_time: none\n") != std::string::npos);
  CHECK(load_config_string(toml, "written.toml", {}).end_time == 0);
  Config c;
  c.end_time = 2.0;
  CHECK(load_config_string(config_to_toml(c), "written.toml", {}).end_time == 2.0);
}

TEST_CASE("end time: --end-time sets run.end_time over the file") {
  const test::Parsed r = test::parse_args({"--end-time", "2.5", "--steps", "4", "box.toml"});
  REQUIRE(r.code == -1);
  CHECK(cli_overrides(r.options) == std::vector<std::string>{"run.steps=4", "run.end_time=2.5"});
  const Config c = load_config_string("[run]\nend_time = 1.0\n", "t.toml", cli_overrides(r.options));
  CHECK(c.end_time == 2.5);
  CHECK(c.step_limit() == 4);
  // An integer is passed on as a float; the loader checks the range.
  const test::Parsed whole = test::parse_args({"--end-time", "3", "box.toml"});
  REQUIRE(whole.code == -1);
  CHECK(cli_overrides(whole.options) == std::vector<std::string>{"run.end_time=3.0"});
  const test::Parsed neg = test::parse_args({"--end-time", "-1", "box.toml"});
  REQUIRE(neg.code == -1);
  CHECK(test::config_error("", cli_overrides(neg.options)) ==
        "--set run.end_time=-1.0: run.end_time: expected a number > 0, got -1.0");
  for (const char* bad : {"nan", "inf", "abc", "", "0x1p3"}) {
    const test::Parsed p = test::parse_args({"--end-time", bad, "box.toml"});
    INFO(bad);
    CHECK(p.code == 2);
    CHECK(p.err.rfind("sim: error: --end-time: expected a finite number, got ", 0) == 0);
  }
}

TEST_CASE("end time: a restart continues to the end time, bit for bit") {
  const std::vector<std::string> small = {"domain.nx=32", "domain.ny=32", "particles.regions[0].count=300",
                                          "pressure.tolerance=1e-4", "run.end_time=0.0301",
                                          "run.snapshot_every=5"};
  const std::string straight = test::scratch_dir("end_time_straight");
  const std::string resumed = test::scratch_dir("end_time_resumed");
  // box.toml gives no run.steps: the end time governs.
  const Config whole = test::case_config("box.toml", straight, small);
  REQUIRE_FALSE(whole.steps_given);
  int64_t steps = 0;
  {
    const std::unique_ptr<Simulation> sim = test::make_sim(whole);
    std::vector<double> dts;
    steps = step_to_end(*sim, dts);
  }
  REQUIRE(steps > 10);
  REQUIRE(test::run_case(whole) == 0);

  std::vector<std::string> first = small;
  first.push_back("run.steps=10");
  REQUIRE(test::run_case(test::case_config("box.toml", resumed, first)) == 0);
  const std::string from = join_path(resumed, snapshot_file_name(10));
  std::string report;
  REQUIRE(test::run_case(test::case_config("box.toml", resumed, small), from, nullptr, &report) == 0);
  CHECK(report.find("\n" + std::to_string(steps - 10) + " steps, simulated time 0.0301 s") != std::string::npos);
  const SnapshotContents a = read_snapshot(join_path(straight, snapshot_file_name(steps)));
  const SnapshotContents b = read_snapshot(join_path(resumed, snapshot_file_name(steps)));
  CHECK(a.header.time == 0.0301);
  CHECK(b.header.time == 0.0301);
  test::check_same_snapshot(a, b);

  // Restarted at the end: nothing to do, said as such.
  std::string err;
  CHECK(test::run_case(test::case_config("box.toml", resumed, small), join_path(resumed, snapshot_file_name(steps)),
                       &err) == 1);
  CHECK(err.find("nothing to do: the snapshot is at t = 0.0301 s and run.end_time is 0.0301 s") != std::string::npos);
}
