// SPDX-License-Identifier: MIT
// JSON text for the reports (`sim bench --json`, `sim --summary-json`).
#pragma once
#include <string>

namespace sim {

// s as a JSON string literal, quotes included (control characters escaped).
std::string json_string(const std::string& s);
// x as a JSON number, or null when it is not finite.
std::string json_number(double x);

}  // namespace sim
