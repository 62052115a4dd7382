// SPDX-License-Identifier: MIT
// All physical and numerical constants a step needs, as one POD block.
// The CUDA backend keeps it in __constant__ memory (or global memory, for
// comparison) and kernels read it warp-uniformly; the CPU passes it by reference.
#pragma once
#include "sim/model/config.hpp"
#include "sim/model/grid.hpp"
#include "sim/model/obstacle.hpp"
#include "sim/model/types.hpp"

namespace sim {

// Boundary side indices.
enum Side : int { kLeft = 0, kRight = 1, kBottom = 2, kTop = 3 };

constexpr int kMaxObstacles = 16;

using ObstacleShapeData = ObstacleShapeOf<real>;  // sim/model/obstacle.hpp

struct Constants {
  // grid
  int nx, ny, pitch, rows;
  real dx, dy, inv_dx, inv_dy, inv_dx2, inv_dy2;
  real lx, ly;
  // active (updated) MAC faces; the others are set by boundary conditions
  int u_i_begin, u_i_end;  // u faces i in [begin, end)
  int v_j_begin, v_j_end;  // v faces j in [begin, end)
  int bc_kind[4];          // BoundaryKind per Side
  real bc_speed[4];         // wall: tangential speed; inflow: mean normal speed
  int bc_profile[4];       // InflowProfile per Side (sim/model/inflow.hpp)
  int has_solids;
  // fluid
  real nu, rho_f;
  real force_x, force_y;  // body force per unit mass on the fluid [m/s^2]
  int advection;          // AdvectionScheme
  real dt;
  // pressure
  real omega;
  // particles
  real rho_p, restitution;
  real g_eff_x, g_eff_y;  // gravity with buoyancy: (1 - rho_f/rho_p) g
  real mu;                // dynamic viscosity rho_f * nu
  real cell_mass;         // fluid mass of one cell, rho_f dx dy lz (Config::slab_thickness)
  int two_way;
  int n_obstacles;
  ObstacleShapeData obstacles[kMaxObstacles];
};

Constants make_constants(const Config& cfg, const Grid& grid);

SIM_HD bool is_periodic(const Constants& c, int side) {
  return c.bc_kind[side] == static_cast<int>(BoundaryKind::periodic);
}

// Storage index of cell or face (i, j), as Grid::idx.
SIM_HD int at(const Constants& k, int i, int j) { return (i + 1) + (j + 1) * k.pitch; }

}  // namespace sim
