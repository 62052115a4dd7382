// SPDX-License-Identifier: MIT
// The CPU backend's compacted particle store over ranks: each rank stores
// the live particles its slab holds and nothing else, and the run is one
// rank's through seeding, migration across slabs, walls, injection and
// recycling of full slots: bit for bit one-way; two-way to rounding (the
// deposits near a slab's side are folded in rank order, not particle order).
// Catches: a store that keeps every slot on every rank (records = capacity),
// a particle on two ranks or on none, an injected or recycled slot counted
// on the wrong rank or twice, a store out of slot order (the recycling
// then finds the wrong records).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/model/simulation.hpp"
#include "sim/model/state.hpp"
#include "sim/ranks/comm.hpp"
#include "sim/ranks/decomposition.hpp"
#include "sim/ranks/slab_rows.hpp"
#include "one_thread.hpp"

namespace {

using namespace sim;

Config case_config() {
  Config c;
  c.nx = 16;
  c.ny = 24;
  c.lx = 1.0;
  c.ly = 1.5;
  c.viscosity = 1e-5;
  c.dt = 4e-3;
  c.particle_density = 2e5;  // tau_p ~ 1 s: they keep their speed and cross slabs
  ParticleRegion r;
  r.x0 = 0.05;
  r.x1 = 0.95;
  r.y0 = 0.05;
  r.y1 = 1.45;
  r.count = 1500;
  r.diameter_min = 5e-4;
  r.diameter_max = 1e-3;
  r.vy = -2.0;  // 0.5 m in the run: across slabs of 0.375 to 1.5 m, and off the bottom wall
  c.regions.push_back(r);
  c.inject.rate = 2500;  // 10 a step at the top: the 1600 slots fill and are recycled
  c.inject.x0 = 0.1;
  c.inject.x1 = 0.9;
  c.inject.y0 = 1.3;
  c.inject.y1 = 1.45;
  c.inject.vy = -1.0;
  c.inject.diameter = 8e-4;
  c.capacity = 1600;
  c.steps = 60;
  return c;
}

int64_t alive_count(const HostParticles& p) {
  int64_t n = 0;
  for (size_t r = 0; r < p.size(); ++r) n += p.alive[r] != 0;
  return n;
}

}  // namespace

TEST_CASE("particles: a CPU rank stores only its own particles, and the run is one rank's") {
  const test::OneThreadPerRank one_thread;
  Config c = case_config();
  SUBCASE("one-way: bit for bit") { c.two_way = false; }
  SUBCASE("two-way: to rounding") { c.two_way = true; }
  const double tol = c.two_way ? 1e-4 : 0.0;
  INFO("two_way ", c.two_way);
  const Grid g = Grid::make(c.nx, c.ny, c.lx, c.ly);
  const SimState initial = make_initial_state(c);

  Simulation one(c, make_cpu_backend(c, g), initial);
  for (int s = 0; s < c.steps; ++s) one.step();
  const SimState want = one.download();
  const int64_t alive = alive_count(want.particles);
  CHECK(want.counters.recycled > 0);  // the injection wrapped round the slots

  const Comm world = Comm::world();
  const auto split = std::make_shared<const SlabRows>(world, Domain{c.nx, c.ny, c.lx, c.ly, false, false});
  Simulation sim(c, make_cpu_backend(c, g, split), initial);
  int64_t most = 0;
  for (int s = 0; s < c.steps; ++s) {
    sim.step();
    const int64_t held = sim.backend().particle_records();
    most = std::max(most, held);
    const SimState own = sim.download_own();
    int64_t mine = 0;
    bool all_mine = true;
    for (size_t r = 0; r < own.particles.size(); ++r) {
      if (!own.particles.alive[r]) continue;
      ++mine;
      all_mine = all_mine && split->owner_of_point(own.particles.x[r], own.particles.y[r]) == world.rank();
    }
    CHECK(held == mine);
    CHECK(all_mine);
  }
  // every particle on exactly one rank
  CHECK(split->sum(sim.backend().particle_records()) == alive);
  if (world.size() > 1) CHECK(most < c.capacity);
  MESSAGE(world.size(), " ranks: at most ", most, " records on a rank, ", alive, " alive of ", c.capacity,
          " slots; recycled ", want.counters.recycled, ", removed ", want.counters.removed);

  const SimState got = sim.download();
  if (world.rank() != 0) return;
  CHECK(got.counters.recycled == want.counters.recycled);
  CHECK(got.counters.removed == want.counters.removed);
  CHECK(got.next_id == want.next_id);
  REQUIRE(got.particles.size() == want.particles.size());
  auto near = [tol](double a, double b) { return a == b || std::abs(a - b) <= tol * (1 + std::abs(b)); };
  int64_t differ = 0;
  for (size_t r = 0; r < want.particles.size(); ++r) {
    if (got.particles.alive[r] != want.particles.alive[r]) ++differ;
    else if (want.particles.alive[r] &&
             (got.particles.id[r] != want.particles.id[r] || !near(got.particles.x[r], want.particles.x[r]) ||
              !near(got.particles.y[r], want.particles.y[r]) || !near(got.particles.vx[r], want.particles.vx[r]) ||
              !near(got.particles.vy[r], want.particles.vy[r])))
      ++differ;
  }
  CHECK(differ == 0);
  int64_t fluid = 0;
  for (int j = 0; j < c.ny; ++j)
    for (int i = 0; i <= c.nx; ++i) fluid += !near(got.u[size_t(g.idx(i, j))], want.u[size_t(g.idx(i, j))]);
  CHECK(fluid == 0);
}
