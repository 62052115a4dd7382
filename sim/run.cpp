#include "sim/run.hpp"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <stdexcept>

#include "sim/report.hpp"
#include "sim/simulation.hpp"

namespace sim {

int run_simulation(const Config& cfg, const RunOptions& opts, std::ostream& out, std::ostream& err) {
  using Clock = std::chrono::steady_clock;
  SimState state = make_initial_state(cfg);
  std::string notice;
  std::unique_ptr<Backend> backend = make_backend(cfg, state.grid, &notice);
  if (!notice.empty() && !opts.quiet) out << notice << "\n";
  if (!opts.quiet) out << "backend: " << backend->name() << "\n";
  Simulation sim(cfg, std::move(backend), state);

  const bool progress = !opts.quiet && &out == &std::cout && isatty(STDOUT_FILENO);
  const int64_t first = sim.step_index();
  const int64_t last = cfg.steps;
  const auto t0 = Clock::now();
  auto last_print = t0;
  while (sim.step_index() < last && !sim.stop_requested()) {
    sim.step();
    if (progress) {
      const auto now = Clock::now();
      if (now - last_print > std::chrono::milliseconds(200) || sim.step_index() == last) {
        last_print = now;
        const double el = std::chrono::duration<double>(now - t0).count();
        const double done = static_cast<double>(sim.step_index() - first);
        const double ms = 1e3 * el / done;
        out << "\r" << progress_line(sim.step_index(), last, sim.time(), ms, ms * 1e-3 * (last - sim.step_index()))
            << "   " << std::flush;
      }
    }
  }
  if (progress) out << "\n";
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();

  RunSummary s;
  s.config = cfg.source;
  s.backend = sim.backend().name();
  s.strategies = sim.backend().strategies();
  s.pressure_solver = sim.pressure_solver_name();
  s.steps = sim.step_index() - first;
  s.sim_time = sim.time();
  s.wall_s = wall;
  s.phase_ms = sim.backend().timer().totals_ms();
  s.pressure_iterations_mean = s.steps > 0 ? double(sim.pressure_iterations_total()) / s.steps : 0.0;
  s.last_pressure = sim.last_pressure();
  s.tolerance = cfg.tolerance;
  s.diag = sim.diagnostics();
  s.h = std::min(cfg.dx(), cfg.dy());
  if (!opts.quiet) print_summary(out, s);
  (void)err;
  return 0;
}

}  // namespace sim
