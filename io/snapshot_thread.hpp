// SPDX-License-Identifier: MIT
// Snapshots written beside the stepping: the main thread hands over a host
// copy of the state and goes on stepping while a writer thread derives the
// fields, writes snap_NNNNNN.h5 and rewrites sim.xdmf.
//
// At most kMaxPending snapshots are in flight (queued or being written):
// with 2 the writer works on one while the next waits, and memory stays
// bounded at two host copies. submit() blocks while the bound is reached;
// that wait is the part of the output time the stepping could not hide.
//
// A job is a PendingState (sim/model/backend.hpp): on the CPU a host copy made
// before submit(); on the GPU a copy still under way from device staging
// into pinned host memory, which the writer thread waits for (take()) and
// then writes. The main thread pays only for starting the copy.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "io/snapshot_series.hpp"
#include "io/snapshot_writer.hpp"
#include "sim/model/backend.hpp"
#include "sim/model/state.hpp"

namespace sim {

struct SnapshotTiming {
  int64_t written = 0;
  double write_ms = 0;  // writer thread: the copy's arrival, fields, file, index
  double wait_ms = 0;   // main thread: blocked in submit() and finish()
  // The writer thread's time by part: the state's arrival (a GPU's copy into
  // host memory), then write_snapshot's parts (SnapshotWriteTiming).
  double take_ms = 0, fields_ms = 0, hdf5_ms = 0, sync_ms = 0;
  uint64_t bytes = 0;
  // Output time overlapped with stepping.
  double hidden_ms() const { return write_ms > wait_ms ? write_ms - wait_ms : 0.0; }
};

class SnapshotThread {
 public:
  static constexpr int kMaxPending = 2;

  SnapshotThread(SnapshotMeta meta, SnapshotSeries series);
  SnapshotThread(const SnapshotThread&) = delete;
  SnapshotThread& operator=(const SnapshotThread&) = delete;
  // Completes the pending writes (a state already copied is worth keeping),
  // then stops; errors are dropped here, finish() is where they surface.
  ~SnapshotThread();

  // Queues the state for OUTPUT/snap_<state.step>.h5. Throws the error of an
  // earlier failed write, so the run stops at the first full disk.
  void submit(std::unique_ptr<PendingState> state);
  void submit(SimState state) { submit(ready_state(std::move(state))); }
  // Waits for every queued write; throws the first write error.
  void finish();

  SnapshotTiming timing() const;

 private:
  void run();
  void stop();

  SnapshotMeta meta_;
  SnapshotSeries series_;
  mutable std::mutex m_;
  std::condition_variable work_, space_;
  std::deque<std::unique_ptr<PendingState>> queue_;
  bool busy_ = false, closing_ = false;
  std::exception_ptr error_;
  SnapshotTiming timing_;
  std::thread thread_;  // last: starts after everything it reads exists
};

}  // namespace sim
