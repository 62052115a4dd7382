#include "io/restart.hpp"

#include <cmath>
#include <stdexcept>

#include "io/snapshot_reader.hpp"
#include "sim/constants.hpp"
#include "sim/halo.hpp"

namespace sim {
namespace {

bool close_enough(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

void restore_grid(const Config& cfg, const SnapshotGrid& f, SimState& s, const std::string& what) {
  const Grid& g = s.grid;
  const int nx = g.nx, ny = g.ny;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const size_t c = static_cast<size_t>(j) * nx + i;
      const real open = f.solid[c] ? real(0) : real(1);
      if (s.open[g.idx(i, j)] != open)
        throw std::runtime_error(what + ": the obstacle mask differs from the config's obstacles (first at cell " +
                                 std::to_string(i) + ", " + std::to_string(j) + ")");
      s.phi[g.idx(i, j)] = f.phi[c];
    }
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i <= nx; ++i) s.u[g.idx(i, j)] = f.u[static_cast<size_t>(j) * (nx + 1) + i];
  for (int j = 0; j <= ny; ++j)
    for (int i = 0; i < nx; ++i) s.v[g.idx(i, j)] = f.v[static_cast<size_t>(j) * nx + i];
  // Same calls, same order as make_initial_state and the backends' halo fill.
  const Constants k = make_constants(cfg, g);
  for (int j = 0; j <= ny; ++j) halo_velocity_x(s.u.data(), s.v.data(), j, k);
  for (int i = -1; i <= nx + 1; ++i) halo_velocity_y(s.u.data(), s.v.data(), i, k);
  for (int j = 0; j < ny; ++j) halo_pressure_x(s.phi.data(), j, k);
  for (int i = -1; i <= nx; ++i) halo_pressure_y(s.phi.data(), i, k);
}

void restore_particles(const Config& cfg, const SnapshotParticles& f, SimState& s, const std::string& what) {
  const int64_t cap = cfg.particle_capacity();
  if (static_cast<int64_t>(f.size()) > cap)
    throw std::runtime_error(what + ": " + std::to_string(f.size()) + " particles do not fit the config's capacity " +
                             std::to_string(cap) + " (set particles.capacity)");
  HostParticles& p = s.particles;
  p = HostParticles{};
  p.resize(static_cast<size_t>(cap));
  // Dead slots keep the slot invariant: id congruent to the slot index.
  for (size_t r = 0; r < p.size(); ++r) p.id[r] = static_cast<uint32_t>(r);
  for (size_t k = 0; k < f.size(); ++k) {
    const uint32_t id = f.id[k];
    const size_t r = static_cast<size_t>(id % static_cast<uint64_t>(cap));
    if (p.alive[r])
      throw std::runtime_error(what + ": particles " + std::to_string(p.id[r]) + " and " + std::to_string(id) +
                               " need the same slot with capacity " + std::to_string(cap) +
                               " (use the capacity of the run that wrote the file)");
    if (id >= s.next_id)
      throw std::runtime_error(what + ": particle id " + std::to_string(id) + " is not below next_id " +
                               std::to_string(s.next_id));
    p.x[r] = f.position[3 * k + 0];
    p.y[r] = f.position[3 * k + 1];
    p.vx[r] = f.velocity[3 * k + 0];
    p.vy[r] = f.velocity[3 * k + 1];
    p.d[r] = f.diameter[k];
    p.id[r] = id;
    p.alive[r] = 1;
  }
}

}  // namespace

SimState load_restart(const Config& cfg, const std::string& path) {
  const std::string what = "restart from '" + path + "'";
  SnapshotContents c;
  try {
    c = read_snapshot(path);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("restart: ") + e.what());
  }
  const SnapshotHeader& h = c.header;
  if (h.nx != cfg.nx || h.ny != cfg.ny)
    throw std::runtime_error(what + ": the file's grid is " + std::to_string(h.nx) + " x " + std::to_string(h.ny) +
                             " cells, the config's " + std::to_string(cfg.nx) + " x " + std::to_string(cfg.ny));
  if (!close_enough(h.dx, cfg.dx()) || !close_enough(h.dy, cfg.dy()))
    throw std::runtime_error(what + ": the file's cells are " + std::to_string(h.dx) + " x " + std::to_string(h.dy) +
                             " m, the config's " + std::to_string(cfg.dx()) + " x " + std::to_string(cfg.dy()) +
                             " m (domain.lx, domain.ly)");
  SimState s = make_initial_state(cfg);
  s.step = h.step;
  s.time = h.time;
  s.dt = h.dt;
  s.next_id = h.next_id;
  s.counters = h.counters;
  restore_grid(cfg, c.grid, s, what);
  restore_particles(cfg, c.particles, s, what);
  return s;
}

}  // namespace sim
