// SPDX-License-Identifier: MIT
// The micro-benchmarks' shared pieces (sim/app/bench/bench_micro*.cpp):
// the cases built for them, the timing of one primitive into a row, and
// the row functions run_micro calls, by concern: the grid primitives and
// solvers (bench_micro_grid.cpp), the particle step (bench_micro_particles.cpp).
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "sim/app/bench/bench.hpp"
#include "sim/model/elapsed.hpp"
#include "sim/model/state.hpp"

namespace sim::micro {

constexpr double kTrialMs = 10;
constexpr int kTrials = 5;
constexpr int kParticleGrid = 512;  // u and v: 2 MB, resident in any L2 of interest
constexpr double kFlowSpeed = 0.1;  // Taylor-Green amplitude the particles move in [m/s]

// The cases (bench_micro.cpp, where each is described).
double micro_dt(const Config& c, double speed);
Config periodic_case(const Config& cfg, int n);
void randomize(SimState& s, uint64_t seed);
const SimState& random_state(std::unique_ptr<SimState>& s, const Config& base, uint64_t seed);

inline bool out_of_time(const BenchOptions& o) { return o.max_seconds > 0 && bench_clock_s() > o.max_seconds; }

struct Timing {
  double ms = 0;
  int64_t repeats = 0;
};

template <class Op>
Timing time_op(Backend& b, int64_t warmup, int64_t min_repeats, Op op) {
  using Clock = std::chrono::steady_clock;
  for (int64_t k = 0; k < warmup; ++k) op();
  b.synchronize();
  auto t0 = Clock::now();
  op();
  b.synchronize();
  const double once = std::max(ms_since(t0), 1e-4);
  Timing t;
  t.repeats = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(kTrialMs / once)), std::max<int64_t>(min_repeats, 1), 1000000);
  std::vector<double> trial;
  for (int k = 0; k < kTrials; ++k) {
    t0 = Clock::now();
    for (int64_t r = 0; r < t.repeats; ++r) op();
    b.synchronize();
    trial.push_back(ms_since(t0) / static_cast<double>(t.repeats));
  }
  std::sort(trial.begin(), trial.end());
  t.ms = trial[kTrials / 2];
  return t;
}

std::string count_text(int64_t n);

struct Context {
  const BenchOptions& opts;
  bool cuda;
  double ceiling_gbps;
  std::ostream& log;
  BenchReport& report;
};

// Times `op` into `row`, or records why not.
template <class Op>
void measure(Context& x, BenchRow row, Backend* b, double items, double bytes_per_item, Op op) {
  const std::string what = row.text("benchmark") + " " + row.text("size_text") + " " + row.text("variant");
  if (out_of_time(x.opts)) {
    row.set("error", "skipped: --max-seconds reached");
  } else if (b == nullptr) {
    row.set("error", "skipped: the backend could not be made");
  } else {
    x.log << what << std::flush;
    try {
      const Timing t = time_op(*b, x.opts.warmup, x.opts.steps, op);
      const double gbps = items * bytes_per_item / (t.ms * 1e6);
      row.set("repeats", static_cast<double>(t.repeats));
      row.set("ms_per_op", t.ms);
      row.set("gitems_per_s", items / (t.ms * 1e6));
      row.set("bytes_per_item", bytes_per_item);
      row.set("gbps", gbps);
      row.set("copy_pct", x.ceiling_gbps > 0 ? 100 * gbps / x.ceiling_gbps : std::nan(""));
      x.log << ": " << t.ms << " ms\n";
    } catch (const std::exception& e) {
      row.set("error", std::string("failed: ") + e.what());
      x.log << ": failed: " << e.what() << "\n";
    }
  }
  x.report.rows.push_back(std::move(row));
}

// A backend of case c holding state s, its constants at step dt; null and
// `error` when it cannot be made.
std::unique_ptr<Backend> fresh_backend(Context& x, const Config& c, const SimState& s, double dt,
                                       std::string& error);

// The rows of the grid primitives and the pressure solvers (bench_micro_grid.cpp).
void sweeps(Context& x, const Config& cfg, int n);
void jacobi_passes(Context& x, const Config& cfg, int n);
void momentum_stages(Context& x, const Config& cfg, int n);
void fft_solves(Context& x, const Config& cfg);
void multigrid_rows(Context& x, const Config& cfg, int n);

// The particle step's rows (bench_micro_particles.cpp).
// random: slots in no relation to positions; cell_sorted: reordered by cell
// once, before the upload; sorted_each_step: random at the start, and the
// backend sorts by cell before every step (sort_every = 1), so the row is a
// sorted step plus one whole sort: its cost over the cell_sorted row is
// what one sort costs.
enum class ParticleOrder { random, cell_sorted, sorted_each_step };
void particle_steps(Context& x, const Config& cfg, int grid_n, int64_t count, ParticleOrder order);

}  // namespace sim::micro
