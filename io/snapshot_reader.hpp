// SPDX-License-Identifier: MIT
// Reads snap_NNNNNN.h5 files back: the scalars for an index or a restart
// check, or every dataset. Shapes are checked against the documented layout.
#pragma once
#include <string>

#include "io/snapshot_fields.hpp"
#include "sim/model/state.hpp"

namespace sim {

struct SnapshotHeader {
  int64_t step = 0;
  double time = 0, dt = 0;
  uint64_t next_id = 0;
  ParticleCounters counters;
  int64_t capacity = 0;
  int nx = 0, ny = 0;       // from the shape of /grid/pressure
  double dx = 0, dy = 0;    // /grid spacing [m]
  int64_t particles = 0;    // alive particles stored
  std::string config, strategies, version, units;
  int64_t format_version = 0;
};

struct SnapshotContents {
  SnapshotHeader header;
  SnapshotGrid grid;
  SnapshotParticles particles;
};

// Throws std::runtime_error "<path>: <what is wrong>".
SnapshotHeader read_snapshot_header(const std::string& path);
SnapshotContents read_snapshot(const std::string& path);

}  // namespace sim
