// SPDX-License-Identifier: MIT
// `sim --restart snap_NNNNNN.h5 CONFIG`: the run state from a snapshot.
#pragma once
#include <string>

#include "sim/model/config.hpp"
#include "sim/model/state.hpp"

namespace sim {

// The state stored in `path`, rebuilt for `cfg`: faces, phi and the obstacle
// mask from the file with the halo refilled from the boundary conditions
// (the halo is a function of the interior), particles back in their slots
// (slot = id % cfg.particle_capacity()), clock and counters restored.
// Throws std::runtime_error "restart from 'PATH': ..." when the file does not
// fit the config (grid size, domain, obstacles, capacity).
SimState load_restart(const Config& cfg, const std::string& path);

}  // namespace sim
