// SPDX-License-Identifier: MIT
#include "io/config_checks.hpp"

#include <cmath>
#include <utility>

#include "io/config_schema.hpp"

namespace sim {
namespace {

using Sides = std::pair<const char*, const BoundarySide*>[4];

// A parabolic profile describes an inflow's normal speed; on any other side
// it would be silently ignored. ("uniform", the default, is what every side
// has, and what a snapshot's resolved config writes for it.)
std::optional<ConfigProblem> profile_problem(const Sides& sides) {
  for (const auto& [name, s] : sides) {
    if (s->kind == BoundaryKind::inflow || s->profile == InflowProfile::uniform) continue;
    const std::string key = std::string("boundary.") + name + ".profile";
    return ConfigProblem{key, std::string("boundary.") + name + ".kind",
                         "\"" + std::string(to_string(s->profile)) + "\" applies to an inflow side, and the " + name +
                             " side is of kind \"" + std::string(to_string(s->kind)) + "\" (set kind = \"inflow\", or leave out "
                             "the profile)"};
  }
  return std::nullopt;
}

// With no outflow side nothing can leave: the inflows must add up to no
// net volume, or the incompressible fluid has no solution (the projection
// then leaves a divergence orders above its tolerance). A parabolic
// profile brings speed times the side's length, as a uniform one.
std::optional<ConfigProblem> mass_problem(const Config& c, const Sides& sides) {
  double net = 0, scale = 0;
  std::string first, list;
  for (const auto& [name, s] : sides) {
    if (s->kind == BoundaryKind::outflow) return std::nullopt;
    if (s->kind != BoundaryKind::inflow) continue;
    const double length = (std::string(name) == "left" || std::string(name) == "right") ? c.ly : c.lx;
    net += s->speed * length;
    scale += std::abs(s->speed) * length;
    if (first.empty()) first = name;
    list += std::string(list.empty() ? "" : ", ") + name + " " + format_number(s->speed) + " m/s";
  }
  if (first.empty() || std::abs(net) <= 1e-12 * scale) return std::nullopt;
  return ConfigProblem{"boundary." + first + ".speed", "boundary." + first + ".kind",
                       "the inflows (" + list + ") bring " + format_number(net) +
                           " m^2/s into a domain with no outflow side, which an incompressible fluid cannot hold "
                           "(make a side outflow, or balance the inflows)"};
}

}  // namespace

std::optional<ConfigProblem> boundary_problem(const Config& c) {
  const Sides sides = {{"left", &c.left}, {"right", &c.right}, {"bottom", &c.bottom}, {"top", &c.top}};
  if (auto p = profile_problem(sides)) return p;
  return mass_problem(c, sides);
}

}  // namespace sim
