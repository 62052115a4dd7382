// SPDX-License-Identifier: MIT
// Migration sends counts before the records: only the sender knows how
// many particles leave. The fold sends no sizes: which halo point stands
// for which owned point is a function of the decomposition, which sender
// and receiver compute alike.
#include "sim/ranks/particle_exchange.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace sim {

namespace {

// Tags apart from the halo exchange's (0..7): the migration's counts and
// records (16 and 17), the fold's (18).
constexpr int kMigrationTags = 16, kFoldTag = 18;

void check_comm(const Comm& comm, const Decomposition& dec, const char* what) {
  if (comm.size() != dec.ranks())
    throw std::invalid_argument(std::string(what) + ": a decomposition into " + std::to_string(dec.ranks()) +
                                " ranks over a communicator of " + std::to_string(comm.size()));
}

// The ranks at process-grid offsets [-reach, reach]^2 from `rank` (wrapped
// across periodic sides, none past closed ones), the rank itself excluded
// unless `self`, ascending and distinct.
std::vector<int> ranks_around(const Decomposition& dec, int rank, int reach, bool self) {
  const Domain& d = dec.domain();
  std::vector<int> out;
  for (int dy = -reach; dy <= reach; ++dy)
    for (int dx = -reach; dx <= reach; ++dx) {
      int x = dec.cx(rank) + dx, y = dec.cy(rank) + dy;
      if (!d.periodic_x && (x < 0 || x >= dec.px())) continue;
      if (!d.periodic_y && (y < 0 || y >= dec.py())) continue;
      x = ((x % dec.px()) + dec.px()) % dec.px();
      y = ((y % dec.py()) + dec.py()) % dec.py();
      const int r = dec.rank_at(x, y);
      if (self || r != rank) out.push_back(r);
    }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string point_text(double x, double y) {
  std::ostringstream os;
  os.precision(9);
  os << "(" << x << ", " << y << ")";
  return os.str();
}

// Which open sides a rank's frame grows past: 1 per Side, 0 at a closed one.
std::array<int, 4> open_sides(const Decomposition& dec, int rank) {
  const std::array<int, 4> nb = dec.neighbours(rank);
  return {nb[kLeft] >= 0, nb[kRight] >= 0, nb[kBottom] >= 0, nb[kTop] >= 0};
}

// The local storage points a rank's deposit may reach, inclusive: the box's
// points and the frame's halo lines.
struct Region {
  int i_lo, i_hi, j_lo, j_hi;
};

Region deposit_region(const Decomposition& dec, int rank, Stagger s) {
  const std::array<int, 4> o = open_sides(dec, rank);
  const Box b = dec.box(rank);
  Region r{-o[kLeft], b.nx() - 1 + o[kRight], -o[kBottom], b.ny() - 1 + o[kTop]};
  if (s == Stagger::u_face) r.i_hi += 1;
  if (s == Stagger::v_face) r.j_hi += 1;
  return r;
}

Box owned(const Decomposition& dec, int rank, Stagger s) {
  return s == Stagger::u_face ? dec.owned_u(rank) : s == Stagger::v_face ? dec.owned_v(rank) : dec.box(rank);
}

// Global index g along an axis of n cells, wrapped when periodic.
int wrap(int g, int n, bool periodic) { return periodic ? ((g % n) + n) % n : g; }

// f(local index, owner, owner's local index) for each point of the rank's
// region that the rank does not own, in storage order.
template <class F>
void for_each_halo_point(const Decomposition& dec, int rank, Stagger s, F&& f) {
  const Domain& d = dec.domain();
  const Box b = dec.box(rank), own = owned(dec, rank, s);
  const Region r = deposit_region(dec, rank, s);
  const int pitch = static_cast<int>(Grid::pitch_for(b.nx()));
  auto point = [&](int i, int j) {
    // Face n of a closed axis goes with cell n - 1's owner.
    const int wi = wrap(b.i0 + i, d.nx, d.periodic_x), wj = wrap(b.j0 + j, d.ny, d.periodic_y);
    const int owner = dec.owner_of_cell(std::min(wi, d.nx - 1), std::min(wj, d.ny - 1));
    const Box ob = dec.box(owner);
    const int opitch = static_cast<int>(Grid::pitch_for(ob.nx()));
    f((i + 1) + (j + 1) * pitch, owner, (wi - ob.i0 + 1) + (wj - ob.j0 + 1) * opitch);
  };
  // Owned points in local indices: whole rows outside them, the row's ends beside them.
  const int oi0 = own.i0 - b.i0, oi1 = own.i1 - b.i0, oj0 = own.j0 - b.j0, oj1 = own.j1 - b.j0;
  for (int j = r.j_lo; j <= r.j_hi; ++j) {
    const bool beside = j >= oj0 && j < oj1;
    for (int i = r.i_lo; i <= r.i_hi; ++i) {
      if (beside && i == oi0) i = oi1;  // past the owned run
      if (i > r.i_hi) break;
      point(i, j);
    }
  }
}

}  // namespace

MigrationCounts migrate_particles(const Comm& comm, const Decomposition& dec, HostParticles& p) {
  check_comm(comm, dec, "particle migration");
  const int me = comm.rank();
  const std::vector<int> peers = ranks_around(dec, me, 1, false);

  // Each slot's destination: its peer, kKeep, or kDrop (dead); the first
  // particle that goes past the neighbours is named. The store is not
  // touched until every rank knows that none did.
  constexpr int kKeep = -1, kDrop = -2;
  std::vector<int> dest(p.size(), kDrop);
  int64_t far = 0;
  std::string first_far;
  for (size_t r = 0; r < p.size(); ++r) {
    if (!p.alive[r]) continue;
    const double x = p.x[r], y = p.y[r];
    const int owner = std::isfinite(x) && std::isfinite(y) ? dec.owner_of_point(x, y) : me;
    if (owner == me) {
      dest[r] = kKeep;
      continue;
    }
    const auto at = std::lower_bound(peers.begin(), peers.end(), owner);
    if (at != peers.end() && *at == owner) {
      dest[r] = static_cast<int>(at - peers.begin());
    } else if (far++ == 0) {
      first_far = "particle id " + std::to_string(p.id[r]) + " at " + point_text(x, y) + " on rank " +
                  std::to_string(me) + " belongs to rank " + std::to_string(owner);
    }
  }
  const int64_t far_all = comm.allreduce_sum(far);
  if (far_all > 0)
    throw std::runtime_error("particle migration: " + std::to_string(far_all) +
                             " particle(s) moved past the neighbouring boxes (a particle may cross into a side or "
                             "corner neighbour per migration)" +
                             (far > 0 ? ": " + first_far : ""));

  // The kept ones compacted in place (a slot only moves down), the others
  // packed per peer in slot order.
  std::vector<std::vector<Particle>> out(peers.size());
  size_t kept = 0;
  for (size_t r = 0; r < p.size(); ++r) {
    if (dest[r] == kDrop) continue;
    const Particle q = p.load(r);
    if (dest[r] == kKeep) p.store(kept++, q);
    else out[static_cast<size_t>(dest[r])].push_back(q);
  }

  const std::vector<std::vector<Particle>> in = comm.exchange_records(peers, out, kMigrationTags);
  MigrationCounts counts;
  for (size_t k = 0; k < peers.size(); ++k) {
    counts.sent += static_cast<int64_t>(out[k].size());
    counts.received += static_cast<int64_t>(in[k].size());
  }

  p.resize(kept + static_cast<size_t>(counts.received));
  size_t at = kept;
  for (const std::vector<Particle>& from : in)  // peers ascend: arrivals by source rank
    for (const Particle& q : from) p.store(at++, q);
  return counts;
}

DepositFrame make_deposit_frame(const Constants& local, const Decomposition& dec, int rank) {
  const Box b = dec.box(rank);
  if (local.nx != b.nx() || local.ny != b.ny())
    throw std::invalid_argument("deposit frame: constants of a " + std::to_string(local.nx) + " x " +
                                std::to_string(local.ny) + " grid for rank " + std::to_string(rank) + "'s box of " +
                                std::to_string(b.nx()) + " x " + std::to_string(b.ny()));
  const std::array<int, 4> o = open_sides(dec, rank);
  const int sx = o[kLeft], sy = o[kBottom];
  DepositFrame f;
  f.k = local;
  Constants& k = f.k;
  k.nx = b.nx() + o[kLeft] + o[kRight];
  k.ny = b.ny() + o[kBottom] + o[kTop];
  // An open side is an outflow of the frame: the faces past it are kept,
  // not wrapped; a closed side keeps its range, shifted into the frame.
  for (int s = 0; s < 4; ++s)
    if (o[s]) k.bc_kind[s] = static_cast<int>(BoundaryKind::outflow);
  k.u_i_begin = o[kLeft] ? 0 : local.u_i_begin;
  k.u_i_end = (o[kRight] ? b.nx() + 2 : local.u_i_end) + sx;
  k.v_j_begin = o[kBottom] ? 0 : local.v_j_begin;
  k.v_j_end = (o[kTop] ? b.ny() + 2 : local.v_j_end) + sy;
  const Domain& d = dec.domain();
  f.x0 = static_cast<real>((b.i0 - sx) * (d.lx / d.nx));
  f.y0 = static_cast<real>((b.j0 - sy) * (d.ly / d.ny));
  f.offset = sx + sy * local.pitch;
  return f;
}

template <class T>
void fold_halo(const Comm& comm, const Decomposition& dec, T* field, const Grid& local, Stagger s) {
  check_comm(comm, dec, "halo fold");
  const int me = comm.rank();
  const Box b = dec.box(me);
  if (local.nx != b.nx() || local.ny != b.ny())
    throw std::invalid_argument("halo fold: a local grid of " + std::to_string(local.nx) + " x " +
                                std::to_string(local.ny) + " cells for rank " + std::to_string(me) + "'s box of " +
                                std::to_string(b.nx()) + " x " + std::to_string(b.ny()));
  // A halo point stands for a point at most two boxes away (line n + 1
  // past a box one cell wide), so the peers either way lie within two.
  const std::vector<int> peers = ranks_around(dec, me, 2, true);
  std::vector<std::vector<T>> out(peers.size()), in(peers.size());
  std::vector<std::vector<int>> to(peers.size());  // my storage index of each value received
  auto slot = [&](int rank) { return static_cast<size_t>(std::lower_bound(peers.begin(), peers.end(), rank) - peers.begin()); };
  for_each_halo_point(dec, me, s, [&](int idx, int owner, int) {
    out[slot(owner)].push_back(field[idx]);
    field[idx] = T(0);
  });
  for (size_t k = 0; k < peers.size(); ++k)
    for_each_halo_point(dec, peers[k], s, [&](int, int owner, int owner_idx) {
      if (owner == me) to[k].push_back(owner_idx);
    });

  std::vector<SendBuffer> sends;
  std::vector<RecvBuffer> recvs;
  for (size_t k = 0; k < peers.size(); ++k) {
    in[k].resize(to[k].size());
    if (!out[k].empty()) sends.push_back({peers[k], kFoldTag, out[k].data(), out[k].size() * sizeof(T)});
    if (!in[k].empty()) recvs.push_back({peers[k], kFoldTag, in[k].data(), in[k].size() * sizeof(T)});
  }
  comm.exchange(sends, recvs);
  for (size_t k = 0; k < peers.size(); ++k)
    for (size_t n = 0; n < in[k].size(); ++n) field[to[k][n]] += in[k][n];
}

template void fold_halo<float>(const Comm&, const Decomposition&, float*, const Grid&, Stagger);
template void fold_halo<double>(const Comm&, const Decomposition&, double*, const Grid&, Stagger);
template void fold_halo<int64_t>(const Comm&, const Decomposition&, int64_t*, const Grid&, Stagger);

}  // namespace sim
