// SPDX-License-Identifier: MIT
// The implicit viscous stage (fluid.viscous = implicit, sim/model/viscous.hpp)
// on the GPU against the CPU reference: the Helmholtz passes of the CUDA
// backend (helmholtz_start, chebyshev_iteration, helmholtz_finish) on a
// manufactured field, and whole steps, stepped from the host and on the
// device (the solve's plan and loop there: a while node), on a walled
// cavity, a channel past a circle, and a periodic box, at a viscosity that
// makes the solve stiff (dt far above the explicit viscous limit).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/memory_plan.hpp"
#include "sim/app/backend_factory.hpp"
#include "sim/model/faces.hpp"
#include "sim/model/viscous.hpp"
#include "support/compare.hpp"
#include "support/gpu.hpp"

namespace {

const int kSteps = sim::test::gpu_steps(10);
// As tests/gpu_backend_test.cpp: the exact strategies differ from the CPU
// only by reduction order (no FMA contraction in either).
constexpr double kExactBound = 1e-5;
// Squared norms summed in double from the same float values: only the
// order of the sums differs.
constexpr double kNormBound = 1e-9;

struct Case {
  std::string name;
  sim::Config cfg;
};

// Three geometries, each with a viscosity whose explicit limit lies well
// below the advective dt: the solve takes several iterations a stage.
std::vector<Case> cases() {
  const bool small = sim::test::small_mode();
  std::vector<Case> out;
  {  // walls and a moving lid
    sim::Config c = sim::test::gpu_case("cavity.toml", kSteps);
    c.viscosity = 0.05;
    // above the float32 floor of the viscous solve's relative residual
    // (kViscousSlack times the tolerance), as sim::test::quiet_box
    c.tolerance = 1e-5;
    out.push_back({"cavity", c});
  }
  {  // periodic in x, walls in y, a circle; driven by a body force (multigrid: the obstacle rules out fft)
    sim::Config c = sim::test::quiet_box(small ? 32 : 64);
    c.lx = 2.0;
    c.nx = 2 * c.ny;
    c.viscosity = 0.05;
    c.left.kind = c.right.kind = sim::BoundaryKind::periodic;
    c.force_x = 1.0;
    c.initial = sim::InitialFlow::uniform;
    c.initial_u = 1.0;
    sim::Obstacle cyl;
    cyl.x = 0.7;
    cyl.y = 0.45;
    cyl.radius = 0.15;
    c.obstacles = {cyl};
    c.solver = sim::PressureSolverKind::multigrid;
    out.push_back({"periodic channel past a circle", c});
  }
  // periodic on every side
  out.push_back({"taylor_green", sim::test::taylor_green(small ? 32 : 64, 0.5)});
  return out;
}

struct Run {
  sim::SimState state;
  int64_t viscous_iterations = 0;
  int64_t viscous_unconverged = 0;
  bool asynchronous = false;
};

Run run(sim::Config cfg, sim::BackendKind backend, bool graphs) {
  cfg.backend = backend;
  cfg.graphs = graphs;
  const std::unique_ptr<sim::Simulation> s = sim::test::make_sim(cfg);
  Run r;
  r.asynchronous = s->asynchronous();
  for (int k = 0; k < kSteps; ++k) s->step();
  r.state = s->download();
  r.viscous_iterations = s->viscous_iterations_total();
  r.viscous_unconverged = s->viscous_unconverged();
  return r;
}

// A smooth field plus a checkerboard on every active face, zero on solid
// faces, the halo filled by the backend.
void manufacture(sim::SimState& s, const sim::Constants& k) {
  const sim::Grid& g = s.grid;
  const bool solids = k.has_solids != 0;
  for (int j = 0; j <= g.ny; ++j)
    for (int i = 0; i <= g.nx; ++i) {
      const int c = sim::at(k, i, j);
      const double x = (i + 0.5) / g.nx, y = (j + 0.5) / g.ny;
      const double check = ((i + j) % 2 == 0 ? 1.0 : -1.0) * 0.3;
      if (sim::active_u(i, j, k))
        s.u[c] = solids && sim::solid_u(s.open.data(), c)
                     ? 0.0f
                     : static_cast<float>(std::sin(2 * M_PI * x) * std::cos(3 * M_PI * y) + check);
      if (sim::active_v(i, j, k))
        s.v[c] = solids && sim::solid_v(s.open.data(), c, k.pitch)
                     ? 0.0f
                     : static_cast<float>(std::cos(M_PI * x) * std::sin(2 * M_PI * y) - 0.5 * check);
    }
}

struct Solved {
  sim::SimState state;
  sim::Backend::HelmholtzNorms start;
  double finish_r2 = 0;
};

// The passes one by one on backend `kind`: start, the plan's iterations, finish.
Solved passes(sim::Config c, sim::BackendKind kind, const sim::SimState& from, const sim::Constants& k, sim::real g,
              const sim::ChebyshevPlan& plan) {
  c.backend = kind;
  const std::unique_ptr<sim::Backend> b = sim::make_backend(c, from.grid, nullptr);
  b->set_constants(k);
  b->upload(from);
  b->fill_velocity_halo(sim::VelocityField::current);
  Solved s;
  s.start = b->helmholtz_start(sim::VelocityField::current, g);
  for (int it = 0; it < plan.iterations; ++it)
    b->chebyshev_iteration(sim::VelocityField::current, g, sim::chebyshev_weights(plan, it));
  s.finish_r2 = b->helmholtz_finish(sim::VelocityField::current, g);
  s.state = from;
  b->download(s.state);
  return s;
}

// solve_viscous on backend `kind`.
sim::ViscousStats whole_solve(sim::Config c, sim::BackendKind kind, const sim::SimState& from,
                              const sim::Constants& k, sim::real gamma, sim::SimState& out) {
  c.backend = kind;
  const std::unique_ptr<sim::Backend> b = sim::make_backend(c, from.grid, nullptr);
  b->set_constants(k);
  b->upload(from);
  b->fill_velocity_halo(sim::VelocityField::current);
  const sim::ViscousStats st = sim::solve_viscous(*b, sim::VelocityField::current, gamma, c.tolerance, k);
  out = from;
  b->download(out);
  return st;
}

double relative(double a, double b) { return b != 0 ? std::fabs(a - b) / std::fabs(b) : std::fabs(a); }

}  // namespace

// Catches a pass that reads the wrong iterate, misses the mirror at a solid
// face, skips or double-counts a face in the norms, or leaves an iterate's
// halo stale: each puts the GPU's iterates or norms away from the CPU's.
TEST_CASE("gpu: the Helmholtz passes of the implicit viscous solve match the CPU") {
  for (const Case& cs : cases()) {
    CAPTURE(cs.name);
    sim::SimState start = sim::make_initial_state(cs.cfg);
    sim::Constants k = sim::make_constants(cs.cfg, start.grid);
    // g (1/dx^2 + 1/dy^2) = 50: far into the implicit range
    const sim::real gamma = sim::real(0.4);
    const double g_wanted = 50.0 / (static_cast<double>(k.inv_dx2) + static_cast<double>(k.inv_dy2));
    k.dt = static_cast<sim::real>(g_wanted / (static_cast<double>(gamma) * k.nu));
    manufacture(start, k);
    const sim::real g = gamma * k.dt * k.nu;
    REQUIRE(g > sim::real(0));

    // the plan from the CPU's norms, so both run the same iterations
    sim::Config cpu_cfg = cs.cfg;
    const Solved probe = passes(cpu_cfg, sim::BackendKind::cpu, start, k, g, sim::ChebyshevPlan{});
    const sim::ChebyshevPlan plan = sim::viscous_plan(g, probe.start.b2, probe.start.r2, cs.cfg.tolerance, k);
    REQUIRE(plan.iterations > 2);
    const Solved cpu = passes(cpu_cfg, sim::BackendKind::cpu, start, k, g, plan);
    const Solved gpu = passes(cs.cfg, sim::BackendKind::cuda, start, k, g, plan);
    INFO("iterations " << plan.iterations << "; b2 " << cpu.start.b2 << " / " << gpu.start.b2 << ", r2 "
                       << cpu.start.r2 << " / " << gpu.start.r2 << ", final r2 " << cpu.finish_r2 << " / "
                       << gpu.finish_r2);
    CHECK(relative(gpu.start.b2, cpu.start.b2) < kNormBound);
    CHECK(relative(gpu.start.r2, cpu.start.r2) < kNormBound);
    // the final residual is a small difference of large values: float32 rounding of the iterates
    CHECK(relative(gpu.finish_r2, cpu.finish_r2) < 1e-3);
    CHECK(gpu.finish_r2 < cpu.start.r2);
    const sim::test::Differences d = sim::test::gpu_vs_cpu(gpu.state, cpu.state, true);
    INFO(d.text());
    CHECK(std::max(d.u, d.v) < kExactBound);

    // the whole solve, its plan from each backend's own norms; then the
    // transform solve where the case allows it, with cuFFT (dense_transform_cells 0) and the dense bases
    for (const sim::ViscousSolver solver : {sim::ViscousSolver::chebyshev, sim::ViscousSolver::auto_})
    for (const int64_t dense : {int64_t(0), int64_t(1) << 20}) {
      sim::Config c = cs.cfg;
      c.viscous_solver = solver;
      c.dense_transform_cells = dense;
      const bool transform = sim::viscous_takes_transform(c, k, false);
      if (solver == sim::ViscousSolver::auto_ && !transform) continue;
      if (!transform && dense > 0) continue;
      CAPTURE(transform);
      CAPTURE(dense);
      sim::SimState cpu_out, gpu_out;
      const sim::ViscousStats v_cpu = whole_solve(c, sim::BackendKind::cpu, start, k, gamma, cpu_out);
      const sim::ViscousStats v_gpu = whole_solve(c, sim::BackendKind::cuda, start, k, gamma, gpu_out);
      INFO("relative residual cpu " << v_cpu.relative << ", gpu " << v_gpu.relative);
      CHECK(v_gpu.iterations == v_cpu.iterations);
      CHECK(v_gpu.converged == v_cpu.converged);
      CHECK(v_gpu.converged);
      // the transform's residual is float32 rounding alone: compared by size, not digit by digit
      if (transform) CHECK(v_gpu.relative < 4 * v_cpu.relative + 1e-7);
      else CHECK(relative(v_gpu.relative, v_cpu.relative) < 1e-3);
      const sim::test::Differences w = sim::test::gpu_vs_cpu(gpu_out, cpu_out, true);
      INFO(w.text());
      CHECK(std::max(w.u, w.v) < kExactBound);
    }
  }
}

// Catches a device loop that runs a different number of iterations than
// the host's plan, swaps the iterates wrong on an odd count, reads a scaled
// dt, or writes the record's viscous fields into the wrong solve.
TEST_CASE("gpu: implicit viscous steps match the CPU, stepped from the host and on the device") {
  for (const Case& base : cases())
  for (const sim::ViscousSolver solver : {sim::ViscousSolver::chebyshev, sim::ViscousSolver::auto_}) {
    Case cs = base;
    cs.cfg.viscous_solver = solver;
    const sim::SimState s0 = sim::make_initial_state(cs.cfg);
    const bool transform = sim::viscous_takes_transform(cs.cfg, sim::make_constants(cs.cfg, s0.grid), false);
    if (solver == sim::ViscousSolver::auto_ && !transform) continue;
    CAPTURE(cs.name);
    CAPTURE(transform);
    REQUIRE(cs.cfg.implicit_viscosity());
    const bool closed = cs.cfg.left.kind != sim::BoundaryKind::outflow && cs.cfg.right.kind != sim::BoundaryKind::outflow;
    const Run cpu = run(cs.cfg, sim::BackendKind::cpu, false);
    const Run host = run(cs.cfg, sim::BackendKind::cuda, false);
    const Run device = run(cs.cfg, sim::BackendKind::cuda, true);
    CHECK_FALSE(host.asynchronous);
    REQUIRE(device.asynchronous);  // else the device loop is not exercised
    // Chebyshev: more than one iteration a solve on average, the stiff
    // regime; the transform solve: one correction a solve, three a step
    if (transform) CHECK(cpu.viscous_iterations == 3 * kSteps);
    else CHECK(cpu.viscous_iterations > 2 * 2 * kSteps);
    for (const Run* r : {&host, &device}) {
      const sim::test::Differences d = sim::test::gpu_vs_cpu(r->state, cpu.state, closed);
      INFO((r == &host ? "host steps: " : "device steps: ") << d.text());
      CHECK(std::max(d.u, d.v) < kExactBound);
      CHECK(d.phi < 1e-4);
      CHECK(r->viscous_iterations == cpu.viscous_iterations);
      CHECK(r->viscous_unconverged == cpu.viscous_unconverged);
    }
    // the device's plan and loop run the host path's iterates, bit for bit
    CHECK(sim::test::first_difference(device.state, host.state) == "");
  }
}

// Catches a memory plan that leaves out the solve's work fields (the check
// before a run would then pass a case the device cannot hold).
TEST_CASE("gpu: the memory plan holds the viscous solve's iterates with implicit viscosity only") {
  sim::Config implicit = sim::test::shipped_config("cavity.toml");
  REQUIRE(implicit.implicit_viscosity());
  sim::Config explicit_ = implicit;
  explicit_.viscous = sim::ViscousScheme::explicit_;
  const sim::SimState s = sim::make_initial_state(implicit);
  const sim::cuda::StencilOpts so =
      sim::cuda::make_stencil_opts(implicit.stencil, implicit.block_x, implicit.block_y, false, implicit.advection);
  const sim::cuda::MemoryPlan with = sim::cuda::plan_memory(implicit, s.grid, so);
  const sim::cuda::MemoryPlan without = sim::cuda::plan_memory(explicit_, s.grid, so);
  CHECK(with.viscous_work);
  CHECK_FALSE(without.viscous_work);
  CHECK(with.fields - without.fields == 4 * s.grid.size() * sizeof(sim::real));
  CHECK(with.reductions > without.reductions);
  CHECK(sim::cuda_memory_need(implicit, s.grid).grid ==
        with.fields + with.reductions + with.multigrid + with.transform + with.viscous_transform);
  // the cavity's walls allow the transform viscous solve: with cuFFT its
  // spectrum is the u component's, (2 nx) x ny points of the odd extension
  // along x; with the dense bases (gpu.dense_transform_cells) each
  // component's two bases and its coefficients
  REQUIRE(implicit.dense_transform_cells == 0);
  CHECK(with.viscous_transform >= 2 * static_cast<size_t>(s.grid.ny) * (s.grid.nx + 1) * 16);
  sim::Config dense = implicit;
  dense.dense_transform_cells = 1 << 20;
  const sim::cuda::MemoryPlan with_dense = sim::cuda::plan_memory(dense, s.grid, so);
  const size_t nx = static_cast<size_t>(s.grid.nx), ny = static_cast<size_t>(s.grid.ny);
  CHECK(with_dense.viscous_transform >=
        ((nx - 1) * (nx - 1) + ny * ny + nx * nx + (ny - 1) * (ny - 1)) * sizeof(double));
  CHECK(without.viscous_transform == 0);
}
