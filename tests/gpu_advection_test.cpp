// SPDX-License-Identifier: MIT
// fluid.advection = "quick" on the GPU against the CPU reference: every
// stencil variant (naive, ldg, vector, shared; the shared tile with its
// two-cell halo in several block shapes) and both constants variants, on
// cases with obstacles, with inflow, outflow and walls, and with periodic
// sides (the points two cells out read at their periodic images).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cuda/kernels.hpp"
#include "sim/model/halo.hpp"
#include "support/gpu.hpp"

namespace {

const int kSteps = sim::test::gpu_steps(20);
// As tests/gpu_backend_test.cpp: the exact strategies differ from the CPU
// only by reduction order (no FMA contraction in either).
constexpr double kExactBound = 1e-5;

sim::SimState run_from(const sim::Config& c, const sim::SimState& start, int steps) {
  sim::Simulation sim(c, sim::make_backend(c, start.grid, nullptr), start);
  for (int k = 0; k < steps; ++k) sim.step();
  return sim.download();
}

// A double shear layer on a periodic unit square (as tests/advection_test.cpp).
sim::SimState shear_state(const sim::Config& c) {
  sim::SimState s = sim::make_initial_state(c);
  const sim::Grid& g = s.grid;
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i <= g.nx; ++i) {
      const double y = (j + 0.5) * c.dy();
      s.u[g.idx(i, j)] = static_cast<float>(y <= 0.5 ? std::tanh((y - 0.25) * 30) : std::tanh((0.75 - y) * 30));
    }
  for (int j = 0; j <= g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) s.v[g.idx(i, j)] = static_cast<float>(0.05 * std::sin(2 * M_PI * (i + 0.5) * c.dx()));
  const sim::Constants k = sim::make_constants(c, g);
  for (int j = 0; j <= g.ny; ++j) sim::halo_velocity_x(s.u.data(), s.v.data(), j, k);
  for (int i = -1; i <= g.nx + 1; ++i) sim::halo_velocity_y(s.u.data(), s.v.data(), i, k);
  return s;
}

struct Case {
  std::string name;
  sim::Config cfg;
  sim::SimState start;
};

std::vector<Case> quick_cases() {
  std::vector<Case> out;
  const bool small = sim::test::small_mode();
  {  // obstacle, inflow, outflow, walls; Re = 10,000, where advection rules
    sim::Config c = sim::test::gpu_case("channel.toml", kSteps);
    c.viscosity = 3e-5;
    c.advection = sim::AdvectionScheme::quick;
    out.push_back({"channel at Re 10,000", c, sim::make_initial_state(c)});
  }
  {  // walls and a moving lid
    sim::Config c = sim::test::gpu_case("cavity.toml", kSteps);
    c.viscosity = 1e-4;
    c.advection = sim::AdvectionScheme::quick;
    out.push_back({"cavity at Re 10,000", c, sim::make_initial_state(c)});
  }
  {  // periodic on all sides, no obstacle
    sim::Config c;
    c.source = "test";
    c.nx = c.ny = small ? 32 : 128;
    c.viscosity = 1e-4;
    c.gx = c.gy = 0;
    c.density = 1;
    c.tolerance = 1e-6;
    for (sim::BoundarySide* s : {&c.left, &c.right, &c.bottom, &c.top}) s->kind = sim::BoundaryKind::periodic;
    c.advection = sim::AdvectionScheme::quick;
    out.push_back({"double shear layer, periodic", c, shear_state(c)});
    // periodic in x, walls in y, obstacles away from the periodic side and
    // one against the bottom wall; driven by a body force
    sim::Config p = c;
    p.nx = small ? 48 : 192;
    p.ny = small ? 16 : 64;
    p.lx = 3;
    p.bottom.kind = p.top.kind = sim::BoundaryKind::wall;
    p.force_x = 0.5;
    p.initial = sim::InitialFlow::uniform;
    p.initial_u = 1;
    sim::Obstacle cyl;
    cyl.x = 1.0;
    cyl.y = 0.55;
    cyl.radius = 0.12;
    sim::Obstacle block;
    block.shape = sim::ObstacleShape::rectangle;
    block.x0 = 2.0;
    block.x1 = 2.3;
    block.y0 = 0.0;
    block.y1 = 0.3;
    p.obstacles = {cyl, block};
    p.solver = sim::PressureSolverKind::multigrid;
    out.push_back({"periodic channel with obstacles", p, sim::make_initial_state(p)});
  }
  return out;
}

}  // namespace

// Catches a tile that misplaces its two-cell halo (offset, pitch, rows), a
// periodic image read wrong on the device, a clearance field missing or
// misaligned on the device, or a stage kernel still instantiated with the
// radius-1 neighbourhood: each puts the GPU far from the CPU (the CPU's
// order and leak tests in tests/advection_test.cpp pin the CPU itself).
TEST_CASE("gpu: quick advection matches the CPU in every stencil and constants variant") {
  for (const Case& cs : quick_cases()) {
    sim::Config cpu_cfg = cs.cfg;
    cpu_cfg.backend = sim::BackendKind::cpu;
    const sim::SimState cpu = run_from(cpu_cfg, cs.start, kSteps);
    const bool closed = cs.cfg.left.kind != sim::BoundaryKind::outflow && cs.cfg.right.kind != sim::BoundaryKind::outflow;
    double worst = 0;
    std::string worst_at;
    struct Shape {
      int bx, by;
    };
    for (sim::Stencil st : sim::test::stencils())
      for (sim::ConstantsIn k : sim::enum_values<sim::ConstantsIn>()) {
        // the shared tile also in a narrow block (pitch bx + 32) and an odd one (odd pitch)
        std::vector<Shape> shapes{{0, 0}};
        if (st == sim::Stencil::shared) shapes.insert(shapes.end(), {{16, 16}, {48, 2}, {64, 4}});
        for (const Shape& sh : shapes) {
          sim::Config c = cs.cfg;
          c.backend = sim::BackendKind::cuda;
          c.stencil = st;
          c.constants = k;
          c.block_x = sh.bx;
          c.block_y = sh.by;
          const std::string name = cs.name + ": stencil=" + std::string(sim::to_string(st)) +
                                   " constants=" + std::string(sim::to_string(k)) + " block=" + std::to_string(sh.bx) +
                                   "x" + std::to_string(sh.by);
          INFO(name);
          const sim::test::Differences d = sim::test::gpu_vs_cpu(run_from(c, cs.start, kSteps), cpu, closed);
          INFO(d.text());
          // the velocities to the exact bound; the pressure, the solve of
          // div(u*)/dt where the divergence is a small difference of large
          // face values at Re 10,000, to 1e-4 (measured 6.1e-5, the same in
          // every variant: float32 rounding of that difference, CPU vs GPU)
          CHECK(std::max(d.u, d.v) < kExactBound);
          CHECK(d.phi < 1e-4);
          if (d.fluid() >= worst) {
            worst = d.fluid();
            worst_at = name;
          }
        }
      }
    MESSAGE(cs.name << " after " << kSteps << " steps: worst relative L2 difference to the CPU " << worst << " ["
                    << worst_at << "] (bound " << kExactBound << ")");
  }
}

// Catches a tile size that leaves out the second halo ring or the padding:
// the shared memory the launch asks for must hold every row the kernel reads.
TEST_CASE("gpu: the radius-2 tile of quick: pitch and bytes") {
  using sim::cuda::shared_tile_bytes;
  using sim::cuda::tile_pitch;
  CHECK(tile_pitch(32, 1) == 34);  // central: unchanged
  CHECK(tile_pitch(32, 2) == 36);
  CHECK(tile_pitch(16, 2) == 48);  // two rows per warp: rows 16 banks apart
  CHECK(tile_pitch(48, 2) == 53);  // odd
  CHECK(shared_tile_bytes(2, 32, 16) == 2u * 34 * 18 * 4);
  CHECK(shared_tile_bytes(2, 32, 16, 2) == 2u * 36 * 20 * 4);
  const sim::cuda::StencilOpts o =
      sim::cuda::make_stencil_opts(sim::Stencil::shared, 0, 0, true, sim::AdvectionScheme::quick);
  CHECK(o.stage_radius() == 2);
  CHECK(sim::cuda::make_stencil_opts(sim::Stencil::shared, 0, 0, true).stage_radius() == 1);
}
