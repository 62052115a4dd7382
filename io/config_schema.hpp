// SPDX-License-Identifier: MIT
// The one table of configuration keys: type, unit, default, allowed range,
// description and the way into sim::Config. The loader, the writer, the
// documentation (docs/CONFIG.md) and the tests all walk this table, so a key
// exists, is validated and is documented in exactly one place.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/model/config.hpp"

namespace sim {

enum class ValueType { integer, number, boolean, string, enumeration };

// Enumerations travel as their name (a std::string).
using ConfigValue = std::variant<int64_t, double, bool, std::string>;

struct Bound {
  double value = 0.0;
  bool exclusive = false;
};

struct Range {
  std::optional<Bound> min, max;
  std::string why;         // reason shown after the expectation, e.g. "at least 8 cells a side"
  bool non_empty = false;  // strings only
};

// Everything about a key except how it reaches the C++ object.
struct FieldInfo {
  std::string key;  // dotted TOML path relative to the owning table, e.g. "fluid.viscosity"
  ValueType type = ValueType::number;
  std::string unit;                  // "" when dimensionless
  Range range;
  std::vector<std::string> choices;  // enumeration names, in enum_names<E>() order
  std::string description;
  // Largest value the C++ member can hold (integers only); values above it are
  // rejected even when the range has no upper bound.
  std::optional<int64_t> type_max;
  // Integers only: the value the string "auto" stands for (the member's
  // automatic choice, within the range), where the key takes that word.
  std::optional<int64_t> auto_value;
  // Numbers only: the solver computes with the value in float32 (sim::real),
  // so a nonzero value must be a normal float32 (see float32_problem).
  bool float32 = false;
  // The default (0) stands for "none" and is no value to give: a value given
  // must be in the range, which the default is not (run.end_time).
  bool default_is_none = false;
};

template <class T>
struct Field : FieldInfo {
  std::function<void(T&, const ConfigValue&)> set;  // value already checked
  std::function<ConfigValue(const T&)> get;
  ConfigValue default_value() const { return get(T{}); }
};

// An array of tables such as [[obstacles]]; each element has its own keys.
template <class T>
struct TableArraySchema {
  std::string key;  // "obstacles", "particles.regions"
  std::string description;
  std::vector<Field<T>> fields;
  std::function<std::vector<T>&(Config&)> items;
  std::function<const std::vector<T>&(const Config&)> citems;
  const Field<T>* find(std::string_view k) const {
    for (const auto& f : fields)
      if (f.key == k) return &f;
    return nullptr;
  }
};

struct ConfigSchema {
  std::vector<Field<Config>> keys;              // schema order = documentation order
  TableArraySchema<Obstacle> obstacles;         // [[obstacles]]
  TableArraySchema<ParticleRegion> regions;     // [[particles.regions]]

  const Field<Config>* find(std::string_view key) const;
  // Every table that holds keys, with its parents: "boundary", "boundary.left", ...
  std::vector<std::string> tables() const;
  bool is_table(std::string_view key) const;
};

const ConfigSchema& config_schema();

// "a number >= 0 (why)", "an integer in [0, 9]", "one of aos|soa", "true or false".
std::string expected_text(const FieldInfo& f);
// The documentation's "Allowed" cell: ">= 0", "[0, 9]", "`aos`, `soa`", "".
std::string allowed_text(const FieldInfo& f);
// Type already matches f.type; checks range, choices, finiteness, type_max,
// the float32 range (float32_problem) and the length of strings.
bool value_allowed(const FieldInfo& f, const ConfigValue& v);

// For a number key held in float32 (f.float32), what is wrong with the finite
// value x: nonzero but below the smallest normal float32 (FLT_MIN) in
// magnitude, so it rounds to 0 or a subnormal, or above FLT_MAX; "" when
// neither. Reads as "<x> <problem>".
std::string float32_problem(const FieldInfo& f, double x);

// Longest string value (run.output is a path: PATH_MAX).
constexpr std::size_t kMaxStringValue = 4096;

// Shortest text that reads back to the same double ("0.0001", "1e-05", "2.5").
std::string format_number(double v);

// Optimal string alignment (restricted Damerau-Levenshtein) distance.
std::size_t edit_distance(std::string_view a, std::string_view b);
// Closest candidate when within max(2, len/4) edits; ties go to the first.
// Candidates whose length alone differs by more than that are skipped, so a
// huge key costs no edit distance.
std::optional<std::string> closest_match(std::string_view key, const std::vector<std::string>& candidates);

// The reference tables of docs/CONFIG.md.
std::string schema_markdown();

}  // namespace sim
