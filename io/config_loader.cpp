#include "io/config_loader.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include <toml++/toml.h>

#include "io/config_schema.hpp"
#include "io/config_writer.hpp"
#include "sim/stability.hpp"

namespace sim {
namespace {

std::string describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return toml_string_literal(n.as_string()->get());
    case toml::node_type::integer: return std::to_string(n.as_integer()->get());
    case toml::node_type::floating_point: {
      std::string s = format_number(n.as_floating_point()->get());
      return s.find_first_of(".eEn") == std::string::npos ? s + ".0" : s;  // 64.0, not 64
    }
    case toml::node_type::boolean: return n.as_boolean()->get() ? "true" : "false";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// Three significant digits, more only when needed to tell `a` from `b` apart.
std::pair<std::string, std::string> distinct_g(double a, double b) {
  char sa[40], sb[40];
  for (int p = 3; p <= 17; ++p) {
    std::snprintf(sa, sizeof sa, "%.*g", p, a);
    std::snprintf(sb, sizeof sb, "%.*g", p, b);
    if (std::strcmp(sa, sb) != 0) break;
  }
  return {sa, sb};
}

std::string g3(double v) {
  char s[40];
  std::snprintf(s, sizeof s, "%.3g", v);
  return s;
}

class Loader {
 public:
  explicit Loader(std::string source) : source_(std::move(source)) {}

  Config cfg;

  // Walks `n`, found at dotted `path`; `key_src` locates the key itself.
  void apply(const std::string& path, const toml::node& n, const toml::source_region& key_src) {
    if (const auto* f = schema_.find(path)) return set_leaf(*f, cfg, path, n);
    if (path == schema_.obstacles.key) return assign_array(schema_.obstacles, path, n);
    if (path == schema_.regions.key) return assign_array(schema_.regions, path, n);
    if (path.empty() || schema_.is_table(path)) {
      const auto* t = n.as_table();
      if (!t) fail(where(n.source()), path, "expected a table, got " + describe(n));
      if (!path.empty()) origins_[path] = where(n.source());
      for (const auto& [k, child] : ordered(*t))
        apply(path.empty() ? std::string(k->str()) : path + "." + std::string(k->str()), *child, k->source());
      return;
    }
    if (override_ && apply_indexed(path, n)) return;
    std::vector<std::string> candidates = leaf_keys();
    if (n.is_table()) {
      candidates.resize(2);  // the two arrays of tables, then every table
      for (auto& t : schema_.tables()) candidates.push_back(std::move(t));
    }
    unknown(path, n, key_src, candidates);
  }

  void apply_override(const std::string& text) {
    const auto eq = text.find('=');
    const std::string key = trim(text.substr(0, eq));
    if (eq == std::string::npos || key.empty()) throw ConfigError("--set " + text + ": expected KEY=VALUE");
    override_ = "--set " + text;
    const std::string value = trim(text.substr(eq + 1));
    toml::table holder;
    try {
      holder = toml::parse("v = " + value);
    } catch (const toml::parse_error& e) {
      // Something that starts like a TOML number, string, array or table was
      // meant as one; anything else is a bare word, taken as a string.
      if (!value.empty() && std::strchr("0123456789+-\"'[{", value[0]))
        fail(*override_, key, std::string(e.description()));
    }
    if (holder.size() != 1 || !holder.contains("v")) {
      holder.clear();
      holder.insert("v", value);
    }
    apply(key, *holder.get("v"), holder.source());
    override_.reset();
  }

  // Checks that involve several keys or the physics of the scheme.
  void validate() {
    const Config& c = cfg;
    check_periodic("left", c.left, "right", c.right);
    check_periodic("bottom", c.bottom, "top", c.top);
    for (std::size_t i = 0; i < c.obstacles.size(); ++i) {
      const Obstacle& o = c.obstacles[i];
      const std::string ep = "obstacles[" + std::to_string(i) + "]";
      if (o.shape == ObstacleShape::circle) {
        if (!(o.radius > 0))
          fail(loc(ep + ".radius", ep), ep + ".radius", "expected a number > 0 for a circle, got " + format_number(o.radius));
        if (o.x - o.radius < 0 || o.x + o.radius > c.lx || o.y - o.radius < 0 || o.y + o.radius > c.ly)
          fail(loc(ep), ep, "circle of radius " + format_number(o.radius) + " at (" + format_number(o.x) + ", " +
                                format_number(o.y) + ") lies outside the domain " + domain_text());
      } else {
        check_rectangle(ep, "rectangle", o.x0, o.y0, o.x1, o.y1);
      }
    }
    for (std::size_t i = 0; i < c.regions.size(); ++i) {
      const ParticleRegion& r = c.regions[i];
      const std::string ep = "particles.regions[" + std::to_string(i) + "]";
      check_rectangle(ep, "region", r.x0, r.y0, r.x1, r.y1);
      if (r.diameter_max < r.diameter_min)
        fail(loc(ep + ".diameter_max", ep), ep + ".diameter_max",
             "expected a number >= diameter_min = " + format_number(r.diameter_min) + ", got " +
                 format_number(r.diameter_max));
    }
    const auto& in = c.inject;
    if (in.rate > 0) check_rectangle("particles.inject", "region", in.x0, in.y0, in.x1, in.y1);
    const int64_t seeded = c.total_seeded();
    if (c.capacity > 0 && c.capacity < seeded)
      fail(loc("particles.capacity"), "particles.capacity",
           "expected 0 or an integer >= " + std::to_string(seeded) + " (the seeded particle count), got " +
               std::to_string(c.capacity));
    if (in.rate > 0 && c.particle_capacity() <= seeded)
      fail(loc("particles.capacity", "particles.inject.rate"), "particles.capacity",
           "injection (particles.inject.rate = " + format_number(in.rate) + " 1/s) needs an integer > " +
               std::to_string(seeded) + " (the seeded particle count), got " + std::to_string(c.capacity));
    if (static_cast<int64_t>(c.block_x) * c.block_y > 1024)
      fail(loc("gpu.block_y", "gpu.block_x"), "gpu.block_y",
           "block_x * block_y = " + std::to_string(static_cast<int64_t>(c.block_x) * c.block_y) +
               " exceeds 1024 threads per block");
    if (c.dt > 0) check_fixed_dt();
  }

 private:
  const ConfigSchema& schema_ = config_schema();
  std::string source_;
  std::optional<std::string> override_;        // "--set KEY=VALUE" while applying one
  std::map<std::string, std::string> origins_;  // key -> where its current value came from

  [[noreturn]] static void fail(const std::string& where, const std::string& key, const std::string& what) {
    throw ConfigError(where + ": " + key + ": " + what);
  }

  std::string where(const toml::source_region& r) const {
    if (override_) return *override_;
    return source_ + ":" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.column);
  }

  // Location of `key`'s value, else of `fallback`'s, else the file.
  std::string loc(const std::string& key, const std::string& fallback = {}) const {
    if (auto it = origins_.find(key); it != origins_.end()) return it->second;
    if (auto it = origins_.find(fallback); it != origins_.end()) return it->second;
    return source_;
  }

  std::vector<std::string> leaf_keys() const {
    std::vector<std::string> out{schema_.obstacles.key, schema_.regions.key};
    for (const auto& f : schema_.keys) out.push_back(f.key);
    return out;
  }

  // Children in document order, so the first error reported is the first in the file.
  static std::vector<std::pair<const toml::key*, const toml::node*>> ordered(const toml::table& t) {
    std::vector<std::pair<const toml::key*, const toml::node*>> out;
    for (const auto& [k, v] : t) out.emplace_back(&k, &v);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      const auto &pa = a.first->source().begin, &pb = b.first->source().begin;
      return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
    });
    return out;
  }

  [[noreturn]] void unknown(const std::string& path, const toml::node& n, const toml::source_region& key_src,
                            const std::vector<std::string>& candidates) const {
    const auto near = closest_match(path, candidates);
    fail(where(key_src), path,
         std::string(n.is_table() ? "unknown table" : "unknown key") + (near ? " (did you mean " + *near + "?)" : ""));
  }

  ConfigValue check(const FieldInfo& f, const std::string& path, const toml::node& n) const {
    std::optional<ConfigValue> v;
    switch (f.type) {
      case ValueType::integer:
        if (const auto* p = n.as_integer()) v = p->get();
        break;
      case ValueType::number:
        if (const auto* p = n.as_floating_point()) v = p->get();
        if (const auto* p = n.as_integer()) v = static_cast<double>(p->get());
        break;
      case ValueType::boolean:
        if (const auto* p = n.as_boolean()) v = p->get();
        break;
      case ValueType::string:
      case ValueType::enumeration:
        if (const auto* p = n.as_string()) v = p->get();
        break;
    }
    if (v && value_allowed(f, *v)) return *v;
    std::string expected = expected_text(f);
    if (v && f.type == ValueType::number && !std::isfinite(std::get<double>(*v))) expected.insert(2, "finite ");
    if (v && f.type == ValueType::integer && f.type_max && std::get<int64_t>(*v) > *f.type_max)
      expected = "an integer <= " + std::to_string(*f.type_max);
    fail(where(n.source()), path, "expected " + expected + ", got " + describe(n));
  }

  template <class T>
  void set_leaf(const Field<T>& f, T& target, const std::string& path, const toml::node& n) {
    f.set(target, check(f, path, n));
    origins_[path] = where(n.source());
  }

  // Merges the keys of `t` into one array element.
  template <class T>
  void apply_element(const TableArraySchema<T>& a, T& item, const std::string& ep, const toml::table& t) {
    for (const auto& [k, child] : ordered(t)) {
      const std::string path = ep + "." + std::string(k->str());
      if (const auto* f = a.find(k->str())) {
        set_leaf(*f, item, path, *child);
      } else {
        std::vector<std::string> candidates;
        for (const auto& g : a.fields) candidates.push_back(ep + "." + g.key);
        unknown(path, *child, k->source(), candidates);
      }
    }
  }

  // An array value replaces the whole array (file or --set alike).
  template <class T>
  void assign_array(const TableArraySchema<T>& a, const std::string& path, const toml::node& n) {
    const auto* arr = n.as_array();
    if (!arr) fail(where(n.source()), path, "expected an array of tables ([[" + path + "]]), got " + describe(n));
    for (auto it = origins_.lower_bound(path + "["); it != origins_.end() && it->first.rfind(path + "[", 0) == 0;)
      it = origins_.erase(it);
    std::vector<T> items;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::node& e = *arr->get(i);
      const std::string ep = path + "[" + std::to_string(i) + "]";
      const auto* t = e.as_table();
      if (!t) fail(where(e.source()), ep, "expected a table, got " + describe(e));
      origins_[ep] = where(e.source());
      apply_element(a, items.emplace_back(), ep, *t);
    }
    a.items(cfg) = std::move(items);
  }

  // --set particles.regions[0].count=10, or particles.regions[0]={count=10}.
  bool apply_indexed(const std::string& path, const toml::node& n) {
    const auto lb = path.find('['), rb = path.find(']');
    if (lb == std::string::npos || rb == std::string::npos || rb < lb + 2) return false;
    const std::string index = path.substr(lb + 1, rb - lb - 1);
    if (index.find_first_not_of("0123456789") != std::string::npos || index.size() > 9) return false;
    const std::string rest = path.substr(rb + 1);
    if (!rest.empty() && (rest.size() < 2 || rest[0] != '.')) return false;
    const std::string base = path.substr(0, lb);
    const std::size_t i = std::stoul(index);
    if (base == schema_.obstacles.key) return apply_in_element(schema_.obstacles, i, rest, n, path);
    if (base == schema_.regions.key) return apply_in_element(schema_.regions, i, rest, n, path);
    return false;
  }

  template <class T>
  bool apply_in_element(const TableArraySchema<T>& a, std::size_t i, const std::string& rest, const toml::node& n,
                        const std::string& path) {
    auto& items = a.items(cfg);
    const std::string ep = a.key + "[" + std::to_string(i) + "]";
    if (i >= items.size())
      fail(*override_, ep, "no such entry (there are " + std::to_string(items.size()) + " [[" + a.key + "]] entries)");
    if (rest.empty()) {
      const auto* t = n.as_table();
      if (!t) fail(*override_, ep, "expected a table, got " + describe(n));
      apply_element(a, items[i], ep, *t);
    } else if (const auto* f = a.find(rest.substr(1))) {
      set_leaf(*f, items[i], path, n);
    } else {
      std::vector<std::string> candidates;
      for (const auto& g : a.fields) candidates.push_back(ep + "." + g.key);
      unknown(path, n, n.source(), candidates);
    }
    return true;
  }

  std::string domain_text() const {
    return "[0, " + format_number(cfg.lx) + "] x [0, " + format_number(cfg.ly) + "]";
  }

  void check_rectangle(const std::string& ep, const char* what, double x0, double y0, double x1, double y1) {
    if (!(x1 > x0))
      fail(loc(ep + ".x1", ep), ep + ".x1", "expected a number > x0 = " + format_number(x0) + ", got " + format_number(x1));
    if (!(y1 > y0))
      fail(loc(ep + ".y1", ep), ep + ".y1", "expected a number > y0 = " + format_number(y0) + ", got " + format_number(y1));
    if (x0 < 0 || y0 < 0 || x1 > cfg.lx || y1 > cfg.ly)
      fail(loc(ep, ep + ".x0"), ep,
           std::string(what) + " [" + format_number(x0) + ", " + format_number(x1) + "] x [" + format_number(y0) +
               ", " + format_number(y1) + "] lies outside the domain " + domain_text());
  }

  void check_periodic(const std::string& a, const BoundarySide& sa, const std::string& b, const BoundarySide& sb) {
    const bool pa = sa.kind == BoundaryKind::periodic, pb = sb.kind == BoundaryKind::periodic;
    if (pa == pb) return;
    const std::string& yes = pa ? a : b;
    const std::string& no = pa ? b : a;
    fail(loc("boundary." + no + ".kind", "boundary." + yes + ".kind"), "boundary." + no + ".kind",
         "periodic on the " + yes + " requires periodic on the " + no);
  }

  void check_fixed_dt() {
    const Config& c = cfg;
    const double dx = c.dx(), dy = c.dy();
    const std::string grid = "dx = " + g3(dx) + " m" + (dx != dy ? ", dy = " + g3(dy) + " m" : "");
    const double viscous = viscous_dt_limit(c.viscosity, dx, dy);
    if (c.dt > viscous) {
      const auto [dt, lim] = distinct_g(c.dt, viscous);
      fail(loc("time.dt"), "time.dt", dt + " s exceeds the viscous stability limit " + lim + " s (nu = " +
                                          g3(c.viscosity) + " m^2/s, " + grid + ")");
    }
    // The largest speed the setup imposes, taken in both directions.
    double speed = 0.0;
    std::string from;
    auto consider = [&](double v, const std::string& key) {
      if (std::abs(v) > speed) speed = std::abs(v), from = key;
    };
    const std::pair<const char*, const BoundarySide*> sides[] = {
        {"left", &c.left}, {"right", &c.right}, {"bottom", &c.bottom}, {"top", &c.top}};
    for (const auto& [name, s] : sides)
      if (s->kind == BoundaryKind::wall || s->kind == BoundaryKind::inflow)
        consider(s->speed, std::string("boundary.") + name + ".speed");
    if (c.initial != InitialFlow::rest) {
      consider(c.initial_u, "fluid.initial_u");
      consider(c.initial_v, "fluid.initial_v");
    }
    if (c.inject.rate > 0) {
      consider(c.inject.vx, "particles.inject.vx");
      consider(c.inject.vy, "particles.inject.vy");
    }
    for (std::size_t i = 0; i < c.regions.size(); ++i) {
      if (c.regions[i].count == 0) continue;
      consider(c.regions[i].vx, "particles.regions[" + std::to_string(i) + "].vx");
      consider(c.regions[i].vy, "particles.regions[" + std::to_string(i) + "].vy");
    }
    const double advective = advective_dt_limit(speed, speed, dx, dy);
    if (c.dt > advective) {
      const auto [dt, lim] = distinct_g(c.dt, advective);
      fail(loc("time.dt"), "time.dt", dt + " s exceeds the advective (CFL) stability limit " + lim +
                                          " s (reference speed " + g3(speed) + " m/s from " + from + ", " + grid + ")");
    }
  }
};

}  // namespace

Config load_config_string(const std::string& toml_text, const std::string& source_name,
                          const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(std::string_view(toml_text), std::string_view(source_name));
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    throw ConfigError(source_name + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " +
                      std::string(e.description()));
  }
  Loader loader(source_name);
  loader.apply("", root, root.source());
  for (const auto& o : overrides) loader.apply_override(o);
  loader.validate();
  loader.cfg.source = source_name;
  return loader.cfg;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw ConfigError("cannot read config file '" + path + "': " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const int err = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (err) throw ConfigError("cannot read config file '" + path + "': " + std::strerror(err));
  return load_config_string(text, path, overrides);
}

}  // namespace sim
