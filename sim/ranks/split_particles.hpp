// SPDX-License-Identifier: MIT
// Particles of a run split into slabs (sim/ranks/slab_rows.hpp). Every
// particle has its slot (slot r for the ids r modulo the capacity, as one
// rank holding them all keeps them) and is held by the rank whose slab
// holds its position only. The GPU holds every slot, alive on the owner
// only (keep_owned); the CPU a compacted store of its own particles in slot
// order (compact_owned, settle).
#pragma once
#include <algorithm>
#include <cstddef>
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

// The slot of particle `id` among `capacity` slots: where a run of one
// rank keeps it, and the order of a compacted store.
inline int64_t slot_of(uint64_t id, int64_t capacity) {
  return static_cast<int64_t>(id % static_cast<uint64_t>(capacity));
}

// A compacted particle store (the CPU backend's): the live particles this
// rank owns and nothing else, in ascending slot order, so a loop over it
// meets them in the order a run of one rank holding every slot does, and
// memory per rank follows the particles it holds, not the capacity.
// Accessors for the two host layouts:
inline size_t store_size(const std::vector<Particle>& a) { return a.size(); }
inline size_t store_size(const HostParticles& a) { return a.size(); }
inline Particle store_load(const std::vector<Particle>& a, size_t i) { return a[i]; }
inline Particle store_load(const HostParticles& a, size_t i) { return a.load(i); }
inline void store_put(std::vector<Particle>& a, size_t i, const Particle& q) { a[i] = q; }
inline void store_put(HostParticles& a, size_t i, const Particle& q) { a.store(i, q); }
inline uint32_t store_alive(const std::vector<Particle>& a, size_t i) { return a[i].alive; }
inline uint32_t store_alive(const HostParticles& a, size_t i) { return a.alive[i]; }

// The live particles of `all` (`capacity` slots, a SimState's) that this
// rank owns (a non-finite position: rank 0's, for the watchdog), in slot
// order: a compacted store.
template <class Store>
void compact_owned(const RankSplit& ranks, const HostParticles& all, Store& out) {
  size_t n = 0;
  std::vector<size_t> kept;
  for (size_t r = 0; r < all.size(); ++r) {
    if (!all.alive[r]) continue;
    const int owner = ranks.alone() ? 0 : ranks.owner_of_point(all.x[r], all.y[r]);
    if ((owner < 0 ? 0 : owner) == ranks.rank()) kept.push_back(r);
  }
  out.resize(kept.size());
  for (size_t r : kept) store_put(out, n++, all.load(r));
}

// A compacted store back in `capacity` slots (a dead slot r: zeros and id r,
// so every slot keeps the rule id % capacity = r).
template <class Store>
void to_slots(const Store& s, int64_t capacity, HostParticles& out) {
  out = HostParticles{};
  out.resize(static_cast<size_t>(capacity));
  for (size_t r = 0; r < out.id.size(); ++r) out.id[r] = r;
  for (size_t i = 0; i < store_size(s); ++i) {
    const Particle q = store_load(s, i);
    out.store(static_cast<size_t>(slot_of(q.id, capacity)), q);
  }
}

// After a step: the store without its dead records (removed, recycled or
// gone to another rank), with `incoming` (fresh and arrived particles, none
// in a slot the store holds) merged in at their slots. Linear in the store.
template <class Store>
void settle(Store& s, std::vector<Particle> incoming, int64_t capacity) {
  const size_t n = store_size(s);
  size_t w = 0;
  for (size_t r = 0; r < n; ++r) {
    if (!store_alive(s, r)) continue;
    if (w != r) store_put(s, w, store_load(s, r));
    ++w;
  }
  auto slot = [capacity](const Particle& q) { return slot_of(q.id, capacity); };
  std::sort(incoming.begin(), incoming.end(), [&](const Particle& a, const Particle& b) { return slot(a) < slot(b); });
  s.resize(w + incoming.size());
  // from the back: every record moves at most once
  size_t a = w, b = incoming.size(), out = w + incoming.size();
  while (b > 0) {
    if (a > 0 && slot(store_load(s, a - 1)) > slot(incoming[b - 1])) store_put(s, --out, store_load(s, --a));
    else store_put(s, --out, incoming[--b]);
  }
}

// The first record at or after slot `from` of a compacted store `p` (a
// view of it), by bisection.
template <class View>
int64_t first_at_slot(const View& p, int64_t from, int64_t capacity) {
  int64_t lo = 0, hi = p.size();
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (slot_of(p.id(mid), capacity) < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The live particles of a compacted store whose position another rank owns,
// marked dead here and returned (finite positions only: a non-finite one
// stays for the watchdog). Alone: none.
template <class View>
std::vector<Particle> leaving_particles(const RankSplit& ranks, View p) {
  std::vector<Particle> leaving;
  if (ranks.alone()) return leaving;
  const int me = ranks.rank();
  for (int64_t i = 0; i < p.size(); ++i) {
    if (!p.alive(i)) continue;
    const int owner = ranks.owner_of_point(p.x(i), p.y(i));
    if (owner < 0 || owner == me) continue;
    leaving.push_back(p.load(i));
    p.alive(i) = 0;
  }
  return leaving;
}

// Particles that left this rank (finite positions another rank's slab
// holds, or this one's) to the ranks that own them: collective. Returns
// the arrivals by ascending source rank, for their slots id % capacity.
std::vector<Particle> send_to_owners(const SlabRows& ranks, const std::vector<Particle>& leaving);

// Rank 0's copy of `s` gets every rank's live particles in their slots
// (`capacity` of them), and every rank the counters summed over ranks (the
// fields are gathered apart). Each rank's s.particles is either `capacity`
// slots (the GPU's) or the live records of a compacted store (the CPU's);
// rank 0's becomes slots either way.
void gather_particles(const SlabRows& ranks, SimState& s, int64_t capacity);

}  // namespace sim
