// SPDX-License-Identifier: MIT
#include "sim/model/state.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include "sim/model/constants.hpp"
#include "sim/model/halo.hpp"
#include "sim/model/random.hpp"
#include "sim/model/stability.hpp"

namespace sim {
namespace {

// Random streams of one particle: position x, y, diameter, retries after.
enum Stream : uint32_t { kStreamX = 0, kStreamY = 1, kStreamD = 2 };

}  // namespace

int obstacle_at(const Config& cfg, double x, double y, double margin) {
  for (size_t k = 0; k < cfg.obstacles.size(); ++k)
    if (inside_obstacle(obstacle_shape<double>(cfg.obstacles[k]), x, y, margin)) return static_cast<int>(k);
  return -1;
}

bool inside_obstacle(const Config& cfg, double x, double y, double margin) {
  return obstacle_at(cfg, x, y, margin) >= 0;
}

namespace {

// The grid, the solid cells, and the initial flow (none through or inside
// obstacles), halo included.
void initial_fluid(const Config& cfg, SimState& s) {
  const Grid g = Grid::make(cfg.nx, cfg.ny, cfg.lx, cfg.ly);
  s.grid = g;
  s.u.assign(g.size(), 0);
  s.v.assign(g.size(), 0);
  s.phi.assign(g.size(), 0);
  s.open.assign(g.size(), 1);
  const double dx = cfg.dx(), dy = cfg.dy();
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i)
      if (inside_obstacle(cfg, (i + 0.5) * dx, (j + 0.5) * dy, 0.0)) s.open[g.idx(i, j)] = 0;

  const double kx = 2.0 * M_PI / cfg.lx, ky = 2.0 * M_PI / cfg.ly;
  for (int j = -1; j <= g.ny + 1; ++j)
    for (int i = -1; i <= g.nx + 1; ++i) {
      const double xu = i * dx, yu = (j + 0.5) * dy;  // u face
      const double xv = (i + 0.5) * dx, yv = j * dy;  // v face
      double u = 0, v = 0;
      switch (cfg.initial) {
        case InitialFlow::rest: break;
        case InitialFlow::uniform: u = cfg.initial_u; v = cfg.initial_v; break;
        case InitialFlow::taylor_green:
          u = cfg.initial_u * std::sin(kx * xu) * std::cos(ky * yu);
          v = -cfg.initial_u * (kx / ky) * std::cos(kx * xv) * std::sin(ky * yv);
          break;
      }
      s.u[g.idx(i, j)] = static_cast<real>(u);
      s.v[g.idx(i, j)] = static_cast<real>(v);
    }
  // No flow through or inside obstacles.
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i)
      if (s.open[g.idx(i, j)] == 0) {
        s.u[g.idx(i, j)] = s.u[g.idx(i + 1, j)] = 0;
        s.v[g.idx(i, j)] = s.v[g.idx(i, j + 1)] = 0;
      }
  const Constants k = make_constants(cfg, g);
  for (int j = 0; j <= g.ny; ++j) halo_velocity_x(s.u.data(), s.v.data(), j, k);
  for (int i = -1; i <= g.nx + 1; ++i) halo_velocity_y(s.u.data(), s.v.data(), i, k);
}

// The seeded particles of the regions, and the next id. `keep` null: in
// the run's slots; else only those the caller keeps, as the live records
// of a compacted store (in slot order).
void seed_particles(const Config& cfg, SimState& s, const std::function<bool(double, double)>* keep) {
  // Particles: region r's particles take the next ids in order; a draw
  // that lands in an obstacle is redrawn on later streams, up to 64 times
  // (a region half inside obstacles then loses a particle with probability
  // 2^-64); a particle still inside one refuses the run, naming its region
  // (they used to start dead, silently).
  const int64_t cap = cfg.particle_capacity();
  const uint64_t total = static_cast<uint64_t>(cfg.total_seeded());
  // the ids that keep their slot: the last `cap` seeded (a later id of a
  // slot replaces an earlier one)
  const uint64_t first_kept = total > static_cast<uint64_t>(cap) ? total - static_cast<uint64_t>(cap) : 0;
  std::vector<Particle> kept;
  if (!keep) {
    s.particles.resize(static_cast<size_t>(cap));
    // Slot invariant: slot r always holds an id congruent to r modulo the
    // capacity, alive or not; an injected id k replaces the particle of its
    // residue class. Files store only ids, so any permutation of the slots
    // (a GPU sort by cell) can be undone.
    for (size_t r = 0; r < s.particles.size(); ++r) s.particles.id[r] = static_cast<uint64_t>(r);
  }
  uint64_t id = 0;
  for (size_t region = 0; region < cfg.regions.size(); ++region) {
    const ParticleRegion& r = cfg.regions[region];
    int64_t unplaced = 0;
    for (int64_t n = 0; n < r.count; ++n, ++id) {
      double x = 0, y = 0, d = 0;
      bool placed = false;
      for (uint32_t attempt = 0; attempt < 64 && !placed; ++attempt) {
        const uint32_t base = attempt * 3;
        d = r.diameter_min + (r.diameter_max - r.diameter_min) * uniform01(cfg.seed, id, base + kStreamD);
        x = r.x0 + (r.x1 - r.x0) * uniform01(cfg.seed, id, base + kStreamX);
        y = r.y0 + (r.y1 - r.y0) * uniform01(cfg.seed, id, base + kStreamY);
        placed = !inside_obstacle(cfg, x, y, 0.5 * d);
      }
      unplaced += placed ? 0 : 1;
      Particle q;
      q.x = static_cast<real>(x);
      q.y = static_cast<real>(y);
      q.vx = static_cast<real>(r.vx);
      q.vy = static_cast<real>(r.vy);
      q.d = static_cast<real>(d);
      q.id = static_cast<uint64_t>(id);
      q.alive = placed ? 1u : 0u;
      if (!keep) s.particles.store(static_cast<size_t>(id % static_cast<uint64_t>(cap)), q);
      else if (placed && id >= first_kept && (*keep)(q.x, q.y)) kept.push_back(q);
    }
    if (unplaced > 0)
      throw std::invalid_argument(cfg.source + ": particles.regions[" + std::to_string(region) + "]: " +
                                  std::to_string(unplaced) + " of its " + std::to_string(r.count) +
                                  " particles fell inside obstacles in 64 draws each: the region lies (almost) "
                                  "wholly in a solid (move it into the fluid)");
  }
  s.next_id = id;
  if (keep) {
    const uint64_t c = static_cast<uint64_t>(cap);
    std::sort(kept.begin(), kept.end(), [c](const Particle& a, const Particle& b) { return a.id % c < b.id % c; });
    from_aos(kept, s.particles);
  }
}

}  // namespace

SimState make_initial_state(const Config& cfg) {
  SimState s;
  initial_fluid(cfg, s);
  seed_particles(cfg, s, nullptr);
  return s;
}

SimState make_initial_state(const Config& cfg, const std::function<bool(double x, double y)>& keep) {
  SimState s;
  initial_fluid(cfg, s);
  seed_particles(cfg, s, &keep);
  return s;
}

SimState make_initial_fluid(const Config& cfg) {
  SimState s;
  initial_fluid(cfg, s);
  return s;
}

int64_t injection_count(const Config& cfg, double t0, double t1) {
  int64_t count = 0;
  if (!injected_between(cfg.inject.rate, t0, t1, count))
    throw std::overflow_error("particles.inject.rate = " + std::to_string(cfg.inject.rate) + " 1/s: by t = " +
                              std::to_string(t1) + " s the injected count reaches 2^53, past which it is not exact");
  return count;
}

}  // namespace sim
