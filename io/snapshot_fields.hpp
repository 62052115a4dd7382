// SPDX-License-Identifier: MIT
// What a snapshot stores, computed from a SimState: cell-centred fields for
// viewing, the raw MAC faces for restart, and the alive particles in id order.
// Arrays are row-major, y slowest, without the halo.
//
// kSnapshotFields below lists every dataset of the file once: the writer,
// the reader, the XDMF index, the restart checks, the memory estimate and
// docs/OUTPUT.md all walk it. A new field is a row there, its array in
// SnapshotGrid or SnapshotParticles and its values in snapshot_grid() or
// snapshot_particles() (and the format_version and the `units` attribute,
// io/snapshot_writer).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "sim/model/state.hpp"

namespace sim {

// Rows j0 .. j1 - 1 of the grid's ny (all of them, or one rank's part):
// the arrays below hold those rows, v also row ny when j1 == ny.
struct SnapshotGrid {
  int nx = 0, ny = 0;
  int j0 = 0, j1 = 0;
  int v_rows() const { return j1 - j0 + (j1 == ny ? 1 : 0); }
  // Shapes, units and meanings: kSnapshotFields.
  std::vector<float> pressure;
  std::vector<float> velocity;
  std::vector<float> vorticity;
  std::vector<float> divergence;
  std::vector<uint8_t> solid;
  std::vector<float> u;
  std::vector<float> v;
  std::vector<float> phi;
};

// The stored particles, n of them (shapes and units: kSnapshotFields).
struct SnapshotParticles {
  std::vector<float> position;
  std::vector<float> velocity;
  std::vector<uint64_t> id;  // increasing
  std::vector<float> diameter;
  size_t size() const { return id.size(); }
};

// Where a field's values sit, which gives its leading dimensions.
enum class Placement {
  cell,      // (ny, nx): cell [j, i]
  x_face,    // (ny, nx + 1): the MAC faces x = i dx, i = 0..nx
  y_face,    // (ny + 1, nx): the MAC faces y = j dy, j = 0..ny
  particle,  // (N): the stored particles, in increasing id
};

enum class SnapshotGroup { grid, particles };  // the HDF5 groups /grid and /particles

// What sim.xdmf makes of a field.
enum class XdmfRole {
  none,      // not listed (the raw state)
  geometry,  // the particles' XYZ points
  scalar,    // an Attribute of AttributeType Scalar
  vector,    // an Attribute of AttributeType Vector (three components)
};

// What a restart does with a field.
enum class RestartUse {
  none,   // checked to be finite only (derived for viewing)
  check,  // compared with what the config gives
  state,  // read back into the state
};

// The array that holds a field: a member of SnapshotGrid or of
// SnapshotParticles; its element type is the dataset's.
template <class T>
using GridArray = std::vector<T> SnapshotGrid::*;
template <class T>
using ParticleArray = std::vector<T> SnapshotParticles::*;
using SnapshotArray = std::variant<GridArray<float>, GridArray<uint8_t>, ParticleArray<float>, ParticleArray<uint64_t>>;

// One dataset of a snapshot file.
struct SnapshotField {
  const char* name;    // the dataset in its group
  Placement at;
  int components;      // 1, or 3: a trailing dimension of (x, y, 0)
  SnapshotArray array;
  XdmfRole xdmf;
  RestartUse restart;
  const char* unit;     // SI, "1" for a count, a flag or an id
  const char* meaning;  // docs/OUTPUT.md (Markdown)

  constexpr SnapshotGroup group() const {
    return at == Placement::particle ? SnapshotGroup::particles : SnapshotGroup::grid;
  }
  constexpr bool holds_float() const {
    return std::holds_alternative<GridArray<float>>(array) || std::holds_alternative<ParticleArray<float>>(array);
  }
  // Bytes of one element: 4 (float32), 1 (uint8) or 8 (uint64).
  constexpr size_t element_bytes() const {
    return holds_float() ? sizeof(float) : std::holds_alternative<GridArray<uint8_t>>(array) ? 1 : sizeof(uint64_t);
  }
  // "float32", "uint8", "uint64".
  const char* type_name() const;
  // "/grid/pressure".
  std::string path() const;
  // The dataset's shape, slowest first, for an nx x ny grid and n particles.
  std::vector<uint64_t> dims(uint64_t nx, uint64_t ny, uint64_t n) const;
  // Its shape in the words of docs/OUTPUT.md: "(ny, nx + 1)", "(N, 3)".
  std::string shape_text() const;
};

// The datasets, in the order they are written, read and listed in sim.xdmf
// and docs/OUTPUT.md. The file's layout: changing a name, shape, type or
// meaning here changes the format (kSnapshotFormatVersion).
inline constexpr SnapshotField kSnapshotFields[] = {
    {"pressure", Placement::cell, 1, &SnapshotGrid::pressure, XdmfRole::scalar, RestartUse::none, "Pa",
     "`rho_f * phi` at cell centres, the dynamic pressure (gravity acts on the particles only: no hydrostatic part); defined up to a constant in closed domains"},
    {"vorticity", Placement::cell, 1, &SnapshotGrid::vorticity, XdmfRole::scalar, RestartUse::none, "1/s",
     "`dv/dx - du/dy` at the four cell corners (from the faces and the boundary ghosts), averaged to the centre"},
    {"divergence", Placement::cell, 1, &SnapshotGrid::divergence, XdmfRole::scalar, RestartUse::none, "1/s",
     "`(u[i+1] - u[i]) / dx + (v[j+1] - v[j]) / dy`"},
    {"velocity", Placement::cell, 3, &SnapshotGrid::velocity, XdmfRole::vector, RestartUse::none, "m/s",
     "cell-centred `(u, v, 0)`: the average of the two faces on each axis"},
    {"solid", Placement::cell, 1, &SnapshotGrid::solid, XdmfRole::scalar, RestartUse::check, "1",
     "1 inside an obstacle, 0 in fluid"},
    {"u", Placement::x_face, 1, &SnapshotGrid::u, XdmfRole::none, RestartUse::state, "m/s",
     "x-velocity on the MAC faces `x = i dx`, `i = 0..nx` (both boundary faces included)"},
    {"v", Placement::y_face, 1, &SnapshotGrid::v, XdmfRole::none, RestartUse::state, "m/s",
     "y-velocity on the MAC faces `y = j dy`, `j = 0..ny`"},
    {"phi", Placement::cell, 1, &SnapshotGrid::phi, XdmfRole::none, RestartUse::state, "m^2/s^2",
     "pressure correction `p / rho_f` exactly as the solver holds it"},
    {"position", Placement::particle, 3, &SnapshotParticles::position, XdmfRole::geometry, RestartUse::state, "m",
     "`(x, y, 0)`"},
    {"velocity", Placement::particle, 3, &SnapshotParticles::velocity, XdmfRole::vector, RestartUse::state, "m/s",
     "`(vx, vy, 0)`"},
    // uint32 in files written before 64-bit ids: read alike (h5::read_dataset converts).
    {"id", Placement::particle, 1, &SnapshotParticles::id, XdmfRole::scalar, RestartUse::state, "1",
     "stable identity: particles are numbered in seeding, then injection order (uint32 in files written before "
     "64-bit ids; sim restarts from either)"},
    {"diameter", Placement::particle, 1, &SnapshotParticles::diameter, XdmfRole::scalar, RestartUse::state, "m", ""},
};

namespace detail {
template <class M>
struct ArrayOwner;
template <class C, class V>
struct ArrayOwner<V C::*> {
  using type = C;
};
}  // namespace detail

// Calls fn(array) with field f's array in `held` (a SnapshotGrid or a
// SnapshotParticles, const or not); f must be of that group.
template <class Held, class Fn>
void with_array(const SnapshotField& f, Held& held, Fn&& fn) {
  std::visit(
      [&](auto member) {
        using Owner = typename detail::ArrayOwner<decltype(member)>::type;
        if constexpr (std::is_same_v<Owner, std::remove_const_t<Held>>) fn(held.*member);
      },
      f.array);
}

// Uncompressed bytes of the datasets of an nx x ny grid with n particles.
uint64_t snapshot_data_bytes(uint64_t nx, uint64_t ny, uint64_t n);

// Bytes of the arrays of `group` per cell (a face field counted as one value
// a cell) or per particle: what snapshot_grid and snapshot_particles allocate.
constexpr uint64_t snapshot_bytes_per(SnapshotGroup group) {
  uint64_t bytes = 0;
  for (const SnapshotField& f : kSnapshotFields)
    if (f.group() == group) bytes += static_cast<uint64_t>(f.components) * f.element_bytes();
  return bytes;
}

// The Markdown table of docs/OUTPUT.md for the datasets of `group`.
std::string snapshot_fields_markdown(SnapshotGroup group);

// Rows [j0, j1) (j1 < 0: up to ny); they read the u faces of rows j0 - 1 and
// j1 and the v faces of row j1, which must be current (the halo rows of a
// rank's part).
SnapshotGrid snapshot_grid(const SimState& s, double fluid_density, int j0 = 0, int j1 = -1);
SnapshotParticles snapshot_particles(const HostParticles& p);
// The same into arrays kept from an earlier snapshot: arrays already of
// their size are neither zeroed nor faulted in again (a writer thread's
// next snapshot of a 4096^2 grid with 16.7M particles skips about 1.2 GB
// of serial zero-filling).
void snapshot_grid_into(const SimState& s, double fluid_density, SnapshotGrid& out, int j0 = 0, int j1 = -1);
void snapshot_particles_into(const HostParticles& p, SnapshotParticles& out);

class Comm;
// The alive particles of every rank (each passes its own records, in any
// order), redistributed so that rank r holds the r-th of `comm.size()`
// ranges of ids [0, next_id), in increasing id; `first` receives the index
// of its first particle among all ranks' (the row it starts at in the
// file). Collective.
SnapshotParticles particles_by_id_range(const HostParticles& mine, uint64_t next_id, const Comm& comm,
                                        uint64_t& first);

}  // namespace sim
