// SPDX-License-Identifier: MIT
#include "sim/model/advection.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "sim/model/constants.hpp"
#include "sim/model/fluid_physics.hpp"

namespace sim {

std::vector<real> advection_clearance_field(const Config& cfg, const Grid& g, const std::vector<real>& open) {
  if (cfg.advection != AdvectionScheme::quick || cfg.obstacles.empty()) return {};
  const Constants k = make_constants(cfg, g);
  std::vector<real> out(g.size(), real(0));
  for (int j = -1; j <= g.rows - 2; ++j)
    for (int i = -1; i <= g.pitch - 2; ++i)
      out[g.idx(i, j)] = static_cast<real>(advection_clearance(open.data(), i, j, k));
  return out;
}

double reference_speed(const Config& cfg) {
  double s = 0;
  for (const BoundarySide* b : {&cfg.left, &cfg.right, &cfg.bottom, &cfg.top}) s = std::max(s, b->peak_speed());
  if (cfg.initial == InitialFlow::uniform) s = std::max(s, std::hypot(cfg.initial_u, cfg.initial_v));
  if (cfg.initial == InitialFlow::taylor_green) s = std::max(s, std::abs(cfg.initial_u));
  return s;
}

double cell_reynolds(const Config& cfg, double speed) {
  const double h = std::max(cfg.dx(), cfg.dy());
  if (speed <= 0) return 0;
  if (cfg.viscosity <= 0) return std::numeric_limits<double>::infinity();
  return speed * h / cfg.viscosity;
}

std::string central_advection_warning(const Config& cfg, double speed, const std::string& what) {
  if (cfg.advection != AdvectionScheme::central) return {};
  const double re = cell_reynolds(cfg, speed);
  if (!(re > kCentralCellReynolds)) return {};
  char line[320];
  if (std::isinf(re))
    std::snprintf(line, sizeof line,
                  "sim: warning: central advection without viscosity (%s %.3g m/s): expect grid-scale noise; "
                  "set fluid.advection = \"quick\"",
                  what.c_str(), speed);
  else
    std::snprintf(line, sizeof line,
                  "sim: warning: central advection at cell Reynolds number %.3g (|u| h / nu with %s %.3g m/s, "
                  "h = %.3g m) above %.0f: expect grid-scale noise; set fluid.advection = \"quick\"",
                  re, what.c_str(), speed, std::max(cfg.dx(), cfg.dy()), kCentralCellReynolds);
  return line;
}

}  // namespace sim
