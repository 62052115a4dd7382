// PhaseTimer on CUDA events: begin/end record a start/stop pair on the
// stream without waiting; the elapsed times are collected only when
// totals_ms() is asked for or a phase's pool of pairs is full.
#pragma once
#include <array>
#include <vector>

#include "cuda/device.hpp"
#include "sim/backend.hpp"

namespace sim::cuda {

class EventTimer final : public PhaseTimer {
 public:
  static constexpr int kPairsPerPhase = 64;

  explicit EventTimer(cudaStream_t s);
  void begin(Phase p) override;
  void end(Phase p) override;
  std::array<double, kPhaseCount> totals_ms() override;  // synchronises on the recorded events
  void reset() override;

 private:
  struct Pool {
    std::vector<Event> start, stop;
    int used = 0;      // completed pairs waiting to be read
    bool open = false;  // begin() recorded, end() not yet
  };
  void collect(int phase);

  cudaStream_t stream_;
  std::array<Pool, kPhaseCount> pools_;
  std::array<double, kPhaseCount> total_{};
};

}  // namespace sim::cuda
