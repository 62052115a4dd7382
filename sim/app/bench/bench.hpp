// SPDX-License-Identifier: MIT
// `sim bench CONFIG`: times the run-time strategies against each other on
// one initial state and reports ms/step per phase, effective bandwidth from
// the byte model of sim/app/bench/traffic.hpp, and the fraction of a copy bandwidth
// measured in the same run. `--micro` times single primitives instead
// (pressure sweeps on large grids, the particle step of many particles).
// The table, the CSV and the JSON hold the same numbers (docs/BENCH.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "sim/model/backend.hpp"
#include "sim/model/config.hpp"
#include "sim/ranks/comm.hpp"

namespace sim {

struct BenchOptions {
  // The matrix axes; an empty list means every value.
  std::vector<Layout> layouts;
  std::vector<Stencil> stencils;
  std::vector<ConstantsIn> constants;
  std::vector<Sampling> samplings;
  std::vector<Deposit> deposits;
  std::vector<PressureSolverKind> solvers;
  std::vector<AdvectionScheme> advections;  // empty: the config's scheme (micro: central and quick)
  int64_t steps = 50;   // timed steps per variant (micro: at least this many repeats)
  int64_t warmup = 10;  // untimed steps (micro: repeats) before
  int64_t repeats = 3;  // matrix: timed blocks of `steps` steps each; a row reports their min, median and max
  std::string csv, json;  // files to write; empty = none
  bool micro = false;
  std::vector<int> micro_sizes;          // grid n of the n x n sweeps; empty = 2048, 8192, 16384
  std::vector<int64_t> micro_particles;  // particle counts; empty = 16M, 64M
  double max_seconds = 0;  // > 0: start no variant after this many seconds (the rest are reported as skipped)
  int64_t copy_mib = 0;    // size of the copy-bandwidth buffers; 0 = 1024 MiB on the GPU, 512 MiB on the CPU
  bool quiet = false;      // only the table
};

// The values of an axis: those given, or every value.
template <class E>
std::vector<E> all_or(const std::vector<E>& given) {
  return given.empty() ? enum_values<E>() : given;
}

// One axis of a benchmark: a change to the config per value.
using BenchAxis = std::vector<std::function<void(Config&)>>;

template <class E>
BenchAxis bench_axis(E Config::*member, const std::vector<E>& values) {
  BenchAxis axis;
  for (E v : values) axis.push_back([member, v](Config& c) { c.*member = v; });
  return axis;
}

// `base` with every combination of the axes' values, the first axis outermost.
inline std::vector<Config> combinations(const Config& base, const std::vector<BenchAxis>& axes) {
  std::vector<Config> out{base};
  for (const BenchAxis& axis : axes) {
    std::vector<Config> next;
    for (const Config& c : out)
      for (const auto& apply : axis) {
        next.push_back(c);
        apply(next.back());
      }
    out = std::move(next);
  }
  return out;
}

// Returns the exit status: 0, or 1 when a variant failed (the others are
// still reported and written); errors are one line on `err`.
int run_bench(const Config& cfg, const BenchOptions& opts, std::ostream& out, std::ostream& err);
// Under mpirun (more than one rank in `world`): the ranks suite, the case on
// 1, 2, 4, ... and all of the ranks, with the scaling efficiency
// (sim/app/bench/bench_ranks.cpp). Rank 0 prints and writes the files.
int run_bench_ranks(const Config& cfg, const BenchOptions& opts, const Comm& world, std::ostream& out,
                    std::ostream& err);

// ---- the pieces, also used by the tests --------------------------------

// One value of a result row: text or a number (NaN = empty / JSON null).
struct BenchValue {
  bool is_text = false;
  std::string text;
  double number = 0;
};

// One measured variant or micro case: named values.
struct BenchRow {
  std::map<std::string, BenchValue> values;
  void set(const std::string& key, double v) { values[key] = BenchValue{false, {}, v}; }
  void set(const std::string& key, const std::string& v) { values[key] = BenchValue{true, v, 0}; }
  double number(const std::string& key) const;  // NaN when absent or text
  std::string text(const std::string& key) const;  // "" when absent
};

// What one `sim bench` call measured.
struct BenchReport {
  std::string suite;  // "matrix" or "micro"
  std::string config, backend, device;
  std::string ceiling_what;  // how the copy bandwidth was measured
  double ceiling_gbps = 0;   // bytes read + written per second / 1e9
  int64_t steps = 0, warmup = 0;
  std::vector<std::string> notes;    // collapsed axes, skipped variants
  std::vector<std::string> columns;  // CSV header and JSON key order
  std::vector<BenchRow> rows;
};

// An empty report of one suite: what ran, where, how long.
BenchReport start_report(const std::string& suite, const Config& cfg, const BenchOptions& opts, bool cuda,
                         std::vector<std::string> columns);

// The documented CSV headers (docs/BENCH.md).
const std::vector<std::string>& matrix_columns();
const std::vector<std::string>& micro_columns();
const std::vector<std::string>& ranks_columns();

void write_csv(std::ostream& os, const BenchReport& r);
void write_json(std::ostream& os, const BenchReport& r);
void print_bench_table(std::ostream& os, const BenchReport& r);

// Bytes read + written per second of a multithreaded host memcpy of
// `bytes`, median of `repeats` (the CPU backend's ceiling).
double host_copy_bandwidth(size_t bytes, int repeats);

// The variants of the matrix for this backend: the cartesian product of the
// lists, with axes that cannot matter collapsed to the config's value (on
// the CPU everything but layout and pressure solver; without particles the
// particle axes; without two-way coupling the deposit). One note per
// collapsed axis that was given more than one value.
std::vector<Config> bench_variants(const Config& cfg, const BenchOptions& opts, bool cuda,
                                   std::vector<std::string>* notes);
// Whether a row's pressure solves stopped short of the tolerance in some step.
bool missed_tolerance(const BenchRow& row);
// `rank` (1 = fastest) and `relative_speed` (the slowest's total_ms over the
// row's) among the rows that met the tolerance (or ran a fixed budget),
// and apart from them among those that missed it.
void rank_rows(std::vector<BenchRow>& rows);
// "soa/ldg/constant/software/sorted/sor" on the GPU, "soa/sor" on the CPU.
std::string variant_name(const Config& c, bool cuda);

// The two suites (sim/app/bench/bench_matrix.cpp, bench_micro.cpp); progress and
// notes go to `log`; `cuda` says which backend the config resolves to.
BenchReport run_matrix(const Config& cfg, const BenchOptions& opts, bool cuda, double ceiling_gbps,
                       std::ostream& log);
BenchReport run_micro(const Config& cfg, const BenchOptions& opts, bool cuda, double ceiling_gbps,
                      std::ostream& log);
// The ranks suite; the report is complete on rank 0 only.
BenchReport run_ranks(const Config& cfg, const BenchOptions& opts, const Comm& world, std::ostream& log);

// Seconds on the steady clock since the first call (the bench's own clock).
double bench_clock_s();

}  // namespace sim
