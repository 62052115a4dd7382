// Helpers shared by the test suites: configs built in code, runs on a backend.
#pragma once
#include <cmath>
#include <memory>
#include <vector>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/simulation.hpp"

namespace simtest {

// A closed box at rest with no particles; tests change what they need.
inline sim::Config quiet_box(int n = 32) {
  sim::Config c;
  c.source = "test";
  c.nx = c.ny = n;
  c.lx = c.ly = 1.0;
  c.density = 1.0;
  c.viscosity = 0.01;
  c.gx = 0;
  c.gy = 0;
  c.tolerance = 1e-5;  // float32 fields: about the floor of the relative residual
  c.max_iterations = 5000;
  c.backend = sim::BackendKind::cpu;
  return c;
}

inline sim::Config taylor_green(int n, double nu = 0.05) {
  sim::Config c = quiet_box(n);
  const double L = 2.0 * M_PI;
  c.lx = c.ly = L;
  c.viscosity = nu;
  c.initial = sim::InitialFlow::taylor_green;
  c.initial_u = 1.0;
  for (sim::BoundarySide* s : {&c.left, &c.right, &c.bottom, &c.top}) s->kind = sim::BoundaryKind::periodic;
  return c;
}

inline std::unique_ptr<sim::Simulation> make_sim(const sim::Config& cfg) {
  sim::SimState s = sim::make_initial_state(cfg);
  return std::make_unique<sim::Simulation>(cfg, sim::make_cpu_backend(cfg, s.grid), s);
}

inline double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - double(b[i])));
  return m;
}

}  // namespace simtest
