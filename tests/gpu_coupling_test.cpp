// SPDX-License-Identifier: MIT
// The coupled particle step of the CUDA backend against the CPU reference
// at a particle loading phi >= 2, where the implicit coupling does most of
// the work: every particle layout, sampling path, deposit and sort setting,
// on a falling dense cloud in a closed box (walls: faces that are no
// unknown; gravity; a loading that varies from face to face) and on a
// uniform periodic suspension (the exact two-body case of
// tests/coupling_test.cpp); and the sorted deposit bitwise reproducible.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "support/compare.hpp"
#include "support/coupling.hpp"
#include "support/gpu.hpp"

namespace {

const int kSteps = sim::test::gpu_steps(20);

// Relative L2 bounds, as in gpu_backend_test.cpp: exact strategies differ
// from the CPU by rounding only (no FMA contraction; expf/expm1f of CUDA
// and glibc may differ in the last ulp); texture sampling has 9-bit
// weights; atomics add in arbitrary order.
constexpr double kExactBound = 1e-5;
const double kTextureBound = sim::test::small_mode() ? 5e-2 : 1e-3;
constexpr double kAtomicBound = 2e-4;
// deposit=gather: each face summed in a fixed order that is not the CPU's
// particle order, the rounding of a reordered sum; deposit=fixed: the exact
// sum of the contributions rounded to 2^-e, rounded once.
constexpr double kGatherBound = kAtomicBound;

// A closed box (0.032 m, water-like) with a dense cloud of particles of
// 50-100 um (dt/tau_p from 0.7 to 3) falling from the upper middle: about
// 23 particles per cell in the cloud, domain.lz set for a loading of about
// 3 there.
sim::Config falling_cloud() {
  sim::Config c = sim::test::quiet_box(32);
  c.lx = c.ly = 0.032;
  c.density = 1000.0;
  c.viscosity = 1e-6;
  c.particle_density = 2500.0;
  c.gy = -9.81;
  c.two_way = true;
  c.dt = 1e-3;
  const int64_t count = sim::test::small_mode() ? 1500 : 6000;
  c.regions.push_back({0.008, 0.012, 0.024, 0.028, count, 5e-5, 1e-4, 0.0, 0.0});
  const double d3 = (std::pow(1e-4, 4) - std::pow(5e-5, 4)) / (4 * 5e-5);  // mean d^3 of the uniform diameters
  const double m_cloud = count * c.particle_density * M_PI / 6 * d3;
  const double cells = 16.0 * 16.0, phi = 3.0;
  c.lz = m_cloud / cells / (c.density * 1e-3 * 1e-3 * phi);
  return c;
}

struct Variant {
  sim::Layout layout;
  sim::ConstantsIn constants;
  sim::Sampling sampling;
  sim::Deposit deposit;
  int64_t sort_every;
  void apply(sim::Config& c) const {
    c.layout = layout;
    c.constants = constants;
    c.sampling = sampling;
    c.deposit = deposit;
    c.sort_every = sort_every;
    c.backend = sim::BackendKind::cuda;
  }
  std::string name() const {
    sim::Config c;
    apply(c);
    return sim::describe_strategies(c, sim::StrategyScope::cuda);
  }
};

std::vector<Variant> variants() {
  std::vector<Variant> out;
  for (sim::Layout l : sim::enum_values<sim::Layout>())
    for (sim::ConstantsIn k : sim::enum_values<sim::ConstantsIn>())
      for (sim::Sampling m : sim::enum_values<sim::Sampling>())
        for (sim::Deposit d : sim::enum_values<sim::Deposit>())
          for (int64_t sort : {0, 3}) out.push_back({l, k, m, d, sort});
  return out;
}

sim::SimState run_from(const sim::Config& c, const sim::SimState& start, int steps) {
  sim::Simulation s(c, sim::make_backend(c, start.grid, nullptr), start);
  for (int k = 0; k < steps; ++k) s.step();
  return s.download();
}

// Every variant from `start` against the CPU from the same state.
// `pressure_is_noise`: the deposit of a uniform suspension has no
// divergence, so its pressure is rounding noise whose relative difference
// means nothing; u and v carry the coupling there.
void compare_variants(const std::string& what, const sim::Config& base, const sim::SimState& start, bool closed,
                      bool pressure_is_noise = false) {
  sim::Config cpu_cfg = base;
  cpu_cfg.backend = sim::BackendKind::cpu;
  const sim::SimState cpu = run_from(cpu_cfg, start, kSteps);
  double worst_exact = 0, worst_texture = 0, worst_atomic = 0, worst_gather = 0;
  for (const Variant& var : variants()) {
    sim::Config c = base;
    var.apply(c);
    INFO(what << ": " << var.name());
    const sim::test::Differences d = sim::test::gpu_vs_cpu(run_from(c, start, kSteps), cpu, closed);
    INFO(d.text());
    CHECK(d.same_slots);
    CHECK(d.same_counters);
    const bool tex = var.sampling == sim::Sampling::texture, atom = var.deposit == sim::Deposit::atomic;
    const bool gath = var.deposit == sim::Deposit::gather || var.deposit == sim::Deposit::fixed;
    const double bound = tex ? kTextureBound : atom ? kAtomicBound : gath ? kGatherBound : kExactBound;
    double& worst = tex ? worst_texture : atom ? worst_atomic : gath ? worst_gather : worst_exact;
    const double fluid = pressure_is_noise ? std::max(d.u, d.v) : d.fluid();
    worst = std::max({worst, fluid, d.particles()});
    CHECK(fluid < bound);
    CHECK(d.particles() < bound);
  }
  MESSAGE(what << " after " << kSteps << " steps, max relative L2 difference to the CPU: exact " << worst_exact
               << " (bound " << kExactBound << "), texture " << worst_texture << " (bound " << kTextureBound
               << "), atomic " << worst_atomic << " (bound " << kAtomicBound << "), gather " << worst_gather
               << " (bound " << kGatherBound << ")");
}

}  // namespace

TEST_CASE("gpu: the coupled step matches the CPU on a falling cloud at loading 3, every layout, sampling and deposit") {
  const sim::Config c = falling_cloud();
  compare_variants("falling cloud", c, sim::make_initial_state(c), true);
}

TEST_CASE("gpu: the coupled step matches the CPU on a uniform suspension at loading 3 and dt = tau_p") {
  const sim::test::UniformSuspension s = sim::test::uniform_suspension(16, 48, 3.0, 1.0, 0.01, -0.006);
  compare_variants("uniform suspension", s.cfg, s.state, true, true);
  // and the GPU's slip decays at the exact rate, as the CPU's does
  sim::Config c = s.cfg;
  Variant{sim::Layout::soa, sim::ConstantsIn::constant, sim::Sampling::software, sim::Deposit::sorted, 0}.apply(c);
  const sim::test::PhaseMeans m0 = sim::test::phase_means(s.state);
  const sim::SimState one = run_from(c, s.state, 1);
  const double ratio = sim::test::phase_means(one).slip(0) / m0.slip(0);
  MESSAGE("GPU slip ratio after one step " << ratio << ", exact " << std::exp(-4.0));
  CHECK(ratio == doctest::Approx(std::exp(-4.0)).epsilon(1e-4));  // rounding of the O(V) velocities: ~2e-5 of the ratio
}

TEST_CASE("gpu: the coupled step with deposit=sorted, gather or fixed is bitwise reproducible at loading 3") {
  const sim::Config base = falling_cloud();
  const sim::SimState start = sim::make_initial_state(base);
  for (sim::Deposit dep : {sim::Deposit::sorted, sim::Deposit::gather, sim::Deposit::fixed})
    for (sim::Layout l : sim::enum_values<sim::Layout>())
      for (int64_t sort : {0, 3}) {
        sim::Config c = base;
        Variant{l, sim::ConstantsIn::constant, sim::Sampling::packed, dep, sort}.apply(c);
        INFO("deposit=" << sim::to_string(dep) << " layout=" << sim::to_string(l) << " sort_every=" << sort);
        sim::test::check_identical(run_from(c, start, kSteps), run_from(c, start, kSteps));
      }
}

// deposit=gather keys each particle at its canonical slot (id % capacity),
// so a node's particles are summed in the same order whatever order the
// store holds them in; deposit=fixed adds integers, whose sum has no order:
// sorting the store by cell every 10 steps gives the same bits as never
// sorting it (and so also the same as within rounding), on the closed
// falling cloud and on the periodic suspension (faces reached across the
// periodic sides).
TEST_CASE("gpu: the coupled step with deposit=gather or fixed is the same with sort_every 0 and 10") {
  const sim::test::UniformSuspension s = sim::test::uniform_suspension(16, 48, 3.0, 1.0, 0.01, -0.006);
  const sim::Config cloud = falling_cloud();
  const std::pair<sim::Config, sim::SimState> cases[] = {{cloud, sim::make_initial_state(cloud)}, {s.cfg, s.state}};
  for (const auto& [base, start] : cases)
    for (sim::Deposit dep : {sim::Deposit::gather, sim::Deposit::fixed})
    for (sim::Layout l : sim::enum_values<sim::Layout>()) {
      sim::Config unsorted = base, sorted = base;
      Variant{l, sim::ConstantsIn::constant, sim::Sampling::software, dep, 0}.apply(unsorted);
      Variant{l, sim::ConstantsIn::constant, sim::Sampling::software, dep, 10}.apply(sorted);
      INFO("deposit=" << sim::to_string(dep) << " layout=" << sim::to_string(l)
                      << " periodic=" << (base.left.kind == sim::BoundaryKind::periodic));
      const sim::SimState a = run_from(unsorted, start, kSteps), b = run_from(sorted, start, kSteps);
      const sim::test::Differences d = sim::test::gpu_vs_cpu(a, b, true);
      INFO(d.text());
      CHECK(std::max(d.u, d.v) < kExactBound);  // the suspension's pressure is rounding noise
      CHECK(d.particles() < kExactBound);
      sim::test::check_identical(a, b);
    }
}

// The closed-box settling of tests/coupling_test.cpp on the GPU, with the
// step on the device (graphs), for every sampling and deposit: at t = 20
// tau_p the fluid at rest and the particles at v_t within 1e-3, loadings 2
// and 10, dt = tau_p, 10 tau_p and 20 tau_p (one step from rest). Texture
// sampling reads the free fluid with 9-bit weights while the projection's
// share is read with the deposit's: 1e-2.
TEST_CASE("gpu: a uniform suspension in a closed box settles at v_t with the fluid at rest, every sampling and deposit") {
  for (double phi : {2.0, 10.0})
    for (double dt_over_tau : {1.0, 10.0, 20.0}) {
      const sim::test::UniformSuspension s = sim::test::closed_box_suspension(32, 64, phi, dt_over_tau, -9.81);
      for (sim::Sampling m : sim::enum_values<sim::Sampling>())
        for (sim::Deposit dep : sim::enum_values<sim::Deposit>()) {
          sim::Config c = s.cfg;
          Variant{sim::Layout::soa, sim::ConstantsIn::constant, m, dep, 0}.apply(c);
          INFO("phi = " << phi << ", dt/tau = " << dt_over_tau << ", " << sim::to_string(m) << ", "
                        << sim::to_string(dep));
          sim::Simulation sim(c, sim::make_backend(c, s.state.grid, nullptr), s.state);
          const int steps = static_cast<int>(std::lround(20.0 / dt_over_tau));
          for (int n = 0; n < steps; ++n) sim.step();
          const sim::Diagnostics d = sim.diagnostics();
          const double vt = s.g_eff[1] * s.tau;
          const double ratio = d.particle_mean_v[1] / vt, fluid = d.max_speed / std::abs(vt);
          INFO("<v_y>/v_t = " << ratio << ", fluid max|u|/v_t = " << fluid);
          const bool tex = m == sim::Sampling::texture;
          CHECK(std::abs(ratio - 1) < (tex ? 1e-2 : 1e-3));
          CHECK(fluid < (tex ? 1e-2 : 1e-3));
          if (m == sim::Sampling::software && dep == sim::Deposit::fixed)
            MESSAGE("phi " << phi << ", dt/tau " << dt_over_tau << ": <v_y>/v_t = " << ratio
                           << ", fluid max|u|/v_t = " << fluid);
        }
    }
}

// deposit=fixed scales its integers from a bound on what one particle
// deposits. A's contribution is m (alpha s - (beta - 1) g dt) with s the
// slip against the fluid: four particles at rest in a stream of 100 m/s
// (alpha ~ 0.5) deposit ~50 times a bound taken from their own velocity
// (m max(1 m/s, |v| + |g dt|)), and with 4 slots, all near one face, its
// sum passes the integers' headroom (4 to 8 times bound x slots). The same
// step as the CPU's.
TEST_CASE("gpu: deposit=fixed bounds the drag by the particles' slip, not their velocity (particles at rest in a fast stream)") {
  sim::Config c = sim::test::quiet_box(16);
  for (sim::BoundarySide* s : {&c.left, &c.right, &c.bottom, &c.top}) s->kind = sim::BoundaryKind::periodic;
  c.lx = c.ly = 1.6;
  c.density = 1000.0;
  c.viscosity = 1e-3;  // tau_p = 0.14 ms for d = 1 mm
  c.particle_density = 2500.0;
  c.initial = sim::InitialFlow::uniform;
  c.initial_u = 100.0;
  c.two_way = true;
  c.dt = 1e-4;
  c.regions.push_back({0.70, 0.70, 0.701, 0.701, 4, 1e-3, 1e-3, 0.0, 0.0});
  c.lz = 1e-4;
  sim::SimState s[2];
  for (const sim::BackendKind b : {sim::BackendKind::cpu, sim::BackendKind::cuda}) {
    sim::Config cb = c;
    cb.backend = b;
    if (b == sim::BackendKind::cuda) cb.deposit = sim::Deposit::fixed;
    s[b == sim::BackendKind::cuda] = sim::test::run_steps(cb, 1);
  }
  const sim::test::Differences d = sim::test::gpu_vs_cpu(s[1], s[0], false);
  INFO(d.text());
  CHECK(d.same_slots);
  CHECK(d.fluid() < kGatherBound);
  CHECK(d.particles() < kGatherBound);
}

// The momentum budget of tests/coupling_test.cpp's obstacle channel (an
// inflow, an outflow, walls, two obstacles, a cloud at loading 2 and 10) on
// the GPU with the step on the device (graphs), every sampling and deposit
// and quick advection once: over 10 tau_p at dt = tau_p the mixture's
// momentum changes by the sides' intake less the obstacles' forces to 1e-6
// of its start (measured on an H200: 5e-9 to 2.3e-8), and the last step's
// forces are the CPU's to 5e-4 of the largest (measured: up to 9.6e-5 at
// loading 10). Texture sampling reads the fluid with 9-bit weights while
// the particles deposit with exact ones, so the particles' drag and its
// reaction differ by that rounding: the budget to 2e-5 (measured 3e-6 to
// 3.9e-6), the forces to 5e-3 (3.7e-4).
TEST_CASE("gpu: with an inflow, an outflow and obstacles the momentum budget closes and the forces are the CPU's, every sampling and deposit") {
  for (double phi : {2.0, 10.0}) {
    const sim::test::ObstacleChannel o = sim::test::obstacle_channel(phi, 1.0);
    for (sim::AdvectionScheme scheme : {sim::AdvectionScheme::central, sim::AdvectionScheme::quick}) {
      sim::Config cpu_cfg = o.cfg;
      cpu_cfg.advection = scheme;
      const sim::test::MomentumBudget cpu = sim::test::momentum_budget(cpu_cfg, 10);
      double largest = 0;
      for (int k = 0; k < 2; ++k)
        for (int a = 0; a < 2; ++a) largest = std::max(largest, std::abs(cpu.last.obstacle_force[k][a]));
      for (sim::Sampling m : sim::enum_values<sim::Sampling>())
        for (sim::Deposit dep : sim::enum_values<sim::Deposit>()) {
          if (scheme == sim::AdvectionScheme::quick && (m != sim::Sampling::software || dep != sim::Deposit::sorted))
            continue;
          sim::Config c = cpu_cfg;
          Variant{sim::Layout::soa, sim::ConstantsIn::constant, m, dep, 0}.apply(c);
          const sim::test::MomentumBudget gpu = sim::test::momentum_budget(c, 10);
          double force_diff = 0;
          for (int k = 0; k < 2; ++k)
            for (int a = 0; a < 2; ++a)
              force_diff = std::max(force_diff, std::abs(gpu.last.obstacle_force[k][a] - cpu.last.obstacle_force[k][a]));
          force_diff /= largest;
          INFO("phi = " << phi << ", " << sim::to_string(scheme) << ", " << sim::to_string(m) << ", "
                        << sim::to_string(dep) << ": budget error " << gpu.error << ", forces off the CPU's by "
                        << force_diff);
          if (m == sim::Sampling::software && dep == sim::Deposit::sorted)
            MESSAGE("phi " << phi << ", " << sim::to_string(scheme) << ": budget error " << gpu.error
                           << " (CPU " << cpu.error << "), obstacle forces off the CPU's by " << force_diff);
          const bool tex = m == sim::Sampling::texture;
          CHECK(gpu.alive[1] == gpu.alive[0]);
          CHECK(gpu.drag_impulse > 1e-3);
          CHECK(gpu.error < (tex ? 2e-5 : 1e-6));
          CHECK(force_diff < (tex ? 5e-3 : 5e-4));
        }
    }
  }
}
