// SPDX-License-Identifier: MIT
#include <algorithm>
#include <sstream>

#include "sim/app/json.hpp"
#include "sim/app/report.hpp"
#include "sim/app/version.hpp"

namespace sim {

namespace {
std::string pair(const double v[2]) { return "[" + json_number(v[0]) + ", " + json_number(v[1]) + "]"; }
}  // namespace

std::string summary_json(const RunSummary& s) {
  const double wall = std::max(s.wall_s, 1e-12);
  std::ostringstream o;
  o << "{\n  \"format_version\": " << kSummaryFormatVersion << ",\n  \"version\": " << json_string(version_line()) << ",\n  \"config\": " << json_string(s.config)
    << ",\n  \"backend\": " << json_string(s.backend) << ",\n  \"strategies\": " << json_string(s.strategies)
    << ",\n  \"pressure_solver\": " << json_string(s.pressure_solver) << ",\n  \"advection\": "
    << json_string(s.advection) << ",\n  \"ranks\": " << s.ranks << ",\n  \"steps\": " << s.steps
    << ",\n  \"sim_time\": " << json_number(s.sim_time) << ",\n  \"start_time\": " << json_number(s.start_time)
    << ",\n  \"end_time\": " << json_number(s.end_time) << ",\n  \"wall_s\": " << json_number(s.wall_s)
    << ",\n  \"steps_per_s\": " << json_number(s.steps / wall) << ",\n  \"sim_s_per_wall_s\": "
    << json_number((s.sim_time - s.start_time) / wall) << ",\n  \"phase_ms\": {";
  for (int p = 0; p < kPhaseCount; ++p)
    o << (p ? ", " : "") << json_string(phase_name(static_cast<Phase>(p))) << ": " << json_number(s.phase_ms[p]);
  o << "},\n  \"pressure\": {\"iterations_per_step\": " << json_number(s.pressure_iterations_mean)
    << ", \"last_relative_residual\": " << json_number(s.last_pressure.residual)
    << ", \"tolerance\": " << json_number(s.tolerance) << ", \"fixed_iterations\": " << s.fixed_iterations
    << ", \"unconverged\": " << s.pressure_unconverged << ", \"worst_residual\": "
    << json_number(s.pressure_worst_residual) << "},\n  \"viscous\": {\"treatment\": "
    << json_string(s.implicit_viscosity ? "implicit" : "explicit") << ", \"solver\": "
    << json_string(!s.implicit_viscosity ? "none" : s.viscous_transform ? "transform" : "chebyshev")
    << ", \"iterations_per_step\": " << json_number(s.viscous_iterations_mean) << ", \"unconverged\": "
    << s.viscous_unconverged << ", \"worst_residual\": " << json_number(s.viscous_worst_residual)
    << "},\n  \"time_step\": {\"fixed\": " << (s.fixed_dt ? "true" : "false") << ", \"viscous_limited_steps\": "
    << s.viscous_limited_steps << ", \"dt_max_steps\": " << s.dt_max_steps << "},\n  \"fluid\": {\"max_div\": "
    << json_number(s.diag.max_div) << ", \"max_div_h_over_max_speed\": "
    << json_number(s.diag.max_speed > 0 ? s.diag.max_div * s.h / s.diag.max_speed : 0.0)
    << ", \"max_speed\": " << json_number(s.diag.max_speed) << ", \"kinetic_energy\": "
    << json_number(s.diag.kinetic_energy) << ", \"momentum\": " << pair(s.diag.fluid_momentum)
    << "},\n  \"particles\": {\"alive\": " << s.diag.alive << ", \"removed\": " << s.diag.counters.removed
    << ", \"recycled\": " << s.diag.counters.recycled << ", \"mean_velocity\": " << pair(s.diag.particle_mean_v)
    << "},\n  \"answer_check\": " << (s.answer_check.empty() ? "\"passed\"" : json_string(s.answer_check))
    << ",\n  \"obstacles\": [";
  for (size_t k = 0; k < s.obstacles.size(); ++k)
    o << (k ? ", " : "") << "{\"shape\": " << json_string(s.obstacles[k])
      << ", \"force\": " << (s.diag.boundaries ? pair(s.diag.obstacle_force[k]) : std::string("null")) << "}";
  o << "]\n}\n";
  return o.str();
}

}  // namespace sim
