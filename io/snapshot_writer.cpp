#include "io/snapshot_writer.hpp"

#include <cstdio>

#include "io/config_writer.hpp"
#include "io/snapshot_fields.hpp"
#include "io/hdf5_file.hpp"
#include "io/snapshot_files.hpp"

namespace sim {
namespace {

const char* const kUnits =
    "SI units. Attributes: time [s], dt [s], /grid spacing and origin [m]. "
    "/grid: pressure [Pa], velocity [m/s], vorticity [1/s], divergence [1/s], solid [1 = obstacle], "
    "u and v [m/s], phi [m^2/s^2] (pressure / fluid density). "
    "/particles: position [m], velocity [m/s], diameter [m], id [1].";

using Dims = std::vector<hsize_t>;

void write_grid(const h5::File& f, const SimState& s, const SnapshotMeta& m) {
  const SnapshotGrid g = snapshot_grid(s, m.fluid_density);
  const hsize_t nx = static_cast<hsize_t>(g.nx), ny = static_cast<hsize_t>(g.ny);
  const h5::Handle grp = h5::create_group(f, "/grid");
  h5::write_attr(f, grp, "origin", std::vector<double>{0.0, 0.0});
  h5::write_attr(f, grp, "spacing", std::vector<double>{m.dx, m.dy});
  const h5::Compression& c = m.compression;
  h5::write_dataset(f, grp, "pressure", Dims{ny, nx}, g.pressure.data(), c);
  h5::write_dataset(f, grp, "velocity", Dims{ny, nx, 3}, g.velocity.data(), c);
  h5::write_dataset(f, grp, "vorticity", Dims{ny, nx}, g.vorticity.data(), c);
  h5::write_dataset(f, grp, "divergence", Dims{ny, nx}, g.divergence.data(), c);
  h5::write_dataset(f, grp, "solid", Dims{ny, nx}, g.solid.data(), c);
  h5::write_dataset(f, grp, "u", Dims{ny, nx + 1}, g.u.data(), c);
  h5::write_dataset(f, grp, "v", Dims{ny + 1, nx}, g.v.data(), c);
  h5::write_dataset(f, grp, "phi", Dims{ny, nx}, g.phi.data(), c);
}

void write_particles(const h5::File& f, const SimState& s, const SnapshotMeta& m) {
  const SnapshotParticles p = snapshot_particles(s.particles);
  const hsize_t n = p.size();
  const h5::Handle grp = h5::create_group(f, "/particles");
  const h5::Compression& c = m.compression;
  h5::write_dataset(f, grp, "position", Dims{n, 3}, p.position.data(), c);
  h5::write_dataset(f, grp, "velocity", Dims{n, 3}, p.velocity.data(), c);
  h5::write_dataset(f, grp, "id", Dims{n}, p.id.data(), c);
  h5::write_dataset(f, grp, "diameter", Dims{n}, p.diameter.data(), c);
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
  return m;
}

void write_snapshot(const std::string& path, const SimState& s, const SnapshotMeta& meta) {
  const std::string tmp = temporary_path(path);
  try {
    h5::File f = h5::File::create(tmp);
    try {
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
      h5::write_attr(f, root, "removed", static_cast<int64_t>(s.counters.removed));
      h5::write_attr(f, root, "recycled", static_cast<int64_t>(s.counters.recycled));
      h5::write_attr(f, root, "capacity", static_cast<int64_t>(s.particles.size()));
      write_grid(f, s, meta);
      write_particles(f, s, meta);
      f.close();
    } catch (...) {
      // Close it whatever state HDF5 is in, before the error travels on:
      // a file left open in the library crashes the process at exit.
      f.discard();
      throw;
    }
    commit_file(tmp, path);
  } catch (const h5::Error& e) {
    std::remove(tmp.c_str());
    // An OS error (full disk, read-only file system, I/O error) is what the
    // user can act on; HDF5's own wording names only its internals.
    if (e.err != 0) throw std::runtime_error(os_error_text(e.err) + " writing " + path);
    throw;
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

}  // namespace sim
