// SPDX-License-Identifier: MIT
// `mpirun -np N sim bench CONFIG`: the config's case on 1, 2, 4, ... and N
// of the ranks (the others wait at a barrier), each count from the same
// initial state with the same OpenMP threads per rank and the same pressure
// solver (`auto` does not depend on the rank count), W untimed steps then S timed ones between two barriers. A row per
// rank count: the wall time per step (the slowest rank's), each rank's
// communication and the rest of its time (min and max over ranks), rank
// 0's phases, and the strong-scaling efficiency t(1) / (n t(n)).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <ostream>
#include <stdexcept>

#include "sim/app/backend_factory.hpp"
#include "sim/app/bench/bench.hpp"
#include "sim/app/run.hpp"
#include "sim/ranks/agree.hpp"
#include "sim/ranks/slab_rows.hpp"
#include "sim/model/simulation.hpp"

namespace sim {
namespace {

// 1, 2, 4, ... below n, then n.
std::vector<int> rank_counts(int n) {
  std::vector<int> out;
  for (int k = 1; k < n; k *= 2) out.push_back(k);
  out.push_back(n);
  return out;
}

// One rank count, on the ranks of `comm` (all of them take part); fills
// `row` on rank 0.
void measure_ranks(const Config& config, const SimState& state, const BenchOptions& opts, const Comm& comm,
                   BenchRow& row) {
  Config c = config;
  c.end_time = 0;  // the bench times --steps steps: run.end_time would stop them
  const int n = comm.size();
  std::shared_ptr<SlabRows> slabs;
  if (n > 1) slabs = std::make_shared<SlabRows>(comm, domain_of(c));
  Simulation sim(c, n > 1 ? make_split_backend(c, state.grid, slabs) : make_backend(c, state.grid, nullptr), state);
  for (int64_t s = 0; s < opts.warmup; ++s) sim.step();
  Backend& b = sim.backend();
  // One GPU alone steps asynchronously (sim.step() only queues the step):
  // the clock runs between two points where the device has done its work.
  sim.drain();
  b.synchronize();
  comm.barrier();
  const double time0 = sim.time();
  b.timer().reset();
  const double comm0 = b.ranks().comm_ms();
  const int64_t calls0 = b.ranks().comm_calls();
  double sweeps = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t s = 0; s < opts.steps; ++s) sweeps += sim.step().pressure.iterations;
  sim.drain();
  b.synchronize();
  comm.barrier();
  const double steps = static_cast<double>(std::max<int64_t>(opts.steps, 1));
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double comm_ms = b.ranks().comm_ms() - comm0;
  const double calls = comm.allreduce_max(static_cast<double>(b.ranks().comm_calls() - calls0)) / steps;
  // The run's time is the slowest rank's; each rank's own split of it.
  const double total_ms = comm.allreduce_max(wall_ms) / steps;
  const std::vector<double> comms = comm.allgather(comm_ms / steps);
  const std::vector<double> rest = comm.allgather((wall_ms - comm_ms) / steps);
  const auto phase_ms = b.timer().totals_ms();
  // Where the uneven work lies: each rank's pressure phase.
  const std::vector<double> pressure = comm.allgather(phase_ms[static_cast<int>(Phase::pressure)] / steps);
  if (comm.rank() != 0) return;
  int rows_min = c.ny, rows_max = 0;
  for (int r = 0; r < n; ++r) {
    const int rows = slabs ? slabs->end_row(r) - slabs->first_row(r) : c.ny;
    rows_min = std::min(rows_min, rows);
    rows_max = std::max(rows_max, rows);
  }
  row.set("ranks", static_cast<double>(n));
  row.set("threads_per_rank", static_cast<double>(omp_get_max_threads()));
  row.set("rows_min", static_cast<double>(rows_min));
  row.set("rows_max", static_cast<double>(rows_max));
  row.set("steps", static_cast<double>(opts.steps));
  row.set("iterations_per_step", sweeps / steps);
  row.set("total_ms", total_ms);
  row.set("steps_per_s", 1e3 / total_ms);
  row.set("sim_s_per_s", (sim.time() - time0) / (1e-3 * total_ms * steps));
  const auto [cmin, cmax] = std::minmax_element(comms.begin(), comms.end());
  const auto [rmin, rmax] = std::minmax_element(rest.begin(), rest.end());
  row.set("comm_ms_min", *cmin);
  row.set("comm_ms_max", *cmax);
  row.set("comm_pct", 100.0 * *cmax / total_ms);
  row.set("comm_calls", calls);
  row.set("work_ms_min", *rmin);
  row.set("work_ms_max", *rmax);
  row.set("busiest_rank", static_cast<double>(rmax - rest.begin()));
  const auto [pmin, pmax] = std::minmax_element(pressure.begin(), pressure.end());
  row.set("pressure_ms_min", *pmin);
  row.set("pressure_ms_max", *pmax);
  for (const auto& [phase, key] : {std::pair{Phase::particles, "particles_ms"}, std::pair{Phase::momentum, "momentum_ms"},
                                   std::pair{Phase::pressure, "pressure_ms"}, std::pair{Phase::project, "project_ms"}})
    row.set(key, phase_ms[static_cast<int>(phase)] / steps);
}

}  // namespace

const std::vector<std::string>& ranks_columns() {
  static const std::vector<std::string> c = {
      "ranks",       "threads_per_rank", "rows_min",    "rows_max",    "steps",       "iterations_per_step",
      "total_ms",    "steps_per_s",      "sim_s_per_s", "speedup",     "efficiency",  "comm_ms_min", "comm_ms_max",
      "comm_pct",    "comm_calls",       "work_ms_min",      "work_ms_max", "busiest_rank", "particles_ms", "momentum_ms",
      "pressure_ms", "pressure_ms_min",  "pressure_ms_max", "project_ms", "error"};
  return c;
}

BenchReport run_ranks(const Config& cfg, const BenchOptions& opts, const Comm& world, std::ostream& log) {
  const int n = world.size();
  BenchReport r = start_report("ranks", cfg, opts, false, ranks_columns());
  r.device = (split_runs_on_cuda(cfg) ? "cuda, " : "cpu, ") + std::to_string(n) + " MPI ranks";
  r.ceiling_what = "none: the ranks suite compares rank counts with one rank";
  r.ceiling_gbps = std::nan("");
  agree(world, [&] {
    check_split_run(cfg, n);
    if (resolves_to_cuda(cfg) && !split_runs_on_cuda(cfg) && world.rank() == 0)
      r.notes.push_back("ranks run the CPU backend (this sim was built without NCCL), though a CUDA device is present");
  });
  // The threads a run over N ranks takes, for every count: the scaling is
  // that of ranks alone.
  const SimState state = make_initial_state(cfg);  // once: every count starts from it
  fit_cpu_threads(cfg, state, n);
  const std::vector<int> counts = rank_counts(n);
  if (world.rank() == 0)
    log << "ranks: " << counts.size() << " rank counts x (" << opts.warmup << " warm-up + " << opts.steps
        << " timed steps) on " << cfg.nx << " x " << cfg.ny << " cells, " << cfg.particle_capacity()
        << " particle slots, " << omp_get_max_threads() << " OpenMP threads per rank, pressure solver "
        << std::string(to_string(cfg.solver)) << "\n";
  for (const int k : counts) {
    const bool in = world.rank() < k;
    const Comm sub = world.split(in ? 0 : 1, world.rank());
    BenchRow row;
    row.set("ranks", static_cast<double>(k));
    if (opts.max_seconds > 0 && world.allreduce_max(bench_clock_s()) > opts.max_seconds) {
      row.set("error", "skipped: --max-seconds reached");
    } else if (in) {
      if (world.rank() == 0) log << "[" << k << " rank" << (k > 1 ? "s" : "") << "]" << std::flush;
      try {
        agree(sub, [&] { measure_ranks(cfg, state, opts, sub, row); });
        if (world.rank() == 0) log << ": " << row.number("total_ms") << " ms/step\n";
      } catch (const std::exception& e) {
        row.set("error", std::string("failed: ") + e.what());
        if (world.rank() == 0) log << ": failed: " << e.what() << "\n";
      }
    }
    world.barrier();
    if (world.rank() == 0) r.rows.push_back(std::move(row));
  }
  if (world.rank() != 0) return r;
  const double t1 = r.rows.front().number("total_ms");
  for (BenchRow& row : r.rows) {
    const double t = row.number("total_ms"), k = row.number("ranks");
    if (std::isfinite(t) && std::isfinite(t1)) {
      row.set("speedup", t1 / t);
      row.set("efficiency", t1 / (k * t));
    }
  }
  return r;
}

}  // namespace sim
