// SPDX-License-Identifier: MIT
// The non-finite watchdog: a run that blows up stops with one line naming
// the step, the time and the field, and never writes a snapshot holding a
// NaN; a NaN put into a face or a particle is reported where it was put.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "io/snapshot_reader.hpp"
#include "support/cases.hpp"
#include "support/cli.hpp"
#include "support/io.hpp"

using namespace sim;

namespace {

constexpr real kNaN = std::numeric_limits<real>::quiet_NaN();

template <class T>
bool all_finite(const std::vector<T>& v) {
  for (const T& x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace

TEST_CASE("watchdog: the box blown up by 100 g stops with one line and writes only finite snapshots") {
  const std::string dir = test::scratch_dir("watchdog_box");
  // The reported case: every field NaN by step 40, and the run used to exit 0.
  const test::SimResult r =
      test::run_sim(test::quoted(test::source_path("config/box.toml")) + " --quiet --output " + test::quoted(dir) +
                    " --set gravity.y=-981 --set particles.density=8000 --set time.dt=1e-3"
                    " --set run.snapshot_every=5 --set run.steps=200 --set 'run.backend=\"cpu\"'");
  INFO(r.out);
  CHECK(r.status == 1);
  CHECK(test::count_lines(r.out) == 1);
  CHECK(r.out.rfind("sim: error: non-finite value at step ", 0) == 0);
  CHECK(r.out.find("(t = ") != std::string::npos);
  // With the implicit two-way coupling the coupling itself stays stable and
  // the liquid, dragged past the advective limit of the fixed dt, is what
  // blows up: the first value can be an inf of either sign.
  // (or the pressure of a stage whose solve already met it)
  CHECK((r.out.find(" = nan at face (") != std::string::npos || r.out.find(" = inf at face (") != std::string::npos ||
         r.out.find(" = nan at cell (") != std::string::npos ||
         r.out.find(" = -inf at face (") != std::string::npos || r.out.find("particle id ") != std::string::npos));

  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".h5") files.push_back(e.path().filename().string());
  CHECK(!files.empty());  // it ran long enough to write some: they are what is checked here
  // sim.xdmf names exactly the files on disk
  const std::string index = test::read_text(dir + "/sim.xdmf");
  std::set<std::string> listed;
  for (size_t p = index.find("snap_"); p != std::string::npos; p = index.find("snap_", p + 1))
    listed.insert(index.substr(p, index.find(".h5", p) + 3 - p));
  CHECK(listed == std::set<std::string>(files.begin(), files.end()));
  for (const std::string& f : files) {
    INFO(f);
    const SnapshotContents c = read_snapshot(dir + "/" + f);
    CHECK(all_finite(c.grid.u));
    CHECK(all_finite(c.grid.v));
    CHECK(all_finite(c.grid.phi));
    CHECK(all_finite(c.grid.velocity));
    CHECK(all_finite(c.grid.pressure));
    CHECK(all_finite(c.particles.position));
    CHECK(all_finite(c.particles.velocity));
    // the step named in the error is past every snapshot written
    const std::string at = "at step ";
    const int64_t failed = std::stoll(r.out.substr(r.out.find(at) + at.size()));
    CHECK(c.header.step < failed);
  }
}

TEST_CASE("watchdog: a NaN in u is reported at its face, adaptive and fixed dt") {
  Config cfg = test::quiet_box(32);
  cfg.initial = InitialFlow::uniform;
  cfg.initial_u = 0.1;
  SimState s = make_initial_state(cfg);
  s.u[s.grid.idx(5, 7)] = kNaN;
  // adaptive dt: next_dt's CFL rate (NaN-propagating max) sees it before anything spreads it
  const std::string adaptive = test::non_finite_message(cfg, s, 3);
  INFO(adaptive);
  CHECK(adaptive.rfind("non-finite value at step 0 (t = 0 s): u = nan at face (5, 7) (1 non-finite value in all)", 0) ==
        0);
  // fixed dt: the pressure solve's ||div u/dt|| of the same step, after advection spread it to the neighbours
  cfg.dt = 1e-3;
  const std::string fixed = test::non_finite_message(cfg, s, 3);
  INFO(fixed);
  CHECK(fixed.rfind("non-finite value at step 1 (t = 0.001 s): ", 0) == 0);
  CHECK(fixed.find(" = nan at face (") != std::string::npos);
  CHECK(fixed.find("lower time.dt") != std::string::npos);
}

TEST_CASE("watchdog: a particle with a NaN velocity is reported by id") {
  for (const Layout layout : {Layout::soa, Layout::aos}) {
    for (const bool two_way : {true, false}) {
      Config cfg = test::quiet_box(32);
      cfg.layout = layout;
      cfg.two_way = two_way;
      cfg.gy = -9.81;
      ParticleRegion r;
      r.x0 = r.y0 = 0.2;
      r.x1 = r.y1 = 0.8;
      r.count = 200;
      cfg.regions.push_back(r);
      SimState s = make_initial_state(cfg);
      const size_t slot = 137;
      REQUIRE(s.particles.alive[slot] == 1);
      s.particles.vx[slot] = kNaN;
      const std::string m = test::non_finite_message(cfg, s, 3);
      INFO(m);
      CHECK(m.rfind("non-finite value at step 1 (t = ", 0) == 0);
      CHECK(m.find("particle id " + std::to_string(s.particles.id[slot]) + ": vx = nan") != std::string::npos);
    }
  }
}

TEST_CASE("watchdog: the CFL rate is NaN when one face is") {
  Config cfg = test::quiet_box(16);
  SimState s = make_initial_state(cfg);
  s.v[s.grid.idx(3, 16)] = kNaN;  // a boundary face, the last row the rate reads
  const auto b = make_backend(cfg, s.grid, nullptr);
  b->set_constants(make_constants(cfg, s.grid));
  b->upload(s);
  CHECK(std::isnan(b->max_velocity_rate()));
}
