// SPDX-License-Identifier: MIT
// The benchmark's three outputs from one BenchReport: the terminal table,
// CSV (one row per variant, the documented header) and JSON.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "sim/app/bench/bench.hpp"
#include "sim/app/json.hpp"

namespace sim {
namespace {

std::string number_text(double v, const char* fmt = "%.9g") {
  if (!std::isfinite(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}


std::string json_value(const BenchValue& v) {
  if (v.is_text) return json_string(v.text);
  const std::string n = number_text(v.number, "%.10g");
  return n.empty() ? "null" : n;
}

// A table column: header, width, and how a row shows in it.
struct Col {
  std::string head;
  int width;
  std::string (*show)(const BenchRow&, const std::string&);
  std::string key;
  const char* fmt;
};

std::string show_text(const BenchRow& r, const std::string& key) { return r.text(key); }

void print_rows(std::ostream& os, const BenchReport& rep, const std::vector<Col>& cols) {
  std::vector<int> w;
  for (const Col& c : cols) {
    int width = std::max<int>(c.width, static_cast<int>(c.head.size()));
    if (c.show != nullptr)
      for (const BenchRow& r : rep.rows) width = std::max<int>(width, static_cast<int>(c.show(r, c.key).size()));
    w.push_back(width);
  }
  auto cell = [&](size_t i, const std::string& s) {
    const bool left = cols[i].show != nullptr;  // text left, numbers right
    const std::string pad(static_cast<size_t>(std::max<int>(0, w[i] - static_cast<int>(s.size()))), ' ');
    os << (i ? "  " : "") << (left ? s + pad : pad + s);
  };
  for (size_t i = 0; i < cols.size(); ++i) cell(i, cols[i].head);
  os << "\n";
  for (const BenchRow& r : rep.rows) {
    const std::string error = r.text("error");
    for (size_t i = 0; i < cols.size(); ++i) {
      if (cols[i].show != nullptr) cell(i, cols[i].show(r, cols[i].key));
      else cell(i, error.empty() ? number_text(r.number(cols[i].key), cols[i].fmt) : "");
    }
    if (!error.empty()) os << "  " << error;
    os << "\n";
  }
}

void print_matrix_rows(std::ostream& os, const BenchReport& r);  // below print_bench_table
}  // namespace

const std::vector<std::string>& matrix_columns() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> names = {"variant", "backend"};
    for (const StrategyOption& o : strategy_options())
      if (o.bench_axis) names.emplace_back(o.name);
    for (const char* n : {"steps", "iterations_per_step", "particles_ms", "momentum_ms", "pressure_ms",
                          "project_ms", "other_ms", "total_ms", "total_ms_min", "total_ms_max", "repeats", "steps_per_s", "sim_s_per_s", "bytes_per_step", "flops_per_step", "gbps",
                          "copy_pct", "tolerance", "rank", "relative_speed", "particles_gbps", "momentum_gbps",
                          "pressure_gbps", "project_gbps", "error"})
      names.emplace_back(n);
    return names;
  }();
  return c;
}

const std::vector<std::string>& micro_columns() {
  static const std::vector<std::string> c = {
      "benchmark", "size", "items", "variant", "backend", "layout", "stencil", "constants", "sampling", "advection",
      "repeats", "ms_per_op", "gitems_per_s", "bytes_per_item", "gbps", "copy_pct", "error",
      "iterations", "conv_factor"};  // multigrid rows: PCG iterations and the mean residual reduction per iteration
  return c;
}

void write_csv(std::ostream& os, const BenchReport& r) {
  for (size_t i = 0; i < r.columns.size(); ++i) os << (i ? "," : "") << r.columns[i];
  os << "\n";
  for (const BenchRow& row : r.rows) {
    for (size_t i = 0; i < r.columns.size(); ++i) {
      const auto it = row.values.find(r.columns[i]);
      std::string s;
      if (it != row.values.end()) s = it->second.is_text ? csv_field(it->second.text) : number_text(it->second.number);
      os << (i ? "," : "") << s;
    }
    os << "\n";
  }
}

void write_json(std::ostream& os, const BenchReport& r) {
  os << "{\n  \"sim_version\": " << json_string(SIM_VERSION) << ",\n  \"suite\": " << json_string(r.suite)
     << ",\n  \"config\": " << json_string(r.config) << ",\n  \"backend\": " << json_string(r.backend)
     << ",\n  \"device\": " << json_string(r.device) << ",\n  \"ceiling\": {\"what\": " << json_string(r.ceiling_what)
     << ", \"gbps\": " << json_value(BenchValue{false, {}, r.ceiling_gbps}) << "},\n  \"steps\": " << r.steps
     << ",\n  \"warmup\": " << r.warmup << ",\n  \"notes\": [";
  for (size_t i = 0; i < r.notes.size(); ++i) os << (i ? ", " : "") << json_string(r.notes[i]);
  os << "],\n  \"rows\": [";
  for (size_t k = 0; k < r.rows.size(); ++k) {
    os << (k ? ",\n    {" : "\n    {");
    bool first = true;
    for (const std::string& c : r.columns) {
      const auto it = r.rows[k].values.find(c);
      if (it == r.rows[k].values.end()) continue;
      os << (first ? "" : ", ") << json_string(c) << ": " << json_value(it->second);
      first = false;
    }
    os << "}";
  }
  os << (r.rows.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

void print_bench_table(std::ostream& os, const BenchReport& r) {
  os << "\nsim bench (" << r.suite << ") | " << r.config << " | " << r.device << "\n";
  if (r.suite == "ranks") {
    for (const std::string& n : r.notes) os << "note: " << n << "\n";
    os << "\nms per step: the wall time (slowest rank), then each rank's communication (waits included) and the "
          "rest, min-max over ranks; rank 0's phases; efficiency t(1) / (n t(n))\n";
    print_rows(os, r,
               {{"ranks", 5, nullptr, "ranks", "%.0f"},
                {"rows", 4, nullptr, "rows_max", "%.0f"},
                {"it/step", 7, nullptr, "iterations_per_step", "%.1f"},
                {"total", 7, nullptr, "total_ms", "%.3f"},
                {"steps/s", 7, nullptr, "steps_per_s", "%.2f"},
                {"sim s/s", 7, nullptr, "sim_s_per_s", "%.4g"},
                {"comm min", 8, nullptr, "comm_ms_min", "%.3f"},
                {"comm max", 8, nullptr, "comm_ms_max", "%.3f"},
                {"%comm", 5, nullptr, "comm_pct", "%.1f"},
                {"calls", 6, nullptr, "comm_calls", "%.0f"},
                {"work min", 8, nullptr, "work_ms_min", "%.3f"},
                {"work max", 8, nullptr, "work_ms_max", "%.3f"},
                {"busiest", 7, nullptr, "busiest_rank", "%.0f"},
                {"pressure", 8, nullptr, "pressure_ms", "%.3f"},
                {"speedup", 7, nullptr, "speedup", "%.2f"},
                {"efficiency", 10, nullptr, "efficiency", "%.2f"}});
    return;
  }
  os << "ceiling " << number_text(r.ceiling_gbps, "%.1f") << " GB/s: " << r.ceiling_what << "\n";
  for (const std::string& n : r.notes) os << "note: " << n << "\n";
  os << "\n";
  if (r.suite == "micro") {
    print_rows(os, r,
               {{"benchmark", 0, show_text, "benchmark", nullptr},
                {"size", 0, show_text, "size_text", nullptr},
                {"variant", 0, show_text, "variant", nullptr},
                {"ms/op", 8, nullptr, "ms_per_op", "%.4f"},
                {"G/s", 7, nullptr, "gitems_per_s", "%.2f"},
                {"unit", 0, show_text, "items", nullptr},
                {"B/item", 6, nullptr, "bytes_per_item", "%.0f"},
                {"GB/s", 7, nullptr, "gbps", "%.1f"},
                {"%copy", 5, nullptr, "copy_pct", "%.1f"}});
    return;
  }
  os << "ms per step by phase (over all repeats); total: the median of " << number_text(r.rows.empty() ? 0 : r.rows[0].number("repeats"), "%.0f")
     << " repeats, min and max beside it; sim s/s: simulated seconds per wall second; GB/s from the bytes of "
        "sim/app/bench/traffic.hpp over the total; fastest first, speed relative to the slowest of its group\n";
  // Rows that met the tolerance (or ran a fixed budget) by rank; those that
  // missed it apart, below; failed or skipped rows last.
  BenchReport met = r, missed = r, other = r;
  met.rows.clear();
  missed.rows.clear();
  other.rows.clear();
  for (const BenchRow& row : r.rows)
    (!std::isfinite(row.number("rank")) ? other : missed_tolerance(row) ? missed : met).rows.push_back(row);
  for (BenchReport* g : {&met, &missed})
    std::stable_sort(g->rows.begin(), g->rows.end(),
                     [](const BenchRow& a, const BenchRow& b) { return a.number("rank") < b.number("rank"); });
  print_matrix_rows(os, met);
  if (!missed.rows.empty()) {
    os << "missed the pressure tolerance (not the same answer; ranked apart):\n";
    print_matrix_rows(os, missed);
  }
  if (!other.rows.empty()) print_matrix_rows(os, other);
}

namespace {
void print_matrix_rows(std::ostream& os, const BenchReport& r) {
  if (r.rows.empty()) return;
  print_rows(os, r,
             {{"variant", 0, show_text, "variant", nullptr},
              {"it/step", 7, nullptr, "iterations_per_step", "%.1f"},
              {"particles", 9, nullptr, "particles_ms", "%.3f"},
              {"momentum", 8, nullptr, "momentum_ms", "%.3f"},
              {"pressure", 8, nullptr, "pressure_ms", "%.3f"},
              {"project", 7, nullptr, "project_ms", "%.3f"},
              {"other", 6, nullptr, "other_ms", "%.3f"},
              {"total", 7, nullptr, "total_ms", "%.3f"},
              {"min", 7, nullptr, "total_ms_min", "%.3f"},
              {"max", 7, nullptr, "total_ms_max", "%.3f"},
              {"steps/s", 7, nullptr, "steps_per_s", "%.1f"},
              {"sim s/s", 7, nullptr, "sim_s_per_s", "%.4g"},
              {"GB/s", 7, nullptr, "gbps", "%.1f"},
              {"%copy", 5, nullptr, "copy_pct", "%.1f"},
              {"speed", 5, nullptr, "relative_speed", "%.2f"},
              {"tolerance", 0, show_text, "tolerance", nullptr}});
}
}  // namespace

BenchReport start_report(const std::string& suite, const Config& cfg, const BenchOptions& opts, bool cuda,
                         std::vector<std::string> columns) {
  BenchReport r;
  r.suite = suite;
  r.config = cfg.source;
  r.backend = cuda ? "cuda" : "cpu";
  r.steps = opts.steps;
  r.warmup = opts.warmup;
  r.columns = std::move(columns);
  return r;
}

}  // namespace sim
