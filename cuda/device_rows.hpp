// SPDX-License-Identifier: MIT
// Whole storage rows of device fields between the ranks of a run split into
// slabs (sim/ranks/slab_rows.hpp), through NCCL: the GPU's halo
// exchange, the multigrid levels' row copies and the two-way deposit fold.
// The plans (which rank takes which rows from whom) are SlabRows' and
// LevelRows', the same as the CPU backend's; only the transport differs.
// Scalars (norms, the CFL rate, diagnostics) go through SlabRows on the
// host, after the device has reduced its own rows.
//
// Every call enqueues on the stream it was made with and does not wait for
// it; every rank makes the same calls in the same order (NCCL matches a
// pair of ranks' sends and receives in the order they are posted).
//
// One GPU per rank is the fast path: rows go device to device through NCCL.
// Ranks that share a GPU (more ranks on a host than GPUs, which NCCL
// refuses) exchange rows through host memory and MPI instead: a copy out,
// the message and a copy in per exchange, after the stream's work (slow,
// for testing on one GPU). gpu.overlap = false keeps every copy in line
// (copy_rows_beside waits), to measure what the overlap saves.
// gpu.transport = "nccl" or "host" forces either;
// NCCL with ranks sharing a GPU then runs through its socket transport,
// each rank presenting itself as a host of its own (NCCL_HOSTID).
// The arithmetic is the same either way: so are the results, bit for bit.
//
// A backend holds one always: over one GPU (the rank split OneRank) every
// call does nothing, so a caller makes the same calls alone and over ranks.
#pragma once
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "cuda/device_buffer.hpp"
#include "sim/ranks/halo_exchange.hpp"
#include "sim/ranks/rank_split.hpp"
#include "sim/ranks/slab_rows.hpp"
#include "sim/model/strategies.hpp"
#include "sim/model/types.hpp"

namespace sim::cuda {

// Whether this sim was built with NCCL (what DeviceRows needs).
bool nccl_built();

// The GPU of this rank: its place among the ranks on its host, modulo the
// host's GPUs (and whether it shares that GPU with another rank there).
struct RankDevice {
  int ordinal = 0;
  bool shared = false;
};
RankDevice rank_device(const Comm& comm, int device_count);

class DeviceRows final : public SplitTransport {
 public:
  // Collective over the split's communicator, and attached to the split (its
  // comm_ms and comm_calls count the transfers); `shared`: some ranks of
  // the run share a GPU (rank_device).
  // `transport`, `overlap`: gpu.transport and gpu.overlap.
  DeviceRows(std::shared_ptr<const RankSplit> ranks, cudaStream_t stream, bool shared,
             RankTransport transport = RankTransport::auto_, bool overlap = true);
  ~DeviceRows() override;
  DeviceRows(const DeviceRows&) = delete;
  DeviceRows& operator=(const DeviceRows&) = delete;

  // Whether rows move at all: a run over several ranks (slabs() is then valid).
  bool split() const { return slabs_ != nullptr; }
  const SlabRows& slabs() const { return *slabs_; }
  bool through_host() const { return host_; }
  // For the backend's name: empty over one GPU, else how the rows travel.
  std::string describe() const;

  // SlabRows::copy_rows on a device field (float, double or
  // unsigned long long); rows from the rank itself are skipped.
  template <class T>
  void copy_rows(T* field, int pitch, const std::vector<std::vector<SlabRows::RowCopy>>& wanted);
  // The halo rows of a grid field after its boundary fill (SlabRows::halo_plan).
  template <class T>
  void exchange_halo(T* field, Stagger s) {
    if (slabs_) copy_rows(field, pitch_, slabs_->halo_plan(s));
  }
  // fluid.advection = "quick": the rows two out (SlabRows::wide_plan), after
  // the halo rows they may come from.
  template <class T>
  void exchange_wide(T* field) {
    if (slabs_) copy_rows(field, pitch_, slabs_->wide_plan());
  }
  // SlabRows::fold and refresh of a device deposit field.
  template <class T>
  void fold(T* field, Stagger s);
  template <class T>
  void refresh(T* field, Stagger s) {
    if (slabs_) copy_rows(field, pitch_, slabs_->refresh_plan(s));
  }
  // `n` values on the device made the largest over ranks (the fixed-point
  // scales every rank then uses alike), or summed over ranks in rank order:
  // a host round trip (the stream's work first). Nothing over one GPU.
  void max_over_ranks(unsigned int* values, int n);
  void sum_over_ranks(double* values, int n);

  // Runs `f`, which makes copy_rows calls (not folds), as one exchange:
  // through NCCL their sends and receives in one group (one launch, one
  // call, timed once); through host memory one after another.
  template <class F>
  void together(F&& f) {
    if (host_ || !slabs_) return f();
    group_begin();
    f();
    group_end();
  }

  // copy_rows beside the work enqueued after it: the copy waits for the
  // stream's work so far and runs on a stream of its own, and join() makes
  // the stream wait for it. The caller must not touch the copied rows in
  // between (it runs the interior rows of a level while the edge rows it
  // sends and the halo rows it receives travel). Through host memory it is
  // copy_rows, and join() does nothing.
  template <class T>
  void copy_rows_beside(T* field, int pitch, const std::vector<std::vector<SlabRows::RowCopy>>& wanted);
  void join();
  // Whether copy_rows_beside overlaps (NCCL, unless gpu.overlap = false), or
  // waits (host memory).
  bool overlaps() const { return slabs_ && !host_ && overlap_; }

  // Device time of the transfers so far (synchronises), and how many moved rows.
  double transport_ms() override;
  int64_t transport_calls() const override { return calls_; }

 private:
  // Enqueues on `on` (stream_ or side_); false when nothing moved for this rank.
  template <class T>
  bool transfer(T* field, int pitch, const std::vector<std::vector<SlabRows::RowCopy>>& wanted, bool add,
                cudaStream_t on);
  template <class T>
  void host_transfer(T* field, int pitch, const std::vector<std::vector<SlabRows::RowCopy>>& wanted, T* inbox);
  void group_begin();
  void group_end();
  void begin_timing(cudaStream_t on);
  void end_timing(cudaStream_t on);

  std::shared_ptr<const RankSplit> ranks_;
  const SlabRows* slabs_ = nullptr;  // ranks_'s slabs; null over one GPU
  cudaStream_t stream_;
  cudaStream_t side_ = nullptr;  // copy_rows_beside's (NCCL)
  cudaEvent_t ready_ = nullptr, done_ = nullptr;
  bool pending_ = false;  // a copy beside that the stream has not joined yet
  bool grouped_ = false;  // inside together(): copies join one NCCL group
  bool group_moved_ = false;
  int pitch_ = 0;
  bool host_ = false;     // the rows through host memory and MPI, not NCCL
  bool shared_ = false;   // ranks share a GPU
  bool overlap_ = true;   // gpu.overlap: copies beside the interior rows
  int64_t calls_ = 0;
  void* nccl_ = nullptr;  // ncclComm_t
  DeviceBuffer<unsigned char> inbox_;  // arrivals to add (fold)
  std::vector<cudaEvent_t> starts_, stops_;  // transfers not yet summed
  double summed_ms_ = 0;
};

}  // namespace sim::cuda
