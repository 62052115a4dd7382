// SPDX-License-Identifier: MIT
#include "sim/ranks/split_particles.hpp"

namespace sim {

std::vector<Particle> send_to_owners(const SlabRows& ranks, const std::vector<Particle>& leaving) {
  const Comm& comm = ranks.comm();
  const int n = comm.size();
  std::vector<std::vector<Particle>> out(static_cast<size_t>(n));
  for (const Particle& p : leaving) out[static_cast<size_t>(ranks.owner_of_point(p.x, p.y))].push_back(p);
  std::vector<int> peers(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q) peers[static_cast<size_t>(q)] = q;
  std::vector<std::vector<Particle>> in;
  ranks.timed([&] { in = comm.exchange_records(peers, out, 3); });
  std::vector<Particle> arrivals;
  for (const auto& a : in) arrivals.insert(arrivals.end(), a.begin(), a.end());
  return arrivals;
}

void gather_particles(const SlabRows& ranks, SimState& s, int64_t capacity) {
  struct Held {
    int64_t slot;
    Particle p;
  };
  // slots: a live record's slot is its index; a compacted store: its id's
  // (the same when a store holds all `capacity` slots alive, in slot order)
  const HostParticles& p = s.particles;
  const bool slots = static_cast<int64_t>(p.size()) == capacity;
  std::vector<Held> mine;
  size_t alive = 0;
  for (size_t i = 0; i < p.size(); ++i) alive += p.alive[i] != 0;
  mine.reserve(alive);  // no doubling past the records' size
  for (size_t i = 0; i < p.size(); ++i)
    if (p.alive[i]) mine.push_back({slots ? static_cast<int64_t>(i) : slot_of(p.id[i], capacity), p.load(i)});
  const std::vector<Held> all = ranks.comm().gatherv(mine);
  s.counters.removed = ranks.sum(s.counters.removed);
  s.counters.recycled = ranks.sum(s.counters.recycled);
  if (ranks.rank() != 0) return;
  if (!slots) {
    s.particles = HostParticles{};
    s.particles.resize(static_cast<size_t>(capacity));
    for (size_t r = 0; r < s.particles.size(); ++r) s.particles.id[r] = r;  // as to_slots
  }
  for (const Held& h : all) s.particles.store(static_cast<size_t>(h.slot), h.p);
}

}  // namespace sim
