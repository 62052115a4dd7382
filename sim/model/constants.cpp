// SPDX-License-Identifier: MIT
#include "sim/model/constants.hpp"

#include "sim/model/pressure.hpp"

#include <stdexcept>
#include <string>

namespace sim {

Constants make_constants(const Config& cfg, const Grid& g) {
  Constants c{};
  c.nx = g.nx;
  c.ny = g.ny;
  c.pitch = g.pitch;
  c.rows = g.rows;
  c.dx = g.dx;
  c.dy = g.dy;
  c.inv_dx = static_cast<real>(1.0 / cfg.dx());
  c.inv_dy = static_cast<real>(1.0 / cfg.dy());
  c.inv_dx2 = c.inv_dx * c.inv_dx;
  c.inv_dy2 = c.inv_dy * c.inv_dy;
  c.lx = static_cast<real>(cfg.lx);
  c.ly = static_cast<real>(cfg.ly);

  const BoundarySide* sides[4] = {&cfg.left, &cfg.right, &cfg.bottom, &cfg.top};
  for (int s = 0; s < 4; ++s) {
    c.bc_kind[s] = static_cast<int>(sides[s]->kind);
    c.bc_speed[s] = static_cast<real>(sides[s]->speed);
    c.bc_profile[s] = static_cast<int>(sides[s]->profile);
  }
  // Normal faces on a wall, free-slip or inflow side are prescribed; on an
  // outflow side they are unknowns; periodic sides own face 0 and copy it to n.
  auto fixed = [](BoundaryKind k) {
    return k == BoundaryKind::wall || k == BoundaryKind::free_slip || k == BoundaryKind::inflow;
  };
  c.u_i_begin = fixed(cfg.left.kind) ? 1 : 0;
  c.u_i_end = cfg.right.kind == BoundaryKind::outflow ? g.nx + 1 : g.nx;
  c.v_j_begin = fixed(cfg.bottom.kind) ? 1 : 0;
  c.v_j_end = cfg.top.kind == BoundaryKind::outflow ? g.ny + 1 : g.ny;

  c.nu = static_cast<real>(cfg.viscosity);
  c.rho_f = static_cast<real>(cfg.density);
  c.force_x = static_cast<real>(cfg.force_x);
  c.force_y = static_cast<real>(cfg.force_y);
  c.advection = static_cast<int>(cfg.advection);
  c.dt = 0;
  c.omega = static_cast<real>(cfg.omega > 0 ? cfg.omega : optimal_sor_omega(g.nx, g.ny));

  c.rho_p = static_cast<real>(cfg.particle_density);
  c.restitution = static_cast<real>(cfg.restitution);
  const double buoy = 1.0 - cfg.density / cfg.particle_density;
  c.g_eff_x = static_cast<real>(buoy * cfg.gx);
  c.g_eff_y = static_cast<real>(buoy * cfg.gy);
  c.mu = static_cast<real>(cfg.density * cfg.viscosity);
  c.cell_mass = static_cast<real>(cfg.density * cfg.dx() * cfg.dy() * cfg.slab_thickness());
  c.two_way = cfg.two_way ? 1 : 0;

  if (cfg.obstacles.size() > static_cast<size_t>(kMaxObstacles))
    throw std::runtime_error(cfg.source + ": obstacles: at most " + std::to_string(kMaxObstacles) +
                             " obstacles are supported, got " + std::to_string(cfg.obstacles.size()));
  c.n_obstacles = static_cast<int>(cfg.obstacles.size());
  for (int k = 0; k < c.n_obstacles; ++k) c.obstacles[k] = obstacle_shape<real>(cfg.obstacles[k]);
  c.has_solids = c.n_obstacles > 0 ? 1 : 0;
  return c;
}

}  // namespace sim
