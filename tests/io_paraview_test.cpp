// SPDX-License-Identifier: MIT
// Data for tests/io_paraview_check.py, and the check itself when ParaView is
// installed: sim.xdmf opens with the grid in the x-y plane, the documented
// arrays, the right times, ranges and particle counts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "io/snapshot_fields.hpp"
#include "io/snapshot_files.hpp"
#include "io/snapshot_reader.hpp"
#include "io/snapshot_series.hpp"
#include "support/cases.hpp"
#include "support/io.hpp"

using namespace sim;

namespace {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string range_of(const std::vector<float>& a, size_t stride = 1) {
  float lo = a[0], hi = a[0];
  for (size_t k = 0; k < a.size(); k += stride) {
    lo = std::min(lo, a[k]);
    hi = std::max(hi, a[k]);
  }
  return "[" + num(lo) + ", " + num(hi) + "]";
}

// A channel with an obstacle on non-square cells; tracers start entering
// after the initial snapshot (t = 0), so one snapshot has no particles.
void write_paraview_case(const std::string& dir) {
  const Config cfg = test::case_config(
      "channel.toml", dir,
      {"domain.nx=32", "domain.ny=16", "particles.inject.rate=40.0", "run.steps=6", "run.snapshot_every=2"});
  REQUIRE(test::run_case(cfg) == 0);
  SnapshotSeries series(dir);
  series.adopt_existing(cfg.steps, cfg.nx, cfg.ny);
  REQUIRE(series.steps().size() == 4);  // t = 0 and steps 2, 4, 6
  // The arrays sim.xdmf lists, with their components: {"pressure": 1, ...}.
  std::string cell_arrays, point_arrays;
  for (const SnapshotField& f : kSnapshotFields) {
    if (f.xdmf != XdmfRole::scalar && f.xdmf != XdmfRole::vector) continue;
    std::string& to = f.group() == SnapshotGroup::grid ? cell_arrays : point_arrays;
    to += std::string(to.empty() ? "" : ", ") + "\"" + f.name + "\": " + std::to_string(f.components);
  }
  std::string json = "{\"nx\": " + std::to_string(cfg.nx) + ", \"ny\": " + std::to_string(cfg.ny) +
                     ", \"lx\": " + num(cfg.lx) + ", \"ly\": " + num(cfg.ly) + ", \"cell_arrays\": {" +
                     cell_arrays + "}, \"point_arrays\": {" + point_arrays + "}, \"steps\": [";
  bool none = false, some = false;
  for (const XdmfStep& st : series.steps()) {
    const SnapshotContents c = read_snapshot(join_path(dir, st.file));
    const SnapshotGrid& g = c.grid;
    const int64_t n = c.header.particles;
    none |= n == 0;
    some |= n > 0;
    const int nx = g.nx, ny = g.ny;
    auto probe = [&](const char* array, const std::vector<float>& a, int i, int j, int comp, int ncomp) {
      return std::string("{\"array\": \"") + array + "\", \"i\": " + std::to_string(i) + ", \"j\": " +
             std::to_string(j) + ", \"component\": " + std::to_string(comp) +
             ", \"value\": " + num(a[(static_cast<size_t>(j) * nx + i) * ncomp + comp]) + "}";
    };
    json += std::string(&st == &series.steps().front() ? "" : ", ") + "{\"time\": " + num(c.header.time) +
            ", \"particles\": " + std::to_string(n) + ", \"ranges\": {\"pressure\": " + range_of(g.pressure) +
            ", \"vorticity\": " + range_of(g.vorticity) + ", \"solid\": [0, 1]}, \"probes\": [" +
            probe("pressure", g.pressure, 0, 0, 0, 1) + ", " + probe("pressure", g.pressure, nx - 1, 0, 0, 1) +
            ", " + probe("pressure", g.pressure, 0, ny - 1, 0, 1) + ", " +
            probe("pressure", g.pressure, nx / 3, (2 * ny) / 3, 0, 1) + ", " +
            probe("velocity", g.velocity, nx / 2, ny / 4, 0, 3) + ", " +
            probe("velocity", g.velocity, nx / 2, ny / 4, 1, 3) + "]";
    if (n > 0) {
      const SnapshotParticles& p = c.particles;
      const size_t k = static_cast<size_t>(n - 1);
      json += ", \"last_particle\": {\"id\": " + std::to_string(p.id[k]) + ", \"position\": [" +
              num(p.position[3 * k]) + ", " + num(p.position[3 * k + 1]) + "]}";
    }
    json += "}";
  }
  json += "]}\n";
  REQUIRE(none);
  REQUIRE(some);
  write_file_atomically(join_path(dir, "expect.json"), json);
}

std::string build_dir() { return std::filesystem::path(SIM_EXECUTABLE).parent_path().string(); }

}  // namespace

// The fixture of the ctest entry io_paraview, run only on request
// (sim_tests "--test-case=io: ParaView data" --no-skip): writes
// BUILD/io_paraview_data for tests/io_paraview_check.py.
TEST_CASE("io: ParaView data" * doctest::skip()) {
  // Emptied first: a second ctest run in the same build finds the first's
  // series there, which the run would refuse to mix with its own.
  const std::string dir = join_path(build_dir(), "io_paraview_data");
  std::filesystem::remove_all(dir);
  write_paraview_case(dir);
}

TEST_CASE("io: ParaView reads sim.xdmf") {
  const std::string dir = test::scratch_dir("paraview");
  write_paraview_case(dir);
  const int rc = test::shell("python3 " + test::quoted(test::source_path("tests/io_paraview_check.py")) + " " +
                               test::quoted(dir));
  if (rc == 77) {
    MESSAGE("SKIPPED: ParaView not installed; tests/io_paraview_check.py did not run");
    return;
  }
  CHECK(rc == 0);
}
