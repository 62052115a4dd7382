// Pressure Poisson solvers, written once over PressureOps so that every
// solver runs on every backend. A geometric multigrid joins as another
// PressureSolver (with restriction/prolongation added to PressureOps).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "sim/backend.hpp"

namespace sim {

struct PressureSettings {
  double tolerance = 1e-5;   // relative residual ||b - A phi|| / ||b||
  int max_iterations = 2000;
  int check_every = 10;      // the residual (a host round trip on the GPU) every N iterations
  bool record_history = false;  // keep every checked residual in PressureStats::history
};

struct PressureStats {
  int iterations = 0;
  double residual = 0;  // relative, at the last check
  bool converged = false;
  std::vector<double> history;  // relative residual at each check, if asked for
};

class PressureSolver {
 public:
  virtual ~PressureSolver() = default;
  virtual std::string name() const = 0;
  virtual PressureStats solve(PressureOps& ops, const PressureSettings& s) = 0;
};

std::unique_ptr<PressureSolver> make_pressure_solver(PressureSolverKind kind);

}  // namespace sim
