// SPDX-License-Identifier: MIT
// The strategy matrix: every variant steps the same initial state on a
// fresh backend, W untimed steps then N timed ones; the phases come from
// the backend's PhaseTimer (CUDA events or a steady clock), the total from
// a steady clock between two synchronize() calls.
#include <algorithm>
#include <limits>
#include <chrono>
#include <cmath>
#include <ostream>

#include "sim/app/bench/bench.hpp"
#include "sim/app/backend_factory.hpp"
#include "sim/model/pressure.hpp"
#include "sim/model/elapsed.hpp"
#include "sim/model/simulation.hpp"
#include "sim/app/bench/traffic.hpp"

namespace sim {
namespace {

// An axis that cannot change the result on this backend or case: one value,
// the config's own.
template <class E>
std::vector<E> axis(const std::vector<E>& given, bool varies, E config_value, const char* name, const char* why,
                    std::vector<std::string>* notes) {
  const std::vector<E> values = all_or(given);
  if (varies) return values;
  if (notes && values.size() > 1)
    notes->push_back(std::string(name) + " fixed at " + std::string(to_string(config_value)) + " (" + why + ")");
  return {config_value};
}

struct PhaseOf {
  Phase phase;
  const char* key;
  traffic::Cost traffic::StepCost::*cost;
};
const PhaseOf kPhases[] = {{Phase::particles, "particles", &traffic::StepCost::particles},
                           {Phase::momentum, "momentum", &traffic::StepCost::momentum},
                           {Phase::pressure, "pressure", &traffic::StepCost::pressure},
                           {Phase::project, "project", &traffic::StepCost::project}};

// Residual evaluations of one solve (sim/model/pressure.cpp): none for a zero
// right-hand side, one after a fixed budget, else one before the first
// sweep and one per batch of check_every sweeps.
double residual_checks(const PressureStats& p, const Config& v) {
  if (p.iterations == 0 && p.residual == 0.0) return 0;
  if (v.fixed_iterations > 0) return 1;
  const int every = std::max(v.check_every, 1);
  return 1.0 + (p.iterations + every - 1) / every;
}

void describe(BenchRow& row, const Config& v, bool cuda) {
  row.set("variant", variant_name(v, cuda));
  for (const StrategyOption& o : strategy_options())
    if (o.bench_axis) row.set(std::string(o.name), o.value(v));
}

// Steps one variant and fills its row; throws what the backend throws.
void measure(const Config& variant, const SimState& state, const BenchOptions& opts, bool cuda, double ceiling_gbps,
             BenchRow& row, std::string& device) {
  Config v = variant;
  v.end_time = 0;  // the bench times --steps steps: run.end_time would stop them
  std::unique_ptr<Backend> backend = make_backend(v, state.grid, nullptr);
  if (device.empty()) device = backend->name();
  row.set("backend", backend->name());
  Simulation sim(v, std::move(backend), state);
  for (int64_t s = 0; s < opts.warmup; ++s) sim.step();
  const Diagnostics d = sim.diagnostics();  // alive slots, for the byte count
  Backend& b = sim.backend();
  b.synchronize();
  const double time0 = sim.time();
  b.timer().reset();
  double sweeps = 0, residuals = 0;
  int64_t short_steps = 0;  // steps whose pressure solve stopped short of the tolerance
  const int64_t viscous0 = sim.viscous_iterations_total();
  const int64_t repeats = std::max<int64_t>(opts.repeats, 1);
  std::vector<double> block_ms;  // ms per step of each timed block
  for (int64_t r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t s = 0; s < opts.steps; ++s) {
      const StepInfo info = sim.step();
      sweeps += info.pressure.iterations;
      residuals += residual_checks(info.pressure, v);
      if (!info.pressure.converged) ++short_steps;
    }
    b.synchronize();
    block_ms.push_back(ms_since(t0) / static_cast<double>(std::max<int64_t>(opts.steps, 1)));
  }
  const double steps = static_cast<double>(std::max<int64_t>(opts.steps * repeats, 1));
  std::sort(block_ms.begin(), block_ms.end());
  const size_t mid = block_ms.size() / 2;
  const double total_ms =
      block_ms.size() % 2 == 1 ? block_ms[mid] : 0.5 * (block_ms[mid - 1] + block_ms[mid]);
  row.set("repeats", static_cast<double>(repeats));
  row.set("total_ms_min", block_ms.front());
  row.set("total_ms_max", block_ms.back());
  // A fixed budget of sweeps stops short by design; otherwise a row that
  // missed the tolerance is not the same answer, and is ranked apart.
  row.set("tolerance", v.fixed_iterations > 0 ? std::string("fixed budget")
                       : short_steps == 0    ? std::string("met")
                                             : "missed in " + std::to_string(short_steps) + " of " +
                                                   std::to_string(static_cast<int64_t>(steps)) + " steps");
  const auto phase_ms = b.timer().totals_ms();
  const double viscous_iterations = static_cast<double>(sim.viscous_iterations_total() - viscous0);

  // Bytes at the per-step mean counts. The CPU deposit is a serial loop,
  // counted at the minimum any deposit moves (the atomic figure).
  Config model = v;
  if (!cuda) model.deposit = Deposit::atomic;
  traffic::StepCounts n;
  n.alive = static_cast<double>(d.alive);
  n.dead = static_cast<double>(std::max<int64_t>(v.particle_capacity() - d.alive, 0));
  n.sweeps = sweeps / steps;
  n.residuals = residuals / steps;
  n.viscous_iterations = viscous_iterations / steps;
  const traffic::StepCost cost = traffic::step_cost(model, state.grid, n);

  row.set("steps", static_cast<double>(opts.steps));  // per block
  row.set("iterations_per_step", n.sweeps);
  double phases_ms = 0;
  for (const PhaseOf& p : kPhases) {
    const double ms = phase_ms[static_cast<int>(p.phase)] / steps;
    phases_ms += ms;
    const traffic::Cost c = cost.*(p.cost);
    row.set(std::string(p.key) + "_ms", ms);
    row.set(std::string(p.key) + "_gbps", ms > 0 ? c.bytes / (ms * 1e6) : std::nan(""));
  }
  // dt from the velocity (a reduction read back), host work and launch gaps between phases
  row.set("other_ms", std::max(total_ms - phases_ms, 0.0));
  row.set("total_ms", total_ms);
  row.set("steps_per_s", 1e3 / total_ms);
  row.set("sim_s_per_s", (sim.time() - time0) / (1e-3 * total_ms * steps));
  const traffic::Cost all = cost.total();
  row.set("bytes_per_step", all.bytes);
  row.set("flops_per_step", all.flops);
  const double gbps = all.bytes / (total_ms * 1e6);
  row.set("gbps", gbps);
  row.set("copy_pct", ceiling_gbps > 0 ? 100.0 * gbps / ceiling_gbps : std::nan(""));
}

}  // namespace

bool missed_tolerance(const BenchRow& row) { return row.text("tolerance").rfind("missed", 0) == 0; }

void rank_rows(std::vector<BenchRow>& rows) {
  for (bool missed : {false, true}) {
    std::vector<BenchRow*> group;
    for (BenchRow& row : rows)
      if (std::isfinite(row.number("total_ms")) && missed_tolerance(row) == missed) group.push_back(&row);
    std::stable_sort(group.begin(), group.end(),
                     [](const BenchRow* a, const BenchRow* b) { return a->number("total_ms") < b->number("total_ms"); });
    if (group.empty()) continue;
    const double slowest = group.back()->number("total_ms");
    for (size_t k = 0; k < group.size(); ++k) {
      group[k]->set("rank", static_cast<double>(k + 1));
      group[k]->set("relative_speed", slowest / group[k]->number("total_ms"));
    }
  }
}

std::string variant_name(const Config& c, bool cuda) {
  std::string s;
  for (const StrategyOption& o : strategy_options())
    if (o.bench_axis && (cuda || o.scope != StrategyScope::cuda)) s += (s.empty() ? "" : "/") + o.value(c);
  return s;
}

std::vector<Config> bench_variants(const Config& cfg, const BenchOptions& o, bool cuda, std::vector<std::string>* notes) {
  const bool particles = cfg.particle_capacity() > 0;
  const char* cpu = "the CPU backend has one implementation";
  const char* none = "the case has no particles";
  const auto layouts = axis(o.layouts, particles, cfg.layout, "layout", none, notes);
  const auto stencils = axis(o.stencils, cuda, cfg.stencil, "stencil", cpu, notes);
  const auto constants = axis(o.constants, cuda, cfg.constants, "constants", cpu, notes);
  const auto samplings = axis(o.samplings, cuda && particles, cfg.sampling, "sampling", cuda ? none : cpu, notes);
  const auto deposits = axis(o.deposits, cuda && particles && cfg.two_way, cfg.deposit, "deposit",
                             !cuda ? cpu : (particles ? "particles.two_way = false" : none), notes);
  const auto solvers = o.solvers.empty() ? applicable_solvers(cfg) : o.solvers;
  // The scheme changes the flow, not only its cost: the config's unless asked.
  const auto advections = o.advections.empty() ? std::vector<AdvectionScheme>{cfg.advection} : o.advections;
  std::vector<Config> out =
      combinations(cfg, {bench_axis(&Config::layout, layouts), bench_axis(&Config::stencil, stencils),
                         bench_axis(&Config::constants, constants), bench_axis(&Config::sampling, samplings),
                         bench_axis(&Config::deposit, deposits), bench_axis(&Config::solver, solvers),
                         bench_axis(&Config::advection, advections)});
  // stencil=temporal runs every kernel but the Jacobi solve as vector: with
  // vector in the matrix, its rows of the other solvers would repeat vector's.
  if (std::find(stencils.begin(), stencils.end(), Stencil::vector) != stencils.end())
    out.erase(std::remove_if(out.begin(), out.end(),
                             [](const Config& c) {
                               return c.stencil == Stencil::temporal && c.solver != PressureSolverKind::jacobi;
                             }),
              out.end());
  // Every solver is timed at the same tolerance; one that cannot reach it
  // (float32 SOR or Jacobi) runs its max_iterations and is timed, not stopped.
  for (Config& c : out) c.max_failures = std::numeric_limits<int>::max();
  return out;
}

BenchReport run_matrix(const Config& cfg, const BenchOptions& opts, bool cuda, double ceiling_gbps, std::ostream& log) {
  BenchReport r = start_report("matrix", cfg, opts, cuda, matrix_columns());
  const std::vector<Config> variants = bench_variants(cfg, opts, cuda, &r.notes);
  log << "matrix: " << variants.size() << " variants x (" << opts.warmup << " warm-up + " << opts.steps
      << " timed steps) on " << cfg.nx << " x " << cfg.ny << " cells, " << cfg.particle_capacity() << " particle slots\n";
  const SimState state = make_initial_state(cfg);  // once: every variant starts from it
  for (size_t k = 0; k < variants.size(); ++k) {
    BenchRow row;
    describe(row, variants[k], cuda);
    row.set("backend", r.backend);
    if (opts.max_seconds > 0 && bench_clock_s() > opts.max_seconds) {
      row.set("error", "skipped: --max-seconds reached");
    } else {
      log << "[" << k + 1 << "/" << variants.size() << "] " << variant_name(variants[k], cuda) << std::flush;
      try {
        measure(variants[k], state, opts, cuda, ceiling_gbps, row, r.device);
        log << ": " << row.number("total_ms") << " ms/step\n";
      } catch (const std::exception& e) {
        row.set("error", std::string("failed: ") + e.what());
        log << ": failed: " << e.what() << "\n";
      }
    }
    r.rows.push_back(std::move(row));
  }
  rank_rows(r.rows);
  const size_t skipped = std::count_if(r.rows.begin(), r.rows.end(),
                                       [](const BenchRow& x) { return x.text("error").rfind("skipped", 0) == 0; });
  if (skipped > 0) r.notes.push_back(std::to_string(skipped) + " variants skipped: --max-seconds reached");
  if (r.device.empty()) r.device = r.backend;
  return r;
}

}  // namespace sim
