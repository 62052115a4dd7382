// Snapshots written beside the stepping: the main thread hands over a host
// copy of the state and goes on stepping while a writer thread derives the
// fields, writes snap_NNNNNN.h5 and rewrites sim.xdmf.
//
// At most kMaxPending snapshots are in flight (queued or being written):
// with 2 the writer works on one while the next waits, and memory stays
// bounded at two host copies. submit() blocks while the bound is reached;
// that wait is the part of the output time the stepping could not hide.
//
// GPU hook: today a job is a SimState from Simulation::download() (pageable
// host memory, a fresh allocation per snapshot). The CUDA backend is to
// download into pinned staging buffers instead; those would become a pool of
// kMaxPending host buffers owned here, handed out before the download and
// returned by the writer after the file is committed. Only submit()'s
// argument changes; the queue, the bound and the timing stay as they are.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "io/snapshot_series.hpp"
#include "io/snapshot_writer.hpp"
#include "sim/state.hpp"

namespace sim {

struct SnapshotTiming {
  int64_t written = 0;
  double write_ms = 0;  // writer thread: fields, file, index
  double wait_ms = 0;   // main thread: blocked in submit() and finish()
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

  // Queues `state` for OUTPUT/snap_<state.step>.h5. Throws the error of an
  // earlier failed write, so the run stops at the first full disk.
  void submit(SimState state);
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
  std::deque<SimState> queue_;
  bool busy_ = false, closing_ = false;
  std::exception_ptr error_;
  SnapshotTiming timing_;
  std::thread thread_;  // last: starts after everything it reads exists
};

}  // namespace sim
