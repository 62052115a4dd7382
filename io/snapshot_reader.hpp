// SPDX-License-Identifier: MIT
// Reads snap_NNNNNN.h5 files back: the scalars for an index or a restart
// check, or every dataset. Shapes are checked against the documented layout.
#pragma once
#include <cstdint>
#include <memory>
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

// One snapshot open for reading in parts: its grid whole, its particles a
// range of records at a time (a restart over ranks, or of many particles,
// never holds them all at once). Shapes are checked as read_snapshot does.
class SnapshotReader {
 public:
  explicit SnapshotReader(const std::string& path);
  ~SnapshotReader();
  SnapshotReader(const SnapshotReader&) = delete;
  SnapshotReader& operator=(const SnapshotReader&) = delete;
  const SnapshotHeader& header() const;
  SnapshotGrid grid() const;
  // Rows [j0, j1) of every grid dataset (the y faces' row ny too when j1 is ny).
  SnapshotGrid grid(int j0, int j1) const;
  // Records [first, first + count) of every particle dataset, cut at the
  // last one (header().particles).
  SnapshotParticles particles(int64_t first, int64_t count) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sim
