// SPDX-License-Identifier: MIT
// Stepping without host round trips (gpu.graphs): each step's launches
// recorded once and replayed, dt chosen and the injection drawn on the
// device, the multigrid loop a while node of the graph, the step's norms
// read back a few steps later. Against the same
// device stepped from the host (gpu.graphs = false): the same state bit for
// bit (dt, time, ids, fields, particles), and a blow-up or a pressure
// failure reported at the same step and time.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support/compare.hpp"
#include "support/gpu.hpp"

namespace {

const int kSteps = sim::test::gpu_steps(40);

struct Run {
  sim::SimState state;
  bool asynchronous = false;
};

Run run(sim::Config cfg, bool graphs, int steps) {
  cfg.backend = sim::BackendKind::cuda;
  cfg.graphs = graphs;
  const std::unique_ptr<sim::Simulation> s = sim::test::make_sim(cfg);
  Run r;
  r.asynchronous = s->asynchronous();
  for (int k = 0; k < steps; ++k) s->step();
  r.state = s->download();
  return r;
}

// The message a run throws (what() of `E`), or "" if it runs `steps` clean.
template <class E>
std::string failure(sim::Config cfg, bool graphs, int steps) {
  cfg.backend = sim::BackendKind::cuda;
  cfg.graphs = graphs;
  const std::unique_ptr<sim::Simulation> s = sim::test::make_sim(cfg);
  try {
    for (int k = 0; k < steps; ++k) s->step();
    s->drain();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

// "non-finite value at step N (t = T s)": the part that names when.
std::string when(const std::string& message) { return message.substr(0, message.find("): ") + 1); }

}  // namespace

TEST_CASE("gpu: graphs on and off step the same, bit for bit") {
  struct Case {
    std::string name;
    sim::Config cfg;
  };
  std::vector<Case> cases;
  cases.push_back({"box", sim::test::gpu_case("box.toml", kSteps)});
  {
    // both particle banks recorded (the sort swaps them), constants in global memory
    sim::Config c = sim::test::gpu_case("box.toml", kSteps);
    c.sort_every = 3;
    c.constants = sim::ConstantsIn::global;
    cases.push_back({"box sorted every 3 steps, global constants", c});
  }
  {
    // particles injected at a rate, the count drawn from the device clock
    sim::Config c = sim::test::gpu_case("box.toml", kSteps);
    c.inject.rate = 2e5;
    c.inject.x0 = 0.01;
    c.inject.x1 = 0.09;
    c.inject.y0 = 0.05;
    c.inject.y1 = 0.06;
    c.inject.diameter = 1e-4;
    cases.push_back({"box with injection", c});
  }
  cases.push_back({"cavity", sim::test::gpu_case("cavity.toml", kSteps)});
  {
    // the viscous term explicit in the stages: no viscous solve, dt under the viscous limit
    sim::Config c = sim::test::gpu_case("cavity.toml", kSteps);
    c.viscous = sim::ViscousScheme::explicit_;
    cases.push_back({"cavity, explicit viscosity", c});
  }
  cases.push_back({"taylor_green", sim::test::gpu_case("taylor_green.toml", kSteps)});
  {
    sim::Config c = sim::test::gpu_case("taylor_green.toml", kSteps);
    c.dt = 0.01;  // a fixed dt: no rate reduction
    cases.push_back({"taylor_green, fixed dt", c});
  }
  // multigrid (the obstacle rules out fft): the loop on the device, a while node
  cases.push_back({"channel", sim::test::gpu_case("channel.toml", kSteps)});
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const Run host = run(c.cfg, false, kSteps);
    const Run device = run(c.cfg, true, kSteps);
    CHECK_FALSE(host.asynchronous);
    REQUIRE(device.asynchronous);  // else the comparison is of one path with itself
    CHECK(device.state.step == kSteps);
    CHECK(sim::test::first_difference(device.state, host.state) == "");
  }
}

TEST_CASE("gpu: with graphs a blow-up and a pressure failure name the same step as without") {
  // Taylor-Green at CFL ~5: central advection blows up within a few dozen steps.
  sim::Config blow = sim::test::taylor_green(32);
  blow.dt = 1.0;
  blow.viscous = sim::ViscousScheme::explicit_;  // implicit viscosity damps it into a stable run
  const std::string host = failure<sim::NonFiniteError>(blow, false, 500);
  const std::string device = failure<sim::NonFiniteError>(blow, true, 500);
  INFO(host);
  INFO(device);
  REQUIRE(host != "");
  CHECK(host.rfind("non-finite value at step ", 0) == 0);
  CHECK(when(device) == when(host));

  // A tolerance below float64 rounding: every transform solve misses it,
  // and pressure.max_failures of them in a row end the run.
  sim::Config strict = sim::test::taylor_green(32);
  strict.tolerance = 1e-300;
  // the fourth step's first solve: three a step, and the first step's
  // pressure before its first viscous solve
  strict.max_failures = 11;
  const std::string host_fail = failure<sim::PressureFailure>(strict, false, 50);
  const std::string device_fail = failure<sim::PressureFailure>(strict, true, 50);
  INFO(host_fail);
  CHECK(host_fail.find("step 4,") != std::string::npos);
  CHECK(device_fail == host_fail);
}
