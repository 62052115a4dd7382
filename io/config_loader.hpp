// SPDX-License-Identifier: MIT
// Reads a TOML config, applies `--set KEY=VALUE` overrides and validates the
// result against io/config_schema and the scheme's stability limits.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/model/config.hpp"

namespace sim {

// One line: "<file>:<line>:<col>: <key>: <what is wrong>", or
// "--set <KEY=VALUE>: <key>: ..." when an override is at fault.
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws ConfigError. Config::source is set to `path`. A file larger than
// 1 MiB is refused after reading 1 MiB + 1 byte; key names longer than 256
// characters are refused, cut to 40 characters in the message.
// The GPU strategies the config leaves automatic (unset or "auto") are
// resolved (resolve_strategies, sim/model/strategies.hpp); `case_choices`,
// when given: what it chose by the case and why ("" when nothing), for the
// run's report.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {},
                   std::string* case_choices = nullptr);

// As load_config, from text; `source_name` stands in for the path in messages
// and in Config::source.
Config load_config_string(const std::string& toml_text, const std::string& source_name,
                          const std::vector<std::string>& overrides = {}, std::string* case_choices = nullptr);

// "--set KEY=VALUE" when that override gave `key` ("domain.nx",
// "particles.regions[0].count") its value in `cfg` (Config::set_by); "" when
// the file or a default gave it, or when `cfg` was built in code.
std::string override_of(const Config& cfg, const std::string& key);

}  // namespace sim
