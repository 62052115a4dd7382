// SPDX-License-Identifier: MIT
// The halo of a rank's local field (Grid layout, one halo cell) from its
// neighbours' owned values: the exchange that replaces the halo fill of an
// internal side (sim/model/halo.hpp) in a decomposed run.
//
// Per axis a field is centred (cells; v along x, u along y: storage -1..n,
// halo lines -1 and n) or staggered (u along x, v along y: storage -1..n+1,
// halo lines -1, n and n+1, where line n is the neighbour's first owned face
// and n+1 its second). The x sides go first, over the rows the rank owns;
// then the y sides, over whole storage rows, so corners come from the x
// halo of the rank above or below, as the serial fill gives corners the
// y-side values. Boundary conditions on the domain sides belong between
// the axes (x-side conditions, the x exchange, y-side conditions, the y
// exchange: a box one cell wide sends the boundary face they set, and the
// y-side conditions read the x halo, as the serial fill does). The slabs of
// rows (sim/ranks/slab_rows.hpp) exchange along y only.
//
// Each side is one message per neighbour, carrying exactly the values the
// receiver's halo lines take; a staggered line n + 1 whose value the
// neighbour does not own (its box is one cell wide, on an internal or
// periodic side) is sent in a second round, after the first has filled it
// there. Closed domain sides are left as they were; a periodic side wraps
// (to the rank itself when it spans the axis alone: then the result equals
// the serial periodic fill).
//
// The communicator's rank is the decomposition's rank; `local` must be the
// grid of its box (Decomposition::local_grid).
#pragma once
#include "sim/model/grid.hpp"
#include "sim/ranks/comm.hpp"
#include "sim/ranks/decomposition.hpp"

namespace sim {

enum class Stagger { cell, u_face, v_face };

template <class T>
void exchange_halo_y(const Comm& comm, const Decomposition& dec, T* field, const Grid& local, Stagger s);
// The x sides, then the y sides.
template <class T>
void exchange_halo(const Comm& comm, const Decomposition& dec, T* field, const Grid& local, Stagger s);

}  // namespace sim
