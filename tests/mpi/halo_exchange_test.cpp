// SPDX-License-Identifier: MIT
// The halo exchange against the global picture: each rank fills the points
// it owns from a formula of the global indices, exchanges, and every halo
// point must then hold the formula at its global indices (wrapped across a
// periodic side) or, past a closed side, what it held before. The run's
// ranks are split into groups of every size from 1 to the run's, so one
// mpirun covers each group size with slabs and with every process grid.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "sim/model/halo.hpp"
#include "sim/ranks/halo_exchange.hpp"

namespace {

using sim::Box;
using sim::Comm;
using sim::Decomposition;
using sim::Domain;
using sim::Grid;
using sim::Stagger;

constexpr double kUntouched = -7.0;

const char* stagger_name(Stagger s) { return s == Stagger::cell ? "cell" : s == Stagger::u_face ? "u" : "v"; }

double formula(int gi, int gj, Stagger s) { return 1 + gi + 100.0 * gj + 10000.0 * static_cast<int>(s); }

// Storage range of a field: faces have one more line along their axis.
int last_i(const Grid& g, Stagger s) { return g.nx + (s == Stagger::u_face ? 1 : 0); }
int last_j(const Grid& g, Stagger s) { return g.ny + (s == Stagger::v_face ? 1 : 0); }

// What global index gi of a field with `faces` storage along an axis of n
// cells reads after the exchange: the wrapped index, or -1 past a closed side.
int expected_index(int gi, int n, bool faces, bool periodic) {
  if (periodic) return ((gi % n) + n) % n;
  return gi < 0 || gi > n - (faces ? 0 : 1) ? -1 : gi;
}

// Fills, exchanges and checks one field on this rank; "" or the first wrong point.
template <class T>
std::string check_field(const Comm& c, const Decomposition& d, Stagger s) {
  const int r = c.rank();
  const Grid g = d.local_grid(r);
  const Box b = d.box(r);
  const Box own = s == Stagger::u_face ? d.owned_u(r) : s == Stagger::v_face ? d.owned_v(r) : b;
  std::vector<T> f(g.size(), T(kUntouched));
  for (int j = own.j0; j < own.j1; ++j)
    for (int i = own.i0; i < own.i1; ++i) f[size_t(g.idx(i - b.i0, j - b.j0))] = T(formula(i, j, s));
  sim::exchange_halo(c, d, f.data(), g, s);
  const Domain& dom = d.domain();
  for (int row = 0; row < g.rows; ++row)
    for (int col = 0; col < g.pitch; ++col) {
      const int i = col - 1, j = row - 1;
      double want = kUntouched;  // padding and points past closed sides
      if (i <= last_i(g, s) && j <= last_j(g, s)) {
        const int ei = expected_index(b.i0 + i, dom.nx, s == Stagger::u_face, dom.periodic_x);
        const int ej = expected_index(b.j0 + j, dom.ny, s == Stagger::v_face, dom.periodic_y);
        if (ei >= 0 && ej >= 0) want = formula(ei, ej, s);
      }
      const T got = f[size_t(g.idx(i, j))];
      if (got != T(want))
        return std::string(stagger_name(s)) + " local (" + std::to_string(i) + ", " + std::to_string(j) +
               ") global (" + std::to_string(b.i0 + i) + ", " + std::to_string(b.j0 + j) + "): " +
               std::to_string(double(got)) + ", expected " + std::to_string(want);
    }
  return "";
}

// Every decomposition of `dom` among the group's ranks: slabs and each px x py.
std::vector<Decomposition> layouts(const Domain& dom, int ranks) {
  std::vector<Decomposition> out;
  if (ranks <= dom.ny) out.push_back(Decomposition::slabs(dom, ranks));
  for (int px = 1; px <= ranks; ++px)
    if (ranks % px == 0 && px <= dom.nx && ranks / px <= dom.ny) out.push_back(Decomposition::blocks(dom, px, ranks / px));
  return out;
}

}  // namespace

TEST_CASE("halo: exchanged halos hold the global formula (cells, u and v faces; 1 to all ranks)") {
  const Comm world = Comm::world();
  int fields = 0;
  for (int groups = 1; groups <= world.size(); ++groups) {
    // The first `groups` ranks, and the rest (when any), each a communicator.
    const Comm c = world.split(world.rank() < groups ? 0 : 1, world.rank());
    // Boxes one cell wide (the second round for faces), uneven splits, single rows.
    for (auto [nx, ny] : {std::pair{1, 1}, {3, 2}, {2, 5}, {5, 7}, {8, 3}, {4, 4}, {6, 1}})
      for (int per = 0; per < 4; ++per) {
        const Domain dom{nx, ny, 1.0, 2.0, (per & 1) != 0, (per & 2) != 0};
        for (const Decomposition& d : layouts(dom, c.size()))
          for (Stagger s : {Stagger::cell, Stagger::u_face, Stagger::v_face}) {
            INFO("group of ", c.size(), ", rank ", c.rank(), ": ", nx, " x ", ny, " periodic ", per, " on ", d.px(),
                 " x ", d.py(), ", ", stagger_name(s));
            const std::string pf = check_field<float>(c, d, s);
            CHECK_MESSAGE(pf.empty(), "float ", pf);
            const std::string pd = check_field<double>(c, d, s);
            CHECK_MESSAGE(pd.empty(), "double ", pd);
            fields += 2;
          }
      }
  }
  MESSAGE(fields, " fields exchanged on rank ", world.rank());
}

namespace {

// The serial fills of sim/model/halo.hpp for one field, on the sides that wrap.
void serial_fill(std::vector<float>& p, std::vector<float>& u, std::vector<float>& v, const sim::Constants& k,
                 bool x, bool y) {
  if (x) {
    for (int j = 0; j < k.ny; ++j) sim::halo_pressure_x(p.data(), j, k);
    for (int j = 0; j <= k.ny; ++j) sim::halo_velocity_x(u.data(), v.data(), j, k);
  }
  if (y) {
    for (int i = -1; i <= k.nx; ++i) sim::halo_pressure_y(p.data(), i, k);
    for (int i = -1; i <= k.nx + 1; ++i) sim::halo_velocity_y(u.data(), v.data(), i, k);
  }
}

}  // namespace

TEST_CASE("halo: one rank across a periodic side equals the serial periodic fill") {
  const Comm world = Comm::world();
  // Each rank alone (an MPI communicator of one), and without MPI.
  for (const Comm& c : {world.split(world.rank(), 0), Comm::serial()})
    for (auto [nx, ny] : {std::pair{1, 1}, {1, 3}, {5, 4}, {6, 1}, {7, 9}})
      for (int per = 1; per < 4; ++per) {
        const bool px = per & 1, py = per & 2;
        INFO(nx, " x ", ny, px ? " periodic x" : "", py ? " periodic y" : "", c.is_serial() ? " serial" : " mpi");
        const Grid g = Grid::make(nx, ny, 1.0, 1.0);
        sim::Constants k{};
        k.nx = nx;
        k.ny = ny;
        k.pitch = g.pitch;
        k.rows = g.rows;
        const int wall = static_cast<int>(sim::BoundaryKind::wall), wrap = static_cast<int>(sim::BoundaryKind::periodic);
        k.bc_kind[sim::kLeft] = k.bc_kind[sim::kRight] = px ? wrap : wall;
        k.bc_kind[sim::kBottom] = k.bc_kind[sim::kTop] = py ? wrap : wall;
        // Random values everywhere: the halo both ways starts from the same garbage.
        std::mt19937 rng(nx * 100 + ny * 10 + per);
        std::uniform_real_distribution<float> val(-1, 1);
        std::vector<float> p(g.size()), u(g.size()), v(g.size());
        for (auto* f : {&p, &u, &v})
          for (float& x : *f) x = val(rng);
        std::vector<float> ps = p, us = u, vs = v;
        serial_fill(ps, us, vs, k, px, py);
        const Decomposition d = Decomposition::slabs(Domain{nx, ny, 1.0, 1.0, px, py}, 1);
        const std::pair<std::vector<float>*, Stagger> fields[] = {
            {&p, Stagger::cell}, {&u, Stagger::u_face}, {&v, Stagger::v_face}};
        for (auto [f, s] : fields) {
          // a closed side is the caller's boundary condition: left as it was
          sim::exchange_halo(c, d, f->data(), g, s);
        }
        CHECK(p == ps);
        CHECK(u == us);
        CHECK(v == vs);
      }
}

TEST_CASE("halo: a grid or communicator that does not match the decomposition is refused") {
  const Comm s = Comm::serial();
  const Decomposition d = Decomposition::slabs(Domain{4, 4, 1.0, 1.0, true, true}, 1);
  std::vector<float> f(Grid::make(4, 3, 1.0, 1.0).size());
  CHECK_THROWS_WITH_AS(sim::exchange_halo(s, d, f.data(), Grid::make(4, 3, 1.0, 1.0), Stagger::cell),
                       "halo exchange: a local grid of 4 x 3 cells for rank 0's box of 4 x 4", std::invalid_argument);
  const Decomposition two = Decomposition::slabs(Domain{4, 4, 1.0, 1.0, true, true}, 2);
  CHECK_THROWS_WITH_AS(sim::exchange_halo(s, two, f.data(), Grid::make(4, 2, 1.0, 1.0), Stagger::cell),
                       "halo exchange: a decomposition into 2 ranks over a communicator of 1", std::invalid_argument);
}
