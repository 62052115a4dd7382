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
  if (p.used == kPairsPerPhase) collect(i);
  p.start[p.used].record(stream_);
  p.open = true;
}

void EventTimer::end(Phase phase) {
  Pool& p = pools_[static_cast<int>(phase)];
  if (!p.open) return;
  p.stop[p.used].record(stream_);
  p.open = false;
  ++p.used;
}

void EventTimer::collect(int phase) {
  Pool& p = pools_[phase];
  if (p.used == 0) return;
  SIM_CUDA_CHECK(cudaEventSynchronize(p.stop[p.used - 1].get()));
  for (int k = 0; k < p.used; ++k) {
    float ms = 0;
    SIM_CUDA_CHECK(cudaEventElapsedTime(&ms, p.start[k].get(), p.stop[k].get()));
    total_[phase] += ms;
  }
  p.used = 0;
}

std::array<double, kPhaseCount> EventTimer::totals_ms() {
  for (int i = 0; i < kPhaseCount; ++i) collect(i);
  return total_;
}

void EventTimer::reset() {
  for (Pool& p : pools_) {
    p.used = 0;
    p.open = false;
  }
  total_.fill(0);
}

}  // namespace sim::cuda
