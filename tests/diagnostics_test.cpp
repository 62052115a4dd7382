// SPDX-License-Identifier: MIT
// OUTPUT/diagnostics.csv (run.diagnostics_every), the initial snapshot
// (run.snapshot_initial) and snapshots at multiples of run.snapshot_interval,
// each read back and checked against what the snapshots of the same run hold.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "io/config_loader.hpp"
#include "io/snapshot_files.hpp"
#include "io/snapshot_reader.hpp"
#include "sim/model/stability.hpp"
#include "sim/model/state.hpp"
#include "support/cli.hpp"
#include "support/io.hpp"

using namespace sim;

namespace {

const std::string box = test::source_path("config/box.toml");
const std::string small = " --set domain.nx=16 --set domain.ny=16 --set particles.regions[0].count=50 ";

struct Csv {
  std::vector<std::string> columns;
  std::vector<std::map<std::string, double>> rows;
  std::map<std::string, double> at_step(int64_t step) const {
    for (const auto& r : rows)
      if (r.at("step") == double(step)) return r;
    FAIL("no row of step " << step);
    return {};
  }
};

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  for (std::string cell; std::getline(s, cell, ',');) out.push_back(cell);
  return out;
}

Csv read_csv(const std::string& path) {
  Csv c;
  const std::vector<std::string> lines = test::read_lines(path);
  REQUIRE(!lines.empty());
  c.columns = split(lines[0]);
  for (size_t k = 1; k < lines.size(); ++k) {
    const std::vector<std::string> cells = split(lines[k]);
    REQUIRE(cells.size() == c.columns.size());
    std::map<std::string, double> row;
    for (size_t i = 0; i < cells.size(); ++i) row[c.columns[i]] = std::strtod(cells[i].c_str(), nullptr);
    c.rows.push_back(row);
  }
  return c;
}

std::vector<int64_t> steps_of(const Csv& c) {
  std::vector<int64_t> s;
  for (const auto& r : c.rows) s.push_back(static_cast<int64_t>(r.at("step")));
  return s;
}

// Kinetic energy per unit depth and the mixture's momentum of a snapshot of
// the closed box (walls: every face of the file is a fluid unknown or a held
// zero), computed from its fields and particles in double.
struct Sums {
  double energy = 0, momentum[2] = {0, 0}, max_div = 0;
};
Sums sums_of(const SnapshotContents& s, const Config& cfg) {
  Sums out;
  const double dx = cfg.dx(), dy = cfg.dy(), cell_mass = cfg.density * dx * dy * cfg.slab_thickness();
  const int nx = s.grid.nx, ny = s.grid.ny;
  for (int q = 0; q < 2; ++q) {
    const std::vector<float>& f = q == 0 ? s.grid.u : s.grid.v;
    for (float w : f) {
      out.energy += 0.5 * cfg.density * dx * dy * double(w) * double(w);
      out.momentum[q] += cell_mass * w;
    }
  }
  for (size_t p = 0; p < s.particles.size(); ++p) {
    const double d = s.particles.diameter[p];
    const double m = cfg.particle_density * M_PI / 6 * d * d * d;
    out.momentum[0] += m * s.particles.velocity[3 * p];
    out.momentum[1] += m * s.particles.velocity[3 * p + 1];
  }
  for (int k = 0; k < nx * ny; ++k) out.max_div = std::max(out.max_div, std::abs(double(s.grid.divergence[k])));
  return out;
}

}  // namespace

// Catches: rows at the wrong steps, a column that is not what its name says
// (the energy, the momentum without the particles, the clock), a missing
// first row, rows that depend on the snapshot steps.
TEST_CASE("diagnostics.csv: a row every N steps from step 0, matching the snapshots of those steps") {
  const std::string dir = test::scratch_dir("diag_rows");
  const std::string sets = " --set run.diagnostics_every=5 --set particles.restitution=0.5 ";
  REQUIRE(test::run_sim("--backend cpu --steps 22 --snapshot-every 10 --output " + dir + small + sets + box).status ==
          0);
  const Csv c = read_csv(dir + "/diagnostics.csv");
  CHECK(c.columns == std::vector<std::string>{"step", "time", "dt", "kinetic_energy", "max_divergence",
                                              "pressure_iterations", "pressure_residual", "particles_alive",
                                              "momentum_x", "momentum_y"});
  CHECK(steps_of(c) == std::vector<int64_t>{0, 5, 10, 15, 20});
  const Config cfg = load_config(box, {"domain.nx=16", "domain.ny=16", "particles.regions[0].count=50"});
  for (int64_t step : {0, 10, 20}) {
    INFO("step " << step);
    const SnapshotContents s = read_snapshot(dir + "/" + snapshot_file_name(step));
    const auto row = c.at_step(step);
    CHECK(row.at("time") == s.header.time);  // 17 digits: the same double
    CHECK(row.at("dt") == s.header.dt);
    CHECK(row.at("particles_alive") == double(s.header.particles));
    const Sums want = sums_of(s, cfg);
    CHECK(row.at("kinetic_energy") == doctest::Approx(want.energy).epsilon(1e-6));
    // the momentum of the fluid and the falling particles: each part is
    // far from zero (gravity), their sum is the mixture's
    CHECK(row.at("momentum_y") == doctest::Approx(want.momentum[1]).epsilon(1e-5));
    CHECK(std::abs(row.at("momentum_x") - want.momentum[0]) <= 1e-5 * std::abs(want.momentum[1]) + 1e-15);
    CHECK(row.at("max_divergence") == doctest::Approx(want.max_div).epsilon(1e-5));
  }
  // step 0: the particles at rest in a fluid at rest, nothing solved yet
  const auto first = c.at_step(0);
  CHECK(first.at("time") == 0);
  CHECK(first.at("kinetic_energy") == 0);
  CHECK(first.at("pressure_iterations") == 0);
  CHECK(first.at("particles_alive") == 50);
  // later steps solved to the tolerance, in at least one iteration a solve
  for (int64_t step : {5, 10, 15, 20}) {
    CHECK(c.at_step(step).at("pressure_iterations") >= 1);
    CHECK(c.at_step(step).at("pressure_residual") <= 1e-6);
    CHECK(c.at_step(step).at("momentum_y") < 0);  // the particles fall
  }
  // every 0: no file
  const std::string none = test::scratch_dir("diag_none");
  REQUIRE(test::run_sim("--backend cpu --steps 3 --set run.diagnostics_every=0 --output " + none + small + box).status ==
          0);
  CHECK_FALSE(std::filesystem::exists(none + "/diagnostics.csv"));
}

// Catches: obstacle columns in another order than the config's, a drag of
// the wrong sign (the fluid pushes a cylinder downstream, +x), forces that
// are not the run summary's.
TEST_CASE("diagnostics.csv: drag and lift of each obstacle in config order") {
  const std::string dir = test::scratch_dir("diag_obstacles");
  auto config = [&](bool circle_first) {
    const std::string circle = "[[obstacles]]\nshape = \"circle\"\nx = 1.5\ny = 1.0\nradius = 0.15\n";
    const std::string rect = "[[obstacles]]\nshape = \"rectangle\"\nx0 = 4.0\nx1 = 4.5\ny0 = 0.5\ny1 = 1.5\n";
    std::string text = test::read_text(test::source_path("config/channel.toml"));
    const size_t at = text.find("[[obstacles]]");
    const size_t end = text.find("[particles]");
    text = text.substr(0, at) + (circle_first ? circle + rect : rect + circle) + "\n" + text.substr(end);
    const std::string path = dir + (circle_first ? "/a.toml" : "/b.toml");
    test::write_text(path, text);
    return path;
  };
  const std::string args = " --backend cpu --steps 20 --set domain.nx=128 --set domain.ny=32 "
                           "--set run.diagnostics_every=10 --set run.snapshot_initial=false --output ";
  REQUIRE(test::run_sim(args + dir + "/a --summary-json " + dir + "/a.json " + config(true)).status == 0);
  REQUIRE(test::run_sim(args + dir + "/b " + config(false)).status == 0);
  const Csv a = read_csv(dir + "/a/diagnostics.csv"), b = read_csv(dir + "/b/diagnostics.csv");
  CHECK(a.columns.size() == 14);
  CHECK(a.columns[10] == "drag_0");
  CHECK(a.columns[13] == "lift_1");
  CHECK(steps_of(a) == std::vector<int64_t>{0, 10, 20});
  for (int64_t step : {10, 20}) {
    const auto ra = a.at_step(step), rb = b.at_step(step);
    CHECK(ra.at("drag_0") > 0);  // circle, downstream
    CHECK(ra.at("drag_1") > 0);  // rectangle
    CHECK(ra.at("drag_1") > 2 * ra.at("drag_0"));  // the rectangle is 1 m tall, the circle 0.3 m
    // the same flow, the obstacles listed the other way round
    CHECK(rb.at("drag_1") == doctest::Approx(ra.at("drag_0")).epsilon(1e-9));
    CHECK(rb.at("drag_0") == doctest::Approx(ra.at("drag_1")).epsilon(1e-9));
    CHECK(rb.at("lift_0") == doctest::Approx(ra.at("lift_1")).epsilon(1e-6).scale(1e-9));
  }
  // the last row is the step the summary reports
  const std::string json = test::read_text(dir + "/a.json");
  char want[64];
  std::snprintf(want, sizeof want, "%.6g", a.at_step(20).at("drag_0"));
  INFO(json);
  const size_t force = json.find("\"force\": [");
  REQUIRE(force != std::string::npos);
  CHECK(std::strtod(json.c_str() + force + 10, nullptr) == doctest::Approx(a.at_step(20).at("drag_0")).epsilon(1e-9));
  // OUTPUT/summary.json: the same object, with or without --summary-json
  CHECK(test::read_text(dir + "/a/summary.json") == json);
  CHECK(json.rfind("{\n  \"format_version\": 1,\n", 0) == 0);
  const std::string jb = test::read_text(dir + "/b/summary.json");
  CHECK(jb.find("\"answer_check\": \"passed\"") != std::string::npos);
  CHECK(jb.find("\"shape\": \"rectangle\"") < jb.find("\"shape\": \"circle\""));
}

// Catches: a restart that appends after the old rows past its step
// (duplicated steps), that drops the rows before it, that keeps a killed
// run's unfinished row, or that rewrites the snapshot it starts from.
TEST_CASE("diagnostics.csv: a restart cuts the rows after its step and appends, as the run without a stop") {
  const std::string dir = test::scratch_dir("diag_restart");
  const std::string args = " --backend cpu --snapshot-every 20 --set run.diagnostics_every=5 --output " + dir + small;
  REQUIRE(test::run_sim("--steps 40" + args + box).status == 0);
  const std::string whole = test::read_text(dir + "/diagnostics.csv");
  CHECK(steps_of(read_csv(dir + "/diagnostics.csv")).size() == 9);
  const std::string initial = test::read_text(dir + "/snap_000000.h5");
  const std::string source = test::read_text(dir + "/snap_000020.h5");
  {
    std::ofstream f(dir + "/diagnostics.csv", std::ios::app);
    f << "45,0.0123,0.00";  // a killed run's unfinished row
  }
  const test::SimResult r = test::run_sim("--steps 40 --restart " + dir + "/snap_000020.h5" + args + box);
  REQUIRE(r.status == 0);
  CHECK(test::read_text(dir + "/diagnostics.csv") == whole);  // bit for bit: the CPU restart is exact
  CHECK(test::read_text(dir + "/snap_000020.h5") == source);
  CHECK(test::read_text(dir + "/snap_000000.h5") == initial);

  // into another directory: a file of its own, rows after the restart step
  const std::string other = test::scratch_dir("diag_restart_other");
  REQUIRE(test::run_sim("--backend cpu --steps 40 --set run.diagnostics_every=5 --restart " + dir +
                        "/snap_000020.h5 --output " + other + small + box)
              .status == 0);
  CHECK(steps_of(read_csv(other + "/diagnostics.csv")) == std::vector<int64_t>{25, 30, 35, 40});
  CHECK_FALSE(std::filesystem::exists(other + "/snap_000000.h5"));
  const std::vector<std::string> lines = test::read_lines(other + "/diagnostics.csv");
  CHECK(lines.back() == test::read_lines(dir + "/diagnostics.csv").back());

  // a file of other columns is not cut: the restart is refused
  const std::string wrong = "step,time,dt,kinetic_energy,max_divergence,other\n0,0,0,0,0,0\n";
  test::write_text(dir + "/diagnostics.csv", wrong);
  const test::SimResult refused = test::run_sim("--steps 40 --restart " + dir + "/snap_000020.h5" + args + box);
  CHECK(refused.status == 1);
  CHECK(refused.out.find("sim: error: " + dir + "/diagnostics.csv does not begin with this run's header") !=
        std::string::npos);
  CHECK(test::read_text(dir + "/diagnostics.csv") == wrong);
}

// Catches: a write error that goes unnoticed (rows silently missing) or
// ends the run with status 0.
TEST_CASE("diagnostics.csv: a write error stops the run in one line") {
  const std::string dir = test::scratch_dir("diag_full");
  // 1 KiB a file: the rows pass it long before the final snapshot is due
  const test::SimResult r = test::run_shell("ulimit -f 1; " + std::string(SIM_EXECUTABLE) +
                                            " --backend cpu --steps 40 --set run.diagnostics_every=1 "
                                            "--set run.snapshot_initial=false --output " +
                                            dir + small + box + " >/dev/null");
  CHECK(r.status == 1);
  CHECK(r.out == "sim: error: file too large writing " + dir + "/diagnostics.csv\n");
}

// Catches: an initial snapshot that is not the initial state (a step
// already taken, another clock), one written again by a restart, a series
// whose index does not start at t = 0.
TEST_CASE("initial snapshot: the state at t = 0 is the first snapshot of a fresh run") {
  const std::string dir = test::scratch_dir("diag_initial");
  REQUIRE(test::run_sim("--backend cpu --steps 4 --snapshot-every 2 --output " + dir + small + box).status == 0);
  const Config cfg = load_config(box, {"domain.nx=16", "domain.ny=16", "particles.regions[0].count=50"});
  const SimState want = make_initial_state(cfg);
  const SnapshotContents s = read_snapshot(dir + "/snap_000000.h5");
  CHECK(s.header.step == 0);
  CHECK(s.header.time == 0);
  CHECK(s.header.particles == 50);
  const Grid& g = want.grid;
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i <= g.nx; ++i) REQUIRE(s.grid.u[j * (g.nx + 1) + i] == want.u[g.idx(i, j)]);
  for (size_t p = 0; p < s.particles.size(); ++p) {
    const size_t slot = s.particles.id[p] % want.particles.size();
    CHECK(s.particles.position[3 * p] == want.particles.x[slot]);
    CHECK(s.particles.position[3 * p + 1] == want.particles.y[slot]);
    CHECK(s.particles.diameter[p] == want.particles.d[slot]);
  }
  // the index starts at t = 0 and lists 0, 2, 4
  const std::string index = test::read_text(dir + "/sim.xdmf");
  const size_t first_time = index.find("<Time Value=\"");
  REQUIRE(first_time != std::string::npos);
  CHECK(index.compare(first_time, 15, "<Time Value=\"0\"") == 0);
  CHECK(index.find("snap_000000.h5") < index.find("snap_000002.h5"));
  // off: not written
  const std::string off = test::scratch_dir("diag_initial_off");
  REQUIRE(test::run_sim("--backend cpu --steps 2 --set run.snapshot_initial=false --output " + off + small + box)
              .status == 0);
  CHECK_FALSE(std::filesystem::exists(off + "/snap_000000.h5"));
  CHECK(std::filesystem::exists(off + "/snap_000002.h5"));
}

TEST_CASE("snapshot interval: choose_dt lands the clock on each multiple of the interval") {
  DtRule r;
  r.fixed_dt = 0.03;
  r.interval = 0.1;
  double t = 0;
  std::set<double> clock;
  for (int k = 0; k < 40; ++k) {
    const double dt = choose_dt(r, 0.0, t).dt;
    REQUIRE(dt > 0);
    REQUIRE(dt <= 0.03 * (1 + kEndSliver));
    t = clock_after(r, t, dt);
    clock.insert(t);
  }
  // 0.1, 0.2, ...: exactly n * 0.1 (the double product), none skipped
  for (int n = 1; n <= 9; ++n) CHECK_MESSAGE(clock.count(n * 0.1) == 1, n);
  // from 0.09 the step is cut to 0.1 - 0.09 and lands on 0.1 itself
  CHECK(choose_dt(r, 0.0, 0.09).dt == 0.1 - 0.09);
  CHECK(clock_after(r, 0.09, 0.1 - 0.09) == 0.1);
  // an end time before the next multiple comes first
  r.end_time = 0.15;
  CHECK(choose_dt(r, 0.0, 0.14).dt == 0.15 - 0.14);
  CHECK(clock_after(r, 0.14, 0.15 - 0.14) == 0.15);
}

// Catches: frames that miss the multiples (off by the last step's dt),
// skipped multiples, an interval that overrides run.snapshot_every.
TEST_CASE("snapshot interval: an adaptive run writes frames exactly at multiples of the interval") {
  const std::string dir = test::scratch_dir("diag_interval");
  // the channel: the flow around the cylinder develops, and the CFL limit with it
  const std::string channel = test::source_path("config/channel.toml");
  const test::SimResult r = test::run_sim(
      "--backend cpu --end-time 0.4 --snapshot-every 5 --set run.snapshot_interval=0.1 --set domain.nx=128 "
      "--set domain.ny=32 --set time.dt_max=1 --set run.diagnostics_every=1 --output " + dir + " " + channel);
  REQUIRE(r.status == 0);
  std::set<double> times;
  std::set<int64_t> steps;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("snap_", 0) != 0) continue;
    const SnapshotHeader h = read_snapshot_header(e.path().string());
    times.insert(h.time);
    steps.insert(h.step);
  }
  for (int n = 0; n <= 4; ++n) CHECK_MESSAGE(times.count(n * 0.1) == 1, "t = " << n * 0.1);
  // the steps are adaptive: the CFL limit of the developing flow sets dt
  const Csv c = read_csv(dir + "/diagnostics.csv");
  std::set<double> dts;
  for (const auto& row : c.rows)
    if (row.at("step") > 0) dts.insert(row.at("dt"));
  CHECK(dts.size() > 10);
  // run.snapshot_every still applies
  const int64_t last = static_cast<int64_t>(c.rows.back().at("step"));
  CHECK(last > 10);
  for (int64_t s = 5; s <= last; s += 5) CHECK_MESSAGE(steps.count(s) == 1, "step " << s);
  CHECK(times.size() == steps.size());
}

TEST_CASE("config: the output keys refuse bad values, naming file, line and key") {
  const auto error = [](const std::string& text) {
    try {
      (void)load_config_string(text, "t.toml", {});
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("[run]\ndiagnostics_every = -1\n") ==
        "t.toml:2:21: run.diagnostics_every: expected an integer >= 0, got -1");
  CHECK(error("[run]\ndiagnostics_every = \"ten\"\n") ==
        "t.toml:2:21: run.diagnostics_every: expected an integer >= 0, got \"ten\"");
  CHECK(error("[run]\nsnapshot_interval = -0.5\n") ==
        "t.toml:2:21: run.snapshot_interval: expected a number > 0, got -0.5");
  CHECK(error("[run]\nsnapshot_interval = 0\n").find("run.snapshot_interval") != std::string::npos);
  CHECK(error("[run]\nsnapshot_initial = 1\n") ==
        "t.toml:2:20: run.snapshot_initial: expected true or false, got 1");
  CHECK(load_config_string("[run]\nsnapshot_interval = 0.25\n", "t.toml", {}).snapshot_interval == 0.25);
  CHECK(load_config_string("", "t.toml", {}).diagnostics_every == 10);
  CHECK(load_config_string("", "t.toml", {}).tolerance == 1e-6);
}
