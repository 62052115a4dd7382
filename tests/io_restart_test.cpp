// SPDX-License-Identifier: MIT
// Restart: a run continued from a snapshot ends bit for bit where the
// uninterrupted run ends, on the CPU backend; bad restarts fail with a reason.
#include <doctest/doctest.h>

#include <cstring>

#include "io/restart.hpp"
#include "io/snapshot_files.hpp"
#include "io/snapshot_reader.hpp"
#include "io/snapshot_series.hpp"
#include "support/cases.hpp"
#include "support/compare.hpp"
#include "support/io.hpp"

using namespace sim;

namespace {

// Straight to `steps`, versus to `split` and then restarted from that
// snapshot up to `steps`: both final snapshots must be identical.
void check_continuation(const std::string& name, const std::string& config, std::vector<std::string> sets,
                        int steps, int split) {
  const std::string straight = test::scratch_dir(name + "_straight");
  const std::string resumed = test::scratch_dir(name + "_resumed");
  sets.push_back("run.snapshot_every=" + std::to_string(split));
  sets.push_back("run.steps=" + std::to_string(steps));
  REQUIRE(test::run_case(test::case_config(config, straight, sets)) == 0);

  std::vector<std::string> first = sets;
  first.push_back("run.steps=" + std::to_string(split));
  REQUIRE(test::run_case(test::case_config(config, resumed, first)) == 0);
  const std::string from = join_path(resumed, snapshot_file_name(split));
  // Restarting re-reads what the first half wrote: same bits as the straight run at that step.
  test::check_same_snapshot(read_snapshot(join_path(straight, snapshot_file_name(split))), read_snapshot(from));
  std::string report;
  REQUIRE(test::run_case(test::case_config(config, resumed, sets), from, nullptr, &report) == 0);
  // It continued from the file rather than starting over.
  CHECK(report.find("restart: step " + std::to_string(split) + ",") != std::string::npos);
  CHECK(report.find("\n" + std::to_string(steps - split) + " steps, ") != std::string::npos);

  const SnapshotContents a = read_snapshot(join_path(straight, snapshot_file_name(steps)));
  const SnapshotContents b = read_snapshot(join_path(resumed, snapshot_file_name(steps)));
  CHECK(a.header.step == steps);
  test::check_same_snapshot(a, b);

  // The resumed directory's index covers both halves.
  SnapshotSeries series(resumed);
  series.adopt_existing(steps, a.header.nx, a.header.ny);
  CHECK(series.steps().size() == static_cast<size_t>(steps / split) + 1);  // and the initial state
  const std::string index = test::read_text(join_path(resumed, "sim.xdmf"));
  CHECK(index.find(snapshot_file_name(split)) != std::string::npos);
  CHECK(index.find(snapshot_file_name(steps)) != std::string::npos);
}

}  // namespace

TEST_CASE("restart: box 200 steps straight equal 100 + restart + 100 bit for bit") {
  check_continuation("box", "box.toml",
                     {"domain.nx=32", "domain.ny=32", "particles.regions[0].count=500", "pressure.tolerance=1e-4"},
                     200, 100);
}

TEST_CASE("restart: channel with injection outflow and recycled slots continues bit for bit") {
  // A small capacity makes injections recycle live slots, and the outflow
  // leaves dead ones: the slot rebuild (slot = id % capacity) is exercised.
  check_continuation("channel", "channel.toml",
                     {"domain.nx=64", "domain.ny=16", "particles.capacity=100", "particles.inject.rate=300.0",
                      "particles.inject.x0=7.5", "particles.inject.x1=7.95"},
                     60, 30);
}

TEST_CASE("restart: aos layout continues bit for bit") {
  check_continuation("box_aos", "box.toml",
                     {"domain.nx=24", "domain.ny=24", "particles.regions[0].count=200", "run.layout=\"aos\""}, 40,
                     20);
}

TEST_CASE("restart: a snapshot that does not fit the config is refused with a reason") {
  const std::string dir = test::scratch_dir("restart_bad");
  const std::vector<std::string> sets = {"domain.nx=16", "domain.ny=16", "particles.regions[0].count=50",
                                         "run.steps=2", "run.snapshot_every=0"};
  REQUIRE(test::run_case(test::case_config("box.toml", dir, sets)) == 0);
  const std::string snap = join_path(dir, snapshot_file_name(2));

  std::vector<std::string> other = sets;
  other.push_back("domain.nx=20");
  std::string err;
  CHECK(test::run_case(test::case_config("box.toml", dir, other), snap, &err) == 1);
  CHECK(err == "sim: error: restart from '" + snap + "': the file's grid is 16 x 16 cells, the config's 20 x 16\n");

  const std::string missing = join_path(dir, "snap_999999.h5");
  CHECK(test::run_case(test::case_config("box.toml", dir, sets), missing, &err) == 1);
  CHECK(err.rfind("sim: error: restart: " + missing + ": cannot open as an HDF5 file", 0) == 0);
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);

  std::vector<std::string> small = sets;
  small.push_back("particles.regions[0].count=10");
  small.push_back("particles.capacity=10");
  CHECK_THROWS_WITH_AS(load_restart(test::case_config("box.toml", dir, small), snap),
                       doctest::Contains("do not fit the config's capacity 10"), std::runtime_error);
}

TEST_CASE("restart: the rebuilt state has the halo and slots of the original") {
  const std::string dir = test::scratch_dir("restart_state");
  const Config cfg = test::case_config(
      "channel.toml", dir,
      {"domain.nx=32", "domain.ny=8", "particles.capacity=25", "particles.inject.rate=3000.0", "run.steps=12"});
  REQUIRE(test::run_case(cfg) == 0);
  const SimState s = load_restart(cfg, join_path(dir, snapshot_file_name(12)));
  CHECK(s.step == 12);
  CHECK(s.particles.size() == 25u);
  int alive = 0;
  for (size_t r = 0; r < s.particles.size(); ++r) {
    CHECK(s.particles.id[r] % 25 == r);
    alive += s.particles.alive[r];
  }
  CHECK(alive > 0);
  CHECK(s.next_id > 25u);
  // Inflow on the left: the boundary face and its halo copy hold the inflow speed.
  const Grid& g = s.grid;
  for (int j = 0; j < g.ny; ++j) {
    CHECK(s.u[g.idx(0, j)] == 1.0f);
    CHECK(s.u[g.idx(-1, j)] == 1.0f);
  }
}

TEST_CASE("restart: a rank's own particles, read a chunk at a time, are the whole state's filtered") {
  // A capacity smaller than the ids injected: slots wrap, so slot order is
  // not id order, and the chunks cut the file anywhere.
  const std::string dir = test::scratch_dir("restart_keep");
  const Config cfg = test::case_config(
      "channel.toml", dir,
      {"domain.nx=32", "domain.ny=8", "particles.capacity=25", "particles.inject.rate=3000.0", "run.steps=12"});
  REQUIRE(test::run_case(cfg) == 0);
  const std::string snap = join_path(dir, snapshot_file_name(12));
  const SimState whole = load_restart(cfg, snap);
  const auto keep = [&](double x, double y) { return y < 0.45 * cfg.ly || x > 0.8 * cfg.lx; };
  std::vector<Particle> expect;
  for (size_t r = 0; r < whole.particles.size(); ++r) {
    const Particle q = whole.particles.load(r);
    if (q.alive && keep(q.x, q.y)) expect.push_back(q);
  }
  REQUIRE(!expect.empty());
  REQUIRE(expect.size() < 25u);
  for (const int64_t chunk : {int64_t(1), int64_t(3), int64_t(7), kRestartChunk}) {
    CAPTURE(chunk);
    const SimState own = load_restart(cfg, snap, keep, chunk);
    CHECK(own.step == whole.step);
    CHECK(own.time == whole.time);
    CHECK(own.next_id == whole.next_id);
    CHECK(own.counters.recycled == whole.counters.recycled);
    CHECK(own.u == whole.u);
    CHECK(own.v == whole.v);
    CHECK(own.phi == whole.phi);
    CHECK(own.open == whole.open);
    REQUIRE(own.particles.size() == expect.size());
    for (size_t k = 0; k < expect.size(); ++k) {
      const Particle q = own.particles.load(k);
      CHECK(std::memcmp(&q, &expect[k], sizeof q) == 0);
    }
  }
  // Chunks of any size (the grid a row at a time) read the whole state as one read does.
  const SimState in_ones = load_restart(cfg, snap, 1);
  CHECK(in_ones.particles.id == whole.particles.id);
  CHECK(in_ones.particles.x == whole.particles.x);
  CHECK(in_ones.particles.alive == whole.particles.alive);
  CHECK(in_ones.u == whole.u);
  CHECK(in_ones.v == whole.v);
  CHECK(in_ones.phi == whole.phi);
}

TEST_CASE("restart: two particles of one slot are refused alike whole and a rank's part at a time") {
  const std::string dir = test::scratch_dir("restart_slot_clash");
  const Config cfg = test::case_config(
      "channel.toml", dir,
      {"domain.nx=64", "domain.ny=16", "particles.capacity=100", "particles.inject.rate=300.0",
       "particles.inject.x0=7.5", "particles.inject.x1=7.95", "run.steps=30"});
  REQUIRE(test::run_case(cfg) == 0);
  const std::string snap = join_path(dir, snapshot_file_name(30));
  const int64_t alive = read_snapshot_header(snap).particles;
  // Particles injected near the outflow have left: a smaller capacity
  // still holds the count, and some two ids share a slot.
  REQUIRE(alive < 100);
  int clashes = 0;
  for (int64_t cap = alive; cap < 100; ++cap) {
    Config small = cfg;
    small.capacity = cap;
    std::string whole_error, part_error;
    try {
      load_restart(small, snap);
    } catch (const std::runtime_error& e) {
      whole_error = e.what();
    }
    try {
      load_restart(small, snap, [](double, double y) { return y < 0.5; }, 2);
    } catch (const std::runtime_error& e) {
      part_error = e.what();
    }
    CAPTURE(cap);
    CHECK(part_error == whole_error);
    if (whole_error.find("need the same slot with capacity " + std::to_string(cap)) != std::string::npos) ++clashes;
  }
  CHECK(clashes > 0);
}
