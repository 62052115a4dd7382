// SPDX-License-Identifier: MIT
// `sim --restart snap_NNNNNN.h5 CONFIG`: the run state from a snapshot.
#pragma once
#include <cstdint>
#include <functional>
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
constexpr int64_t kRestartChunk = int64_t(1) << 20;
SimState load_restart(const Config& cfg, const std::string& path, int64_t chunk = kRestartChunk);

// The same state with only the particles `keep(x, y)` accepts (a rank's
// own), as the live records of a compacted store in slot order, as
// make_initial_state(cfg, keep) gives them. Both read the grid in blocks
// of rows of about `chunk` faces and the particles `chunk` records at a
// time, and check every value (the same refusals, on every rank): no rank
// holds the file's grid or particles, or the whole capacity.
SimState load_restart(const Config& cfg, const std::string& path,
                      const std::function<bool(double x, double y)>& keep, int64_t chunk = kRestartChunk);

}  // namespace sim
