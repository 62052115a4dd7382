// SPDX-License-Identifier: MIT
// stencil=temporal: PressureOps::jacobi_sweeps(n) against n single sweeps
// of the vector and ldg variants (each followed by the pressure halo fill),
// bit for bit, on grids that are no multiple of the kernel's windows, with
// walls, inflow and outflow sides, n no multiple of the pass depth; and the
// fallbacks (a periodic side, obstacles) against single sweeps.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda/cuda_backend.hpp"
#include "sim/model/backend.hpp"
#include "sim/model/constants.hpp"
#include "sim/model/random.hpp"
#include "sim/model/simulation.hpp"
#include "sim/model/state.hpp"

namespace {

using sim::BoundaryKind;

struct Sides {
  BoundaryKind left, right, bottom, top;
};

sim::Config make_case(int nx, int ny, Sides s, bool obstacle = false) {
  sim::Config c;
  c.nx = nx;
  c.ny = ny;
  c.lx = 1.0;
  c.ly = static_cast<double>(ny) / nx;
  c.left = {s.left, s.left == BoundaryKind::inflow ? 1.0 : 0.0};
  c.right = {s.right, s.right == BoundaryKind::inflow ? 1.0 : 0.0};
  c.bottom = {s.bottom, s.bottom == BoundaryKind::inflow ? 1.0 : 0.0};
  c.top = {s.top, s.top == BoundaryKind::inflow ? 1.0 : 0.0};
  c.obstacles.clear();
  if (obstacle) {
    sim::Obstacle o;
    o.shape = sim::ObstacleShape::circle;
    o.x = 0.4;
    o.y = 0.45 * c.ly;
    o.radius = 0.2 * std::min(1.0, c.ly);
    c.obstacles = {o};
  }
  c.regions.clear();
  c.capacity = 0;
  c.inject = sim::ParticleInjection{};
  c.two_way = false;
  c.backend = sim::BackendKind::cuda;
  return c;
}

// Random velocity and pressure in [-1, 1] on every point, halo and padding included.
sim::SimState random_state(const sim::Config& c, uint64_t seed) {
  sim::SimState s = sim::make_initial_state(c);
  for (size_t p = 0; p < s.phi.size(); ++p) {
    s.u[p] = static_cast<sim::real>(2 * sim::uniform01(seed, p, 0) - 1);
    s.v[p] = static_cast<sim::real>(2 * sim::uniform01(seed, p, 1) - 1);
    s.phi[p] = static_cast<sim::real>(2 * sim::uniform01(seed, p, 2) - 1);
  }
  return s;
}

// phi after `n` Jacobi sweeps from the random state under `stencil`, through
// jacobi_sweeps(n) or n calls of jacobi_sweep().
std::vector<sim::real> sweep(const sim::Config& base, const sim::SimState& s, sim::Stencil stencil, int n, bool batched,
                             bool fill_first) {
  sim::Config c = base;
  c.stencil = stencil;
  std::unique_ptr<sim::Backend> b = sim::make_cuda_backend(c, s.grid);
  sim::Constants k = sim::make_constants(c, s.grid);
  k.dt = static_cast<sim::real>(1e-3);
  b->set_constants(k);
  b->upload(s);
  b->fill_velocity_halo();
  b->compute_rhs();
  if (fill_first) b->fill_pressure_halo();  // else the first sweep reads the random halo as stored
  if (batched) b->jacobi_sweeps(n);
  else
    for (int q = 0; q < n; ++q) b->jacobi_sweep();
  sim::SimState out = s;
  b->download(out);
  return out.phi;
}

// Cells (i, j) in [-1, nx] x [-1, ny] (the padding is never written) whose bits differ.
int64_t differing(const std::vector<sim::real>& a, const std::vector<sim::real>& b, const sim::Grid& g,
                  std::string& first) {
  int64_t n = 0;
  for (int j = -1; j <= g.ny; ++j)
    for (int i = -1; i <= g.nx; ++i) {
      const size_t p = g.idx(i, j);
      uint32_t x, y;
      std::memcpy(&x, &a[p], 4);
      std::memcpy(&y, &b[p], 4);
      if (x != y && n++ == 0)
        first = "(" + std::to_string(i) + ", " + std::to_string(j) + "): " + std::to_string(a[p]) + " vs " +
                std::to_string(b[p]);
    }
  return n;
}

std::string sides_text(const sim::Config& c) {
  std::string s;
  for (const sim::BoundarySide* b : {&c.left, &c.right, &c.bottom, &c.top})
    s += std::string(s.empty() ? "" : "/") + std::string(sim::to_string(b->kind));
  return s;
}

// temporal's jacobi_sweeps(n) == n single sweeps of `reference`, bit for bit.
void check_equal(const sim::Config& c, int n, sim::Stencil reference, bool fill_first = true) {
  const sim::SimState s = random_state(c, 17u + static_cast<uint64_t>(c.nx) * 131u + static_cast<uint64_t>(c.ny));
  const std::vector<sim::real> want = sweep(c, s, reference, n, false, fill_first);
  const std::vector<sim::real> got = sweep(c, s, sim::Stencil::temporal, n, true, fill_first);
  std::string first;
  const int64_t bad = differing(got, want, s.grid, first);
  INFO(c.nx << " x " << c.ny << " " << sides_text(c) << (c.obstacles.empty() ? "" : " obstacle") << " n=" << n
            << " against " << sim::to_string(reference) << (fill_first ? "" : " (stored halo)") << ": " << bad
            << " cells differ, first " << first);
  CHECK(bad == 0);
}

const Sides kWalls{BoundaryKind::wall, BoundaryKind::wall, BoundaryKind::wall, BoundaryKind::wall};
const Sides kChannel{BoundaryKind::inflow, BoundaryKind::outflow, BoundaryKind::wall, BoundaryKind::free_slip};
const Sides kMixed{BoundaryKind::outflow, BoundaryKind::inflow, BoundaryKind::outflow, BoundaryKind::wall};
const Sides kOutflow{BoundaryKind::outflow, BoundaryKind::outflow, BoundaryKind::outflow, BoundaryKind::outflow};

}  // namespace

TEST_CASE("temporal Jacobi: passes equal single sweeps on closed, inflow and outflow sides") {
  // widths around the 120-element windows and the lane of ghost column nx
  // (element nx + 1 at every lane of a float4); heights around the
  // 256-row warps and the 1024-row blocks
  const std::vector<std::pair<int, int>> shapes{{1, 1},    {2, 3},     {3, 2},    {4, 5},   {5, 7},
                                                {118, 9},  {119, 33},  {120, 17}, {121, 4}, {122, 40},
                                                {300, 517}, {37, 1300}, {250, 260}};
  for (const auto& [nx, ny] : shapes)
    for (const Sides& sd : {kWalls, kChannel, kMixed, kOutflow}) {
      const sim::Config c = make_case(nx, ny, sd);
      for (int n : {1, 4, 7}) check_equal(c, n, sim::Stencil::vector);
    }
}

TEST_CASE("temporal Jacobi: every remainder, both references, the stored halo") {
  const sim::Config c = make_case(257, 301, kChannel);
  for (int n = 1; n <= 10; ++n) check_equal(c, n, sim::Stencil::vector);
  for (int n : {3, 8, 9}) check_equal(c, n, sim::Stencil::ldg);
  for (int n : {1, 5}) check_equal(c, n, sim::Stencil::vector, false);
  const sim::Config w = make_case(130, 1030, kMixed);
  for (int n : {2, 6}) check_equal(w, n, sim::Stencil::vector, false);
}

TEST_CASE("temporal Jacobi: the fallbacks (periodic side, obstacles) equal single sweeps") {
  const Sides periodic{BoundaryKind::periodic, BoundaryKind::periodic, BoundaryKind::periodic, BoundaryKind::periodic};
  const Sides periodic_x{BoundaryKind::periodic, BoundaryKind::periodic, BoundaryKind::wall, BoundaryKind::wall};
  const Sides periodic_y{BoundaryKind::inflow, BoundaryKind::outflow, BoundaryKind::periodic, BoundaryKind::periodic};
  for (const Sides& sd : {periodic, periodic_x, periodic_y}) {
    const sim::Config c = make_case(131, 97, sd);
    for (int n : {1, 6}) check_equal(c, n, sim::Stencil::vector);
  }
  for (const Sides& sd : {kWalls, kChannel}) {
    const sim::Config c = make_case(160, 70, sd, true);
    for (int n : {1, 5}) {
      check_equal(c, n, sim::Stencil::ldg);
      check_equal(c, n, sim::Stencil::vector);
    }
  }
}

TEST_CASE("temporal Jacobi: a stepped run with the Jacobi solver equals stencil=vector") {
  // check_every = 5: the driver hands jacobi_sweeps passes of 4 and 1
  sim::Config c = make_case(150, 110, Sides{BoundaryKind::wall, BoundaryKind::wall, BoundaryKind::wall, BoundaryKind::wall});
  c.top = {BoundaryKind::wall, 1.0};
  c.solver = sim::PressureSolverKind::jacobi;
  c.check_every = 5;
  c.max_iterations = 200;
  c.tolerance = 1e-12;  // never converged: every step sweeps max_iterations
  c.max_failures = 1000;  // and that is not a failure here
  c.gx = c.gy = 0;
  auto run = [&](sim::Stencil st) {
    sim::Config x = c;
    x.stencil = st;
    const sim::SimState s0 = sim::make_initial_state(x);
    sim::Simulation simulation(x, sim::make_cuda_backend(x, s0.grid), s0);
    std::vector<int> iterations;
    for (int k = 0; k < 3; ++k) iterations.push_back(simulation.step().pressure.iterations);
    return std::make_pair(simulation.download(), iterations);
  };
  const auto [want, want_it] = run(sim::Stencil::vector);
  const auto [got, got_it] = run(sim::Stencil::temporal);
  CHECK(got_it == want_it);
  for (const auto& [a, b, name] : {std::tuple{&got.u, &want.u, "u"}, std::tuple{&got.v, &want.v, "v"},
                                   std::tuple{&got.phi, &want.phi, "phi"}}) {
    std::string first;
    INFO(name);
    CHECK(differing(*a, *b, got.grid, first) == 0);
  }
}
