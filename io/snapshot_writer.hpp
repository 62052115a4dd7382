// SPDX-License-Identifier: MIT
// One snapshot file, snap_NNNNNN.h5; the layout is documented in docs/OUTPUT.md
// and read back by io/snapshot_reader.
#pragma once
#include <cstdint>
#include <string>

#include "io/hdf5_file.hpp"
#include "sim/model/config.hpp"
#include "sim/model/state.hpp"

namespace sim {

// Bumped when a name, shape or meaning in the file changes.
constexpr int64_t kSnapshotFormatVersion = 1;

// What a snapshot holds besides the state: the same for every snapshot of a run.
struct SnapshotMeta {
  std::string config_toml;  // the resolved config (config_to_toml)
  std::string strategies;   // backend name and its strategies
  double fluid_density = 0;  // [kg/m^3]: pressure = rho_f * phi
  double dx = 0, dy = 0;     // [m], exact (the Grid holds them as float)
  h5::Compression compression;
  // The run's particle slots (cfg.particle_capacity()): a rank's part of a
  // collective snapshot holds its own records only. -1: the state's slots.
  int64_t capacity = -1;
};

SnapshotMeta make_snapshot_meta(const Config& cfg, const std::string& strategies);

// Writes the file under temporary_path(path), then renames it to `path`:
// `path` is either the previous file or the complete new one, never a part.
// Throws std::runtime_error naming the file.
// Where one snapshot's time went (SnapshotTiming adds them up).
struct SnapshotWriteTiming {
  double fields_ms = 0;  // the derived fields and the particles in id order
  double hdf5_ms = 0;    // the datasets written and the file closed (page cache)
  double sync_ms = 0;    // fsync and rename: the bytes on the disk
  uint64_t bytes = 0;    // the file's size
};
void write_snapshot(const std::string& path, const SimState& s, const SnapshotMeta& meta,
                    SnapshotWriteTiming* timing = nullptr);

class Comm;
// Whether this build writes a snapshot from several ranks together
// (parallel HDF5).
bool collective_snapshots_available();
// The same file, written by every rank of `comm` together, each with its
// part of the state: the rows [j0, j1) of the grid it owns (with the halo
// rows next to them current), its own particles, its own counters; the
// scalars alike on every rank. Rank 0 renames the file into place. Every
// rank throws the same CollectiveError when any fails. Collective.
void write_snapshot_collective(const std::string& path, const SimState& part, int j0, int j1, const SnapshotMeta& meta,
                               const Comm& comm);

}  // namespace sim
