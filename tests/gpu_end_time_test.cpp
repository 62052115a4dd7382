// SPDX-License-Identifier: MIT
// run.end_time on the device clock (gpu.graphs): the host queues steps
// ahead while the end is out of their reach and steps synchronously to it
// from there (Simulation::end_in_reach). The run must land on the end
// exactly, take no step past it, and match the device stepped from the host
// (gpu.graphs = false) bit for bit: the same steps, dt and state.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "support/compare.hpp"
#include "support/gpu.hpp"

namespace {

struct EndRun {
  sim::SimState state;
  std::vector<double> dts;
  bool asynchronous = false;
};

EndRun run_to_end(sim::Config cfg, bool graphs) {
  cfg.backend = sim::BackendKind::cuda;
  cfg.graphs = graphs;
  const std::unique_ptr<sim::Simulation> s = sim::test::make_sim(cfg);
  EndRun r;
  r.asynchronous = s->asynchronous();
  while (!s->at_end()) {
    s->step();
    REQUIRE(s->step_index() < 100000);
  }
  CHECK_THROWS_AS(s->step(), std::logic_error);
  r.state = s->download();
  return r;
}

}  // namespace

TEST_CASE("gpu: with graphs a run stops exactly at run.end_time, as without") {
  struct Case {
    std::string name;
    sim::Config cfg;
  };
  std::vector<Case> cases;
  {
    // adaptive: about 100 steps, the first ones queued ahead
    sim::Config c = sim::test::gpu_case("box.toml", 1);
    c.end_time = 0.1356;
    c.steps_given = false;
    cases.push_back({"box, adaptive", c});
  }
  {
    sim::Config c = sim::test::gpu_case("taylor_green.toml", 1);
    c.dt = 0.01;
    c.end_time = 0.505;  // 51 steps, the last one of 0.005 s
    c.steps_given = false;
    cases.push_back({"taylor_green, fixed dt", c});
  }
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const EndRun host = run_to_end(c.cfg, false);
    const EndRun device = run_to_end(c.cfg, true);
    CHECK_FALSE(host.asynchronous);
    REQUIRE(device.asynchronous);
    CHECK(host.state.time == c.cfg.end_time);
    CHECK(device.state.time == c.cfg.end_time);
    CHECK(device.state.step == host.state.step);
    CHECK(sim::test::first_difference(device.state, host.state) == "");
  }
}

// run.snapshot_interval on the device clock: each multiple is a landing the
// host must see (Simulation::landed_on_interval), so it steps synchronously
// near each one. Catches: a multiple passed while steps were queued ahead
// (no landing seen, or a clock off the multiple), and a device run whose
// steps differ from the host-stepped one.
TEST_CASE("gpu: with graphs the steps land on every multiple of run.snapshot_interval, as without") {
  sim::Config cfg = sim::test::gpu_case("box.toml", 1);
  cfg.end_time = 0.1356;
  cfg.steps_given = false;
  cfg.snapshot_interval = 0.03;
  cfg.backend = sim::BackendKind::cuda;
  std::vector<std::vector<double>> landings(2);
  std::vector<sim::SimState> states(2);
  for (int graphs = 0; graphs < 2; ++graphs) {
    cfg.graphs = graphs == 1;
    const std::unique_ptr<sim::Simulation> s = sim::test::make_sim(cfg);
    CHECK(s->asynchronous() == (graphs == 1));
    while (!s->at_end()) {
      s->step();
      if (s->landed_on_interval()) landings[graphs].push_back(s->time());
      REQUIRE(s->step_index() < 100000);
    }
    states[graphs] = s->download();
  }
  CHECK(landings[0] == std::vector<double>{0.03, 2 * 0.03, 3 * 0.03, 4 * 0.03});
  CHECK(landings[1] == landings[0]);
  CHECK(states[1].step == states[0].step);
  CHECK(sim::test::first_difference(states[1], states[0]) == "");
}
