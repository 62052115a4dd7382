// SPDX-License-Identifier: MIT
// The communicator a decomposed run talks through: rank, size, reductions,
// broadcast, gather and neighbour exchanges over MPI, or over one process
// when sim is built without MPI (or when a caller asks for Comm::serial()),
// so that the code above it calls the same operations either way.
//
// Every operation but abort_all is collective over the communicator (the
// exchange only among the ranks that name each other): all ranks call it in
// the same order. An MPI error becomes a std::runtime_error naming the call;
// a rank that cannot go on while the others wait calls abort_all.
//
// No MPI header here: code that includes this builds the same way with or
// without MPI.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sim {

// MPI for the lifetime of the object: MPI_Init_thread (funneled: only the
// thread that made the session calls MPI) unless MPI is already initialised,
// MPI_Finalize at the end when this session initialised it. A program not
// started by mpirun becomes a run of one rank (singleton MPI_Init). One
// session per process; without MPI it does nothing.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  // Whether this sim was built with MPI.
  static bool built_with_mpi();

 private:
  bool initialised_here_ = false;
};

// One message to a rank of the communicator (its own rank included).
struct SendBuffer {
  int peer;
  int tag;  // 0..32767 (the smallest tag bound MPI guarantees)
  const void* data;
  size_t bytes;
};
// One message from a rank; it must carry exactly `bytes`.
struct RecvBuffer {
  int peer;
  int tag;
  void* data;
  size_t bytes;
};

class Comm {
 public:
  // MPI_COMM_WORLD (needs a live MpiSession); Comm::serial() without MPI.
  static Comm world();
  // One rank, no MPI call at all, in any build.
  static Comm serial();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_serial() const { return !handle_; }
  // The MPI_Comm behind this communicator, as a pointer to it, for a
  // library that takes one (parallel HDF5); null when serial.
  const void* native_handle() const { return handle_.get(); }

  // The ranks that pass the same colour form one communicator, ranked by
  // key (ties by rank here).
  Comm split(int colour, int key) const;

  // The ranks of this communicator on this rank's host (sharing its
  // memory), this one included.
  int ranks_sharing_memory() const;
  // This rank's place (0, 1, ...) among them, in rank order: which of the
  // host's GPUs it takes.
  int rank_on_host() const;

  void barrier() const;

  double allreduce_sum(double x) const;
  double allreduce_min(double x) const;
  double allreduce_max(double x) const;
  int64_t allreduce_sum(int64_t x) const;
  int64_t allreduce_min(int64_t x) const;
  int64_t allreduce_max(int64_t x) const;

  // The per-rank values added in rank order, the same bits on every rank
  // and for any reduction algorithm MPI picks: what a diagnostic needs to
  // be independent of the transport (not of the decomposition: other
  // partials give another sum).
  double deterministic_sum(double x) const;
  // The per-rank values in rank order, on every rank.
  std::vector<double> allgather(double x) const;

  // Root's bytes on every rank (the other ranks' contents are replaced,
  // whatever their size).
  void broadcast(std::vector<char>& bytes, int root) const;
  std::string broadcast(const std::string& s, int root) const;

  // Every rank's bytes, concatenated in rank order on rank 0 (empty on the
  // others); `counts`, when given, receives each rank's byte count on rank 0.
  std::vector<char> gatherv(const void* data, size_t bytes, std::vector<size_t>* counts = nullptr) const;
  template <class T>
  std::vector<T> gatherv(const std::vector<T>& local, std::vector<size_t>* counts = nullptr) const {
    static_assert(std::is_trivially_copyable_v<T>, "gatherv copies bytes");
    const std::vector<char> bytes = gatherv(local.data(), local.size() * sizeof(T), counts);
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
    if (counts)
      for (size_t& c : *counts) c /= sizeof(T);
    return out;
  }

  // Posts every receive, then every send (nonblocking), and waits for all:
  // neighbours may send to each other in any order without deadlock. Messages
  // between two ranks with one tag arrive in the order they were listed;
  // a rank's messages to itself are copied. A receive must get exactly its
  // size (else std::runtime_error). Send buffers must not overlap receive
  // buffers.
  void exchange(const std::vector<SendBuffer>& sends, const std::vector<RecvBuffer>& recvs) const;

  // Records of one type to and from a list of peers (the rank itself may be
  // one): out[k] goes to peers[k], and the result's [k] is what peers[k]
  // sent this rank, in its order; every listed peer must list this rank.
  // The counts go first (tag `tag`), then the records (tag + 1).
  template <class T>
  std::vector<std::vector<T>> exchange_records(const std::vector<int>& peers, const std::vector<std::vector<T>>& out,
                                               int tag) const {
    static_assert(std::is_trivially_copyable_v<T>, "exchange_records copies bytes");
    const size_t n = peers.size();
    std::vector<int64_t> n_out(n), n_in(n);
    std::vector<SendBuffer> sends;
    std::vector<RecvBuffer> recvs;
    for (size_t k = 0; k < n; ++k) {
      n_out[k] = static_cast<int64_t>(out[k].size());
      sends.push_back({peers[k], tag, &n_out[k], sizeof(int64_t)});
      recvs.push_back({peers[k], tag, &n_in[k], sizeof(int64_t)});
    }
    exchange(sends, recvs);
    std::vector<std::vector<T>> in(n);
    sends.clear();
    recvs.clear();
    for (size_t k = 0; k < n; ++k) {
      in[k].resize(static_cast<size_t>(n_in[k]));
      if (!out[k].empty()) sends.push_back({peers[k], tag + 1, out[k].data(), out[k].size() * sizeof(T)});
      if (!in[k].empty()) recvs.push_back({peers[k], tag + 1, in[k].data(), in[k].size() * sizeof(T)});
    }
    exchange(sends, recvs);
    return in;
  }

  // Prints `message` as one line on stderr (from the calling rank only) and
  // ends every rank of the run with exit code `code` (non-zero). Any one
  // rank may call it; when all ranks meet the same error, let one of them
  // (rank 0) call it and the others wait in a collective, or the line
  // appears once per rank.
  [[noreturn]] void abort_all(const std::string& message, int code = 1) const;

 private:
  std::pair<int, int> host_group() const;  // ranks_sharing_memory, rank_on_host
  std::shared_ptr<void> handle_;  // the MPI_Comm (freed with the last copy); null when serial
  int rank_ = 0, size_ = 1;
};

}  // namespace sim
