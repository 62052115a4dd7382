// SPDX-License-Identifier: MIT
// One axis at a time, written once for both: a "line" is a column (x) or a
// row (y) of storage, a "position" the index across it. Messages are packed
// into contiguous buffers (a column is strided in memory) and unpacked once
// every receive has completed.
#include "sim/ranks/halo_exchange.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace sim {

namespace {

// Tags: the receiver's side (kLeft..kTop); the second round adds 4.
constexpr int kSecondRound = 4;

struct Axis {
  bool x;          // lines are columns
  int lo, hi;      // the sides: kLeft/kRight or kBottom/kTop
  int n;           // owned cells along the axis
  bool staggered;  // faces along the axis: storage lines -1..n+1
  int first, last;  // positions across the axis, inclusive
  int pitch;

  int index(int line, int pos) const { return x ? (line + 1) + (pos + 1) * pitch : (pos + 1) + (line + 1) * pitch; }
  int positions() const { return last - first + 1; }
};

// Whether `rank` owns line 1 of a staggered field along the axis: its box
// is at least two cells wide, or that face is the closed domain side's.
bool owns_line1(const Decomposition& dec, int rank, const Axis& a) {
  const Box b = dec.box(rank);
  return (a.x ? b.nx() : b.ny()) >= 2 || dec.neighbours(rank)[a.hi] < 0;
}

Axis make_axis(const Decomposition& dec, int rank, const Grid& g, Stagger s, bool x) {
  const std::array<int, 4> nb = dec.neighbours(rank);
  Axis a{};
  a.x = x;
  a.pitch = g.pitch;
  if (x) {
    a.lo = kLeft;
    a.hi = kRight;
    a.n = g.nx;
    a.staggered = s == Stagger::u_face;
    // The rows this rank owns: v owns row ny at a closed top.
    a.first = 0;
    a.last = g.ny - 1 + (s == Stagger::v_face && nb[kTop] < 0 ? 1 : 0);
  } else {
    a.lo = kBottom;
    a.hi = kTop;
    a.n = g.ny;
    a.staggered = s == Stagger::v_face;
    // Whole storage rows, the x halo (corners) included.
    a.first = -1;
    a.last = g.nx + (s == Stagger::u_face ? 1 : 0);
  }
  return a;
}

template <class T>
struct Message {
  int peer, tag, line0, lines;
  std::vector<T> buf;
};

template <class T>
void pack(const T* field, const Axis& a, Message<T>& m) {
  m.buf.resize(static_cast<size_t>(m.lines) * a.positions());
  size_t k = 0;
  for (int l = m.line0; l < m.line0 + m.lines; ++l)
    for (int p = a.first; p <= a.last; ++p) m.buf[k++] = field[a.index(l, p)];
}

template <class T>
void unpack(T* field, const Axis& a, const Message<T>& m) {
  size_t k = 0;
  for (int l = m.line0; l < m.line0 + m.lines; ++l)
    for (int p = a.first; p <= a.last; ++p) field[a.index(l, p)] = m.buf[k++];
}

template <class T>
void run(const Comm& comm, std::vector<Message<T>>& sends, std::vector<Message<T>>& recvs, T* field, const Axis& a) {
  std::vector<SendBuffer> s;
  std::vector<RecvBuffer> r;
  for (Message<T>& m : sends) s.push_back({m.peer, m.tag, m.buf.data(), m.buf.size() * sizeof(T)});
  for (Message<T>& m : recvs) {
    m.buf.resize(static_cast<size_t>(m.lines) * a.positions());
    r.push_back({m.peer, m.tag, m.buf.data(), m.buf.size() * sizeof(T)});
  }
  comm.exchange(s, r);
  for (const Message<T>& m : recvs) unpack(field, a, m);
}

template <class T>
void exchange_axis(const Comm& comm, const Decomposition& dec, T* field, const Grid& local, Stagger s, bool x) {
  if (comm.size() != dec.ranks())
    throw std::invalid_argument("halo exchange: a decomposition into " + std::to_string(dec.ranks()) +
                                " ranks over a communicator of " + std::to_string(comm.size()));
  const int me = comm.rank();
  const Box b = dec.box(me);
  if (local.nx != b.nx() || local.ny != b.ny())
    throw std::invalid_argument("halo exchange: a local grid of " + std::to_string(local.nx) + " x " +
                                std::to_string(local.ny) + " cells for rank " + std::to_string(me) + "'s box of " +
                                std::to_string(b.nx()) + " x " + std::to_string(b.ny()));
  const Axis a = make_axis(dec, me, local, s, x);
  const std::array<int, 4> nb = dec.neighbours(me);
  const int lo = nb[a.lo], hi = nb[a.hi];

  // Round one: my last line to the neighbour above (its line -1), my first
  // (two, when I own the second) to the one below (its lines n, n + 1).
  std::vector<Message<T>> sends, recvs;
  const bool mine1 = a.staggered && owns_line1(dec, me, a);
  const bool theirs1 = a.staggered && hi >= 0 && owns_line1(dec, hi, a);
  if (hi >= 0) sends.push_back({hi, a.lo, a.n - 1, 1, {}});
  if (lo >= 0) sends.push_back({lo, a.hi, 0, mine1 ? 2 : 1, {}});
  for (Message<T>& m : sends) pack(field, a, m);
  if (lo >= 0) recvs.push_back({lo, a.lo, -1, 1, {}});
  if (hi >= 0) recvs.push_back({hi, a.hi, a.n, theirs1 ? 2 : 1, {}});
  run(comm, sends, recvs, field, a);
  if (!a.staggered) return;

  // Round two: line 1 of a one-cell box is its line n, filled just now.
  sends.clear();
  recvs.clear();
  if (lo >= 0 && !owns_line1(dec, me, a)) sends.push_back({lo, a.hi + kSecondRound, 1, 1, {}});
  for (Message<T>& m : sends) pack(field, a, m);
  if (hi >= 0 && !theirs1) recvs.push_back({hi, a.hi + kSecondRound, a.n + 1, 1, {}});
  run(comm, sends, recvs, field, a);
}

}  // namespace

template <class T>
void exchange_halo_y(const Comm& comm, const Decomposition& dec, T* field, const Grid& local, Stagger s) {
  exchange_axis(comm, dec, field, local, s, false);
}

template <class T>
void exchange_halo(const Comm& comm, const Decomposition& dec, T* field, const Grid& local, Stagger s) {
  exchange_axis(comm, dec, field, local, s, true);
  exchange_halo_y(comm, dec, field, local, s);
}

template void exchange_halo_y<float>(const Comm&, const Decomposition&, float*, const Grid&, Stagger);
template void exchange_halo_y<double>(const Comm&, const Decomposition&, double*, const Grid&, Stagger);
template void exchange_halo<float>(const Comm&, const Decomposition&, float*, const Grid&, Stagger);
template void exchange_halo<double>(const Comm&, const Decomposition&, double*, const Grid&, Stagger);

}  // namespace sim
