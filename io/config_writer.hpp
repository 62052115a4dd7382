// SPDX-License-Identifier: MIT
// The resolved configuration as TOML text: every schema key, in schema order,
// the GPU strategies resolved (resolved_strategies, sim/model/strategies.hpp).
// load_config_string() reads it back to an identical Config (to one whose
// strategies resolve alike, where `cfg` left some automatic); snapshots store it.
#pragma once
#include <string>
#include <string_view>

#include "io/config_schema.hpp"
#include "sim/model/config.hpp"

namespace sim {

// A TOML basic string literal, with quotes and escapes.
std::string toml_string_literal(std::string_view s);
// The value as TOML: numbers always with '.' or exponent, strings quoted.
std::string format_toml_value(const FieldInfo& f, const ConfigValue& v);

std::string config_to_toml(const Config& cfg);

}  // namespace sim
