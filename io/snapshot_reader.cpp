// SPDX-License-Identifier: MIT
#include "io/snapshot_reader.hpp"

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "io/hdf5_file.hpp"
#include "io/snapshot_writer.hpp"

namespace sim {
namespace {

using Dims = std::vector<hsize_t>;

std::string dims_text(const Dims& d) {
  std::string s = "(";
  for (size_t k = 0; k < d.size(); ++k) s += (k ? ", " : "") + std::to_string(d[k]);
  return s + ")";
}

template <class T>
std::vector<T> read_shaped(const h5::File& f, hid_t grp, const std::string& name, const Dims& expect,
                           h5::Rows rows = {}) {
  Dims got;
  std::vector<T> v = h5::read_dataset<T>(f, grp, name, &got, rows);
  if (got != expect)
    throw std::runtime_error(f.path() + ": dataset '" + name + "' has shape " + dims_text(got) + ", expected " +
                             dims_text(expect));
  return v;
}

SnapshotHeader read_header(const h5::File& f) {
  SnapshotHeader h;
  const hid_t root = f.id();
  h.format_version = h5::read_attr_int64(f, root, "format_version");
  if (h.format_version != kSnapshotFormatVersion)
    throw std::runtime_error(f.path() + ": snapshot format " + std::to_string(h.format_version) +
                             ", this sim reads format " + std::to_string(kSnapshotFormatVersion));
  h.step = h5::read_attr_int64(f, root, "step");
  h.time = h5::read_attr_double(f, root, "time");
  h.dt = h5::read_attr_double(f, root, "dt");
  h.next_id = h5::read_attr_uint64(f, root, "next_id");
  h.counters.removed = h5::read_attr_int64(f, root, "removed");
  h.counters.recycled = h5::read_attr_int64(f, root, "recycled");
  h.capacity = h5::read_attr_int64(f, root, "capacity");
  h.config = h5::read_attr_string(f, root, "config");
  h.strategies = h5::read_attr_string(f, root, "strategies");
  h.version = h5::read_attr_string(f, root, "version");
  h.units = h5::read_attr_string(f, root, "units");
  const h5::Handle grid = h5::open_group(f, "/grid");
  const std::vector<double> spacing = h5::read_attr_doubles(f, grid, "spacing");
  if (spacing.size() != 2) throw std::runtime_error(f.path() + ": /grid spacing must hold [dx, dy]");
  h.dx = spacing[0];
  h.dy = spacing[1];
  const Dims p = h5::dataset_dims(f, grid, "pressure");
  if (p.size() != 2 || p[0] == 0 || p[1] == 0)
    throw std::runtime_error(f.path() + ": /grid/pressure has shape " + dims_text(p) + ", expected (ny, nx)");
  if (p[0] > static_cast<hsize_t>(INT_MAX) || p[1] > static_cast<hsize_t>(INT_MAX))
    throw std::runtime_error(f.path() + ": /grid/pressure has shape " + dims_text(p) +
                             ", more cells a side than a grid holds (at most 2147483647)");
  h.ny = static_cast<int>(p[0]);
  h.nx = static_cast<int>(p[1]);
  const h5::Handle parts = h5::open_group(f, "/particles");
  const Dims ids = h5::dataset_dims(f, parts, "id");
  if (ids.size() != 1) throw std::runtime_error(f.path() + ": /particles/id must be one-dimensional");
  if (ids[0] > static_cast<hsize_t>(INT64_MAX))
    throw std::runtime_error(f.path() + ": /particles/id has shape " + dims_text(ids) + ", more particles than 2^63 - 1");
  h.particles = static_cast<int64_t>(ids[0]);
  return h;
}

}  // namespace

SnapshotHeader read_snapshot_header(const std::string& path) {
  const h5::File f = h5::File::open_read(path);
  return read_header(f);
}

struct SnapshotReader::Impl {
  h5::File file;
  SnapshotHeader header;
  // Every dataset of `group`, shaped as the header says; `rows` of each
  // (one more of the y faces' datasets where `rows` end at row ny).
  template <class Held>
  void read(SnapshotGroup group, Held& held, h5::Rows rows) const {
    const auto nx = static_cast<uint64_t>(header.nx), ny = static_cast<uint64_t>(header.ny);
    const auto n = static_cast<uint64_t>(header.particles);
    const h5::Handle g = h5::open_group(file, group == SnapshotGroup::grid ? "/grid" : "/particles");
    for (const SnapshotField& field : kSnapshotFields) {
      if (field.group() != group) continue;
      const std::vector<uint64_t> d = field.dims(nx, ny, n);
      const Dims expect(d.begin(), d.end());
      h5::Rows r = rows;
      if (field.at == Placement::y_face && r.count != ~hsize_t(0) && r.first + r.count == ny) ++r.count;
      with_array(field, held, [&](auto& a) {
        a = read_shaped<typename std::decay_t<decltype(a)>::value_type>(file, g, field.name, expect, r);
      });
    }
  }
};

SnapshotReader::SnapshotReader(const std::string& path)
    : impl_(new Impl{h5::File::open_read(path), SnapshotHeader{}}) {
  impl_->header = read_header(impl_->file);
}

SnapshotReader::~SnapshotReader() = default;

const SnapshotHeader& SnapshotReader::header() const { return impl_->header; }

SnapshotGrid SnapshotReader::grid() const { return grid(0, impl_->header.ny); }

SnapshotGrid SnapshotReader::grid(int j0, int j1) const {
  SnapshotGrid g;
  g.nx = impl_->header.nx;
  g.ny = impl_->header.ny;
  if (j0 < 0 || j1 < j0 || j1 > g.ny) throw std::invalid_argument("SnapshotReader::grid: rows outside the grid");
  g.j0 = j0;
  g.j1 = j1;
  impl_->read(SnapshotGroup::grid, g, {static_cast<hsize_t>(j0), static_cast<hsize_t>(j1 - j0)});
  return g;
}

SnapshotParticles SnapshotReader::particles(int64_t first, int64_t count) const {
  SnapshotParticles p;
  if (first < 0 || count < 0) throw std::invalid_argument("SnapshotReader::particles: a negative range");
  impl_->read(SnapshotGroup::particles, p, {static_cast<hsize_t>(first), static_cast<hsize_t>(count)});
  return p;
}

SnapshotContents read_snapshot(const std::string& path) {
  const SnapshotReader r(path);
  SnapshotContents c;
  c.header = r.header();
  c.grid = r.grid();
  c.particles = r.particles(0, c.header.particles);
  return c;
}

}  // namespace sim
