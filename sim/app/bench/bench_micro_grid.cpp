// SPDX-License-Identifier: MIT
// Micro-benchmarks of the grid primitives and the pressure solvers: the
// sweeps, the temporally blocked Jacobi passes, one momentum stage per
// advection scheme, the transform solve and MGPCG (run_micro, bench_micro.cpp).
#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "sim/app/bench/bench.hpp"
#include "sim/app/bench/micro.hpp"
#include "sim/app/bench/traffic.hpp"
#include "sim/model/poisson.hpp"
#include "sim/model/pressure.hpp"
#include "sim/model/simulation.hpp"
#include "sim/model/state.hpp"

namespace sim::micro {

void sweeps(Context& x, const Config& cfg, int n) {
  const Config base = periodic_case(cfg, n);
  std::unique_ptr<SimState> s;  // built for the first variant that runs (16384^2: 4.3 GB)
  const double dt = micro_dt(base, 1.0);
  const double cells = static_cast<double>(n) * n;
  const auto stencils = x.cuda ? all_or(x.opts.stencils) : std::vector<Stencil>{cfg.stencil};
  const auto constants = x.cuda ? all_or(x.opts.constants) : std::vector<ConstantsIn>{cfg.constants};
  for (Stencil st : stencils)
    for (ConstantsIn k : constants) {
      Config c = base;
      c.stencil = st;
      c.constants = k;
      std::string error;
      std::unique_ptr<Backend> b;
      if (!out_of_time(x.opts)) {
        b = fresh_backend(x, c, random_state(s, base, cfg.seed), dt, error);
        try {
          if (b) {
            b->compute_rhs();  // rhs = div(u)/dt of the random velocity
            b->fill_pressure_halo();
          }
        } catch (const std::exception& e) {
          error = std::string("failed: ") + e.what();
          b.reset();
        }
      }
      for (PressureSolverKind solver : all_or(x.opts.solvers)) {
        if (solver != PressureSolverKind::jacobi && solver != PressureSolverKind::sor) continue;  // sweeps only
        BenchRow row;
        const bool jacobi = solver == PressureSolverKind::jacobi;
        row.set("benchmark", jacobi ? "jacobi_sweep" : "sor_sweep");
        row.set("size", static_cast<double>(n));
        row.set("size_text", std::to_string(n) + "^2");
        row.set("items", "cells");
        row.set("variant", x.cuda ? std::string(to_string(st)) + "/" + std::string(to_string(k)) : std::string("cpu"));
        row.set("backend", b ? b->name() : x.report.backend);
        row.set("stencil", std::string(to_string(st)));
        row.set("constants", std::string(to_string(k)));
        if (!error.empty()) row.set("error", error);
        const double bytes = (jacobi ? traffic::jacobi_sweep(1) : traffic::sor_sweep(1)).bytes;
        Backend* bp = b.get();
        if (!error.empty()) {
          x.report.rows.push_back(std::move(row));
        } else if (jacobi) {
          measure(x, row, bp, cells, bytes, [bp] { bp->jacobi_sweep(); });
        } else {
          measure(x, row, bp, cells, bytes, [bp] {
            bp->sor_sweep(0);
            bp->sor_sweep(1);
          });
        }
      }
    }
}

// stencil=temporal (GPU only, when the stencil and solver lists hold it and
// jacobi): Backend::jacobi_sweeps(2 kTemporalSweeps), two passes of
// kTemporalSweeps sweeps, on an n x n closed box (the passes need sides
// that are not periodic) from the same random state. items are effective
// cell updates (sweeps x cells), bytes_per_item the model's bytes per
// effective sweep (traffic::jacobi_pass: 12 / kTemporalSweeps B), so
// copy_pct is the share of the copy bandwidth the passes move, and
// gitems_per_s compares with the single sweep's roof of copy GB/s / 12.
void jacobi_passes(Context& x, const Config& cfg, int n) {
  if (!x.cuda) return;
  const auto stencils = all_or(x.opts.stencils);
  const auto solvers = all_or(x.opts.solvers);
  if (std::find(stencils.begin(), stencils.end(), Stencil::temporal) == stencils.end() ||
      std::find(solvers.begin(), solvers.end(), PressureSolverKind::jacobi) == solvers.end())
    return;
  Config base = periodic_case(cfg, n);
  for (BoundarySide* s : {&base.left, &base.right, &base.bottom, &base.top}) *s = BoundarySide{BoundaryKind::wall, 0.0};
  base.stencil = Stencil::temporal;
  std::unique_ptr<SimState> s;
  const double dt = micro_dt(base, 1.0);
  const int sweeps = 2 * kTemporalSweeps;
  const double items = static_cast<double>(n) * n * sweeps;
  for (ConstantsIn k : all_or(x.opts.constants)) {
    Config c = base;
    c.constants = k;
    std::string error;
    std::unique_ptr<Backend> b;
    if (!out_of_time(x.opts)) {
      b = fresh_backend(x, c, random_state(s, base, cfg.seed), dt, error);
      try {
        if (b) {
          b->compute_rhs();
          b->fill_pressure_halo();
        }
      } catch (const std::exception& e) {
        error = std::string("failed: ") + e.what();
        b.reset();
      }
    }
    BenchRow row;
    row.set("benchmark", "jacobi_pass");
    row.set("size", static_cast<double>(n));
    row.set("size_text", std::to_string(n) + "^2");
    row.set("items", "cell sweeps");
    row.set("variant", "temporal/" + std::string(to_string(k)) + "/x" + std::to_string(kTemporalSweeps));
    row.set("backend", b ? b->name() : x.report.backend);
    row.set("stencil", std::string(to_string(Stencil::temporal)));
    row.set("constants", std::string(to_string(k)));
    if (!error.empty()) {
      row.set("error", error);
      x.report.rows.push_back(std::move(row));
      continue;
    }
    Backend* bp = b.get();
    measure(x, row, bp, items, traffic::jacobi_pass(1, kTemporalSweeps).bytes / kTemporalSweeps,
            [bp, sweeps] { bp->jacobi_sweeps(sweeps); });
  }
}

// One momentum stage (Backend::rk_stage, the first stage: no base field) on
// an n x n periodic grid holding a random velocity, for every stencil
// variant (GPU) and advection scheme (--advection, default central and
// quick): the stencil whose reach fluid.advection = quick widens to two
// cells, where the shared-memory tile should pay. bytes_per_item is the
// least a stage moves per face point (traffic::stage: 16 B).
void momentum_stages(Context& x, const Config& cfg, int n) {
  const Config base = periodic_case(cfg, n);
  std::unique_ptr<SimState> s;
  const double dt = micro_dt(base, 1.0);
  const double points = static_cast<double>(n + 1) * (n + 1);
  const auto stencils = x.cuda ? all_or(x.opts.stencils) : std::vector<Stencil>{cfg.stencil};
  const auto schemes = all_or(x.opts.advections);
  for (Stencil st : stencils)
    for (AdvectionScheme scheme : schemes) {
      Config c = base;
      c.stencil = st;
      c.advection = scheme;
      BenchRow row;
      row.set("benchmark", "momentum_stage");
      row.set("size", static_cast<double>(n));
      row.set("size_text", std::to_string(n) + "^2");
      row.set("items", "faces");
      row.set("variant", x.cuda ? std::string(to_string(st)) + "/" + std::string(to_string(scheme))
                                : std::string(to_string(scheme)));
      row.set("stencil", std::string(to_string(st)));
      row.set("constants", std::string(to_string(c.constants)));
      row.set("advection", std::string(to_string(scheme)));
      row.set("backend", x.report.backend);
      std::string error;
      std::unique_ptr<Backend> b;
      if (!out_of_time(x.opts)) {
        b = fresh_backend(x, c, random_state(s, base, cfg.seed), dt, error);
        if (b) {
          row.set("backend", b->name());
          b->copy_velocity(VelocityField::current, VelocityField::saved);  // with the halo just filled
        }
      }
      if (!error.empty()) {
        row.set("error", error);
        x.report.rows.push_back(std::move(row));
        continue;
      }
      Backend* bp = b.get();
      measure(x, row, bp, points, traffic::stage(1, false, false, scheme).bytes, [bp] {
        bp->rk_stage(VelocityField::saved, VelocityField::saved, VelocityField::current, real(0), real(1), real(1), real(1));
      });
    }
}

// One transform pressure solve (PressureOps::fft_solve: load rhs, forward
// transform, divide, inverse transform, store x, phi and their halos) on an
// n x n periodic grid, rhs from a random velocity. bytes_per_item is the
// least a solve must move: rhs read (4 B), x and phi written (8 + 4 B).
// Sizes: 2048^2, 4096^2, 8192^2 by default; with --micro-sizes, those sizes
// only when --pressure-solver names fft (keeps tiny runs to the sweeps).
void fft_solves(Context& x, const Config& cfg) {
  const bool asked = std::find(x.opts.solvers.begin(), x.opts.solvers.end(), PressureSolverKind::fft) != x.opts.solvers.end();
  std::vector<int> sizes;
  if (x.opts.micro_sizes.empty() && (x.opts.solvers.empty() || asked)) sizes = {2048, 4096, 8192};
  else if (asked) sizes = x.opts.micro_sizes;
  for (int n : sizes) {
    Config c = periodic_case(cfg, n);
    c.solver = PressureSolverKind::fft;
    BenchRow row;
    row.set("benchmark", "fft_solve");
    row.set("size", static_cast<double>(n));
    row.set("size_text", std::to_string(n) + "^2");
    row.set("items", "cells");
    row.set("variant", x.cuda ? "cufft/f64" : "fftw/f64");
    row.set("backend", x.report.backend);
    std::string error;
    std::unique_ptr<Backend> b;
    TransformOps* transform = nullptr;
    if (!out_of_time(x.opts)) {
      try {
        SimState s = make_initial_state(c);
        randomize(s, cfg.seed);
        b = fresh_backend(x, c, s, micro_dt(c, 1.0), error);
        if (b) {
          const PoissonHierarchy h = build_poisson_hierarchy(s.grid, s.open, make_constants(c, s.grid));
          transform = &b->transform_setup(h);
          b->compute_rhs();
          row.set("backend", b->name());
        }
      } catch (const std::exception& e) {
        error = std::string("failed: ") + e.what();
        b.reset();
      }
    }
    if (!error.empty()) {
      row.set("error", error);
      x.report.rows.push_back(std::move(row));
      continue;
    }
    Backend* bp = b.get();
    measure(x, row, bp, static_cast<double>(n) * n, 16.0, [transform] { transform->fft_solve(); });
  }
}

// MGPCG on an n x n closed box (walls, no obstacle, cavity-like), the
// right-hand side div(u)/dt of a random velocity. Two rows per size: one
// V-cycle (the preconditioner alone, as MultigridSolver runs it with
// smoothing = 2) and one whole solve to 1e-6 from zero; both use the byte
// count of one V-cycle (traffic::mg_vcycle) per cell, the solve row that of
// its iterations (V-cycle + PCG vectors) per cell and solve.
constexpr int kMgSmoothing = 2;
constexpr double kMgTolerance = 1e-6;

namespace {

// The closed box of a multigrid row: its backend holding the random
// velocity's rhs, the hierarchy and the solver, prepared and started
// (pcg_start); `error` and no backend when that failed or time is out.
struct MgCase {
  std::string error;
  std::unique_ptr<Backend> b;
  PoissonHierarchy h;
  std::unique_ptr<PressureSolver> solver;
};

void start_mg_case(Context& x, const Config& c, uint64_t seed, MgCase& m) {
  if (out_of_time(x.opts)) return;
  SimState s = make_initial_state(c);
  randomize(s, seed);
  m.b = fresh_backend(x, c, s, micro_dt(c, 1.0), m.error);
  try {
    if (m.b) {
      Constants k = make_constants(c, s.grid);
      m.h = build_poisson_hierarchy(s.grid, s.open, k);
      m.solver = make_pressure_solver(PressureSolverKind::multigrid, &m.h, false);
      m.solver->prepare(*m.b, m.h);
      m.b->compute_rhs();
      m.b->multigrid()->pcg_start();
    }
  } catch (const std::exception& e) {
    m.error = std::string("failed: ") + e.what();
    m.b.reset();
  }
}

// One V-cycle of `levels` levels as MultigridSolver runs it (kMgSmoothing
// pre- and post-smoothing pairs, `sweeps` pairs each way on the coarsest).
void vcycle(MultigridOps* mg, int levels, int sweeps) {
  mg->mg_load_residual();
  const int last = levels - 1;
  for (int l = 0; l < last; ++l) {
    for (int k = 0; k < kMgSmoothing; ++k) {
      mg->mg_smooth(l, 0);
      mg->mg_smooth(l, 1);
    }
    mg->mg_restrict(l);
  }
  for (int k = 0; k < sweeps; ++k) {
    mg->mg_smooth(last, 0);
    mg->mg_smooth(last, 1);
  }
  for (int k = 0; k < sweeps; ++k) {
    mg->mg_smooth(last, 1);
    mg->mg_smooth(last, 0);
  }
  for (int l = last - 1; l >= 0; --l) {
    mg->mg_prolong(l);
    for (int k = 0; k < kMgSmoothing; ++k) {
      mg->mg_smooth(l, 1);
      mg->mg_smooth(l, 0);
    }
  }
}

}  // namespace

void multigrid_rows(Context& x, const Config& cfg, int n) {
  Config c = periodic_case(cfg, n);
  for (BoundarySide* s : {&c.left, &c.right, &c.bottom, &c.top}) *s = BoundarySide{BoundaryKind::wall, 0.0};
  c.solver = PressureSolverKind::multigrid;
  const double cells = static_cast<double>(n) * n;
  MgCase m;
  start_mg_case(x, c, cfg.seed, m);
  std::string& error = m.error;
  const std::unique_ptr<Backend>& b = m.b;
  std::unique_ptr<PressureSolver>& solver = m.solver;
  const int levels = static_cast<int>(m.h.levels.size()), sweeps = m.h.coarse_sweeps;
  Backend* bp = b.get();
  MultigridOps* mg = bp ? bp->multigrid() : nullptr;
  const double cycle_bytes = traffic::mg_vcycle(n, n, kMgSmoothing).bytes / cells;
  // the iteration count of one solve (the same every solve: it starts from zero)
  PressureStats st;
  PressureSettings ps;
  ps.tolerance = kMgTolerance;
  ps.max_iterations = 200;
  ps.smoothing = kMgSmoothing;
  if (bp && error.empty()) {
    try {
      st = solver->solve(*bp, ps);
    } catch (const std::exception& e) {
      error = std::string("failed: ") + e.what();
    }
  }
  for (const bool solve : {false, true}) {
    BenchRow row;
    row.set("benchmark", solve ? "mgpcg_solve_1e-6" : "mg_vcycle");
    row.set("size", static_cast<double>(n));
    row.set("size_text", std::to_string(n) + "^2");
    row.set("items", "cells");
    row.set("variant", x.cuda ? std::string("closed box") : std::string("cpu closed box"));
    row.set("backend", b ? b->name() : x.report.backend);
    if (!error.empty()) {
      row.set("error", error);
      x.report.rows.push_back(std::move(row));
      continue;
    }
    const double iters = st.iterations;
    row.set("iterations", iters);
    if (iters > 0 && st.residual > 0) row.set("conv_factor", std::pow(st.residual, 1.0 / iters));
    if (solve) {
      // bytes per cell of the whole solve: its V-cycles and vector updates
      const double bytes = iters * (cycle_bytes + traffic::pcg_iteration(1).bytes) + traffic::pcg_start_finish(1).bytes;
      measure(x, row, bp, cells, bytes, [bp, &solver, &ps] { solver->solve(*bp, ps); });
    } else {
      measure(x, row, bp, cells, cycle_bytes, [mg, levels, sweeps] { vcycle(mg, levels, sweeps); });
    }
  }
}

}  // namespace sim::micro
