// SPDX-License-Identifier: MIT
// A particle injected while running, as a pure function of (seed, id), so
// both backends create the same particle without sharing generator state.
#pragma once
#include "sim/model/config.hpp"
#include "sim/model/particles.hpp"
#include "sim/model/random.hpp"

namespace sim {

// Streams apart from the initial seeding's (0..47).
constexpr uint32_t kInjectStream = 64;

struct InjectionC {
  real x0, y0, x1, y1, d, vx, vy;
};

inline InjectionC make_injection(const ParticleInjection& in) {
  return {static_cast<real>(in.x0), static_cast<real>(in.y0), static_cast<real>(in.x1),
          static_cast<real>(in.y1), static_cast<real>(in.diameter), static_cast<real>(in.vx),
          static_cast<real>(in.vy)};
}

SIM_HD Particle injected_particle(uint64_t seed, uint64_t id, const InjectionC& in) {
  Particle p;
  p.x = in.x0 + (in.x1 - in.x0) * static_cast<real>(uniform01(seed, id, kInjectStream));
  p.y = in.y0 + (in.y1 - in.y0) * static_cast<real>(uniform01(seed, id, kInjectStream + 1));
  p.vx = in.vx;
  p.vy = in.vy;
  p.d = in.d;
  p.id = id;
  p.alive = 1u;
  return p;
}

}  // namespace sim
