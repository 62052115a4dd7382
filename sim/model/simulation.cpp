// SPDX-License-Identifier: MIT
#include "sim/model/simulation.hpp"
#include "sim/model/viscous.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/model/boundary_flux.hpp"
#include "sim/model/stability.hpp"
#include "sim/model/time_scheme.hpp"

namespace sim {
namespace {

std::string number(double x) {
  if (std::isnan(x)) return "nan";  // its sign bit means nothing
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", x);
  return b;
}

// The first non-finite value of `s`, as "u = nan at face (3, 4)", and the
// number of them in `count`. Scans what a snapshot writes: u and v on the
// faces of the grid, the pressure on its cells, alive particles; particles
// first when `particles_first` (a particle that went bad in a step from a
// finite velocity field is where the NaN started; it deposits nothing, so
// the fluid stays finite in that step).
std::string first_non_finite(const SimState& s, bool particles_first, int64_t& count) {
  const Grid& g = s.grid;
  std::string first_fluid, first_particle;
  count = 0;
  auto face = [&](const std::vector<real>& f, const char* name, const char* where, int i, int j) {
    const real x = f[g.idx(i, j)];
    if (std::isfinite(x)) return;
    ++count;
    if (first_fluid.empty())
      first_fluid = std::string(name) + " = " + number(x) + " at " + where + " (" + std::to_string(i) + ", " +
                    std::to_string(j) + ")";
  };
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i <= g.nx; ++i) face(s.u, "u", "face", i, j);
  for (int j = 0; j <= g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) face(s.v, "v", "face", i, j);
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) face(s.phi, "pressure", "cell", i, j);
  const HostParticles& p = s.particles;
  for (size_t r = 0; r < p.size(); ++r) {
    if (!p.alive[r]) continue;
    const std::pair<const char*, real> values[] = {{"x", p.x[r]}, {"y", p.y[r]}, {"vx", p.vx[r]}, {"vy", p.vy[r]}, {"d", p.d[r]}};
    for (const auto& [name, x] : values) {
      if (std::isfinite(x)) continue;
      ++count;
      if (first_particle.empty())
        first_particle = "particle id " + std::to_string(p.id[r]) + ": " + name + " = " + number(x);
    }
  }
  if (particles_first && !first_particle.empty()) return first_particle;
  return !first_fluid.empty() ? first_fluid : first_particle;
}

}  // namespace

Simulation::Simulation(const Config& cfg, std::unique_ptr<Backend> backend, const SimState& state)
    : cfg_(cfg), grid_(state.grid), k_(make_constants(cfg, state.grid)), backend_(std::move(backend)) {
  settings_.tolerance = cfg.tolerance;
  settings_.max_iterations = cfg.max_iterations;
  settings_.check_every = cfg.check_every;
  settings_.fixed_iterations = cfg.fixed_iterations;
  step_ = state.step;
  time_ = state.time;
  dt_ = state.dt;
  next_id_ = state.next_id;
  const double h = std::min(cfg.dx(), cfg.dy());
  for (const BoundarySide* s : {&cfg.left, &cfg.right, &cfg.bottom, &cfg.top})
    boundary_rate_ = std::max(boundary_rate_, s->peak_speed() / h);
  first_step_ = step_;
  rule_.fixed_dt = cfg.dt;
  rule_.cfl = cfg.cfl;
  rule_.dt_max = cfg.dt_max;
  rule_.boundary_rate = boundary_rate_;
  rule_.viscous_limit = cfg.implicit_viscosity() ? std::numeric_limits<double>::infinity()
                                                 : viscous_dt_limit(cfg.viscosity, cfg.dx(), cfg.dy());
  scheme_ = time_scheme(cfg.implicit_viscosity());
  rule_.inject_rate = cfg.inject.rate;
  rule_.end_time = cfg.end_time;
  rule_.interval = cfg.snapshot_interval;
  backend_->set_constants(k_);
  backend_->upload(state);
  // fluid.viscous_solver = transform where it does not apply stops here.
  if (cfg.implicit_viscosity() && cfg.viscosity > 0) (void)backend_->viscous_transform();
  // The solver the memory checks budgeted for this config and backend.
  const std::string refusal = backend_->transform_refusal();
  const PressureSolverKind solver = resolve_solver(cfg, refusal);
  solver_ = make_pressure_solver(solver, why_no_transform(cfg, refusal));
  if (solver != PressureSolverKind::jacobi && solver != PressureSolverKind::sor)
    solver_->prepare(*backend_, build_poisson_hierarchy(grid_, state.open, k_));
  device_ = cfg.graphs && solver_->solves_on_device() ? backend_->device_stepping() : nullptr;
  async_ = device_ != nullptr;
  if (async_) solver_->set_device_settings(settings_);
}

double Simulation::next_dt() {
  if (cfg_.dt > 0) return choose_dt(rule_, 0.0, time_).dt;  // the fixed dt, or the end's remainder
  // max_nan in the reduction: a NaN face anywhere in [0, nx] x [0, ny] makes this NaN.
  const double field_rate = backend_->max_velocity_rate();
  if (!std::isfinite(field_rate)) throw_non_finite(step_, time_, "CFL rate " + number(field_rate), backend_->nonfinite_particles() > 0);
  const DtChoice c = choose_dt(rule_, field_rate, time_);
  if (c.viscous) ++viscous_limited_steps_;
  if (c.capped) ++dt_max_steps_;
  return c.dt;
}

// One step: the IMEX Runge-Kutta scheme of sim/model/time_scheme.hpp,
// three stages each projected, the viscous term implicit in two Helmholtz
// solves (fluid.viscous = implicit) or explicit in the stages,
//   U1 = P(S1(u)),  U2 = P(3/4 u + 1/4 (U1 + ...)),  u' = P(S3(1/3 u + 2/3 (U2 + ...))),
// and the particles. A steady state (P L(u) = 0) does not depend on dt.
// Each projection runs with its stage's weight times dt, so phi is the
// kinematic pressure of any stage.
//
// One-way (or no particles): the particles move first, in the fluid of the
// step's start. Two-way (docs/ARCHITECTURE.md, "The coupled step"): the
// implicit drag D (u + D = the free fluid u~, Backend::couple_fluid) enters
// every stage through its base, u~ in place of u, L never acting on it,
// and the particles move after the first projection: against u~, plus
// their share of that projection's impulse, which the fluid gives back
// into the base of the later stages (kBasePayback). So the pressure that
// holds the fluid (a wall, a gradient) holds back the particles' drag on
// it within the step.
//
// Two ways through the same sequence (stages): on the host, every scalar
// (dt, norms, residuals) comes back before the next call; on an
// asynchronous backend they stay on the device in the step's StepRecord,
// the fixed launches of each segment are recorded once and replayed, and
// the host reads the records a few steps behind (absorb).
StepInfo Simulation::step() {
  const bool on_device = async_ready();
  landed_ = false;  // out of reach the step lands on no multiple of the interval
  if (on_device && !end_in_reach()) return step_on_device();
  if (at_end()) throw std::logic_error("Simulation::step: the clock is at run.end_time, no step is left");
  if (on_device) drain();  // near a landing the host's clock is the device's
  const double interval_time = next_multiple(rule_.interval, time_);
  if (on_device) {
    // Near the end or a multiple of the interval (end_in_reach): drained,
    // one step, drained, so the host sees the clock of every step and
    // queues none past the end.
    step_on_device();
    drain();
    landed_ = time_ == interval_time;
    StepInfo info;
    info.dt = dt_;
    info.pressure = last_pressure_;
    return info;
  }
  StepInfo info;
  dt_ = next_dt();
  info.dt = dt_;
  set_dt(dt_);

  PressureStats solves[kStepSolves];
  ViscousStats viscous[kViscousSolves];
  stages(
      [&] {
        const int64_t inject = injection_count(cfg_, time_, time_ + dt_);
        backend_->step_particles(next_id_, inject);
        next_id_ += static_cast<uint64_t>(inject);
      },
      [&](int stage, real weight) {
        if (weight != real(1)) set_dt(weight * dt_);
        solves[stage] = solve_and_project(stage, weight);
        if (weight != real(1)) set_dt(dt_);
      },
      [&](int solve, real gamma) {
        viscous[solve] = solve_viscous(*backend_, VelocityField::current, gamma, settings_.tolerance, k_);
        count_viscous(viscous[solve], step_ + 1, time_ + dt_);
      },
      [&](real w) {
        set_dt(w * dt_);
        backend_->project_stored();
        set_dt(dt_);
      });
  info.pressure = combine(solves);
  for (const ViscousStats& v : viscous) info.viscous_iterations += v.iterations;
  last_pressure_ = info.pressure;
  time_ = clock_after(rule_, time_, dt_);  // the device's clock alike (choose_dt_kernel)
  ++step_;
  landed_ = time_ == interval_time;
  return info;
}

// The fluid part of the step and where the particles move in it, once for
// both ways: `project(stage, weight)` solves the pressure of stage 0, 1 or
// 2 with weight times dt and projects; `viscous(solve, gamma)` solves
// (I - gamma dt V) x = current in place (solve 0, 1 or 2); `shift(w)` adds
// -w dt G p of the last solve's pressure p (float32 phi, what a restart
// reads back) to current, the incremental pressure around each solve.
//
// The fields: current is each stage's result. One-way, the base of stages
// 2 and 3 (u) stays in saved and the stage's input is copied into stage.
// Two-way, the particles' drag D (u~ = u + D, couple_fluid) and what they
// pay back enter like a body force J (stage = u + J), with the weights of
// A: stage 1 is u~ + dt A(u) + ..., and stages 2 and 3 take
// a u + c J = a ((1 - c/a) u + c/a (u + J)), that base formed in start
// (u at first) by combine_velocity; saved is the input.
template <class Particles, class Project, class Viscous, class Shift>
void Simulation::stages(Particles particles, Project project, Viscous viscous, Shift shift) {
  PhaseTimer& t = backend_->timer();
  const bool two_way = cfg_.coupled();
  auto move = [&] {
    t.begin(Phase::particles);
    particles();
    t.end(Phase::particles);
  };
  // The stage's explicit update from `in` and `from`, its boundary links'
  // share of the step (sim/model/boundary_flux.hpp), and its implicit solve
  // with the last pressure's gradient taken out and put back.
  auto stage_update = [&](int s, VelocityField in, VelocityField from, real a, real b) {
    const StageCoefficients& c = scheme_.stage[s];
    backend_->rk_stage(in, from, VelocityField::current, a, b, c.c, c.cv);
    backend_->boundary_flux(in, kPartFlux0 + s, c.flux_explicit, c.flux_viscous);
    if (c.gamma > real(0) && k_.nu > real(0)) {
      // The run's first step from rest has no pressure yet: the stage's own
      // (a solve without the projection), so the first solve, too, diffuses
      // nothing a pressure holds.
      if (s == 0 && step_ == 0 && !async_ready_now()) prime_pressure(c.pressure_weight);
      shift(c.pressure_weight);
      viscous(s, c.gamma);
      // The solve's exchange is gamma dt V of its result as solved, before
      // the pressure goes back in (a uniform shift's V is not zero at a wall).
      backend_->boundary_flux(VelocityField::current, kPartSolved0 + s, real(0), c.flux_solved);
      shift(-c.pressure_weight);
    }
  };
  auto weight = [&](int s) { return scheme_.stage[s].pressure_weight; };

  if (!two_way) move();
  t.begin(Phase::momentum);
  backend_->copy_velocity(VelocityField::current, VelocityField::saved);  // u
  if (two_way) backend_->copy_velocity(VelocityField::current, VelocityField::start);
  t.end(Phase::momentum);
  if (two_way) {
    t.begin(Phase::particles);
    backend_->couple_fluid();  // current = u~ (fixed boundary faces), stage = u~ (free boundary faces)
    t.end(Phase::particles);
  }
  // Stage 1: U1 = u + dt A(u) (u~ + dt A(u) two-way), solved, projected.
  t.begin(Phase::momentum);
  if (two_way) {
    stage_update(0, VelocityField::saved, VelocityField::stage, real(1), real(0));
    backend_->copy_velocity(VelocityField::current, VelocityField::saved);  // what the projection starts from
  } else {
    stage_update(0, VelocityField::saved, VelocityField::saved, scheme_.stage[0].a, scheme_.stage[0].b);
  }
  t.end(Phase::momentum);
  project(0, weight(0));
  if (two_way) move();  // against stage, plus the share of current - saved; paid back into stage
  // Stages 2 and 3 from the base and the last stage's result.
  for (int s = 1; s < 3; ++s) {
    const StageCoefficients& c = scheme_.stage[s];
    t.begin(Phase::momentum);
    if (two_way) {
      // start: u -> (1 - c2/a2) u + c2/a2 (u + J) -> the same with stage 3's weights
      const real r = c.c / c.a, r_before = s == 1 ? real(0) : scheme_.stage[s - 1].c / scheme_.stage[s - 1].a;
      // (1 - r) u + r (u + J) from (1 - r') u + r' (u + J): alpha = (1 - r) / (1 - r'), beta = 1 - alpha
      const real alpha = (real(1) - r) / (real(1) - r_before);
      backend_->combine_velocity(VelocityField::start, alpha, VelocityField::stage, real(1) - alpha);
      backend_->copy_velocity(VelocityField::current, VelocityField::saved);
      stage_update(s, VelocityField::saved, VelocityField::start, c.a, c.b);
    } else {
      backend_->copy_velocity(VelocityField::current, VelocityField::stage);
      stage_update(s, VelocityField::stage, VelocityField::saved, c.a, c.b);
    }
    t.end(Phase::momentum);
    project(s, weight(s));
  }
}

// The pressure of `current` as a stage with this weight would project it,
// without projecting: what the incremental pressure of the first solve of a
// run takes.
void Simulation::prime_pressure(real weight) {
  PhaseTimer& t = backend_->timer();
  t.begin(Phase::pressure);
  set_dt(weight * dt_);
  const PressureStats p = solver_->solve(*backend_, settings_);
  set_dt(dt_);
  t.end(Phase::pressure);
  count_solve(p, step_ + 1, time_ + dt_);
}

// The step's pressure figures: every solve's iterations, the worst residual.
PressureStats Simulation::combine(const PressureStats (&solves)[kStepSolves]) {
  PressureStats p = solves[kStepSolves - 1];
  p.iterations = 0;
  for (const PressureStats& s : solves) {
    p.iterations += s.iterations;
    p.converged = p.converged && s.converged;
    if (std::isnan(s.residual) || s.residual > p.residual) p.residual = s.residual;
    p.rhs_norm = max_nan(p.rhs_norm, s.rhs_norm);
  }
  return p;
}

bool Simulation::async_ready() {
  if (!async_) return false;
  // The first step runs on the host: it sizes every workspace before any
  // launch is recorded. Then the device clock takes over.
  if (!clock_started_) {
    if (step_ == first_step_) return false;
    device_->start_device_clock(DeviceClock{step_, time_, next_id_}, rule_);
    clock_started_ = true;
  }
  return true;
}

// The end time on an asynchronous backend. The device chooses each dt
// (choose_dt, the same rule as the host's) and caps the last step to land on
// the end, but the host queues steps up to kRecordsAhead ahead of the records
// it has read, so it does not know the device's clock. A step queued once that
// clock is at the end would run with dt = 0, which a recorded step cannot
// skip (the pressure solve divides by dt). So the host queues ahead only while
// the end is out of reach: no dt exceeds the fixed dt or dt_max (the last
// step by at most kEndSliver of it), so after the steps in flight and the
// next one the device's clock is at most time_ (the last record read) plus
// their count times that bound; one step more of margin covers the rounding.
// Within reach, step() drains and steps synchronously to the end, and never
// queues a step from it: the last kRecordsAhead + 2 bounds of simulated time
// (as many steps where dt is at dt_max or fixed, more where the flow keeps dt
// below dt_max), a host round trip each. Making a step from the end a no-op
// on the device instead would touch every kernel that reads dt.
//
// A multiple of run.snapshot_interval is such a landing too: the host must
// see the step that lands on it (landed_on_interval) to write its snapshot.
bool Simulation::end_in_reach() const {
  const double land = next_landing(rule_, time_);
  if (!(land < INFINITY) || !device_) return false;
  const double bound = (rule_.fixed_dt > 0 ? rule_.fixed_dt : rule_.dt_max) * (1.0 + kEndSliver);
  return time_ + (device_->records_in_flight() + 2) * bound >= land;
}

bool Simulation::at_end() {
  if (!(rule_.end_time > 0)) return false;
  // Out of reach, the device's clock is short of the end (end_in_reach).
  if (async_ && end_in_reach()) drain();
  return time_ >= rule_.end_time;
}

StepInfo Simulation::step_on_device() {
  // At most kRecordsAhead steps ahead of what the host has checked.
  while (device_->records_in_flight() >= kRecordsAhead) absorb_next(true);
  PhaseTimer& t = backend_->timer();
  device_->prepare_step_on_device();
  // The whole step is one recording; the phase timer's begin/end inside
  // become timed nodes of it.
  device_->segment(kSegmentStep, [&] {
    device_->choose_dt_on_device();
    stages([&] { device_->step_particles_on_device(); },
           [&](int stage, real weight) {
             t.begin(Phase::pressure);
             if (weight != real(1)) device_->scale_dt_on_device(weight);
             solver_->solve_on_device(*backend_, *device_, stage);
             t.end(Phase::pressure);
             t.begin(Phase::project);
             backend_->project();
             backend_->boundary_pressure(kPartPressure0 + stage, scheme_.stage[stage].flux_explicit);
             if (weight != real(1)) device_->scale_dt_on_device(real(1));
             t.end(Phase::project);
             // the particles' share of the first projection is taken with dt (its weight is 1)
           },
           [&](int solve, real gamma) {
             device_->viscous_solve_on_device(VelocityField::current, gamma, solve, settings_.tolerance);
           },
           [&](real w) {
             device_->scale_dt_on_device(w);
             backend_->project_stored();
             device_->scale_dt_on_device(real(1));
           });
  });
  device_->close_record();
  ++step_;
  // Whatever has finished meanwhile, without waiting.
  while (absorb_next(false)) {
  }
  StepInfo info;
  info.dt = dt_;
  info.pressure = last_pressure_;
  return info;
}

// Reads the oldest finished record and does what the host step does with
// its scalars: the clock, the watchdog, the solver's figures and failures.
bool Simulation::absorb_next(bool wait) {
  StepRecord r;
  if (!async_ || !device_->take_record(r, wait)) return false;
  const double time_before = time_;
  if (r.inject_overflow != 0)
    throw std::overflow_error("particles.inject.rate = " + std::to_string(cfg_.inject.rate) + " 1/s: by t = " +
                              std::to_string(r.time) + " s the injected count reaches 2^53, past which it is not exact");
  if (cfg_.dt <= 0 && !std::isfinite(r.rate))
    throw_non_finite(r.step - 1, time_before, "CFL rate " + number(r.rate), false);
  viscous_limited_steps_ += r.viscous_limited;
  dt_max_steps_ += r.dt_max_limited;
  dt_ = r.dt;
  time_ = r.time;
  next_id_ = r.next_id;
  PressureStats solves[kStepSolves];
  for (int s = 0; s < kStepSolves; ++s) {
    const PressureStats p = solver_->stats_from_record(r, s, settings_);
    if (!std::isfinite(p.rhs_norm) || !std::isfinite(p.residual) || r.nonfinite[s] > 0)
      throw_non_finite(r.step, r.time,
                       r.nonfinite[s] > 0 ? std::to_string(r.nonfinite[s]) + " particles not finite"
                                          : "||div u/dt|| = " + number(p.rhs_norm) + ", relative residual " +
                                                number(p.residual),
                       r.nonfinite[s] > 0);
    count_solve(p, r.step, r.time);
    solves[s] = p;
  }
  for (int v = 0; v < kViscousSolves; ++v) {
    if (!cfg_.implicit_viscosity()) break;
    ViscousStats vs;
    vs.iterations = static_cast<int>(r.viscous_iterations[v]);
    vs.relative = r.viscous_relative[v];
    // g of the solve from the record's dt, as the device took it
    const double g = static_cast<double>(scheme_.stage[v].gamma) * static_cast<real>(r.dt) * k_.nu;
    vs.converged = viscous_converged(vs.relative, g, settings_.tolerance, k_);
    count_viscous(vs, r.step, r.time);
  }
  last_pressure_ = combine(solves);
  return true;
}

void Simulation::drain() {
  while (absorb_next(true)) {
  }
}

void Simulation::set_dt(double dt) {
  k_.dt = static_cast<real>(dt);
  backend_->set_constants(k_);
}

PressureStats Simulation::solve_and_project(int stage, real weight) {
  PhaseTimer& t = backend_->timer();
  t.begin(Phase::pressure);
  const PressureStats p = solver_->solve(*backend_, settings_);
  t.end(Phase::pressure);

  // The watchdog, free: the solve's ||div u**/dt|| (a NaN or Inf on any
  // face of a fluid cell makes it non-finite), its residual (a non-finite
  // pressure), and the particle step's count. Before project(), which would
  // spread a NaN pressure over every face and hide where it started; and
  // before step() returns, so no snapshot of this step is ever taken.
  const int64_t bad_particles = backend_->nonfinite_particles();
  if (!std::isfinite(p.rhs_norm) || !std::isfinite(p.residual) || bad_particles > 0)
    throw_non_finite(step_ + 1, time_ + dt_,
                     bad_particles > 0 ? std::to_string(bad_particles) + " particles not finite"
                                       : "||div u/dt|| = " + number(p.rhs_norm) + ", relative residual " +
                                             number(p.residual),
                     bad_particles > 0);

  t.begin(Phase::project);
  backend_->project();
  // the links' share of this stage's pressure (sim/model/boundary_flux.hpp)
  backend_->boundary_pressure(kPartPressure0 + stage, scheme_.stage[stage].flux_explicit);
  (void)weight;
  t.end(Phase::project);
  count_solve(p, step_ + 1, time_ + dt_);
  return p;
}

// The failure count of one solve of step `step` (ending at `time`).
void Simulation::count_solve(const PressureStats& p, int64_t step, double time) {
  pressure_iterations_total_ += p.iterations;
  if (p.converged) {
    pressure_failures_in_row_ = 0;
    return;
  }
  ++pressure_unconverged_;
  ++pressure_failures_in_row_;
  const double r = p.residual;  // a NaN residual stays the worst
  if (std::isnan(r) || (!std::isnan(pressure_worst_residual_) && r > pressure_worst_residual_))
    pressure_worst_residual_ = r;
  if (pressure_failures_in_row_ >= cfg_.max_failures) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "the pressure solve did not converge %d times in a row (pressure.max_failures): step %lld, "
                  "t = %.6g s, solver %s, relative residual %.3g after %d iterations, tolerance %.3g",
                  pressure_failures_in_row_, static_cast<long long>(step), time, solver_->name().c_str(),
                  p.residual, p.iterations, cfg_.tolerance);
    throw PressureFailure(line);
  }
}

// The failure count of a viscous solve, as count_solve's for the pressure.
void Simulation::count_viscous(const ViscousStats& v, int64_t step, double time) {
  viscous_iterations_total_ += v.iterations;
  if (v.converged) {
    viscous_failures_in_row_ = 0;
    return;
  }
  ++viscous_unconverged_;
  ++viscous_failures_in_row_;
  const double r = v.relative;
  if (std::isnan(r) || (!std::isnan(viscous_worst_residual_) && r > viscous_worst_residual_))
    viscous_worst_residual_ = r;
  if (viscous_failures_in_row_ >= cfg_.max_failures) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "the viscous solve did not converge %d times in a row (pressure.max_failures): step %lld, "
                  "t = %.6g s, relative residual %.3g after %d Chebyshev iterations, tolerance %.3g",
                  viscous_failures_in_row_, static_cast<long long>(step), time, v.relative, v.iterations,
                  cfg_.tolerance);
    throw PressureFailure(line);
  }
}

void Simulation::throw_non_finite(int64_t step, double time, const std::string& what, bool particles_first) {
  // Once, at the end of the run: its cost does not matter. Not through
  // download(), which would read the records still in flight.
  SimState s = header();
  backend_->download(s);
  int64_t count = 0;
  const std::string first = first_non_finite(s, particles_first, count);
  std::string line = "non-finite value at step " + std::to_string(step) + " (t = " + number(time) + " s): ";
  if (count > 0)
    line += first + " (" + std::to_string(count) + " non-finite value" + (count > 1 ? "s" : "") + " in all)";
  else
    line += "no stored value is, but " + what + " (values too large for float)";
  line += cfg_.dt > 0 ? "; the run blew up: lower time.dt" : "; the run blew up: lower time.cfl or time.dt_max";
  throw NonFiniteError(line);
}

SimState Simulation::header() const {
  SimState s;
  s.grid = grid_;
  s.step = step_;
  s.time = time_;
  s.dt = dt_;
  s.next_id = next_id_;
  return s;
}

SimState Simulation::download() {
  drain();
  SimState s = header();
  backend_->download(s);
  return s;
}

SimState Simulation::download_own() {
  drain();
  SimState s = header();
  backend_->download_own(s);
  return s;
}

std::unique_ptr<PendingState> Simulation::begin_download() {
  drain();
  return backend_->begin_download(header());
}

Diagnostics Simulation::diagnostics() {
  drain();
  return backend_->diagnostics();
}

}  // namespace sim
