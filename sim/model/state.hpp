// SPDX-License-Identifier: MIT
// The complete state of a run on the host: what snapshots hold, what a
// restart loads, and what every backend uploads from and downloads to.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/model/config.hpp"
#include "sim/model/grid.hpp"
#include "sim/model/obstacle.hpp"
#include "sim/model/particles.hpp"

namespace sim {

struct ParticleCounters {
  int64_t removed = 0;   // left through an outflow
  int64_t recycled = 0;  // still alive when their slot was reused by an injection
};

struct SimState {
  Grid grid;
  std::vector<real> u, v;   // MAC face velocities (grid.size() each, halo included)
  std::vector<real> phi;    // pressure correction phi = p / rho_f [m^2/s^2]; warm start of the next solve
  std::vector<real> open;   // 1 for fluid cells, 0 inside obstacles (halo cells are 1)
  // `capacity` slots, alive or not; on a CPU rank of a split run the live
  // records it holds, in slot order (make_initial_state with `keep`,
  // Backend::download_own)
  HostParticles particles;
  int64_t step = 0;
  double time = 0.0;
  double dt = 0.0;          // last step's dt
  uint64_t next_id = 0;     // id of the next injected particle
  ParticleCounters counters;
};

// Whether (x, y) lies inside one of the config's obstacles grown by
// `margin` (a particle's radius when placing it), in float64: the initial
// state, the open mask and the restart's particle check ask it of each
// obstacle with the test the particle step uses (sim/model/obstacle.hpp).
bool inside_obstacle(const Config& cfg, double x, double y, double margin = 0.0);
// The first of the config's obstacles (in config order) that (x, y) lies
// inside, grown by `margin`, or -1: the obstacle a closed cell belongs to.
int obstacle_at(const Config& cfg, double x, double y, double margin = 0.0);

// Fluid at its initial condition, obstacles rasterised, particles seeded
// from the config's regions (deterministic in cfg.seed). Throws for a grid
// or particle count that does not fit (Grid::make),
// and std::invalid_argument, one line naming the region, for particles no
// draw places outside the obstacles.
SimState make_initial_state(const Config& cfg);
// The same state with only the seeded particles `keep(x, y)` accepts (a
// rank's own), as the live records of a compacted store in slot order:
// no slot of the whole capacity on every rank. Every particle is still
// drawn (and checked against the obstacles), the same on every rank.
SimState make_initial_state(const Config& cfg, const std::function<bool(double x, double y)>& keep);

// The fluid at its initial condition and the obstacles rasterised, with no
// particle (no slot either): what a restart fills from its file.
SimState make_initial_fluid(const Config& cfg);

// Particles injected between t0 and t1 at cfg.inject.rate: ids [first, first + count).
// Throws std::overflow_error when rate * t1 reaches 2^53 (past it neither
// the double nor the count is exact).
int64_t injection_count(const Config& cfg, double t0, double t1);

}  // namespace sim
