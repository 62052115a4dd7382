#include "cuda/timer.hpp"

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
  p.start[p.head % kPairsPerPhase].record(stream_);
  p.open = true;
}

void EventTimer::end(Phase phase) {
  Pool& p = pools_[static_cast<int>(phase)];
  if (!p.open) return;
  p.stop[p.head % kPairsPerPhase].record(stream_);
  p.open = false;
  ++p.head;
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
