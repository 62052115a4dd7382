// SPDX-License-Identifier: MIT
// A run: owns the config, the backend holding the state, the pressure
// solver and the clock; advances one step at a time and can stop cleanly
// between steps (request_stop is safe to call from a signal handler).
#pragma once
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>

#include "sim/model/backend.hpp"
#include "sim/model/pressure.hpp"
#include "sim/model/time_scheme.hpp"
#include "sim/model/viscous.hpp"

namespace sim {

// Thrown by Simulation::step after pressure.max_failures consecutive
// unconverged pressure solves; what() is one line: step, time, solver,
// residual and tolerance.
struct PressureFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Thrown by Simulation::step (and next_dt) when a NaN or an Inf appeared in
// the velocity, the pressure or a particle; what() is one line: step,
// simulated time, field, and the face (i, j) or particle id of the first
// non-finite value found.
//
// The watchdog costs no extra pass: the velocity half reads the norm of
// div u**/dt that every pressure solve computes (non-finite as soon as a
// NaN or Inf reaches a fluid cell's faces) and the NaN-propagating CFL
// rate of next_dt; the particle half is a count kept inside the particle
// step. Only after a detection is the state downloaded and scanned, once.
struct NonFiniteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct StepInfo {
  double dt = 0;
  PressureStats pressure;
  int viscous_iterations = 0;  // the implicit viscous solves' Chebyshev iterations (host steps)
};

class Simulation {
 public:
  // `state` is the initial condition or a restart.
  Simulation(const Config& cfg, std::unique_ptr<Backend> backend, const SimState& state);

  // One step. On an asynchronous backend (Backend::device_stepping) the step
  // is queued and this returns at once: the figures and checks of a step
  // (time(), the watchdog, PressureFailure) then come a few steps later,
  // and drain() waits for all of them.
  // The figures of the step, or on an asynchronous backend those of the
  // latest step read back. The accessors below drain() first.
  // Calling it once the clock is at run.end_time (at_end) is a logic error.
  StepInfo step();
  void drain();
  // Whether the clock has reached run.end_time (false without one). Exact
  // on an asynchronous backend too: it drains when the device may be there.
  bool at_end();
  // Whether the last step() landed on a multiple of run.snapshot_interval
  // (the step before it cut to reach it exactly: choose_dt).
  bool landed_on_interval() const { return landed_; }
  // Whether steps run without host round trips (gpu.graphs, a backend and
  // a pressure solver that can).
  bool asynchronous() const { return async_; }
  void request_stop() { stop_.store(true); }
  bool stop_requested() const { return stop_.load(); }

  // Choose the next dt: the fixed one, or cfl * min(advective, viscous) capped by dt_max.
  double next_dt();

  SimState download();  // host copy of the whole state (synchronises)
  // The same copy, started without waiting for it (see Backend::begin_download).
  std::unique_ptr<PendingState> begin_download();
  // This process's own copy of the state (Backend::download_own; over
  // ranks the rows backend().ranks() gives it).
  SimState download_own();
  Diagnostics diagnostics();
  Backend& backend() { return *backend_; }
  const Config& config() const { return cfg_; }
  const Grid& grid() const { return grid_; }
  int64_t step_index() const { return step_; }
  double time() {
    drain();
    return time_;
  }
  // The last step's dt [s] (the restart file's before the first step).
  double dt() {
    drain();
    return dt_;
  }
  const PressureStats& last_pressure() {
    drain();
    return last_pressure_;
  }
  int64_t pressure_iterations_total() {
    drain();
    return pressure_iterations_total_;
  }
  std::string pressure_solver_name() const { return solver_->name(); }
  // Solves that missed the tolerance in this run, and the worst relative
  // residual among them. pressure.max_failures of them in a row make step()
  // throw PressureFailure.
  int64_t pressure_unconverged() {
    drain();
    return pressure_unconverged_;
  }
  double pressure_worst_residual() {
    drain();
    return pressure_worst_residual_;
  }
  // Adaptive steps whose dt the viscous limit of the explicit diffusion set
  // (rather than the advective limit or dt_max), since the start of the run.
  // The implicit viscous solves (fluid.viscous = implicit): iterations
  // summed, unconverged solves, the worst relative residual of those.
  int64_t viscous_iterations_total() {
    drain();
    return viscous_iterations_total_;
  }
  int64_t viscous_unconverged() {
    drain();
    return viscous_unconverged_;
  }
  double viscous_worst_residual() {
    drain();
    return viscous_worst_residual_;
  }
  int64_t dt_max_steps() {
    drain();
    return dt_max_steps_;
  }
  int64_t viscous_limited_steps() {
    drain();
    return viscous_limited_steps_;
  }

 private:
  Config cfg_;
  Grid grid_;
  Constants k_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<PressureSolver> solver_;
  PressureSettings settings_;
  int64_t step_ = 0;
  double time_ = 0;
  double dt_ = 0;
  uint64_t next_id_ = 0;
  double boundary_rate_ = 0;  // max |boundary speed| / h, part of the CFL limit
  DtRule rule_;               // the adaptive step's rule, host and device (sim/model/stability.hpp)
  DeviceStepping* device_ = nullptr;  // the backend's, where the run steps on the device
  PressureStats last_pressure_;
  int64_t pressure_iterations_total_ = 0;
  int64_t pressure_unconverged_ = 0;
  int pressure_failures_in_row_ = 0;
  double pressure_worst_residual_ = 0;
  int64_t viscous_limited_steps_ = 0;
  int64_t dt_max_steps_ = 0;
  TimeScheme scheme_{};
  int64_t viscous_iterations_total_ = 0;
  int64_t viscous_unconverged_ = 0;
  int viscous_failures_in_row_ = 0;
  double viscous_worst_residual_ = 0;
  std::atomic<bool> stop_{false};

  // The segment an asynchronous backend records once and replays: the step.
  static constexpr int kSegmentStep = 0;
  // How many steps the host may queue before it reads their records.
  static constexpr int kRecordsAhead = 16;
  bool async_ = false;
  bool clock_started_ = false;
  bool landed_ = false;
  int64_t first_step_ = 0;

  void set_dt(double dt);  // k_.dt, uploaded to the backend
  // The particles and the fluid of one step: `particles()` moves the
  // particles (and injects), `project(stage)` solves and projects.
  template <class Particles, class Project, class Viscous, class Shift>
  void stages(Particles particles, Project project, Viscous viscous, Shift shift);
  static PressureStats combine(const PressureStats (&solves)[kStepSolves]);
  // One pressure solve, the watchdog, the projection and the failure count.
  PressureStats solve_and_project(int stage, real weight);
  void prime_pressure(real weight);
  bool async_ready_now() const { return async_ && clock_started_; }
  void count_solve(const PressureStats& p, int64_t step, double time);
  void count_viscous(const ViscousStats& v, int64_t step, double time);
  bool async_ready();
  // Whether the end time may come within the steps in flight and the next.
  bool end_in_reach() const;
  StepInfo step_on_device();
  bool absorb_next(bool wait);
  SimState header() const;
  // Downloads the state, finds the first non-finite value and throws
  // NonFiniteError naming `step`, `time` and it; `what` says which check
  // fired; `particles_first`: look at the particles before the fluid.
  [[noreturn]] void throw_non_finite(int64_t step, double time, const std::string& what, bool particles_first);
};

}  // namespace sim
