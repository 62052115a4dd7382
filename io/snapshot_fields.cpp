// SPDX-License-Identifier: MIT
#include "io/snapshot_fields.hpp"

#include <algorithm>

#include "sim/ranks/comm.hpp"

namespace sim {

namespace {

// Each field's array is in the group its placement names, vectors have
// three components, sim.xdmf shows cell fields only (its grid is the cells)
// and one three-component particle field as the points.
constexpr bool table_consistent() {
  int geometry = 0;
  for (const SnapshotField& f : kSnapshotFields) {
    const bool in_grid = std::holds_alternative<GridArray<float>>(f.array) ||
                         std::holds_alternative<GridArray<uint8_t>>(f.array);
    if (in_grid != (f.group() == SnapshotGroup::grid)) return false;
    if (f.components != 1 && f.components != 3) return false;
    const bool attribute = f.xdmf == XdmfRole::scalar || f.xdmf == XdmfRole::vector;
    if (attribute && (f.xdmf == XdmfRole::vector) != (f.components == 3)) return false;
    if (f.xdmf != XdmfRole::none && in_grid && f.at != Placement::cell) return false;
    if (f.xdmf == XdmfRole::geometry) {
      if (in_grid || f.components != 3 || !f.holds_float()) return false;
      ++geometry;
    }
  }
  return geometry == 1;
}
static_assert(table_consistent(), "kSnapshotFields: a row contradicts itself (group, components or XDMF role)");

}  // namespace

const char* SnapshotField::type_name() const {
  return holds_float() ? "float32" : element_bytes() == 1 ? "uint8" : "uint64";
}

std::string SnapshotField::path() const {
  return std::string(group() == SnapshotGroup::grid ? "/grid/" : "/particles/") + name;
}

std::vector<uint64_t> SnapshotField::dims(uint64_t nx, uint64_t ny, uint64_t n) const {
  std::vector<uint64_t> d;
  switch (at) {
    case Placement::cell: d = {ny, nx}; break;
    case Placement::x_face: d = {ny, nx + 1}; break;
    case Placement::y_face: d = {ny + 1, nx}; break;
    case Placement::particle: d = {n}; break;
  }
  if (components != 1) d.push_back(static_cast<uint64_t>(components));
  return d;
}

std::string SnapshotField::shape_text() const {
  std::string s;
  switch (at) {
    case Placement::cell: s = "(ny, nx"; break;
    case Placement::x_face: s = "(ny, nx + 1"; break;
    case Placement::y_face: s = "(ny + 1, nx"; break;
    case Placement::particle: s = "(N"; break;
  }
  if (components != 1) s += ", " + std::to_string(components);
  return s + ")";
}

uint64_t snapshot_data_bytes(uint64_t nx, uint64_t ny, uint64_t n) {
  uint64_t bytes = 0;
  for (const SnapshotField& f : kSnapshotFields) {
    uint64_t elements = 1;
    for (uint64_t d : f.dims(nx, ny, n)) elements *= d;
    bytes += elements * f.element_bytes();
  }
  return bytes;
}

namespace {

// "`u`, `v` and `phi`": the grid fields of restart use `use`.
std::string names_of(RestartUse use) {
  std::vector<std::string> names;
  for (const SnapshotField& f : kSnapshotFields)
    if (f.group() == SnapshotGroup::grid && f.restart == use) names.push_back("`" + std::string(f.name) + "`");
  std::string s;
  for (size_t k = 0; k < names.size(); ++k)
    s += (k == 0 ? "" : k + 1 == names.size() ? " and " : ", ") + names[k];
  return s;
}

}  // namespace

std::string snapshot_fields_markdown(SnapshotGroup group) {
  std::string out =
      "| dataset | shape | type | unit | meaning |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const SnapshotField& f : kSnapshotFields) {
    if (f.group() != group) continue;
    const std::string meaning = f.meaning;
    out += "| `" + std::string(f.name) + "` | " + f.shape_text() + " | " + f.type_name() + " | " + f.unit + " | " +
           (meaning.empty() ? "" : meaning + " ") + "|\n";
  }
  if (group == SnapshotGroup::grid)
    out += "\n" + names_of(RestartUse::state) + " are the raw state a restart needs; " + names_of(RestartUse::check) +
           " is checked against the config's obstacles; the others are derived for viewing.\n";
  return out;
}

SnapshotGrid snapshot_grid(const SimState& s, double fluid_density, int j0, int j1) {
  SnapshotGrid out;
  snapshot_grid_into(s, fluid_density, out, j0, j1);
  return out;
}

void snapshot_grid_into(const SimState& s, double fluid_density, SnapshotGrid& out, int j0, int j1) {
  const Grid& g = s.grid;
  const int nx = g.nx, ny = g.ny;
  if (j1 < 0) j1 = ny;
  out.nx = nx;
  out.ny = ny;
  out.j0 = j0;
  out.j1 = j1;
  const int rows = j1 - j0;
  const size_t cells = static_cast<size_t>(nx) * rows;
  out.pressure.resize(cells);
  out.velocity.resize(3 * cells);
  out.vorticity.resize(cells);
  out.divergence.resize(cells);
  out.solid.resize(cells);
  out.phi.resize(cells);
  out.u.resize(static_cast<size_t>(nx + 1) * rows);
  out.v.resize(static_cast<size_t>(nx) * out.v_rows());
  const double idx = 1.0 / g.dx, idy = 1.0 / g.dy;
  const auto U = [&](int i, int j) { return static_cast<double>(s.u[g.idx(i, j)]); };
  const auto V = [&](int i, int j) { return static_cast<double>(s.v[g.idx(i, j)]); };
  // Corner (i, j) at (i dx, j dy); the halo holds the wall ghosts, so
  // corners on the boundary see the boundary condition.
  const auto corner_vorticity = [&](int i, int j) {
    return (V(i, j) - V(i - 1, j)) * idx - (U(i, j) - U(i, j - 1)) * idy;
  };
  // Rows in parallel: a 4096^2 grid's fields are about 600 MB.
#pragma omp parallel for schedule(static)
  for (int j = j0; j < j1; ++j)
    for (int i = 0; i < nx; ++i) {
      const size_t c = static_cast<size_t>(j - j0) * nx + i;
      const int h = g.idx(i, j);
      out.phi[c] = s.phi[h];
      out.pressure[c] = static_cast<float>(fluid_density * s.phi[h]);
      out.velocity[3 * c + 0] = static_cast<float>(0.5 * (U(i, j) + U(i + 1, j)));
      out.velocity[3 * c + 1] = static_cast<float>(0.5 * (V(i, j) + V(i, j + 1)));
      out.velocity[3 * c + 2] = 0.0f;
      out.vorticity[c] = static_cast<float>(0.25 * (corner_vorticity(i, j) + corner_vorticity(i + 1, j) +
                                                    corner_vorticity(i, j + 1) + corner_vorticity(i + 1, j + 1)));
      out.divergence[c] = static_cast<float>((U(i + 1, j) - U(i, j)) * idx + (V(i, j + 1) - V(i, j)) * idy);
      out.solid[c] = s.open[h] == 0 ? 1 : 0;
    }
#pragma omp parallel for schedule(static)
  for (int j = j0; j < j1; ++j)
    for (int i = 0; i <= nx; ++i) out.u[static_cast<size_t>(j - j0) * (nx + 1) + i] = s.u[g.idx(i, j)];
#pragma omp parallel for schedule(static)
  for (int j = j0; j < j0 + out.v_rows(); ++j)
    for (int i = 0; i < nx; ++i) out.v[static_cast<size_t>(j - j0) * nx + i] = s.v[g.idx(i, j)];
}

namespace {

// n particles' arrays, unset (kept as they are where already of that size).
void resize(SnapshotParticles& out, size_t n) {
  out.position.resize(3 * n);
  out.velocity.resize(3 * n);
  out.id.resize(n);
  out.diameter.resize(n);
}
SnapshotParticles sized(size_t n) {
  SnapshotParticles out;
  resize(out, n);
  return out;
}

// Particle k of `out`, in the plane (z = 0).
void set_particle(SnapshotParticles& out, size_t k, float x, float y, float vx, float vy, uint64_t id, float d) {
  out.position[3 * k + 0] = x;
  out.position[3 * k + 1] = y;
  out.position[3 * k + 2] = 0.0f;
  out.velocity[3 * k + 0] = vx;
  out.velocity[3 * k + 1] = vy;
  out.velocity[3 * k + 2] = 0.0f;
  out.id[k] = id;
  out.diameter[k] = d;
}

}  // namespace

SnapshotParticles snapshot_particles(const HostParticles& p) {
  SnapshotParticles out;
  snapshot_particles_into(p, out);
  return out;
}

void snapshot_particles_into(const HostParticles& p, SnapshotParticles& out) {
  std::vector<size_t> slots;
  slots.reserve(p.size());
  for (size_t r = 0; r < p.size(); ++r)
    if (p.alive[r]) slots.push_back(r);
  // Slots are a storage detail (a GPU may sort them by cell); ids are not.
  // A GPU's download is already in id order (its canonical slots): checked, not sorted.
  const auto by_id = [&](size_t a, size_t b) { return p.id[a] < p.id[b]; };
  if (!std::is_sorted(slots.begin(), slots.end(), by_id)) std::sort(slots.begin(), slots.end(), by_id);
  resize(out, slots.size());
#pragma omp parallel for schedule(static)
  for (size_t k = 0; k < slots.size(); ++k) {
    const size_t r = slots[k];
    set_particle(out, k, p.x[r], p.y[r], p.vx[r], p.vy[r], p.id[r], p.d[r]);
  }
}

SnapshotParticles particles_by_id_range(const HostParticles& mine, uint64_t next_id, const Comm& comm,
                                        uint64_t& first) {
  const int ranks = comm.size();
  struct Record {
    float x, y, vx, vy, d;
    uint64_t id;
  };
  // Rank r takes ids [r * next_id / ranks, (r + 1) * next_id / ranks).
  const auto owner = [&](uint64_t id) {
    const auto r = static_cast<int>((static_cast<unsigned __int128>(id) * ranks) / std::max<uint64_t>(next_id, 1));
    return std::min(r, ranks - 1);
  };
  // Memory: every buffer sized exactly and freed as soon as it is read (the
  // records of a rank's particles pass through here once or twice, not
  // five times, at a snapshot of many particles a rank).
  // The records go straight from the rank's store (no id-sorted copy of it).
  std::vector<size_t> n_out(static_cast<size_t>(ranks), 0);
  for (size_t k = 0; k < mine.size(); ++k)
    if (mine.alive[k]) ++n_out[static_cast<size_t>(owner(mine.id[k]))];
  std::vector<std::vector<Record>> out(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) out[static_cast<size_t>(r)].reserve(n_out[static_cast<size_t>(r)]);
  for (size_t k = 0; k < mine.size(); ++k)
    if (mine.alive[k])
      out[static_cast<size_t>(owner(mine.id[k]))].push_back(
          {mine.x[k], mine.y[k], mine.vx[k], mine.vy[k], mine.d[k], mine.id[k]});
  std::vector<int> peers(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) peers[static_cast<size_t>(r)] = r;
  std::vector<std::vector<Record>> in = comm.exchange_records(peers, out, 0);
  std::vector<std::vector<Record>>().swap(out);
  size_t total = 0;
  for (const auto& v : in) total += v.size();
  std::vector<Record> all;
  all.reserve(total);
  for (auto& v : in) {
    all.insert(all.end(), v.begin(), v.end());
    std::vector<Record>().swap(v);
  }
  std::sort(all.begin(), all.end(), [](const Record& a, const Record& b) { return a.id < b.id; });

  const std::vector<double> counts = comm.allgather(static_cast<double>(all.size()));
  first = 0;
  for (int r = 0; r < comm.rank(); ++r) first += static_cast<uint64_t>(counts[static_cast<size_t>(r)]);
  SnapshotParticles p = sized(all.size());
  for (size_t k = 0; k < all.size(); ++k) {
    const Record& r = all[k];
    set_particle(p, k, r.x, r.y, r.vx, r.vy, r.id, r.d);
  }
  return p;
}

}  // namespace sim
