// SPDX-License-Identifier: MIT
#include "io/snapshot_thread.hpp"

#include <chrono>

#include "io/snapshot_files.hpp"
#include "sim/model/elapsed.hpp"

namespace sim {
using Clock = SteadyClock;

SnapshotThread::SnapshotThread(SnapshotMeta meta, SnapshotSeries series)
    : meta_(std::move(meta)), series_(std::move(series)), thread_([this] { run(); }) {}

SnapshotThread::~SnapshotThread() { stop(); }

void SnapshotThread::submit(std::unique_ptr<PendingState> state) {
  const auto t0 = Clock::now();
  std::unique_lock<std::mutex> lk(m_);
  space_.wait(lk, [&] { return error_ || static_cast<int>(queue_.size()) + (busy_ ? 1 : 0) < kMaxPending; });
  timing_.wait_ms += ms_since(t0);
  if (error_) std::rethrow_exception(error_);
  queue_.push_back(std::move(state));
  work_.notify_one();
}

void SnapshotThread::finish() {
  const auto t0 = Clock::now();
  {
    std::unique_lock<std::mutex> lk(m_);
    space_.wait(lk, [&] { return queue_.empty() && !busy_; });
    timing_.wait_ms += ms_since(t0);
    if (error_) std::rethrow_exception(error_);
  }
}

SnapshotTiming SnapshotThread::timing() const {
  std::lock_guard<std::mutex> lk(m_);
  return timing_;
}

void SnapshotThread::stop() {
  {
    std::lock_guard<std::mutex> lk(m_);
    closing_ = true;
  }
  work_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void SnapshotThread::run() {
  for (;;) {
    std::unique_lock<std::mutex> lk(m_);
    work_.wait(lk, [&] { return !queue_.empty() || closing_; });
    if (queue_.empty()) return;
    std::unique_ptr<PendingState> job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    const bool failed = static_cast<bool>(error_);
    lk.unlock();

    const auto t0 = Clock::now();
    std::exception_ptr err;
    SnapshotWriteTiming parts;
    double take_ms = 0;
    if (!failed) {
      try {
        SimState s = job->take();
        take_ms = ms_since(t0);
        const std::string path = join_path(series_.dir(), snapshot_file_name(s.step));
        series_.ensure_index();
        write_snapshot(path, s, meta_, &parts);
        series_.add(path);
      } catch (...) {
        err = std::current_exception();
      }
    }
    job.reset();  // free the copy (or its staging) before the main thread may queue the next one
    const double ms = ms_since(t0);

    lk.lock();
    busy_ = false;
    if (err && !error_) error_ = err;
    if (!failed) {
      timing_.write_ms += ms;
      if (!err) {
        ++timing_.written;
        timing_.take_ms += take_ms;
        timing_.fields_ms += parts.fields_ms;
        timing_.hdf5_ms += parts.hdf5_ms;
        timing_.sync_ms += parts.sync_ms;
        timing_.bytes += parts.bytes;
      }
    }
    space_.notify_all();
  }
}

}  // namespace sim
