// SPDX-License-Identifier: MIT
// Uniform suspensions for the two-way coupling tests (CPU and GPU): a
// periodic box of fluid holding a regular lattice of identical particles,
// where both phases must follow the exact two-body solution.
#pragma once
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "support/cases.hpp"

namespace sim::test {

// A periodic square box (side 0.032 m, water-like fluid of density 1000 and
// viscosity 1e-6) on an n x n grid, holding `lattice` x `lattice` identical
// particles (density 2500, diameter 50 um) on a regular lattice over the
// whole box, all with velocity (vx, vy); the fluid is still. Whatever n,
// every u and v face sees the same particle mass (the bilinear weights of a
// lattice whose spacing divides the cell sum to the same value at every
// face), so the suspension is uniform, with the loading phi (domain.lz is
// chosen for it: the same lz on every grid) and dt = dt_over_tau tau_p.
struct UniformSuspension {
  Config cfg;
  SimState state;
  double phi = 0;           // particle mass / fluid mass, per face
  double tau = 0;           // Stokes relaxation time [s]
  double g_eff[2] = {0, 0};  // gravity with buoyancy [m/s^2]
};

inline UniformSuspension uniform_suspension(int n, int lattice, double phi, double dt_over_tau, double vx, double vy,
                                            double gx = 0, double gy = 0) {
  UniformSuspension u;
  Config& c = u.cfg;
  c = quiet_box(n);
  for (BoundarySide* s : {&c.left, &c.right, &c.bottom, &c.top}) s->kind = BoundaryKind::periodic;
  c.lx = c.ly = 0.032;
  c.density = 1000.0;
  c.viscosity = 1e-6;
  c.particle_density = 2500.0;
  c.gx = gx;
  c.gy = gy;
  c.two_way = true;
  const double d = 5e-5;
  c.regions.push_back({0.0, 0.0, c.lx, c.ly, static_cast<int64_t>(lattice) * lattice, d, d, vx, vy});
  const double m_p = c.particle_density * M_PI / 6.0 * d * d * d;
  // phi = (particles per cell) m_p / (rho dx dy lz), particles per cell = lattice^2 / n^2
  c.lz = double(lattice) * lattice * m_p / (c.density * c.lx * c.ly * phi);
  u.phi = phi;
  u.tau = c.particle_density * d * d / (18.0 * c.density * c.viscosity);
  c.dt = dt_over_tau * u.tau;
  const double buoy = 1.0 - c.density / c.particle_density;
  u.g_eff[0] = buoy * gx;
  u.g_eff[1] = buoy * gy;
  u.state = make_initial_state(c);
  HostParticles& p = u.state.particles;
  for (int b = 0; b < lattice; ++b)
    for (int a = 0; a < lattice; ++a) {
      const size_t r = static_cast<size_t>(b) * lattice + a;
      p.x[r] = static_cast<real>((a + 0.5) / lattice * c.lx);
      p.y[r] = static_cast<real>((b + 0.5) / lattice * c.ly);
    }
  return u;
}

// The same lattice suspension in a closed box (no-slip walls on all four
// sides), settling under gravity g (m/s^2, along y) from rest. The model's
// exact answer: the fluid stays at rest (the pressure carries the
// particles' weight) and every particle relaxes to the terminal velocity
// v_t = g_eff tau_p as exp(-t / tau_p), whatever the loading and dt.
inline UniformSuspension closed_box_suspension(int n, int lattice, double phi, double dt_over_tau, double g) {
  UniformSuspension s = uniform_suspension(n, lattice, phi, dt_over_tau, 0.0, 0.0, 0.0, g);
  for (BoundarySide* b : {&s.cfg.left, &s.cfg.right, &s.cfg.bottom, &s.cfg.top}) b->kind = BoundaryKind::wall;
  const HostParticles lattice_particles = s.state.particles;
  s.state = make_initial_state(s.cfg);
  s.state.particles = lattice_particles;
  return s;
}

// Mean fluid velocity over the owned faces of a periodic grid, and mean
// velocity of the alive particles, per component.
struct PhaseMeans {
  double fluid[2] = {0, 0};
  double particles[2] = {0, 0};
  double slip(int a) const { return particles[a] - fluid[a]; }
};

inline PhaseMeans phase_means(const SimState& s) {
  PhaseMeans m;
  const Grid& g = s.grid;
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) {
      m.fluid[0] += s.u[g.idx(i, j)];
      m.fluid[1] += s.v[g.idx(i, j)];
    }
  m.fluid[0] /= double(g.nx) * g.ny;
  m.fluid[1] /= double(g.nx) * g.ny;
  double alive = 0;
  for (size_t r = 0; r < s.particles.size(); ++r) {
    if (!s.particles.alive[r]) continue;
    m.particles[0] += s.particles.vx[r];
    m.particles[1] += s.particles.vy[r];
    ++alive;
  }
  m.particles[0] /= alive;
  m.particles[1] /= alive;
  return m;
}

// The exact two-body solution of a uniform suspension after time t, per
// component: slip s = v - u relaxes at rate (1 + phi)/tau towards
// g tau / (1 + phi); the mixture velocity (u + phi v)/(1 + phi) gains
// phi/(1 + phi) g t.
// `displacement` is the particles' (the time integral of their velocity).
struct TwoBody {
  double fluid, particles, slip, displacement;
};
inline TwoBody two_body(double u0, double v0, double phi, double tau, double g, double t) {
  const double s_inf = g * tau / (1.0 + phi), s0 = v0 - u0, k = (1.0 + phi) / tau;
  const double s = s_inf + (s0 - s_inf) * std::exp(-k * t);
  const double mix0 = (u0 + phi * v0) / (1.0 + phi), acc = phi / (1.0 + phi) * g;
  const double mix = mix0 + acc * t;
  const double slip_integral = s_inf * t + (s0 - s_inf) * -std::expm1(-k * t) / k;
  return {mix - phi / (1.0 + phi) * s, mix + s / (1.0 + phi), s, mix0 * t + 0.5 * acc * t * t + slip_integral / (1.0 + phi)};
}

// A channel 64 x 32 mm (h = 1 mm) with uniform inflow at 1 cm/s on the
// left, an outflow on the right, no-slip walls, a rectangle and a circle
// across the stream, water-like fluid starting uniform at the inflow speed,
// and a cloud of particles (diameter 200 um, density 2500, tau_p = 5.6 ms)
// moving at 5 cm/s upstream of the obstacles at loading phi (domain.lz set
// for it), more than two cells from every held face: dt = dt_over_tau tau_p.
struct ObstacleChannel {
  Config cfg;
  double tau = 0;
};

inline ObstacleChannel obstacle_channel(double phi, double dt_over_tau) {
  ObstacleChannel o;
  Config& c = o.cfg;
  c = quiet_box(64);
  c.ny = 32;
  c.lx = 0.064;
  c.ly = 0.032;
  c.density = 1000.0;
  c.viscosity = 1e-6;
  c.initial = InitialFlow::uniform;
  c.initial_u = 0.01;
  c.left.kind = BoundaryKind::inflow;
  c.left.speed = 0.01;
  c.right.kind = BoundaryKind::outflow;
  c.tolerance = 1e-7;
  c.solver = PressureSolverKind::multigrid;
  Obstacle box;
  box.shape = ObstacleShape::rectangle;
  box.x0 = 0.03;
  box.x1 = 0.036;
  box.y0 = 0.012;
  box.y1 = 0.021;
  Obstacle round;
  round.shape = ObstacleShape::circle;
  round.x = 0.048;
  round.y = 0.014;
  round.radius = 0.005;
  c.obstacles = {box, round};
  c.particle_density = 2500.0;
  c.gx = c.gy = 0;
  c.two_way = true;
  const double d = 2e-4, m_p = c.particle_density * M_PI / 6 * d * d * d;
  // 12 x 14 cells of cloud, 16 particles a cell
  const int64_t count = 12 * 14 * 16;
  c.regions.push_back({0.006, 0.009, 0.018, 0.023, count, d, d, 0.05, 0.01});
  c.lz = 16.0 * m_p / (c.density * c.dx() * c.dy() * phi);
  o.tau = c.particle_density * d * d / (18 * c.density * c.viscosity);
  c.dt = dt_over_tau * o.tau;
  return o;
}

// The mixture's momentum budget of a run of `steps` steps from the
// config's initial state: the change of fluid plus particle momentum less
// the impulse the diagnostics account for (the sides' intake less the
// obstacles' forces, step by step, times dt and the slab thickness),
// relative to the initial momentum; and the last step's forces.
struct MomentumBudget {
  double error = 0;          // max over x, y of |change - impulse| / |p0|
  double change[2] = {0, 0};  // relative to |p0|
  double drag_impulse = 0;    // x impulse of the obstacles' forces, relative to |p0|
  int64_t alive[2] = {0, 0};  // particles at the start and the end
  Diagnostics last;
};

inline MomentumBudget momentum_budget(const Config& cfg, int steps) {
  MomentumBudget b;
  auto sim = make_sim(cfg);
  const double lz = cfg.slab_thickness();
  const Diagnostics d0 = sim->diagnostics();
  double p0[2], impulse[2] = {0, 0}, t = sim->time();
  for (int a = 0; a < 2; ++a) p0[a] = d0.fluid_momentum[a] + d0.particle_momentum[a];
  const double scale = std::hypot(p0[0], p0[1]);
  for (int n = 0; n < steps; ++n) {
    sim->step();
    const Diagnostics d = sim->diagnostics();
    const double dt = sim->time() - t;
    t = sim->time();
    if (!d.boundaries) throw std::logic_error("momentum_budget: the case measures no boundary");
    for (int a = 0; a < 2; ++a) {
      double rate = 0;
      for (int side = 0; side < 4; ++side) rate += d.side_intake[side][a];
      for (size_t k = 0; k < cfg.obstacles.size(); ++k) rate -= d.obstacle_force[k][a];
      impulse[a] += dt * lz * rate;
    }
    for (size_t k = 0; k < cfg.obstacles.size(); ++k) b.drag_impulse += dt * lz * d.obstacle_force[k][0] / scale;
  }
  b.last = sim->diagnostics();
  b.alive[0] = d0.alive;
  b.alive[1] = b.last.alive;
  for (int a = 0; a < 2; ++a) {
    const double change = b.last.fluid_momentum[a] + b.last.particle_momentum[a] - p0[a];
    b.change[a] = change / scale;
    b.error = std::max(b.error, std::abs(change - impulse[a]) / scale);
  }
  return b;
}

}  // namespace sim::test
