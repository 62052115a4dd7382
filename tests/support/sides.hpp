// SPDX-License-Identifier: MIT
// A bare config of nx x ny cells whose x sides are both `x` and y sides
// both `y`, with dx = 0.5 and dy = 0.25: the float coefficients 1/dx^2 and
// 1/dy^2 are 4 and 16 exactly (the transform solve tests).
#pragma once
#include "sim/model/config.hpp"

namespace sim::test {

inline Config sides_config(int nx, int ny, BoundaryKind x, BoundaryKind y) {
  Config cfg;
  cfg.nx = nx;
  cfg.ny = ny;
  cfg.lx = nx * 0.5;
  cfg.ly = ny * 0.25;
  cfg.left.kind = cfg.right.kind = x;
  cfg.bottom.kind = cfg.top.kind = y;
  return cfg;
}

}  // namespace sim::test
