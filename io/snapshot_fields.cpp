#include "io/snapshot_fields.hpp"

#include <algorithm>

namespace sim {

SnapshotGrid snapshot_grid(const SimState& s, double fluid_density) {
  const Grid& g = s.grid;
  const int nx = g.nx, ny = g.ny;
  const size_t cells = static_cast<size_t>(nx) * ny;
  SnapshotGrid out;
  out.nx = nx;
  out.ny = ny;
  out.pressure.resize(cells);
  out.velocity.resize(3 * cells);
  out.vorticity.resize(cells);
  out.divergence.resize(cells);
  out.solid.resize(cells);
  out.phi.resize(cells);
  out.u.resize(static_cast<size_t>(nx + 1) * ny);
  out.v.resize(static_cast<size_t>(nx) * (ny + 1));
  const double idx = 1.0 / g.dx, idy = 1.0 / g.dy;
  const auto U = [&](int i, int j) { return static_cast<double>(s.u[g.idx(i, j)]); };
  const auto V = [&](int i, int j) { return static_cast<double>(s.v[g.idx(i, j)]); };
  // Corner (i, j) at (i dx, j dy); the halo holds the wall ghosts, so
  // corners on the boundary see the boundary condition.
  const auto corner_vorticity = [&](int i, int j) {
    return (V(i, j) - V(i - 1, j)) * idx - (U(i, j) - U(i, j - 1)) * idy;
  };
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const size_t c = static_cast<size_t>(j) * nx + i;
      const int h = g.idx(i, j);
      out.phi[c] = s.phi[h];
      out.pressure[c] = static_cast<float>(fluid_density * s.phi[h]);
      out.velocity[3 * c + 0] = static_cast<float>(0.5 * (U(i, j) + U(i + 1, j)));
      out.velocity[3 * c + 1] = static_cast<float>(0.5 * (V(i, j) + V(i, j + 1)));
      out.velocity[3 * c + 2] = 0.0f;
      out.vorticity[c] = static_cast<float>(0.25 * (corner_vorticity(i, j) + corner_vorticity(i + 1, j) +
                                                    corner_vorticity(i, j + 1) + corner_vorticity(i + 1, j + 1)));
      out.divergence[c] = static_cast<float>((U(i + 1, j) - U(i, j)) * idx + (V(i, j + 1) - V(i, j)) * idy);
      out.solid[c] = s.open[h] == 0 ? 1 : 0;
    }
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i <= nx; ++i) out.u[static_cast<size_t>(j) * (nx + 1) + i] = s.u[g.idx(i, j)];
  for (int j = 0; j <= ny; ++j)
    for (int i = 0; i < nx; ++i) out.v[static_cast<size_t>(j) * nx + i] = s.v[g.idx(i, j)];
  return out;
}

SnapshotParticles snapshot_particles(const HostParticles& p) {
  std::vector<size_t> slots;
  slots.reserve(p.size());
  for (size_t r = 0; r < p.size(); ++r)
    if (p.alive[r]) slots.push_back(r);
  // Slots are a storage detail (a GPU may sort them by cell); ids are not.
  std::sort(slots.begin(), slots.end(), [&](size_t a, size_t b) { return p.id[a] < p.id[b]; });
  SnapshotParticles out;
  const size_t n = slots.size();
  out.position.resize(3 * n);
  out.velocity.resize(3 * n);
  out.id.resize(n);
  out.diameter.resize(n);
  for (size_t k = 0; k < n; ++k) {
    const size_t r = slots[k];
    out.position[3 * k + 0] = p.x[r];
    out.position[3 * k + 1] = p.y[r];
    out.position[3 * k + 2] = 0.0f;
    out.velocity[3 * k + 0] = p.vx[r];
    out.velocity[3 * k + 1] = p.vy[r];
    out.velocity[3 * k + 2] = 0.0f;
    out.id[k] = p.id[r];
    out.diameter[k] = p.d[r];
  }
  return out;
}

}  // namespace sim
