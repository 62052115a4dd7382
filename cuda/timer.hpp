// SPDX-License-Identifier: MIT
// PhaseTimer on CUDA events: begin/end record a start/stop pair on the
// stream without waiting; the elapsed times are collected when totals_ms()
// is asked for, or one at a time, the oldest, when a phase's ring is full.
//
// Inside a recorded graph (cuda/graph.hpp) a begin or end becomes an event
// record node; the timer logs the node, and before each later launch of
// the graph replay() points those nodes at the next free pairs, so every
// launch is timed as if begin/end had been called.
#pragma once
#include <array>
#include <vector>

#include "cuda/device.hpp"
#include "sim/model/backend.hpp"

namespace sim::cuda {

class EventTimer final : public PhaseTimer {
 public:
  static constexpr int kPairsPerPhase = 64;

  explicit EventTimer(cudaStream_t s);
  void begin(Phase p) override;
  void end(Phase p) override;
  std::array<double, kPhaseCount> totals_ms() override;  // synchronises on the recorded events
  void reset() override;

  // An event record node of a recorded graph: which phase, start or stop.
  struct Node {
    cudaGraphNode_t node;
    int phase;
    bool start;
  };
  // The nodes logged since the last call (the begin/end calls made while
  // the stream was being recorded), in order.
  std::vector<Node> take_recorded();
  // Before a launch of `exec` (instantiated from the graph of `nodes`):
  // each node takes the next pair of its phase, as begin/end would.
  void replay(cudaGraphExec_t exec, const std::vector<Node>& nodes);

 private:
  // A ring of pairs: a full ring waits only for its oldest pair, recorded
  // kPairsPerPhase pairs ago, so timing never drains the queued steps.
  struct Pool {
    std::vector<Event> start, stop;
    int64_t head = 0;   // pairs recorded
    int64_t tail = 0;   // pairs read
    bool open = false;  // begin() recorded, end() not yet
  };
  void read_oldest(int phase);
  void record(Event& e);
  void log_if_recording(int phase, bool start);
  std::vector<Node> recorded_;

  cudaStream_t stream_;
  std::array<Pool, kPhaseCount> pools_;
  std::array<double, kPhaseCount> total_{};
};

}  // namespace sim::cuda
