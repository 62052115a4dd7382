#include "sim/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/stability.hpp"

namespace sim {

Simulation::Simulation(const Config& cfg, std::unique_ptr<Backend> backend, const SimState& state)
    : cfg_(cfg), grid_(state.grid), k_(make_constants(cfg, state.grid)), backend_(std::move(backend)) {
  settings_.tolerance = cfg.tolerance;
  settings_.max_iterations = cfg.max_iterations;
  settings_.check_every = cfg.check_every;
  step_ = state.step;
  time_ = state.time;
  dt_ = state.dt;
  next_id_ = state.next_id;
  const double h = std::min(cfg.dx(), cfg.dy());
  for (const BoundarySide* s : {&cfg.left, &cfg.right, &cfg.bottom, &cfg.top})
    boundary_rate_ = std::max(boundary_rate_, std::abs(s->speed) / h);
  backend_->set_constants(k_);
  backend_->upload(state);
  if (cfg.solver == PressureSolverKind::jacobi || cfg.solver == PressureSolverKind::sor) {
    solver_ = make_pressure_solver(cfg.solver, nullptr, k_.has_solids != 0);
  } else {
    const PoissonHierarchy h = build_poisson_hierarchy(grid_, state.open, k_);
    solver_ = make_pressure_solver(cfg.solver, &h, k_.has_solids != 0);
    solver_->prepare(*backend_, h);
  }
}

double Simulation::next_dt() {
  if (cfg_.dt > 0) return cfg_.dt;
  const double field_rate = backend_->max_velocity_rate();
  if (!std::isfinite(field_rate))
    throw std::runtime_error("the velocity is no longer finite at step " + std::to_string(step_) +
                             " (t = " + std::to_string(time_) + " s): the run blew up; lower time.cfl or time.dt_max");
  const double rate = std::max(field_rate, boundary_rate_);
  const double adv = rate > 0 ? 1.0 / rate : std::numeric_limits<double>::infinity();
  const double visc = viscous_dt_limit(cfg_.viscosity, cfg_.dx(), cfg_.dy());
  return std::min(cfg_.cfl * std::min(adv, visc), cfg_.dt_max);
}

StepInfo Simulation::step() {
  StepInfo info;
  dt_ = next_dt();
  info.dt = dt_;
  k_.dt = static_cast<real>(dt_);
  backend_->set_constants(k_);
  PhaseTimer& t = backend_->timer();

  t.begin(Phase::particles);
  const int64_t inject = injection_count(cfg_, time_, time_ + dt_);
  backend_->step_particles(next_id_, inject);
  next_id_ += static_cast<uint64_t>(inject);
  t.end(Phase::particles);

  t.begin(Phase::advect);
  backend_->advect();
  t.end(Phase::advect);

  t.begin(Phase::diffuse);
  backend_->diffuse();
  t.end(Phase::diffuse);

  t.begin(Phase::pressure);
  info.pressure = solver_->solve(*backend_, settings_);
  t.end(Phase::pressure);

  t.begin(Phase::project);
  backend_->project();
  t.end(Phase::project);

  last_pressure_ = info.pressure;
  pressure_iterations_total_ += info.pressure.iterations;
  time_ += dt_;
  ++step_;
  if (info.pressure.converged) {
    pressure_failures_in_row_ = 0;
  } else {
    ++pressure_unconverged_;
    ++pressure_failures_in_row_;
    const double r = info.pressure.residual;  // a NaN residual stays the worst
    if (std::isnan(r) || (!std::isnan(pressure_worst_residual_) && r > pressure_worst_residual_))
      pressure_worst_residual_ = r;
    if (pressure_failures_in_row_ >= cfg_.max_failures) {
      char line[320];
      std::snprintf(line, sizeof line,
                    "the pressure solve did not converge %d times in a row (pressure.max_failures): step %lld, "
                    "t = %.6g s, solver %s, relative residual %.3g after %d iterations, tolerance %.3g",
                    pressure_failures_in_row_, static_cast<long long>(step_), time_, solver_->name().c_str(),
                    info.pressure.residual, info.pressure.iterations, cfg_.tolerance);
      throw PressureFailure(line);
    }
  }
  return info;
}

SimState Simulation::download() {
  SimState s;
  s.grid = grid_;
  backend_->download(s);
  s.step = step_;
  s.time = time_;
  s.dt = dt_;
  s.next_id = next_id_;
  return s;
}

std::unique_ptr<PendingState> Simulation::begin_download() {
  SimState header;
  header.grid = grid_;
  header.step = step_;
  header.time = time_;
  header.dt = dt_;
  header.next_id = next_id_;
  return backend_->begin_download(std::move(header));
}

}  // namespace sim
