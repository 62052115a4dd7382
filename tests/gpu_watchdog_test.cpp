// The non-finite watchdog on the CUDA backend: the NaN put into a face or a
// particle is named as on the CPU (tests/watchdog_test.cpp).
#include <doctest/doctest.h>

#include <limits>
#include <stdexcept>
#include <string>

#include "support/cases.hpp"

using namespace sim;

TEST_CASE("gpu: watchdog names the NaN face and the NaN particle as the CPU does") {
  for (const BackendKind b : {BackendKind::cpu, BackendKind::cuda}) {
    Config cfg = test::quiet_box(32);
    cfg.backend = b;
    cfg.initial = InitialFlow::uniform;
    cfg.initial_u = 0.1;
    SimState s = make_initial_state(cfg);
    s.u[s.grid.idx(5, 7)] = std::numeric_limits<real>::quiet_NaN();
    const std::string face = test::non_finite_message(cfg, s, 3);
    INFO(face);
    CHECK(face.rfind("non-finite value at step 0 (t = 0 s): u = nan at face (5, 7) (1 non-finite value in all)", 0) == 0);

    ParticleRegion r;
    r.x0 = r.y0 = 0.2;
    r.x1 = r.y1 = 0.8;
    r.count = 200;
    cfg.regions.push_back(r);
    cfg.initial = InitialFlow::rest;
    SimState p = make_initial_state(cfg);
    p.particles.vx[137] = std::numeric_limits<real>::quiet_NaN();
    const std::string particle = test::non_finite_message(cfg, p, 3);
    INFO(particle);
    CHECK(particle.rfind("non-finite value at step 1 (t = ", 0) == 0);
    CHECK(particle.find("particle id 137: vx = nan") != std::string::npos);
  }
}

// Particle ids past 2^32 stop the run on the CUDA backend too, where the
// injected count is kept on the device and read a few steps late
// (tests/particles_test.cpp has the CPU's).
TEST_CASE("gpu: a run that would pass 2^32 particle ids stops, on the device's clock too") {
  for (const BackendKind b : {BackendKind::cpu, BackendKind::cuda}) {
    Config c = test::shipped_config("channel.toml", {"domain.nx=32", "domain.ny=16", "particles.capacity=4096"});
    c.backend = b;
    int steps = 0;
    const std::string message = test::particle_id_overflow(c, steps);
    INFO((b == BackendKind::cuda ? "cuda" : "cpu") << ": " << message);
    CHECK(steps < 50);
    CHECK(message.rfind("particle ids: by step ", 0) == 0);
  }
}
