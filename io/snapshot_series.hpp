// SPDX-License-Identifier: MIT
// The snapshots of one output directory and their index, sim.xdmf, which is
// rewritten (temporary + rename) after every snapshot so that an interrupted
// run leaves an index listing exactly the complete files.
#pragma once
#include <string>
#include <vector>

#include "io/xdmf.hpp"

namespace sim {

class SnapshotSeries {
 public:
  static constexpr const char* kIndexName = "sim.xdmf";

  explicit SnapshotSeries(std::string dir) : dir_(std::move(dir)) {}

  // A restart continues the series of its directory: lists the readable
  // snap_*.h5 there with step <= `up_to_step` and an nx x ny grid. Does not
  // write the index.
  void adopt_existing(int64_t up_to_step, int nx, int ny);

  // Records the snapshot just written to `path` (replacing one of the same
  // step) and rewrites the index. Reads the file's header back, so the index
  // describes what is on disk.
  void add(const std::string& path);

  // Writes the index as it stands (empty for a new series) unless this
  // series already has: called before the first snapshot is written, so
  // that a snapshot is never on disk without a valid index beside it (a
  // disk that fills up right after the first snapshot leaves the index
  // valid, only without that snapshot).
  void ensure_index();

  const std::vector<XdmfStep>& steps() const { return steps_; }
  const std::string& dir() const { return dir_; }
  std::string index_path() const;

 private:
  void insert(XdmfStep s);
  std::string dir_;
  std::vector<XdmfStep> steps_;  // increasing step
  bool index_written_ = false;
};

}  // namespace sim
