// SPDX-License-Identifier: MIT
#include "io/snapshot_series.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "io/snapshot_files.hpp"
#include "io/snapshot_reader.hpp"

namespace sim {
namespace {

XdmfStep step_of(const std::string& path, const std::string& file_name) {
  const SnapshotHeader h = read_snapshot_header(path);
  XdmfStep s;
  s.file = file_name;
  s.step = h.step;
  s.time = h.time;
  s.nx = h.nx;
  s.ny = h.ny;
  s.dx = h.dx;
  s.dy = h.dy;
  s.particles = h.particles;
  return s;
}

bool is_snapshot_name(const std::string& name) {
  return name.size() > 8 && name.compare(0, 5, "snap_") == 0 && name.compare(name.size() - 3, 3, ".h5") == 0;
}

}  // namespace

std::string SnapshotSeries::index_path() const { return join_path(dir_, kIndexName); }

void SnapshotSeries::adopt_existing(int64_t up_to_step, int nx, int ny) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (!is_snapshot_name(name)) continue;
    try {
      XdmfStep s = step_of(entry.path().string(), name);
      if (s.step <= up_to_step && s.nx == nx && s.ny == ny) insert(std::move(s));
    } catch (const std::exception&) {
      // Not a snapshot of this format: not part of the series.
    }
  }
}

void SnapshotSeries::add(const std::string& path) {
  insert(step_of(path, std::filesystem::path(path).filename().string()));
  write_file_atomically(index_path(), xdmf_document(steps_));
  index_written_ = true;
}

void SnapshotSeries::ensure_index() {
  if (index_written_) return;
  write_file_atomically(index_path(), xdmf_document(steps_));
  index_written_ = true;
}

void SnapshotSeries::insert(XdmfStep s) {
  auto at = std::lower_bound(steps_.begin(), steps_.end(), s.step,
                             [](const XdmfStep& a, int64_t step) { return a.step < step; });
  if (at != steps_.end() && at->step == s.step) *at = std::move(s);
  else steps_.insert(at, std::move(s));
}

}  // namespace sim
