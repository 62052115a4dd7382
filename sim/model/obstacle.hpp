// SPDX-License-Identifier: MIT
// Obstacles as plain numbers, and the one test of whether a point lies
// inside one: shared by the host (the open mask, particle placement, a
// restart's particle check, the owners of the boundary links) and by the
// particle step of both backends (apply_obstacle, sim/model/particle_physics.hpp).
#pragma once
#include "sim/model/config.hpp"
#include "sim/model/types.hpp"

namespace sim {

// A circle (shape 0: centre x, y and radius) or a rectangle (shape 1:
// corners (x0, y0) and (x1, y1)), in float64 as the config gives it (the
// host's tests) or in float32 as Constants holds it (the particle step).
template <class T>
struct ObstacleShapeOf {
  int shape;  // 0 circle, 1 rectangle
  T x, y, radius;
  T x0, y0, x1, y1;
};

// Whether (x, y) lies strictly inside `o` grown by `margin` (a particle's
// radius): a point on the boundary is outside. A NaN coordinate counts as
// inside (the particle step pushes such a particle, which stays NaN; the
// host asks only of finite points).
template <class T>
SIM_HD bool inside_obstacle(const ObstacleShapeOf<T>& o, T x, T y, T margin) {
  if (o.shape == 0) {
    const T dx = x - o.x, dy = y - o.y;
    const T reach = o.radius + margin;
    return !(dx * dx + dy * dy >= reach * reach);
  }
  return !(x <= o.x0 - margin || x >= o.x1 + margin || y <= o.y0 - margin || y >= o.y1 + margin);
}

// A config's obstacle as plain numbers of type T (each rounded once).
template <class T>
inline ObstacleShapeOf<T> obstacle_shape(const Obstacle& o) {
  return {o.shape == ObstacleShape::circle ? 0 : 1,
          static_cast<T>(o.x),  static_cast<T>(o.y),  static_cast<T>(o.radius),
          static_cast<T>(o.x0), static_cast<T>(o.y0), static_cast<T>(o.x1), static_cast<T>(o.y1)};
}

}  // namespace sim
