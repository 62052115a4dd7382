// SPDX-License-Identifier: MIT
#include "cuda/timer.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace sim::cuda {

EventTimer::EventTimer(cudaStream_t s) : stream_(s) {
  for (Pool& p : pools_) {
    p.start.resize(kPairsPerPhase);
    p.stop.resize(kPairsPerPhase);
  }
}

void EventTimer::begin(Phase phase) {
  const int i = static_cast<int>(phase);
  Pool& p = pools_[i];
  if (p.head - p.tail == kPairsPerPhase) read_oldest(i);
  record(p.start[p.head % kPairsPerPhase]);
  log_if_recording(i, true);
  p.open = true;
}

void EventTimer::end(Phase phase) {
  Pool& p = pools_[static_cast<int>(phase)];
  if (!p.open) return;
  record(p.stop[p.head % kPairsPerPhase]);
  log_if_recording(static_cast<int>(phase), false);
  p.open = false;
  ++p.head;
}

// External: while the stream is being recorded, the record becomes an event
// record node of the graph (a plain record would only order the capture).
void EventTimer::record(Event& e) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  SIM_CUDA_CHECK(cudaStreamIsCapturing(stream_, &status));
  if (status == cudaStreamCaptureStatusActive)
    SIM_CUDA_CHECK(cudaEventRecordWithFlags(e.get(), stream_, cudaEventRecordExternal));
  else
    e.record(stream_);
}

// The record just made is the capture's only frontier node when recording.
void EventTimer::log_if_recording(int phase, bool start) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t* deps = nullptr;
  size_t n = 0;
  SIM_CUDA_CHECK(cudaStreamGetCaptureInfo(stream_, &status, nullptr, nullptr, &deps, nullptr, &n));
  if (status != cudaStreamCaptureStatusActive) return;
  if (n != 1) throw std::logic_error("cuda: a timed phase recorded with " + std::to_string(n) + " frontier nodes");
  recorded_.push_back({deps[0], phase, start});
}

std::vector<EventTimer::Node> EventTimer::take_recorded() { return std::exchange(recorded_, {}); }

void EventTimer::replay(cudaGraphExec_t exec, const std::vector<Node>& nodes) {
  for (const Node& n : nodes) {
    Pool& p = pools_[n.phase];
    if (n.start) {
      if (p.head - p.tail == kPairsPerPhase) read_oldest(n.phase);
      SIM_CUDA_CHECK(cudaGraphExecEventRecordNodeSetEvent(exec, n.node, p.start[p.head % kPairsPerPhase].get()));
    } else {
      SIM_CUDA_CHECK(cudaGraphExecEventRecordNodeSetEvent(exec, n.node, p.stop[p.head % kPairsPerPhase].get()));
      ++p.head;
    }
  }
}

void EventTimer::read_oldest(int phase) {
  Pool& p = pools_[phase];
  const int64_t k = p.tail % kPairsPerPhase;
  SIM_CUDA_CHECK(cudaEventSynchronize(p.stop[k].get()));
  float ms = 0;
  SIM_CUDA_CHECK(cudaEventElapsedTime(&ms, p.start[k].get(), p.stop[k].get()));
  total_[phase] += ms;
  ++p.tail;
}

std::array<double, kPhaseCount> EventTimer::totals_ms() {
  for (int i = 0; i < kPhaseCount; ++i)
    while (pools_[i].tail < pools_[i].head) read_oldest(i);
  return total_;
}

void EventTimer::reset() {
  for (Pool& p : pools_) {
    p.head = p.tail = 0;
    p.open = false;
  }
  total_.fill(0);
}

}  // namespace sim::cuda
