// SPDX-License-Identifier: MIT
// Host-side pieces of fluid.advection: the obstacle clearance field the
// quick scheme reads, and the warning about central advection at a high
// cell Reynolds number. The scheme itself is in sim/model/fluid_physics.hpp.
#pragma once
#include <string>
#include <vector>

#include "sim/model/config.hpp"
#include "sim/model/grid.hpp"

namespace sim {

// advection_clearance (sim/model/fluid_physics.hpp) at every storage point, from
// the open mask; empty unless the quick scheme runs with obstacles (the
// only case that reads it).
std::vector<real> advection_clearance_field(const Config& cfg, const Grid& g, const std::vector<real>& open);

// Central advection stays free of grid-scale wiggles only up to a modest
// cell Reynolds number |u| h / nu: 2 for steady advection-diffusion in one
// dimension. In the unsteady flows here the noise appears later: in
// config/channel.toml's upstream core, central and quick agree at 10 (the
// shipped Re = 100), central's vorticity there is 12 times quick's at 20
// and 300 times at 50 (docs/ARCHITECTURE.md). Warned above this.
constexpr double kCentralCellReynolds = 15.0;

// The largest speed the config sets: boundary speeds, the initial velocity
// (uniform |(u, v)| or the Taylor-Green amplitude) [m/s].
double reference_speed(const Config& cfg);

// The cell Reynolds number speed * max(dx, dy) / nu (infinite when nu = 0
// and speed > 0).
double cell_reynolds(const Config& cfg, double speed);

// One line ("sim: warning: ...") when central advection runs at a cell
// Reynolds number above kCentralCellReynolds for `speed`, else "".
// `what` names the speed ("the reference speed of the config", ...). The
// run asks once with reference_speed before the first step and, only when
// the config sets no speed (a flow driven by a body force or by particles),
// once more with the largest face speed at the end.
std::string central_advection_warning(const Config& cfg, double speed, const std::string& what);

}  // namespace sim
