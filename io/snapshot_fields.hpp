// What a snapshot stores, computed from a SimState: cell-centred fields for
// viewing, the raw MAC faces for restart, and the alive particles in id order.
// Arrays are row-major, y slowest, without the halo.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/model/state.hpp"

namespace sim {

// Rows j0 .. j1 - 1 of the grid's ny (all of them, or one rank's part):
// the arrays below hold those rows, v also row ny when j1 == ny.
struct SnapshotGrid {
  int nx = 0, ny = 0;
  int j0 = 0, j1 = 0;
  int v_rows() const { return j1 - j0 + (j1 == ny ? 1 : 0); }
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
  std::vector<uint64_t> id;     // (n), increasing
  std::vector<float> diameter;  // (n) [m]
  size_t size() const { return id.size(); }
};

// Rows [j0, j1) (j1 < 0: up to ny); they read the u faces of rows j0 - 1 and
// j1 and the v faces of row j1, which must be current (the halo rows of a
// rank's part).
SnapshotGrid snapshot_grid(const SimState& s, double fluid_density, int j0 = 0, int j1 = -1);
SnapshotParticles snapshot_particles(const HostParticles& p);

class Comm;
// The alive particles of every rank (each passes its own), redistributed so
// that rank r holds the r-th of `comm.size()` ranges of ids [0, next_id),
// in increasing id; `first` receives the index of its first particle among
// all ranks' (the row it starts at in the file). Collective.
SnapshotParticles particles_by_id_range(const SnapshotParticles& mine, uint64_t next_id, const Comm& comm,
                                        uint64_t& first);

}  // namespace sim
