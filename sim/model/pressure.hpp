// SPDX-License-Identifier: MIT
// Pressure Poisson solvers, written once over PressureOps so that every
// solver runs on every backend: Jacobi and red-black SOR (float32, warm
// started), multigrid-preconditioned conjugate gradients and the transform
// solve (float64 pressure, from zero every step).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "sim/model/backend.hpp"

namespace sim {

struct PressureSettings {
  double tolerance = 1e-5;   // relative residual ||b - A phi|| / ||b||
  int max_iterations = 2000;
  int check_every = 10;      // the residual (a host round trip on the GPU) every N iterations
  bool record_history = false;  // keep every checked residual in PressureStats::history
  int smoothing = 2;            // multigrid: red-black sweep pairs before and after each coarse correction
  // > 0: a fixed budget (pressure.fixed_iterations; jacobi and sor): exactly
  // this many sweeps, the residual computed once after them, never unconverged.
  int fixed_iterations = 0;
};

struct PressureStats {
  int iterations = 0;
  double residual = 0;  // relative, at the last check
  // ||div u** / dt||_2 over fluid cells, as compute_rhs returned it: not
  // finite when u** holds a NaN or an Inf (what Simulation's watchdog reads).
  double rhs_norm = 0;
  bool converged = false;
  std::vector<double> history;  // relative residual at each check, if asked for
};

class PressureSolver {
 public:
  virtual ~PressureSolver() = default;
  virtual std::string name() const = 0;
  // Once, before the first solve (levels, transform plans).
  virtual void prepare(PressureOps& /*ops*/, const PoissonHierarchy& /*h*/) {}
  virtual PressureStats solve(PressureOps& ops, const PressureSettings& s) = 0;

  // Asynchronous stepping (DeviceStepping): a solver whose solve is
  // a fixed sequence of launches enqueues it with solve_on_device, its
  // scalars left in solve `solve` (0 or 1) of the step's StepRecord, and
  // turns those into the same PressureStats as solve() later. A solver that
  // decides on the host inside its loop says false.
  virtual bool solves_on_device() const { return false; }
  // The settings a recorded solve is recorded with (once, before the first).
  virtual void set_device_settings(const PressureSettings& /*s*/) {}
  virtual void solve_on_device(PressureOps& /*ops*/, DeviceStepping& /*device*/, int /*solve*/) {}
  virtual PressureStats stats_from_record(const StepRecord& /*r*/, int /*solve*/, const PressureSettings& /*s*/) const {
    return {};
  }
};

// The solver of a kind that resolve_solver (sim/model/poisson.hpp)
// returned, `no_transform` being why_no_transform's reason: fft with a
// reason, and auto, throw std::invalid_argument.
std::unique_ptr<PressureSolver> make_pressure_solver(PressureSolverKind resolved, const std::string& no_transform = {});
// The same from a grid's hierarchy: the reason is the backend's refusal
// (Backend::transform_refusal), else what `h` and `has_solids` say
// (fft_unsupported_reason; a null `h`, enough for jacobi and sor, counts as
// not known to allow the transform solve).
std::unique_ptr<PressureSolver> make_pressure_solver(PressureSolverKind kind, const PoissonHierarchy* h,
                                                     bool has_solids, const std::string& backend_refusal = {});

// The solvers that apply to a config: jacobi, sor, multigrid, and fft where
// the transform solve applies (what `sim bench` compares by default).
std::vector<PressureSolverKind> applicable_solvers(const Config& cfg);

// The red-black SOR relaxation factor that minimises the iterations on an
// nx x ny grid.
double optimal_sor_omega(int nx, int ny);

}  // namespace sim
