// SPDX-License-Identifier: MIT
// Comm over MPI (SIM_HAVE_MPI) or over one process. Each operation has the
// one-rank result first; an MPI communicator (a non-null handle) replaces
// it with the collective's. Communicators use MPI_ERRORS_RETURN, so a
// failed call comes back as a code, which check() turns into an exception.
#include "sim/ranks/comm.hpp"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#if SIM_HAVE_MPI
#include <mpi.h>
#endif

namespace sim {

namespace {

constexpr int kMaxTag = 32767;

// MPI counts are int: a message or a gathered total above that is refused
// before any rank starts the transfer.
int count_of(size_t bytes, const char* what) {
  if (bytes > static_cast<size_t>(INT_MAX))
    throw std::length_error(std::string(what) + ": " + std::to_string(bytes) +
                            " bytes, more than one MPI message carries (2^31 - 1)");
  return static_cast<int>(bytes);
}

void check_peer(int peer, int tag, int size) {
  if (peer < 0 || peer >= size)
    throw std::invalid_argument("exchange with rank " + std::to_string(peer) + " in a communicator of " +
                                std::to_string(size) + " rank(s)");
  if (tag < 0 || tag > kMaxTag)
    throw std::invalid_argument("exchange tag " + std::to_string(tag) + " outside 0.." + std::to_string(kMaxTag));
}

#if SIM_HAVE_MPI
MPI_Comm mpi(const std::shared_ptr<void>& h) { return *static_cast<MPI_Comm*>(h.get()); }

std::string error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(len));
}

void check(int code, const char* call) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string(call) + " failed: " + error_text(code));
}

bool mpi_live() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

// A handle that frees its communicator with the last copy (unless MPI has
// ended by then); MPI_COMM_WORLD is never freed.
std::shared_ptr<void> make_handle(MPI_Comm c, bool owned) {
  return std::shared_ptr<void>(new MPI_Comm(c), [owned](void* p) {
    auto* c = static_cast<MPI_Comm*>(p);
    if (owned && mpi_live()) MPI_Comm_free(c);
    delete c;
  });
}

template <class T>
MPI_Datatype type_of();
template <>
MPI_Datatype type_of<double>() { return MPI_DOUBLE; }
template <>
MPI_Datatype type_of<int64_t>() { return MPI_INT64_T; }
#endif

enum class Op { sum, min, max };

template <class T>
T reduce(const std::shared_ptr<void>& h, T x, Op op) {
#if SIM_HAVE_MPI
  if (h) {
    const MPI_Op o = op == Op::sum ? MPI_SUM : op == Op::min ? MPI_MIN : MPI_MAX;
    T y{};
    check(MPI_Allreduce(&x, &y, 1, type_of<T>(), o, mpi(h)), "MPI_Allreduce");
    return y;
  }
#else
  (void)h;
  (void)op;
#endif
  return x;
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
#if SIM_HAVE_MPI
  int init = 0;
  check(MPI_Initialized(&init), "MPI_Initialized");
  if (!init) {
    int provided = 0;
    check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    initialised_here_ = true;
  }
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
#else
  (void)argc;
  (void)argv;
#endif
}

MpiSession::~MpiSession() {
#if SIM_HAVE_MPI
  if (initialised_here_ && mpi_live()) MPI_Finalize();
#endif
}

bool MpiSession::built_with_mpi() {
#if SIM_HAVE_MPI
  return true;
#else
  return false;
#endif
}

Comm Comm::serial() { return Comm(); }

Comm Comm::world() {
  Comm c;
#if SIM_HAVE_MPI
  if (!mpi_live()) throw std::logic_error("Comm::world() outside an MpiSession: MPI is not initialised");
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  c.handle_ = make_handle(MPI_COMM_WORLD, false);
  check(MPI_Comm_rank(MPI_COMM_WORLD, &c.rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &c.size_), "MPI_Comm_size");
#endif
  return c;
}

Comm Comm::split(int colour, int key) const {
  if (colour < 0) throw std::invalid_argument("Comm::split: colour " + std::to_string(colour) + " is negative");
  Comm c;
#if SIM_HAVE_MPI
  if (handle_) {
    MPI_Comm out = MPI_COMM_NULL;
    check(MPI_Comm_split(mpi(handle_), colour, key, &out), "MPI_Comm_split");
    c.handle_ = make_handle(out, true);
    check(MPI_Comm_rank(out, &c.rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(out, &c.size_), "MPI_Comm_size");
  }
#else
  (void)key;
#endif
  return c;
}

// The ranks on this rank's host, and this rank's place among them.
std::pair<int, int> Comm::host_group() const {
  int n = 1, r = 0;
#if SIM_HAVE_MPI
  if (handle_) {
    MPI_Comm local = MPI_COMM_NULL;
    check(MPI_Comm_split_type(mpi(handle_), MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
          "MPI_Comm_split_type");
    int rc = MPI_Comm_size(local, &n);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(local, &r);
    MPI_Comm_free(&local);
    check(rc, "MPI_Comm_size");
  }
#endif
  return {n, r};
}

int Comm::ranks_sharing_memory() const { return host_group().first; }
int Comm::rank_on_host() const { return host_group().second; }

void Comm::barrier() const {
#if SIM_HAVE_MPI
  if (handle_) check(MPI_Barrier(mpi(handle_)), "MPI_Barrier");
#endif
}

double Comm::allreduce_sum(double x) const { return reduce(handle_, x, Op::sum); }
double Comm::allreduce_min(double x) const { return reduce(handle_, x, Op::min); }
double Comm::allreduce_max(double x) const { return reduce(handle_, x, Op::max); }
int64_t Comm::allreduce_sum(int64_t x) const { return reduce(handle_, x, Op::sum); }
int64_t Comm::allreduce_min(int64_t x) const { return reduce(handle_, x, Op::min); }
int64_t Comm::allreduce_max(int64_t x) const { return reduce(handle_, x, Op::max); }

std::vector<double> Comm::allgather(double x) const {
  std::vector<double> all(static_cast<size_t>(size_), x);
#if SIM_HAVE_MPI
  if (handle_) check(MPI_Allgather(&x, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, mpi(handle_)), "MPI_Allgather");
#endif
  return all;
}

double Comm::deterministic_sum(double x) const {
  const std::vector<double> all = allgather(x);
  double s = all[0];
  for (size_t r = 1; r < all.size(); ++r) s += all[r];
  return s;
}

void Comm::broadcast(std::vector<char>& bytes, int root) const {
  if (root < 0 || root >= size_)
    throw std::invalid_argument("broadcast from rank " + std::to_string(root) + " in a communicator of " +
                                std::to_string(size_) + " rank(s)");
#if SIM_HAVE_MPI
  if (handle_) {
    int64_t n = static_cast<int64_t>(bytes.size());
    check(MPI_Bcast(&n, 1, MPI_INT64_T, root, mpi(handle_)), "MPI_Bcast");
    const int count = count_of(static_cast<size_t>(n), "broadcast");  // the same verdict on every rank
    bytes.resize(static_cast<size_t>(n));
    if (count > 0) check(MPI_Bcast(bytes.data(), count, MPI_BYTE, root, mpi(handle_)), "MPI_Bcast");
  }
#else
  (void)bytes;  // one rank: the root's bytes are already here
#endif
}

std::string Comm::broadcast(const std::string& s, int root) const {
  std::vector<char> bytes(s.begin(), s.end());
  broadcast(bytes, root);
  return std::string(bytes.begin(), bytes.end());
}

std::vector<char> Comm::gatherv(const void* data, size_t bytes, std::vector<size_t>* counts) const {
  std::vector<int64_t> sizes(static_cast<size_t>(size_), static_cast<int64_t>(bytes));
#if SIM_HAVE_MPI
  if (handle_) {
    // Every rank learns every size, so all refuse an oversized total together.
    int64_t mine = static_cast<int64_t>(bytes);
    check(MPI_Allgather(&mine, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T, mpi(handle_)), "MPI_Allgather");
  }
#endif
  size_t total = 0;
  for (int64_t n : sizes) total += static_cast<size_t>(n);
  count_of(total, "gatherv");
  std::vector<char> out;
  if (rank_ == 0) {
    out.resize(total);
    if (counts) counts->assign(sizes.begin(), sizes.end());
  } else if (counts) {
    counts->clear();
  }
#if SIM_HAVE_MPI
  if (handle_) {
    std::vector<int> cnt(sizes.size()), displ(sizes.size());
    int at = 0;
    for (size_t r = 0; r < sizes.size(); ++r) {
      cnt[r] = static_cast<int>(sizes[r]);
      displ[r] = at;
      at += cnt[r];
    }
    check(MPI_Gatherv(data, static_cast<int>(bytes), MPI_BYTE, out.data(), cnt.data(), displ.data(), MPI_BYTE, 0,
                      mpi(handle_)),
          "MPI_Gatherv");
    return out;
  }
#endif
  if (bytes > 0) std::memcpy(out.data(), data, bytes);
  return out;
}

namespace {

// Messages of a rank to itself, matched as MPI would (a receive takes the
// first unclaimed send with its tag) and copied: the local part of every
// exchange, and all of it on one rank. (OpenMPI's path to the rank itself
// also cuts a longer message to the receive without an error.)
void exchange_self(int me, const std::vector<SendBuffer>& sends, const std::vector<RecvBuffer>& recvs) {
  std::vector<bool> taken(sends.size(), false);
  for (const RecvBuffer& r : recvs) {
    if (r.peer != me) continue;
    size_t k = 0;
    while (k < sends.size() && (taken[k] || sends[k].peer != me || sends[k].tag != r.tag)) ++k;
    if (k == sends.size())
      throw std::runtime_error("exchange: rank " + std::to_string(me) + " sends itself no message with tag " +
                               std::to_string(r.tag));
    if (sends[k].bytes != r.bytes)
      throw std::runtime_error("exchange: rank " + std::to_string(me) + " sent " + std::to_string(sends[k].bytes) +
                               " bytes with tag " + std::to_string(r.tag) + ", " + std::to_string(r.bytes) +
                               " expected");
    taken[k] = true;
    if (r.bytes > 0) std::memcpy(r.data, sends[k].data, r.bytes);
  }
  for (size_t k = 0; k < sends.size(); ++k)
    if (sends[k].peer == me && !taken[k])
      throw std::runtime_error("exchange: rank " + std::to_string(me) + " sends itself a message with tag " +
                               std::to_string(sends[k].tag) + " and no receive takes it");
}

}  // namespace

void Comm::exchange(const std::vector<SendBuffer>& sends, const std::vector<RecvBuffer>& recvs) const {
  for (const SendBuffer& s : sends) {
    check_peer(s.peer, s.tag, size_);
    count_of(s.bytes, "exchange send");
  }
  for (const RecvBuffer& r : recvs) {
    check_peer(r.peer, r.tag, size_);
    count_of(r.bytes, "exchange receive");
  }
#if SIM_HAVE_MPI
  if (handle_) {
    // The copies to this rank itself first (a mismatch throws with nothing
    // posted), then the receives and the sends, all nonblocking.
    exchange_self(rank_, sends, recvs);
    const MPI_Comm c = mpi(handle_);
    std::vector<MPI_Request> req;
    std::vector<size_t> recv_of;  // the receive behind each of the first requests
    for (size_t k = 0; k < recvs.size(); ++k) {
      const RecvBuffer& r = recvs[k];
      if (r.peer == rank_) continue;
      req.push_back(MPI_REQUEST_NULL);
      recv_of.push_back(k);
      check(MPI_Irecv(r.data, static_cast<int>(r.bytes), MPI_BYTE, r.peer, r.tag, c, &req.back()), "MPI_Irecv");
    }
    for (const SendBuffer& s : sends) {
      if (s.peer == rank_) continue;
      req.push_back(MPI_REQUEST_NULL);
      check(MPI_Isend(s.data, static_cast<int>(s.bytes), MPI_BYTE, s.peer, s.tag, c, &req.back()), "MPI_Isend");
    }
    std::vector<MPI_Status> st(req.size());
    const int rc = MPI_Waitall(static_cast<int>(req.size()), req.data(), st.data());
    if (rc == MPI_ERR_IN_STATUS) {
      for (const MPI_Status& s : st)
        if (s.MPI_ERROR != MPI_SUCCESS && s.MPI_ERROR != MPI_ERR_PENDING) check(s.MPI_ERROR, "MPI_Waitall");
    }
    check(rc, "MPI_Waitall");
    for (size_t k = 0; k < recv_of.size(); ++k) {
      const RecvBuffer& r = recvs[recv_of[k]];
      int got = 0;
      check(MPI_Get_count(&st[k], MPI_BYTE, &got), "MPI_Get_count");
      if (static_cast<size_t>(got) != r.bytes)
        throw std::runtime_error("exchange: rank " + std::to_string(r.peer) + " sent " + std::to_string(got) +
                                 " bytes with tag " + std::to_string(r.tag) + ", " + std::to_string(r.bytes) +
                                 " expected");
    }
    return;
  }
#endif
  exchange_self(rank_, sends, recvs);
}

void Comm::abort_all(const std::string& message, int code) const {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  const int exit_code = code != 0 ? code : 1;
#if SIM_HAVE_MPI
  if (handle_ && mpi_live()) MPI_Abort(mpi(handle_), exit_code);
#endif
  std::exit(exit_code);
}

}  // namespace sim
