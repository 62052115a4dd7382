// SPDX-License-Identifier: MIT
// Particles over a decomposed grid: each rank holds the particles whose
// positions its box owns (Decomposition::owner_of_point), and what they
// deposit near a side of the box reaches faces a neighbour owns.
//
// Migration. migrate_particles sends every live particle whose position the
// rank no longer owns to its owner, takes in the ones that arrive and
// compacts the store: afterwards it holds the live particles of the box
// only, the ones it kept first in their previous order, then the arrivals
// by ascending source rank, each source's in its order, so that a run is
// reproducible. Every field travels (the whole Particle record, id and all).
// Dead slots are dropped. A particle may move into a neighbouring box per
// migration, across a side or a corner, a periodic seam included; one whose
// owner is farther stops the migration on every rank with a
// std::runtime_error, before any particle moves (one all-reduction per call
// decides it). A particle with a non-finite position stays where it is,
// for the non-finite watchdog to report.
//
// Periodic positions are the caller's to wrap: migration moves particles
// and never changes one. The particle update wraps them already
// (apply_domain_boundaries, float, into [0, lx)); owner_of_point wraps its
// argument only to find the owner, so a position left unwrapped would still
// go to the box of its image, whose deposit frame below would not hold it.
//
// Deposit frame. A rank deposits its particles with for_each_deposit_face
// onto its local grid grown by one line on each open side (internal or
// periodic): DepositFrame is the stencil constants of that frame. Faces past
// an open side are kept (the frame neither wraps nor drops them) and land in
// the local grid's halo; at a closed domain side the serial rule applies
// unchanged (faces that are no fluid unknown get nothing).
//
// Fold. fold_halo moves what the frame's halo lines received to the faces
// (or cells) they stand for, wrapped across periodic sides, and adds it
// there on the owning rank, in a fixed order: each owned point keeps its
// own deposit and adds the arrivals by ascending source rank, each source's
// in its storage order. A halo point may stand for a face of a side
// neighbour, of a diagonal one (corners), of the rank itself (a periodic
// axis it spans alone) or, for line n + 1 of a staggered axis, of the box
// past a neighbour one cell wide. The owned points then hold the one-rank
// deposit of all particles, up to the rounding of a reordered sum (exactly,
// for integer or fixed-point values); the halo points hold zero, for
// exchange_halo to refresh.
#pragma once
#include <cstdint>

#include "sim/model/constants.hpp"
#include "sim/model/grid.hpp"
#include "sim/ranks/comm.hpp"
#include "sim/ranks/decomposition.hpp"
#include "sim/ranks/halo_exchange.hpp"
#include "sim/model/coupling_physics.hpp"
#include "sim/model/particles.hpp"

namespace sim {

struct MigrationCounts {
  int64_t sent = 0, received = 0;  // particles, on this rank
};

// Collective over `comm`, whose rank is the decomposition's rank.
MigrationCounts migrate_particles(const Comm& comm, const Decomposition& dec, HostParticles& p);

// A particle at global (x, y) of the box (after migration) deposits through
// for_each_deposit_face(x - x0, y - y0, k, ...); a face index f >= 0 it
// emits is storage index f - offset of the local grid (whose halo holds the
// faces past an open side). For deposit stencils only: the particle update
// keeps global positions and the local Constants.
struct DepositFrame {
  Constants k;
  real x0 = 0, y0 = 0;
  int offset = 0;
};

// `local`: make_constants(cfg, dec.local_grid(rank)), the constants the
// rank's step runs with.
DepositFrame make_deposit_frame(const Constants& local, const Decomposition& dec, int rank);

// for_each_deposit_face through the frame: emit(corner, u index or -1, wu,
// v index or -1, wv) with storage indices of the local grid.
template <class Emit>
void for_each_frame_deposit_face(const DepositFrame& f, real x, real y, Emit&& emit) {
  for_each_deposit_face(x - f.x0, y - f.y0, f.k, [&](int corner, int fu, real wu, int fv, real wv) {
    emit(corner, fu < 0 ? -1 : fu - f.offset, wu, fv < 0 ? -1 : fv - f.offset, wv);
  });
}

// The fold of one field of the local grid (`local`: Decomposition::local_grid
// of the communicator's rank) holding this rank's deposit alone (zeroed,
// halo included, before it). Reads and zeroes the halo lines past each open
// side (cells and faces across the axis: line -1 and n; faces along it: -1,
// n and n + 1); the rest of the halo is left as it was. Collective over
// `comm`.
template <class T>
void fold_halo(const Comm& comm, const Decomposition& dec, T* field, const Grid& local, Stagger s);

}  // namespace sim
