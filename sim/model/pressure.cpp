// SPDX-License-Identifier: MIT
#include "sim/model/pressure.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace sim {
namespace {

// Shared driver: sweep, and every check_every sweeps compare the residual
// with the tolerance; with a fixed budget, that many sweeps and one
// residual after them. Warm-started from whatever phi holds (last step's).
template <class Sweep>
PressureStats iterate(PressureOps& ops, const PressureSettings& s, Sweep sweep) {
  PressureStats st;
  const double b = ops.compute_rhs();
  st.rhs_norm = b;
  ops.fill_pressure_halo();
  // A non-finite right-hand side cannot converge: stop now (the caller's
  // watchdog reports it) instead of sweeping max_iterations times over NaN.
  if (!std::isfinite(b)) {
    st.residual = b;
    return st;
  }
  if (b == 0.0) {
    st.converged = true;
    return st;
  }
  const bool fixed = s.fixed_iterations > 0;
  const int budget = fixed ? s.fixed_iterations : s.max_iterations;
  const int every = fixed ? budget : s.check_every > 0 ? s.check_every : 1;
  if (!fixed) {
    st.residual = ops.residual_norm() / b;
    if (s.record_history) st.history.push_back(st.residual);
    if (st.residual <= s.tolerance) {
      st.converged = true;
      return st;
    }
  }
  while (st.iterations < budget) {
    const int n = std::min(every, budget - st.iterations);
    if constexpr (std::is_invocable_v<Sweep, int>) sweep(n);  // n sweeps in one call
    else for (int k = 0; k < n; ++k) sweep();
    st.iterations += n;
    st.residual = ops.residual_norm() / b;
    if (s.record_history) st.history.push_back(st.residual);
    if (!fixed && st.residual <= s.tolerance) {
      st.converged = true;
      break;
    }
  }
  if (fixed) st.converged = std::isfinite(st.residual);
  return st;
}

class JacobiSolver final : public PressureSolver {
 public:
  std::string name() const override { return "jacobi"; }
  PressureStats solve(PressureOps& ops, const PressureSettings& s) override {
    return iterate(ops, s, [&](int n) { ops.jacobi_sweeps(n); });
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

// Conjugate gradients on A x = b preconditioned by one symmetric V-cycle
// (McAdams, Sifakis & Teran 2010): the Krylov vectors are float64 on the
// grid, the V-cycle runs in float32 on the levels of sim/model/poisson.hpp. An
// iteration is one V-cycle, one operator application and three dot products.
class MultigridSolver final : public PressureSolver {
 public:
  std::string name() const override { return "multigrid"; }
  void prepare(PressureOps& ops, const PoissonHierarchy& h) override {
    levels_ = static_cast<int>(h.levels.size());
    coarse_sweeps_ = h.coarse_sweeps;
    mg_ = &ops.multigrid_setup(h);
  }
  PressureStats solve(PressureOps& ops, const PressureSettings& s) override {
    PressureStats st;
    const double b = ops.compute_rhs();
    st.rhs_norm = b;
    MultigridOps& mg = *mg_;
    double r = mg.pcg_start();
    if (b == 0.0 || r == 0.0) {
      mg.pcg_finish();
      st.converged = true;
      return st;
    }
    st.residual = r / b;
    if (s.record_history) st.history.push_back(st.residual);
    double rz_old = 0;
    while (st.residual > s.tolerance && st.iterations < s.max_iterations) {
      vcycle(mg, s.smoothing);
      const double rz = mg.pcg_dot_rz();
      mg.pcg_direction(st.iterations == 0 ? 0.0 : rz / rz_old);
      rz_old = rz;
      const double pq = mg.pcg_apply();
      // A (the Laplacian) and the V-cycle are both negative definite, so
      // <r, z> and <p, A p> are both negative and alpha is positive; anything
      // else means the preconditioner lost definiteness or a value is not finite.
      const double alpha = rz / pq;
      if (!(alpha > 0) || !std::isfinite(alpha)) break;
      r = mg.pcg_update(alpha);
      ++st.iterations;
      st.residual = r / b;
      if (s.record_history) st.history.push_back(st.residual);
    }
    mg.pcg_finish();
    st.converged = st.residual <= s.tolerance;
    return st;
  }

  // The same loop with alpha, beta and the exit tests on the device.
  bool solves_on_device() const override { return true; }
  void solve_on_device(PressureOps& /*ops*/, DeviceStepping& device, int solve) override {
    device.compute_rhs_on_device(solve);
    device.pcg_start_on_device(solve, tolerance_, max_iterations_);
    device.repeat_on_device([&] {
      vcycle(*mg_, smoothing_);
      device.pcg_step_on_device(solve, tolerance_, max_iterations_);
    });
    mg_->pcg_finish();
  }
  PressureStats stats_from_record(const StepRecord& r, int solve, const PressureSettings& s) const override {
    PressureStats st;
    st.rhs_norm = std::sqrt(r.rhs2[solve]);
    st.iterations = static_cast<int>(r.iterations[solve]);
    st.residual = r.relative[solve];
    st.converged = st.residual <= s.tolerance;
    return st;
  }
  void set_device_settings(const PressureSettings& s) override {
    tolerance_ = s.tolerance;
    max_iterations_ = s.max_iterations;
    smoothing_ = s.smoothing;
  }

 private:
  // Red-black before, black-red after and a symmetric coarse solve: the
  // cycle is a symmetric operator, as conjugate gradients needs.
  void vcycle(MultigridOps& mg, int nu) {
    mg.mg_load_residual();
    const int last = levels_ - 1;
    for (int l = 0; l < last; ++l) {
      for (int k = 0; k < nu; ++k) {
        mg.mg_smooth(l, 0);
        mg.mg_smooth(l, 1);
      }
      mg.mg_restrict(l);
    }
    for (int k = 0; k < coarse_sweeps_; ++k) {
      mg.mg_smooth(last, 0);
      mg.mg_smooth(last, 1);
    }
    for (int k = 0; k < coarse_sweeps_; ++k) {
      mg.mg_smooth(last, 1);
      mg.mg_smooth(last, 0);
    }
    for (int l = last - 1; l >= 0; --l) {
      mg.mg_prolong(l);
      for (int k = 0; k < nu; ++k) {
        mg.mg_smooth(l, 1);
        mg.mg_smooth(l, 0);
      }
    }
  }

  MultigridOps* mg_ = nullptr;  // the backend's (prepare)
  int levels_ = 0;
  int coarse_sweeps_ = 0;
  // what a recorded solve keeps (set_device_settings)
  double tolerance_ = 0;
  int max_iterations_ = 0;
  int smoothing_ = 2;
};

// Direct solve by a cosine, sine or Fourier transform per axis: exact up to
// rounding in float64, one forward and one inverse transform per solve.
class FftSolver final : public PressureSolver {
 public:
  std::string name() const override { return "fft"; }
  void prepare(PressureOps& ops, const PoissonHierarchy& h) override { tf_ = &ops.transform_setup(h); }
  PressureStats solve(PressureOps& ops, const PressureSettings& s) override {
    const double b = ops.compute_rhs();
    tf_->fft_solve();
    return stats(b, b == 0.0 ? 0.0 : tf_->poisson_residual_norm(), s);
  }
  bool solves_on_device() const override { return true; }
  void solve_on_device(PressureOps& /*ops*/, DeviceStepping& device, int solve) override {
    device.compute_rhs_on_device(solve);
    tf_->fft_solve();
    device.poisson_residual_on_device(solve);
  }
  PressureStats stats_from_record(const StepRecord& r, int solve, const PressureSettings& s) const override {
    const double b = std::sqrt(r.rhs2[solve]);
    return stats(b, std::sqrt(r.residual2[solve]), s);
  }

 private:
  // `b` = ||rhs||, `res` = ||b - A x||: one solve, checked once.
  static PressureStats stats(double b, double res, const PressureSettings& s) {
    PressureStats st;
    st.rhs_norm = b;
    st.iterations = 1;
    st.residual = b == 0.0 ? 0.0 : res / b;
    if (s.record_history) st.history.push_back(st.residual);
    st.converged = st.residual <= s.tolerance;
    return st;
  }

  TransformOps* tf_ = nullptr;  // the backend's (prepare)
};

}  // namespace

std::unique_ptr<PressureSolver> make_pressure_solver(PressureSolverKind resolved, const std::string& no_transform) {
  switch (resolved) {
    case PressureSolverKind::jacobi: return std::make_unique<JacobiSolver>();
    case PressureSolverKind::sor: return std::make_unique<SorSolver>();
    case PressureSolverKind::multigrid: return std::make_unique<MultigridSolver>();
    case PressureSolverKind::fft:
      if (!no_transform.empty())
        throw std::invalid_argument("pressure.solver = \"fft\" does not apply: " + no_transform);
      return std::make_unique<FftSolver>();
    case PressureSolverKind::auto_: break;
  }
  throw std::invalid_argument("make_pressure_solver: auto is resolved first (resolve_solver)");
}

std::unique_ptr<PressureSolver> make_pressure_solver(PressureSolverKind kind, const PoissonHierarchy* h,
                                                     bool has_solids, const std::string& backend_refusal) {
  const std::string no_transform = !backend_refusal.empty() ? backend_refusal
                                   : h                      ? fft_unsupported_reason(*h, has_solids)
                                                            : "no Poisson hierarchy was given";
  return make_pressure_solver(resolve_solver(kind, no_transform), no_transform);
}

std::vector<PressureSolverKind> applicable_solvers(const Config& cfg) {
  std::vector<PressureSolverKind> out{PressureSolverKind::jacobi, PressureSolverKind::sor, PressureSolverKind::multigrid};
  if (fft_unsupported_reason(cfg).empty()) out.push_back(PressureSolverKind::fft);
  return out;
}

double optimal_sor_omega(int nx, int ny) {
  // Red-black SOR on the 5-point Laplacian: omega = 2 / (1 + sin(pi h)) with
  // the Jacobi spectral radius cos(pi h) of the longer side's mode.
  const double pi = 3.14159265358979323846;
  const int n = std::max(nx, ny);
  return 2.0 / (1.0 + std::sin(pi / n));
}

}  // namespace sim
