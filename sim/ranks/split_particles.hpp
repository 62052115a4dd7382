// SPDX-License-Identifier: MIT
// Particles of a run split into slabs (sim/ranks/slab_rows.hpp), for
// both backends: every rank holds every slot (slot r for the ids r modulo
// the capacity, as one rank does), and a slot is alive on the rank whose
// slab holds its particle's position only.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/ranks/rank_split.hpp"
#include "sim/ranks/slab_rows.hpp"
#include "sim/model/particles.hpp"
#include "sim/model/state.hpp"

namespace sim {

// A slot stays alive only on the rank owning its particle's position (a
// non-finite position: on rank 0, for the watchdog). Alone: every slot.
template <class View>
void keep_owned(const RankSplit& ranks, View p) {
  if (ranks.alone()) return;
  const int me = ranks.rank();
  for (int64_t i = 0; i < p.size(); ++i) {
    if (!p.alive(i)) continue;
    const int owner = ranks.owner_of_point(p.x(i), p.y(i));
    if ((owner < 0 ? 0 : owner) != me) p.alive(i) = 0;
  }
}

// The particles a rank holds of `all`: `all` itself alone, else `kept`,
// a copy of it with keep_owned applied.
inline const HostParticles& owned_particles(const RankSplit& ranks, const HostParticles& all, HostParticles& kept) {
  if (ranks.alone()) return all;
  kept = all;
  keep_owned(ranks, kept.view());
  return kept;
}

// After a particle step: every particle whose position another rank owns
// goes there, into the same slot (ids and slots are those of one rank).
// A particle may cross any number of slabs in a step. Arrivals are stored
// by ascending source rank; a non-finite position stays for the watchdog.
// Alone: nothing moves.
template <class View>
void migrate(const RankSplit& ranks, View p) {
  if (ranks.alone()) return;
  const int me = ranks.rank();
  std::vector<Particle> leaving;
  for (int64_t i = 0; i < p.size(); ++i) {
    if (!p.alive(i)) continue;
    const int owner = ranks.owner_of_point(p.x(i), p.y(i));
    if (owner < 0 || owner == me) continue;
    leaving.push_back(p.load(i));
    p.alive(i) = 0;
  }
  const uint64_t capacity = static_cast<uint64_t>(p.size());
  for (const Particle& q : ranks.send_to_owners(leaving)) p.store(static_cast<int64_t>(q.id % capacity), q);
}

// Particles that left this rank (finite positions another rank's slab
// holds, or this one's) to the ranks that own them: collective. Returns
// the arrivals by ascending source rank, for their slots id % capacity.
std::vector<Particle> send_to_owners(const SlabRows& ranks, const std::vector<Particle>& leaving);

// Rank 0's copy of `s` gets every rank's live particles in their slots, and
// every rank the counters summed over ranks (the fields are gathered apart).
void gather_particles(const SlabRows& ranks, SimState& s);

}  // namespace sim
