// SPDX-License-Identifier: MIT
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
    cfg.deposit = Deposit::sorted;  // each face summed in the CPU's order
    cfg.initial = InitialFlow::rest;
    SimState p = make_initial_state(cfg);
    p.particles.vx[137] = std::numeric_limits<real>::quiet_NaN();
    const std::string particle = test::non_finite_message(cfg, p, 3);
    INFO(particle);
    CHECK(particle.rfind("non-finite value at step 1 (t = ", 0) == 0);
    CHECK(particle.find("particle id 137: vx = nan") != std::string::npos);
  }
}

// Particle ids past 2^32 on the CUDA backend (the injected count kept on
// the device, the slot id % capacity computed there): the same ids in the
// same slots as the CPU's (tests/particles_test.cpp checks those).
TEST_CASE("gpu: ids past 2^32 are the CPU's, slot by slot") {
  SimState s[2];
  for (const BackendKind b : {BackendKind::cpu, BackendKind::cuda}) {
    Config c = test::shipped_config("channel.toml", {"domain.nx=32", "domain.ny=16", "particles.capacity=4096"});
    c.backend = b;
    s[b == BackendKind::cuda] = test::run_past_32_bit_ids(c, 30);
  }
  CHECK(s[1].next_id == s[0].next_id);
  CHECK(s[1].next_id > (uint64_t(1) << 32) + 100);
  REQUIRE(s[1].particles.size() == s[0].particles.size());
  int64_t differ = 0;
  for (size_t r = 0; r < s[0].particles.size(); ++r)
    differ += s[1].particles.alive[r] != s[0].particles.alive[r] || s[1].particles.id[r] != s[0].particles.id[r];
  CHECK(differ == 0);
}
