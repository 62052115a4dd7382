// SPDX-License-Identifier: MIT
// Checks of a loaded config that involve several keys, apart from the loader
// (io/config_loader.cpp), which reports what they find at the key's place.
#pragma once
#include <optional>
#include <string>

#include "sim/model/config.hpp"

namespace sim {

// What is wrong, at `key` (where it was given, else at `fallback`'s place).
struct ConfigProblem {
  std::string key, fallback, what;
};

// The boundary sides: a parabolic profile only on an inflow side, and with
// no outflow side the inflows bringing no net volume.
std::optional<ConfigProblem> boundary_problem(const Config& c);

}  // namespace sim
