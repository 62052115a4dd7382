// SPDX-License-Identifier: MIT
// Wall time since a steady_clock point, in milliseconds: the one stopwatch of
// the run's reports (the output phase, the snapshot writer's parts, sim bench).
#pragma once
#include <chrono>

namespace sim {

using SteadyClock = std::chrono::steady_clock;

inline double ms_since(SteadyClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
}

}  // namespace sim
