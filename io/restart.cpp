// SPDX-License-Identifier: MIT
#include "io/restart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "io/snapshot_reader.hpp"
#include "sim/model/constants.hpp"
#include "sim/model/halo.hpp"

namespace sim {
namespace {

// "[12, 0]": flat index k of an array of shape `dims`, row-major.
std::string index_text(size_t k, const std::vector<uint64_t>& dims) {
  std::vector<size_t> idx;
  for (auto d = dims.rbegin(); d != dims.rend(); ++d) {
    idx.insert(idx.begin(), k % *d);
    k /= *d;
  }
  std::string s = "[";
  for (size_t n = 0; n < idx.size(); ++n) s += (n ? ", " : "") + std::to_string(idx[n]);
  return s + "]";
}

std::string value_text(double x) {
  if (std::isnan(x)) return "nan";  // its sign bit means nothing
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", x);
  return b;
}

// A restart is the state the run goes on from: a NaN, a particle outside
// the domain or inside an obstacle, or a diameter <= 0 would only blow up
// (or divide by zero) some steps later, far from the file that caused it.
// Each check names the dataset and the first bad index; `v` holds the
// elements from flat index `offset` on of an array of shape `dims`.
void require_finite(const std::string& what, const std::string& dataset, const std::vector<float>& v,
                    const std::vector<uint64_t>& dims, size_t offset = 0) {
  for (size_t k = 0; k < v.size(); ++k)
    if (!std::isfinite(v[k]))
      throw std::runtime_error(what + ": dataset '" + dataset + "' index " + index_text(offset + k, dims) + " = " +
                               value_text(v[k]) + " is not finite");
}

void validate_header(const SnapshotHeader& h, const std::string& what) {
  if (h.step < 0)
    throw std::runtime_error(what + ": attribute 'step' = " + std::to_string(h.step) + " must be >= 0");
  if (!std::isfinite(h.time) || h.time < 0)
    throw std::runtime_error(what + ": attribute 'time' = " + value_text(h.time) + " must be finite and >= 0");
  if (!std::isfinite(h.dt) || h.dt < 0)
    throw std::runtime_error(what + ": attribute 'dt' = " + value_text(h.dt) + " must be finite and >= 0");
}

// Every float dataset of `group` in `held` (records from `first` on for the
// particles), the ones the run reads back first.
template <class Held>
void require_finite_group(const SnapshotHeader& h, SnapshotGroup group, const Held& held, uint64_t first,
                          const std::string& what) {
  const auto nx = static_cast<uint64_t>(h.nx), ny = static_cast<uint64_t>(h.ny);
  const auto n = static_cast<uint64_t>(h.particles);
  for (const bool state : {true, false})
    for (const SnapshotField& f : kSnapshotFields)
      if (f.group() == group && (f.restart != RestartUse::none) == state)
        with_array(f, held, [&](const auto& a) {
          if constexpr (std::is_same_v<std::decay_t<decltype(a)>, std::vector<float>>) {
            const std::vector<uint64_t> dims = f.dims(nx, ny, n);
            size_t per_record = 1;
            for (size_t k = 1; k < dims.size(); ++k) per_record *= static_cast<size_t>(dims[k]);
            require_finite(what, f.path(), a, dims, static_cast<size_t>(first) * per_record);
          }
        });
}

// Records [first, first + p.size()) of the stored (alive) particles. Bounds
// as the particle step keeps them, in float (its clamps use float(lx)).
void validate_particles(const Config& cfg, const SnapshotHeader& h, const SnapshotParticles& p, int64_t first,
                        const std::string& what) {
  require_finite_group(h, SnapshotGroup::particles, p, static_cast<uint64_t>(first), what);
  const float lx = static_cast<float>(cfg.lx), ly = static_cast<float>(cfg.ly);
  for (size_t k = 0; k < p.size(); ++k) {
    const std::string index = std::to_string(static_cast<int64_t>(k) + first);
    const float x = p.position[3 * k], y = p.position[3 * k + 1];
    if (!(x >= 0 && x <= lx && y >= 0 && y <= ly))
      throw std::runtime_error(what + ": dataset '/particles/position' index [" + index + "] = (" + value_text(x) +
                               ", " + value_text(y) + ") of particle id " + std::to_string(p.id[k]) +
                               " is outside the domain [0, " + value_text(cfg.lx) + "] x [0, " + value_text(cfg.ly) +
                               "]");
    if (inside_obstacle(cfg, x, y))
      throw std::runtime_error(what + ": dataset '/particles/position' index [" + index + "] = (" + value_text(x) +
                               ", " + value_text(y) + ") of particle id " + std::to_string(p.id[k]) +
                               " is inside an obstacle");
    if (!(p.diameter[k] > 0))
      throw std::runtime_error(what + ": dataset '/particles/diameter' index [" + index + "] = " +
                               value_text(p.diameter[k]) + " of particle id " + std::to_string(p.id[k]) +
                               " must be > 0");
  }
}

bool close_enough(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

// Rows f.j0 .. f.j1 - 1 of the file's grid into the state (the y faces'
// row ny too with the last rows); the mask checked against the config's.
void restore_rows(const SnapshotGrid& f, SimState& s, const std::string& what) {
  const Grid& g = s.grid;
  const int nx = g.nx;
  for (int j = f.j0; j < f.j1; ++j)
    for (int i = 0; i < nx; ++i) {
      const size_t c = static_cast<size_t>(j - f.j0) * nx + i;
      const real open = f.solid[c] ? real(0) : real(1);
      if (s.open[g.idx(i, j)] != open)
        throw std::runtime_error(what + ": the obstacle mask differs from the config's obstacles (first at cell " +
                                 std::to_string(i) + ", " + std::to_string(j) + ")");
      s.phi[g.idx(i, j)] = f.phi[c];
    }
  for (int j = f.j0; j < f.j1; ++j)
    for (int i = 0; i <= nx; ++i) s.u[g.idx(i, j)] = f.u[static_cast<size_t>(j - f.j0) * (nx + 1) + i];
  for (int j = f.j0; j < f.j0 + f.v_rows(); ++j)
    for (int i = 0; i < nx; ++i) s.v[g.idx(i, j)] = f.v[static_cast<size_t>(j - f.j0) * nx + i];
}

// The halo from the interior: same calls, same order as make_initial_state
// and the backends' halo fill.
void fill_halo(const Config& cfg, SimState& s) {
  const Grid& g = s.grid;
  const int nx = g.nx, ny = g.ny;
  const Constants k = make_constants(cfg, g);
  for (int j = 0; j <= ny; ++j) halo_velocity_x(s.u.data(), s.v.data(), j, k);
  for (int i = -1; i <= nx + 1; ++i) halo_velocity_y(s.u.data(), s.v.data(), i, k);
  for (int j = 0; j < ny; ++j) halo_pressure_x(s.phi.data(), j, k);
  for (int i = -1; i <= nx; ++i) halo_pressure_y(s.phi.data(), i, k);
}

void require_capacity(const Config& cfg, int64_t particles, const std::string& what) {
  const int64_t cap = cfg.particle_capacity();
  if (particles > cap)
    throw std::runtime_error(what + ": " + std::to_string(particles) + " particles do not fit the config's capacity " +
                             std::to_string(cap) + " (set particles.capacity)");
}

// The file's sizes against the config's, from its header alone: a file
// that declares a huge grid or particle count is refused before any of its
// datasets is read into memory.
void check_header_sizes(const Config& cfg, const SnapshotHeader& h, const std::string& what) {
  if (h.nx != cfg.nx || h.ny != cfg.ny)
    throw std::runtime_error(what + ": the file's grid is " + std::to_string(h.nx) + " x " + std::to_string(h.ny) +
                             " cells, the config's " + std::to_string(cfg.nx) + " x " + std::to_string(cfg.ny));
  require_capacity(cfg, h.particles, what);
}

// The file's particles `chunk` records at a time, each checked: in their
// slots (slot = id % capacity, `keep` null: the whole capacity, dead slots
// holding an id of their residue class) or, those `keep` accepts, as the
// live records of a compacted store in slot order.
void restore_particles(const Config& cfg, const SnapshotReader& file, SimState& s, const std::string& what,
                       const std::function<bool(double, double)>* keep, int64_t chunk) {
  const SnapshotHeader& h = file.header();
  const int64_t cap = cfg.particle_capacity();  // >= h.particles (check_header_sizes)
  const auto c = static_cast<uint64_t>(cap);
  HostParticles& p = s.particles;
  p = HostParticles{};
  if (!keep) {
    p.resize(static_cast<size_t>(cap));
    for (size_t r = 0; r < p.size(); ++r) p.id[r] = static_cast<uint64_t>(r);
  }
  std::vector<bool> taken(static_cast<size_t>(cap), false);
  std::vector<Particle> kept;
  for (int64_t first = 0; first < h.particles; first += chunk) {
    const SnapshotParticles f = file.particles(first, chunk);
    validate_particles(cfg, h, f, first, what);
    for (size_t k = 0; k < f.size(); ++k) {
      const uint64_t id = f.id[k];
      const size_t r = static_cast<size_t>(id % c);
      if (taken[r]) {
        // The earlier particle of this slot: the first record of the file in it.
        uint64_t other = id;
        for (int64_t a = 0; a < h.particles && other == id; a += chunk) {
          const SnapshotParticles g = file.particles(a, chunk);
          for (size_t q = 0; q < g.size() && other == id; ++q)
            if (g.id[q] % c == r) other = g.id[q];
        }
        throw std::runtime_error(what + ": particles " + std::to_string(other) + " and " + std::to_string(id) +
                                 " need the same slot with capacity " + std::to_string(cap) +
                                 " (use the capacity of the run that wrote the file)");
      }
      taken[r] = true;
      if (id >= s.next_id)
        throw std::runtime_error(what + ": particle id " + std::to_string(id) + " is not below next_id " +
                                 std::to_string(s.next_id));
      Particle q;
      q.x = f.position[3 * k + 0];
      q.y = f.position[3 * k + 1];
      q.vx = f.velocity[3 * k + 0];
      q.vy = f.velocity[3 * k + 1];
      q.d = f.diameter[k];
      q.id = id;
      q.alive = 1;
      if (!keep) p.store(r, q);
      else if ((*keep)(q.x, q.y)) kept.push_back(q);
    }
  }
  if (keep) {
    std::sort(kept.begin(), kept.end(), [c](const Particle& a, const Particle& b) { return a.id % c < b.id % c; });
    from_aos(kept, p);
  }
}

SimState load(const Config& cfg, const std::string& path, const std::function<bool(double, double)>* keep,
              int64_t chunk) {
  const std::string what = "restart from '" + path + "'";
  // An error of the file itself (HDF5, a shape) is "restart: PATH: ...",
  // one of its contents "restart from 'PATH': ...".
  const auto rethrow = [&](const std::exception& e) {
    const std::string m = e.what();
    throw std::runtime_error(m.rfind(what, 0) == 0 ? m : "restart: " + m);
  };
  // The reader reads the header alone: a file that declares a huge grid or
  // particle count is refused before any of its datasets is read.
  std::optional<SnapshotReader> file;
  try {
    file.emplace(path);
  } catch (const std::exception& e) {
    rethrow(e);
  }
  const SnapshotHeader& h = file->header();
  check_header_sizes(cfg, h, what);
  if (!close_enough(h.dx, cfg.dx()) || !close_enough(h.dy, cfg.dy()))
    throw std::runtime_error(what + ": the file's cells are " + std::to_string(h.dx) + " x " + std::to_string(h.dy) +
                             " m, the config's " + std::to_string(cfg.dx()) + " x " + std::to_string(cfg.dy()) +
                             " m (domain.lx, domain.ly)");
  validate_header(h, what);
  SimState s = make_initial_fluid(cfg);
  s.step = h.step;
  s.time = h.time;
  s.dt = h.dt;
  s.next_id = h.next_id;
  s.counters = h.counters;
  const int64_t per_read = std::max<int64_t>(chunk, 1);
  try {
    // The grid in blocks of rows of about `chunk` faces, each checked and
    // placed; then the particles `chunk` records at a time.
    const int rows = static_cast<int>(std::clamp<int64_t>(per_read / (h.nx + 1), 1, h.ny));
    for (int j0 = 0; j0 < h.ny; j0 += rows) {
      const SnapshotGrid g = file->grid(j0, std::min(h.ny, j0 + rows));
      require_finite_group(h, SnapshotGroup::grid, g, static_cast<uint64_t>(j0), what);
      restore_rows(g, s, what);
    }
    fill_halo(cfg, s);
    restore_particles(cfg, *file, s, what, keep, per_read);
  } catch (const std::exception& e) {
    rethrow(e);
  }
  return s;
}

}  // namespace

SimState load_restart(const Config& cfg, const std::string& path, int64_t chunk) {
  return load(cfg, path, nullptr, chunk);
}

SimState load_restart(const Config& cfg, const std::string& path, const std::function<bool(double, double)>& keep,
                      int64_t chunk) {
  return load(cfg, path, &keep, chunk);
}

}  // namespace sim
