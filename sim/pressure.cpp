#include "sim/pressure.hpp"

#include <algorithm>
#include <stdexcept>

namespace sim {
namespace {

// Shared driver: sweep, and every check_every sweeps compare the residual
// with the tolerance. Warm-started from whatever phi holds (last step's).
template <class Sweep>
PressureStats iterate(PressureOps& ops, const PressureSettings& s, Sweep sweep) {
  PressureStats st;
  const double b = ops.compute_rhs();
  ops.fill_pressure_halo();
  if (b == 0.0) {
    st.converged = true;
    return st;
  }
  const int every = s.check_every > 0 ? s.check_every : 1;
  st.residual = ops.residual_norm() / b;
  if (s.record_history) st.history.push_back(st.residual);
  if (st.residual <= s.tolerance) {
    st.converged = true;
    return st;
  }
  while (st.iterations < s.max_iterations) {
    const int n = std::min(every, s.max_iterations - st.iterations);
    for (int k = 0; k < n; ++k) sweep();
    st.iterations += n;
    st.residual = ops.residual_norm() / b;
    if (s.record_history) st.history.push_back(st.residual);
    if (st.residual <= s.tolerance) {
      st.converged = true;
      break;
    }
  }
  return st;
}

class JacobiSolver final : public PressureSolver {
 public:
  std::string name() const override { return "jacobi"; }
  PressureStats solve(PressureOps& ops, const PressureSettings& s) override {
    return iterate(ops, s, [&] { ops.jacobi_sweep(); });
  }
};

// Red-black SOR: each colour depends only on the other, so a sweep is two
// fully parallel half-sweeps and the result does not depend on thread order.
class SorSolver final : public PressureSolver {
 public:
  std::string name() const override { return "sor"; }
  PressureStats solve(PressureOps& ops, const PressureSettings& s) override {
    return iterate(ops, s, [&] {
      ops.sor_sweep(0);
      ops.sor_sweep(1);
    });
  }
};

}  // namespace

std::unique_ptr<PressureSolver> make_pressure_solver(PressureSolverKind kind) {
  switch (kind) {
    case PressureSolverKind::jacobi: return std::make_unique<JacobiSolver>();
    case PressureSolverKind::sor: return std::make_unique<SorSolver>();
  }
  throw std::invalid_argument("unknown pressure solver");
}

}  // namespace sim
