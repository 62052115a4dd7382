// Helpers of the io_* suites: scratch directories, small configs from
// config/*.toml with overrides, whole-file snapshot comparison, external tools.
#pragma once
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/config_loader.hpp"
#include "io/config_writer.hpp"
#include "io/snapshot_reader.hpp"
#include "same_state.hpp"
#include "sim/app/run.hpp"

namespace iotest {

namespace fs = std::filesystem;

// An empty directory under the system temp dir, unique to this process;
// all of them are removed at exit unless SIM_KEEP_TEST_OUTPUT is set.
inline std::string scratch_dir(const std::string& name) {
  struct Root {
    fs::path path = fs::temp_directory_path() / ("sim_io_" + std::to_string(::getpid()));
    ~Root() {
      std::error_code ec;
      if (!std::getenv("SIM_KEEP_TEST_OUTPUT")) fs::remove_all(path, ec);
    }
  };
  static const Root root;
  const fs::path p = root.path / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

inline std::string source_path(const std::string& rel) { return std::string(SIM_SOURCE_DIR) + "/" + rel; }

// config/<name> with the output directory and `sets` applied, as `sim --set` would.
inline sim::Config case_config(const std::string& name, const std::string& output, std::vector<std::string> sets) {
  sets.push_back("run.output=" + sim::toml_string_literal(output));
  sets.push_back("run.backend=\"cpu\"");
  return sim::load_config(source_path("config/" + name), sets);
}

// A run through the library, as the executable does it; returns the exit
// status. With `out_text` the run is not quiet and its report lands there.
inline int run_case(const sim::Config& cfg, const std::string& restart = "", std::string* err_text = nullptr,
                    std::string* out_text = nullptr) {
  sim::RunOptions opts;
  opts.quiet = out_text == nullptr;
  opts.restart = restart;
  std::ostringstream out, err;
  const int rc = sim::run_simulation(cfg, opts, out, err);
  if (err_text) *err_text = err.str();
  if (out_text) *out_text = out.str();
  if (rc != 0 && !err_text) MESSAGE("run failed: " << err.str());
  return rc;
}

using simtest::same_bits;

// Every /grid and /particles dataset and the clock and counters, bit for bit.
inline void check_same_snapshot(const sim::SnapshotContents& a, const sim::SnapshotContents& b) {
  CHECK(a.header.step == b.header.step);
  CHECK(std::memcmp(&a.header.time, &b.header.time, sizeof(double)) == 0);
  CHECK(std::memcmp(&a.header.dt, &b.header.dt, sizeof(double)) == 0);
  CHECK(a.header.next_id == b.header.next_id);
  CHECK(a.header.counters.removed == b.header.counters.removed);
  CHECK(a.header.counters.recycled == b.header.counters.recycled);
  CHECK(a.header.capacity == b.header.capacity);
  CHECK(a.header.nx == b.header.nx);
  CHECK(a.header.ny == b.header.ny);
  CHECK(same_bits(a.grid.pressure, b.grid.pressure));
  CHECK(same_bits(a.grid.velocity, b.grid.velocity));
  CHECK(same_bits(a.grid.vorticity, b.grid.vorticity));
  CHECK(same_bits(a.grid.divergence, b.grid.divergence));
  CHECK(same_bits(a.grid.solid, b.grid.solid));
  CHECK(same_bits(a.grid.u, b.grid.u));
  CHECK(same_bits(a.grid.v, b.grid.v));
  CHECK(same_bits(a.grid.phi, b.grid.phi));
  CHECK(same_bits(a.particles.position, b.particles.position));
  CHECK(same_bits(a.particles.velocity, b.particles.velocity));
  CHECK(same_bits(a.particles.id, b.particles.id));
  CHECK(same_bits(a.particles.diameter, b.particles.diameter));
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Exit status of a shell command (-1 when it did not run).
inline int shell(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return rc == -1 ? -1 : (WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
}

// A Python interpreter that can import `module`: python3 on the PATH first,
// then the system one (Debian's python3-h5py and python3-paraview install
// there, which a pyenv or venv python3 does not see). "" when none can.
inline std::string python_with(const std::string& module) {
  for (const char* py : {"python3", "/usr/bin/python3"})
    if (shell(std::string(py) + " -c 'import " + module + "' >/dev/null 2>&1") == 0) return py;
  return "";
}

inline std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace iotest
