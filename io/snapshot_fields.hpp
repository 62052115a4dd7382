// What a snapshot stores, computed from a SimState: cell-centred fields for
// viewing, the raw MAC faces for restart, and the alive particles in id order.
// Arrays are row-major, y slowest, without the halo.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/state.hpp"

namespace sim {

struct SnapshotGrid {
  int nx = 0, ny = 0;
  std::vector<float> pressure;    // (ny, nx) rho_f * phi [Pa]
  std::vector<float> velocity;    // (ny, nx, 3) face averages, z = 0 [m/s]
  std::vector<float> vorticity;   // (ny, nx) dv/dx - du/dy [1/s]
  std::vector<float> divergence;  // (ny, nx) [1/s]
  std::vector<uint8_t> solid;     // (ny, nx) 1 inside obstacles
  std::vector<float> u;           // (ny, nx + 1) x faces i = 0..nx
  std::vector<float> v;           // (ny + 1, nx) y faces j = 0..ny
  std::vector<float> phi;         // (ny, nx) [m^2/s^2]
};

struct SnapshotParticles {
  std::vector<float> position;  // (n, 3), z = 0 [m]
  std::vector<float> velocity;  // (n, 3), z = 0 [m/s]
  std::vector<uint32_t> id;     // (n), increasing
  std::vector<float> diameter;  // (n) [m]
  size_t size() const { return id.size(); }
};

SnapshotGrid snapshot_grid(const SimState& s, double fluid_density);
SnapshotParticles snapshot_particles(const HostParticles& p);

}  // namespace sim
