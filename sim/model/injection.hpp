// SPDX-License-Identifier: MIT
// A particle injected while running, as a pure function of (seed, id), so
// both backends create the same particle without sharing generator state.
#pragma once
#include "sim/model/config.hpp"
#include "sim/model/inflow.hpp"
#include "sim/model/particles.hpp"
#include "sim/model/random.hpp"

namespace sim {

// Streams apart from the initial seeding's (0..47).
constexpr uint32_t kInjectStream = 64;

// `side` >= 0: the rectangle lies against that inflow side (x0 = 0 for the
// left, x1 = lx for the right, y0 = 0 bottom, y1 = ly top; the first in that
// order) and its profile applies: the coordinate along the side is drawn
// with the profile's density over [s0, s1] (the rectangle's span, over the
// side's length), so particles enter as the volume flux does, and the normal
// velocity component (vx on the left and right, vy on the bottom and top) is
// scaled by the profile's local value over its mean: with it set to the
// inflow's speed a particle starts at the fluid's velocity there. A uniform
// profile (side stays -1) needs neither: position and velocity are uniform.
struct InjectionC {
  real x0, y0, x1, y1, d, vx, vy;
  int side = -1, profile = 0;
  real s0 = 0, s1 = 1, length = 1;  // the span along the side over its length, and the length [m]
};

inline InjectionC make_injection(const Config& cfg) {
  const ParticleInjection& in = cfg.inject;
  InjectionC c{static_cast<real>(in.x0), static_cast<real>(in.y0), static_cast<real>(in.x1),
               static_cast<real>(in.y1), static_cast<real>(in.diameter), static_cast<real>(in.vx),
               static_cast<real>(in.vy)};
  const BoundarySide* sides[4] = {&cfg.left, &cfg.right, &cfg.bottom, &cfg.top};
  const bool against[4] = {in.x0 <= 0, in.x1 >= cfg.lx, in.y0 <= 0, in.y1 >= cfg.ly};
  for (int s = 0; s < 4 && c.side < 0; ++s) {
    if (!against[s] || sides[s]->kind != BoundaryKind::inflow) continue;
    if (sides[s]->profile == InflowProfile::uniform) break;
    c.side = s;
    c.profile = static_cast<int>(sides[s]->profile);
    const bool along_y = s < 2;
    const double a = along_y ? in.y0 : in.x0, b = along_y ? in.y1 : in.x1, len = along_y ? cfg.ly : cfg.lx;
    c.s0 = static_cast<real>(a / len);
    c.s1 = static_cast<real>(b / len);
    c.length = static_cast<real>(len);
  }
  return c;
}

SIM_HD Particle injected_particle(uint64_t seed, uint64_t id, const InjectionC& in) {
  Particle p;
  const real rx = static_cast<real>(uniform01(seed, id, kInjectStream));
  const real ry = static_cast<real>(uniform01(seed, id, kInjectStream + 1));
  p.x = in.x0 + (in.x1 - in.x0) * rx;
  p.y = in.y0 + (in.y1 - in.y0) * ry;
  p.vx = in.vx;
  p.vy = in.vy;
  if (in.side >= 0) {
    const bool along_y = in.side < 2;  // left, right: the side runs along y
    const real xi = inflow_draw(in.profile, in.s0, in.s1, along_y ? ry : rx);
    const real shape = inflow_shape(in.profile, xi);
    if (along_y) p.y = xi * in.length, p.vx *= shape;
    else p.x = xi * in.length, p.vy *= shape;
  }
  p.d = in.d;
  p.id = id;
  p.alive = 1u;
  return p;
}

}  // namespace sim
