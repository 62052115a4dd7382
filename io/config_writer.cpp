// SPDX-License-Identifier: MIT
#include "io/config_writer.hpp"

#include "io/config_schema.hpp"

namespace sim {

std::string toml_string_literal(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static const char hex[] = "0123456789ABCDEF";
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string format_toml_value(const FieldInfo& f, const ConfigValue& v) {
  switch (f.type) {
    case ValueType::integer:
      if (f.auto_value && std::get<int64_t>(v) == *f.auto_value) return "\"auto\"";
      return std::to_string(std::get<int64_t>(v));
    case ValueType::number: {
      std::string s = format_number(std::get<double>(v));
      // A float must not read back as an integer: "1000" -> "1000.0".
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
      return s;
    }
    case ValueType::boolean: return std::get<bool>(v) ? "true" : "false";
    case ValueType::string:
    case ValueType::enumeration: return toml_string_literal(std::get<std::string>(v));
  }
  return {};
}

namespace {

template <class T>
std::string line(const Field<T>& f, const std::string& name, const T& from) {
  // A key at its "none" default has no value to write that would read back.
  if (f.default_is_none && f.get(from) == f.default_value()) return "# " + name + ": none\n";
  std::string s = name + " = " + format_toml_value(f, f.get(from));
  if (!f.unit.empty()) s += "  # [" + f.unit + "]";
  return s + "\n";
}

template <class T>
void write_array(std::string& out, const TableArraySchema<T>& a, const std::vector<T>& items) {
  if (items.empty()) {
    out += "\n# [[" + a.key + "]]: none\n";
    return;
  }
  for (const T& item : items) {
    out += "\n[[" + a.key + "]]\n";
    for (const auto& f : a.fields) out += line(f, f.key, item);
  }
}

}  // namespace

std::string config_to_toml(const Config& in) {
  // The strategies as the run resolves them (a Config built in code may hold auto).
  const Config cfg = resolved_strategies(in);
  const ConfigSchema& s = config_schema();
  std::string out = "# Resolved configuration (every key; units in brackets).\n";
  std::string table;
  for (const auto& f : s.keys) {
    const auto dot = f.key.rfind('.');
    const std::string t = f.key.substr(0, dot);
    if (t != table) {
      out += "\n[" + t + "]\n";
      table = t;
    }
    out += line(f, f.key.substr(dot + 1), cfg);
  }
  // Arrays of tables come last: a [[...]] header ends the table before it.
  write_array(out, s.obstacles, cfg.obstacles);
  write_array(out, s.regions, cfg.regions);
  return out;
}

}  // namespace sim
