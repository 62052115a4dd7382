// SPDX-License-Identifier: MIT
// Cases for the tests: configs built in code or read from config/ with
// overrides, and runs of them, stepped in process or as the `sim` job.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/config_loader.hpp"
#include "io/config_writer.hpp"
#include "sim/app/backend_factory.hpp"
#include "sim/app/run.hpp"
#include "sim/model/simulation.hpp"
#include "support/io.hpp"

namespace sim::test {

// A closed box at rest with no particles, on the CPU; tests change what they need.
inline Config quiet_box(int n = 32) {
  Config c;
  c.source = "test";
  c.nx = c.ny = n;
  c.lx = c.ly = 1.0;
  c.density = 1.0;
  c.viscosity = 0.01;
  c.gx = 0;
  c.gy = 0;
  c.tolerance = 1e-5;  // float32 fields: about the floor of the relative residual
  c.max_iterations = 5000;
  c.backend = BackendKind::cpu;
  return c;
}

// The Taylor-Green vortex of amplitude 1 on a periodic [0, 2 pi]^2 box.
inline Config taylor_green(int n, double nu = 0.05) {
  Config c = quiet_box(n);
  const double L = 2.0 * M_PI;
  c.lx = c.ly = L;
  c.viscosity = nu;
  c.initial = InitialFlow::taylor_green;
  c.initial_u = 1.0;
  for (BoundarySide* s : {&c.left, &c.right, &c.bottom, &c.top}) s->kind = BoundaryKind::periodic;
  return c;
}

// The message loading `text` (as t.toml) with `sets` fails with, or "" when it loads.
inline std::string config_error(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    load_config_string(text, "t.toml", sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// config/<name> with `sets` applied, as `sim --set` would.
inline Config shipped_config(const std::string& name, const std::vector<std::string>& sets = {}) {
  return load_config(source_path("config/" + name), sets);
}

// config/<name> on the CPU, writing to `output`, with `sets` applied.
inline Config case_config(const std::string& name, const std::string& output, std::vector<std::string> sets) {
  sets.push_back("run.output=" + toml_string_literal(output));
  sets.push_back("run.backend=\"cpu\"");
  return shipped_config(name, sets);
}

// Fills u and v on every stored face (halo included) from functions of
// the face's position (x, y).
inline void set_velocity(SimState& st, const Config& c, const std::function<double(double, double)>& u,
                         const std::function<double(double, double)>& v) {
  const Grid& g = st.grid;
  for (int j = -1; j <= g.ny; ++j)
    for (int i = -1; i <= g.nx + 1; ++i) st.u[g.idx(i, j)] = static_cast<real>(u(i * c.dx(), (j + 0.5) * c.dy()));
  for (int j = -1; j <= g.ny + 1; ++j)
    for (int i = -1; i <= g.nx; ++i) st.v[g.idx(i, j)] = static_cast<real>(v((i + 0.5) * c.dx(), j * c.dy()));
}

// Max over the faces (i, j) of the cells of the grid of the velocity difference.
inline double max_velocity_diff(const SimState& a, const SimState& b) {
  const Grid& g = a.grid;
  double m = 0;
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) {
      m = std::max(m, std::abs(double(a.u[g.idx(i, j)]) - b.u[g.idx(i, j)]));
      m = std::max(m, std::abs(double(a.v[g.idx(i, j)]) - b.v[g.idx(i, j)]));
    }
  return m;
}

// A simulation at the config's initial state, on the backend the config names.
inline std::unique_ptr<Simulation> make_sim(const Config& cfg) {
  const SimState s = make_initial_state(cfg);
  return std::make_unique<Simulation>(cfg, make_backend(cfg, s.grid, nullptr), s);
}

// The state after `steps` steps from the initial state.
// The message step() throws NonFiniteError with, or "" when `steps` steps run clean.
inline std::string non_finite_message(const Config& cfg, const SimState& start, int steps) {
  Simulation sim(cfg, make_backend(cfg, start.grid, nullptr), start);
  try {
    for (int k = 0; k < steps; ++k) sim.step();
    sim.drain();  // the last steps' checks, on a backend that steps ahead
  } catch (const NonFiniteError& e) {
    return e.what();
  }
  return "";
}

// From the config's initial state with next_id = 2^32 - 2 (as a restart late
// in a long run would find it), `steps` steps with injection: the state.
inline SimState run_past_32_bit_ids(const Config& cfg, int steps) {
  SimState s = make_initial_state(cfg);
  s.next_id = (uint64_t(1) << 32) - 2;
  Simulation sim(cfg, make_backend(cfg, s.grid, nullptr), s);
  for (int k = 0; k < steps; ++k) sim.step();
  return sim.download();
}

inline SimState run_steps(const Config& cfg, int steps) {
  const std::unique_ptr<Simulation> s = make_sim(cfg);
  for (int k = 0; k < steps; ++k) s->step();
  return s->download();
}

// A whole run through the library, as the executable does it (snapshots,
// restart, report); returns the exit status. With `out_text` the run is not
// quiet and its report lands there; without `err_text` a failure's message
// is shown.
inline int run_case(const Config& cfg, const std::string& restart = "", std::string* err_text = nullptr,
                    std::string* out_text = nullptr) {
  RunOptions opts;
  opts.quiet = out_text == nullptr;
  opts.restart = restart;
  std::ostringstream out, err;
  const int rc = run_simulation(cfg, opts, out, err);
  if (err_text) *err_text = err.str();
  if (out_text) *out_text = out.str();
  if (rc != 0 && !err_text) MESSAGE("run failed: " << err.str());
  return rc;
}

}  // namespace sim::test
