// SPDX-License-Identifier: MIT
#include "io/snapshot_writer.hpp"

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <chrono>
#include <filesystem>

#include "io/config_writer.hpp"
#include "io/snapshot_fields.hpp"
#include "io/hdf5_file.hpp"
#include "io/snapshot_files.hpp"
#include "sim/ranks/agree.hpp"
#include "sim/ranks/comm.hpp"

namespace sim {
namespace {

// Names every dataset of kSnapshotFields with its unit (checked by the io tests).
const char* const kUnits =
    "SI units. Attributes: time [s], dt [s], /grid spacing and origin [m]. "
    "/grid: pressure [Pa], velocity [m/s], vorticity [1/s], divergence [1/s], solid [1 = obstacle], "
    "u and v [m/s], phi [m^2/s^2] (pressure / fluid density). "
    "/particles: position [m], velocity [m/s], diameter [m], id [1].";

using Dims = std::vector<hsize_t>;

Dims dims_of(const SnapshotField& field, uint64_t nx, uint64_t ny, uint64_t n) {
  const std::vector<uint64_t> d = field.dims(nx, ny, n);
  return Dims(d.begin(), d.end());
}

// The grid part `g` holds (all rows, or one rank's).
void write_grid(const h5::File& f, const SnapshotGrid& g, const SnapshotMeta& m) {
  const h5::Handle grp = h5::create_group(f, "/grid");
  h5::write_attr(f, grp, "origin", std::vector<double>{0.0, 0.0});
  h5::write_attr(f, grp, "spacing", std::vector<double>{m.dx, m.dy});
  const h5::Rows cells{static_cast<hsize_t>(g.j0), static_cast<hsize_t>(g.j1 - g.j0)};
  const h5::Rows vrows{static_cast<hsize_t>(g.j0), static_cast<hsize_t>(g.v_rows())};
  for (const SnapshotField& field : kSnapshotFields) {
    if (field.group() != SnapshotGroup::grid) continue;
    const Dims dims = dims_of(field, static_cast<uint64_t>(g.nx), static_cast<uint64_t>(g.ny), 0);
    const h5::Rows rows = field.at == Placement::y_face ? vrows : cells;
    with_array(field, g,
               [&](const auto& a) { h5::write_dataset(f, grp, field.name, dims, a.data(), m.compression, rows); });
  }
}

// `p` holds particles first .. first + p.size() - 1 of `n` in all.
void write_particles(const h5::File& f, const SnapshotParticles& p, hsize_t n, hsize_t first, const SnapshotMeta& m) {
  const h5::Handle grp = h5::create_group(f, "/particles");
  const h5::Rows rows{first, static_cast<hsize_t>(p.size())};
  for (const SnapshotField& field : kSnapshotFields) {
    if (field.group() != SnapshotGroup::particles) continue;
    const Dims dims = dims_of(field, 0, 0, n);
    with_array(field, p,
               [&](const auto& a) { h5::write_dataset(f, grp, field.name, dims, a.data(), m.compression, rows); });
  }
}

void write_header(const h5::File& f, const SimState& s, const SnapshotMeta& meta, const ParticleCounters& counters) {
  const hid_t root = f.id();
  h5::write_attr(f, root, "time", s.time);
  h5::write_attr(f, root, "step", static_cast<int64_t>(s.step));
  h5::write_attr(f, root, "dt", s.dt);
  h5::write_attr(f, root, "config", meta.config_toml);
  h5::write_attr(f, root, "strategies", meta.strategies);
  h5::write_attr(f, root, "version", std::string(SIM_VERSION));
  h5::write_attr(f, root, "format_version", kSnapshotFormatVersion);
  h5::write_attr(f, root, "units", std::string(kUnits));
  h5::write_attr(f, root, "next_id", static_cast<uint64_t>(s.next_id));
  h5::write_attr(f, root, "removed", static_cast<int64_t>(counters.removed));
  h5::write_attr(f, root, "recycled", static_cast<int64_t>(counters.recycled));
  h5::write_attr(f, root, "capacity", meta.capacity >= 0 ? meta.capacity : static_cast<int64_t>(s.particles.size()));
}

// Fills the file made by `create` and renames it to `path` when `commits`;
// on any error the temporary is removed (by the committing process) and
// an OS error is named as such.
template <class Create, class Fill>
void write_file(const std::string& path, const std::string& tmp, bool commits, Create&& create, Fill&& fill,
                double* sync_ms = nullptr) {
  try {
    h5::File f = create(tmp);
    try {
      fill(f);
      f.close();
    } catch (...) {
      // Close it whatever state HDF5 is in, before the error travels on:
      // a file left open in the library crashes the process at exit.
      f.discard();
      throw;
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (commits) commit_file(tmp, path);
    if (sync_ms) *sync_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  } catch (const h5::Error& e) {
    if (commits) std::remove(tmp.c_str());
    // An OS error (full disk, read-only file system, I/O error) is what the
    // user can act on; HDF5's own wording names only its internals.
    if (e.err != 0) throw std::runtime_error(os_error_text(e.err) + " writing " + path);
    throw;
  } catch (...) {
    if (commits) std::remove(tmp.c_str());
    throw;
  }
}

// The directory a file is written in.
std::string dir_of(const std::string& path) {
  const std::string d = std::filesystem::path(path).parent_path().string();
  return d.empty() ? "." : d;
}

}  // namespace

SnapshotMeta make_snapshot_meta(const Config& cfg, const std::string& strategies) {
  SnapshotMeta m;
  m.config_toml = config_to_toml(cfg);
  m.strategies = strategies;
  m.fluid_density = cfg.density;
  m.dx = cfg.dx();
  m.dy = cfg.dy();
  m.compression.enabled = cfg.compress;
  m.compression.level = cfg.compression_level;
  m.capacity = cfg.particle_capacity();
  return m;
}

void write_snapshot(const std::string& path, const SimState& s, const SnapshotMeta& meta, SnapshotWriteTiming* t) {
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); };
  const auto t0 = Clock::now();
  SnapshotWriteTiming w;
  write_file(
      path, temporary_path(path), true, [](const std::string& tmp) { return h5::File::create(tmp); },
      [&](const h5::File& f) {
        auto a = Clock::now();
        // Kept for this thread's next snapshot (a run's writer thread): same-sized
        // arrays are reused as they are, not zeroed again.
        thread_local SnapshotGrid g;
        thread_local SnapshotParticles p;
        snapshot_grid_into(s, meta.fluid_density, g);
        snapshot_particles_into(s.particles, p);
        w.fields_ms = ms(a);
        write_header(f, s, meta, s.counters);
        write_grid(f, g, meta);
        write_particles(f, p, p.size(), 0, meta);
      },
      &w.sync_ms);
  w.hdf5_ms = std::max(ms(t0) - w.fields_ms - w.sync_ms, 0.0);
  std::error_code ec;
  w.bytes = static_cast<uint64_t>(std::filesystem::file_size(path, ec));
  if (t) *t = w;
}

bool collective_snapshots_available() { return h5::File::collective_available(); }

void write_snapshot_collective(const std::string& path, const SimState& part, int j0, int j1, const SnapshotMeta& meta,
                               const Comm& comm) {
  // What each rank writes, and the totals every rank must name alike.
  uint64_t first = 0;
  const SnapshotParticles p = particles_by_id_range(part.particles, part.next_id, comm, first);
  const auto n = static_cast<hsize_t>(comm.allreduce_sum(static_cast<int64_t>(p.size())));
  ParticleCounters counters = part.counters;
  counters.removed = comm.allreduce_sum(static_cast<int64_t>(counters.removed));
  counters.recycled = comm.allreduce_sum(static_cast<int64_t>(counters.recycled));
  const SnapshotGrid g = snapshot_grid(part, meta.fluid_density, j0, j1);
  const std::string tmp = comm.broadcast(temporary_path(path), 0);
  const bool root = comm.rank() == 0;
  // A write that fails on some ranks only can leave the others waiting
  // inside HDF5's collective flush, so a full disk is refused before the
  // file is made: the uncompressed size, which bounds the file's data, plus
  // the header and a margin for HDF5's own metadata.
  agree(comm, [&] {
    if (!root) return;
    const uint64_t data = snapshot_data_bytes(static_cast<uint64_t>(g.nx), static_cast<uint64_t>(g.ny), n);
    const uint64_t need = data + meta.config_toml.size() + (uint64_t(1) << 16);
    const uint64_t free = free_bytes(dir_of(path));
    if (free > 0 && free < need + need / 100)
      throw std::runtime_error(os_error_text(ENOSPC) + " writing " + path + " (it needs up to " +
                               std::to_string((need + need / 100) >> 10) + " KiB, " + std::to_string(free >> 10) +
                               " KiB are free)");
  });
  // The HDF5 calls are collective: a data write or the final flush that
  // fails on some ranks throws on all of them at that call (PeerFailure on
  // the others), every rank closes the file, and agree() gives all of them
  // the message of the lowest rank that met the error itself.
  bool peer_failed = false;
  agree(comm, [&] {
    try {
      write_file(path, tmp, root, [&](const std::string& t) { return h5::File::create_collective(t, comm); },
                 [&](const h5::File& f) {
                   write_header(f, part, meta, counters);
                   write_grid(f, g, meta);
                   write_particles(f, p, n, first, meta);
                 });
    } catch (const h5::PeerFailure&) {
      peer_failed = true;
    }
  });
  if (comm.allreduce_max(static_cast<int64_t>(peer_failed)) != 0)
    throw CollectiveError("writing " + path + " failed on another rank");
}

}  // namespace sim
