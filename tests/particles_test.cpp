// SPDX-License-Identifier: MIT
// Particle physics against analytic results and conservation laws.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "sim/model/obstacle.hpp"
#include "sim/model/coupling_physics.hpp"
#include "io/restart.hpp"
#include "io/snapshot_files.hpp"
#include "io/snapshot_reader.hpp"
#include "io/snapshot_writer.hpp"
#include "support/cases.hpp"
#include "support/io.hpp"

namespace {

sim::Config one_particle_box() {
  sim::Config c = sim::test::quiet_box(16);
  c.density = 1000.0;
  c.viscosity = 1e-3;
  c.particle_density = 2500.0;
  c.gy = -9.81;
  c.two_way = false;
  c.regions.push_back({0.49, 0.8, 0.51, 0.82, 1, 1e-4, 1e-4, 0.0, 0.0});
  return c;
}

double tau_of(const sim::Config& c, double d) {
  return c.particle_density * d * d / (18.0 * c.density * c.viscosity);
}

}  // namespace

TEST_CASE("particles: terminal settling speed is (1 - rho_f/rho_p) g tau_p within 0.5%") {
  for (double dt_over_tau : {0.1, 100.0}) {  // also stable when tau_p << dt
    sim::Config c = one_particle_box();
    const double tau = tau_of(c, 1e-4);
    c.dt = dt_over_tau * tau;
    auto s = sim::test::make_sim(c);
    for (int k = 0; k < 200; ++k) s->step();
    const sim::SimState st = s->download();
    const double expected = (1.0 - c.density / c.particle_density) * c.gy * tau;
    MESSAGE("dt/tau " << dt_over_tau << ": vy " << st.particles.vy[0] << ", expected " << expected);
    CHECK(std::abs(st.particles.vy[0] / expected - 1.0) < 0.005);
  }
}

TEST_CASE("particles: relaxation in a uniform flow has time constant tau_p within 1%") {
  sim::Config c = sim::test::quiet_box(16);
  for (sim::BoundarySide* s : {&c.left, &c.right, &c.bottom, &c.top}) s->kind = sim::BoundaryKind::periodic;
  c.density = 1000.0;
  c.viscosity = 1e-3;
  c.particle_density = 2500.0;
  c.initial = sim::InitialFlow::uniform;
  c.initial_u = 0.01;
  c.two_way = false;
  c.regions.push_back({0.5, 0.5, 0.5001, 0.5001, 1, 2e-4, 2e-4, 0.0, 0.0});
  const double tau = tau_of(c, 2e-4);
  c.dt = tau / 50;
  auto s = sim::test::make_sim(c);
  double worst = 0;
  for (int k = 1; k <= 150; ++k) {
    s->step();
    if (k % 25 != 0) continue;
    const sim::SimState st = s->download();
    const double ratio = st.particles.vx[0] / c.initial_u;
    const double tau_measured = -s->time() / std::log(1.0 - ratio);
    worst = std::max(worst, std::abs(tau_measured / tau - 1.0));
  }
  MESSAGE("worst relative error of the measured relaxation time: " << worst);
  CHECK(worst < 0.01);
}

TEST_CASE("particles: none ever leaves a closed box") {
  sim::Config c = sim::test::quiet_box(24);
  c.density = 1000.0;
  c.viscosity = 1e-4;
  c.lx = c.ly = 0.1;
  c.gy = -9.81;
  c.restitution = 0.9;
  c.top.speed = 0.05;
  c.regions.push_back({0.0, 0.0, 0.1, 0.1, 2000, 5e-5, 5e-4, 0.3, -0.2});
  c.dt_max = 2e-3;
  auto s = sim::test::make_sim(c);
  int64_t outside = 0;
  for (int k = 0; k < 150; ++k) {
    s->step();
    const sim::SimState st = s->download();
    for (size_t i = 0; i < st.particles.size(); ++i) {
      const double r = 0.5 * st.particles.d[i];
      const double x = st.particles.x[i], y = st.particles.y[i];
      if (!st.particles.alive[i] || x < r * 0.999 || x > c.lx - r * 0.999 || y < r * 0.999 || y > c.ly - r * 0.999)
        ++outside;
    }
  }
  CHECK(outside == 0);
}

TEST_CASE("particles: two-way coupling in a periodic box conserves total momentum to round-off") {
  sim::Config c = sim::test::quiet_box(32);
  for (sim::BoundarySide* s : {&c.left, &c.right, &c.bottom, &c.top}) s->kind = sim::BoundaryKind::periodic;
  c.density = 1000.0;
  c.viscosity = 1e-4;
  c.lx = c.ly = 0.05;
  c.lz = 1e-4;
  c.particle_density = 2500.0;
  c.two_way = true;
  c.regions.push_back({0.01, 0.01, 0.04, 0.03, 3000, 1e-4, 3e-4, 0.2, -0.1});
  c.dt = 2e-4;
  auto s = sim::test::make_sim(c);
  auto total = [&](const sim::Diagnostics& d, int a) { return d.fluid_momentum[a] + d.particle_momentum[a]; };
  const sim::Diagnostics d0 = s->diagnostics();
  const double scale = std::hypot(d0.particle_momentum[0], d0.particle_momentum[1]);
  for (int k = 0; k < 100; ++k) s->step();
  const sim::Diagnostics d1 = s->diagnostics();
  const double fluid_gain = std::hypot(d1.fluid_momentum[0], d1.fluid_momentum[1]) / scale;
  const double err = std::hypot(total(d1, 0) - total(d0, 0), total(d1, 1) - total(d0, 1)) / scale;
  MESSAGE("fluid took " << fluid_gain << " of the particle momentum; relative total change " << err);
  CHECK(fluid_gain > 0.1);  // the coupling really moved momentum
  CHECK(err < 1e-5);
}

// Particles seeded inside an obstacle: a region wholly in a solid is
// refused in one line naming it (its 200 particles used to start dead,
// silently: 0 alive, status 0); a region half in the solid places every
// particle in the fluid.
TEST_CASE("particles: a region whose particles cannot be placed outside the obstacles is refused") {
  sim::Config c = sim::test::quiet_box(32);
  c.source = "c.toml";
  sim::Obstacle o;
  o.shape = sim::ObstacleShape::rectangle;
  o.x0 = 0.25, o.y0 = 0.25, o.x1 = 0.75, o.y1 = 0.75;
  c.obstacles.push_back(o);
  c.regions.push_back({0.3, 0.3, 0.7, 0.7, 200, 1e-3, 1e-3, 0.0, 0.0});
  std::string error;
  try {
    sim::make_initial_state(c);
  } catch (const std::invalid_argument& e) {
    error = e.what();
  }
  CHECK(error == "c.toml: particles.regions[0]: 200 of its 200 particles fell inside obstacles in 64 draws each: "
                 "the region lies (almost) wholly in a solid (move it into the fluid)");
  c.regions[0] = {0.0, 0.3, 0.5, 0.7, 2000, 1e-3, 1e-3, 0.0, 0.0};  // half in the solid
  const sim::SimState s = sim::make_initial_state(c);
  int64_t alive = 0;
  for (size_t r = 0; r < s.particles.size(); ++r) {
    alive += s.particles.alive[r];
    if (s.particles.alive[r]) CHECK(s.particles.x[r] < 0.25f - 0.5e-3f);
  }
  CHECK(alive == 2000);
}

// One obstacle test (sim/model/obstacle.hpp) for the open mask, particle
// placement and the particle step: on points and margins exact in float32,
// boundaries included, the host's float64 test (obstacle_at) and the
// step's float32 one agree, and the step pushes out exactly the particles
// the test puts inside. Catches: one of them testing <= where the other
// tests <, a rectangle's margin applied on two sides only.
TEST_CASE("particles: the particle step pushes out exactly the particles the host's obstacle test puts inside") {
  sim::Config c = sim::test::quiet_box(32);
  sim::Obstacle circle;
  circle.x = 0.5, circle.y = 0.5, circle.radius = 0.25;
  sim::Obstacle rect;
  rect.shape = sim::ObstacleShape::rectangle;
  rect.x0 = 0.125, rect.y0 = 0.0625, rect.x1 = 0.375, rect.y1 = 0.25;
  c.obstacles = {circle, rect};
  const sim::Constants k = sim::make_constants(c, sim::Grid::make(c.nx, c.ny, c.lx, c.ly));
  int inside[2] = {0, 0};
  for (const double margin : {0.0, 0.03125})
    for (int j = 0; j <= 64; ++j)
      for (int i = 0; i <= 64; ++i) {
        const double x = i / 64.0, y = j / 64.0;
        const float xf = static_cast<float>(x), yf = static_cast<float>(y), mf = static_cast<float>(margin);
        int first = -1;
        for (int o = 0; o < 2; ++o) {
          const bool in = sim::inside_obstacle(k.obstacles[o], xf, yf, mf);
          CHECK(sim::inside_obstacle(sim::obstacle_shape<double>(c.obstacles[o]), x, y, margin) == in);
          sim::ParticleMotion m{xf, yf, 1.0f, -1.0f};
          sim::apply_obstacle(m, mf, k.obstacles[o], 0.5f);
          CHECK((m.x != xf || m.y != yf) == in);
          if (in && first < 0) first = o;
          inside[o] += in;
        }
        CHECK(sim::obstacle_at(c, x, y, margin) == first);
        CHECK(sim::inside_obstacle(c, x, y, margin) == (first >= 0));
      }
  CHECK(inside[0] > 0);
  CHECK(inside[1] > 0);
}

// Particle ids are 64-bit: a run that creates more than 2^32 particles
// (a restart late in a long injecting run) keeps every id distinct, each in
// the slot id % capacity, and the snapshot holds them as written (uint64)
// and restarts from them.
// Catches: ids wrapped past 2^32 (id = next_id mod 2^32: two particles with
// one id, the restart's slot rule broken), a 32-bit id dataset.
TEST_CASE("particles: ids past 2^32 stay distinct, in their slots, through a snapshot and a restart") {
  const std::string dir = sim::test::scratch_dir("ids_past_2_32");
  const sim::Config c = sim::test::case_config("channel.toml", dir, {"domain.nx=32", "domain.ny=16", "particles.capacity=4096"});
  const sim::SimState s = sim::test::run_past_32_bit_ids(c, 30);
  const uint64_t two32 = uint64_t(1) << 32;
  REQUIRE(s.next_id > two32 + 100);
  std::set<uint64_t> ids;
  int64_t past = 0;
  const auto& p = s.particles;
  for (size_t r = 0; r < p.size(); ++r) {
    CHECK(p.id[r] % p.size() == r);
    if (!p.alive[r]) continue;
    CHECK(ids.insert(p.id[r]).second);
    CHECK(p.id[r] < s.next_id);
    past += p.id[r] >= two32;
  }
  MESSAGE("next_id " << s.next_id << ", alive ids past 2^32: " << past);
  CHECK(past > 50);
  const std::string path = sim::join_path(dir, "snap.h5");
  sim::write_snapshot(path, s, sim::make_snapshot_meta(c, "test"));
  const sim::SnapshotContents f = sim::read_snapshot(path);
  CHECK(f.header.next_id == s.next_id);
  REQUIRE(f.particles.size() == ids.size());
  CHECK(std::equal(f.particles.id.begin(), f.particles.id.end(), ids.begin()));  // increasing
  const sim::SimState back = sim::load_restart(c, path);
  CHECK(back.next_id == s.next_id);
  for (size_t r = 0; r < p.size(); ++r) {
    CHECK(back.particles.alive[r] == p.alive[r]);
    if (p.alive[r]) CHECK(back.particles.id[r] == p.id[r]);
  }
}

// A rank of a split run seeds only its own particles (make_initial_state
// with `keep`): the live records of the slots version that `keep` accepts,
// in slot order, also when more are seeded than there are slots (a later
// id of a slot replaces an earlier one); the fluid and next_id unchanged.
// Catches: a replaced particle kept, records out of slot order (the
// compacted store's recycling bisects on it), a particle drawn differently.
TEST_CASE("particles: the initial state of one rank's particles is the whole state's, filtered, in slot order") {
  for (const int64_t capacity : {0, 3000}) {  // 0: every seeded particle (4000) has its slot
    INFO("capacity ", capacity);
    sim::Config c = sim::test::case_config("box.toml", "out", {"domain.nx=32", "domain.ny=32"});
    c.regions.resize(1);
    c.regions[0].count = 4000;
    c.capacity = capacity;
    const sim::SimState whole = sim::make_initial_state(c);
    // a slanted cut through the region (x 0.03 .. 0.07, y 0.06 .. 0.09)
    auto keep = [](double x, double y) { return x + 0.5 * (y - 0.075) < 0.05; };
    const sim::SimState own = sim::make_initial_state(c, keep);
    CHECK(own.u == whole.u);
    CHECK(own.v == whole.v);
    CHECK(own.open == whole.open);
    CHECK(own.next_id == whole.next_id);
    std::vector<sim::Particle> want;
    for (size_t r = 0; r < whole.particles.size(); ++r)
      if (whole.particles.alive[r] && keep(whole.particles.x[r], whole.particles.y[r]))
        want.push_back(whole.particles.load(r));
    REQUIRE(own.particles.size() == want.size());
    CHECK(want.size() > 500);
    CHECK(want.size() < whole.particles.size() - 500);
    int64_t differ = 0;
    for (size_t k = 0; k < want.size(); ++k) {
      const sim::Particle q = own.particles.load(k);
      differ += q.id != want[k].id || q.x != want[k].x || q.y != want[k].y || q.d != want[k].d || q.alive != 1;
    }
    CHECK(differ == 0);
  }
}
