// SPDX-License-Identifier: MIT
// The Schafer & Turek (1996) cylinder benchmarks 2D-1 and 2D-2
// (config/schafer_turek_2d*.toml) stepped in process, the obstacle's force
// read every step, and the coefficients the benchmark defines:
// C_D = 2 F_x / (rho U^2 D), C_L = 2 F_y / (rho U^2 D), St = D f / U, with U
// the inflow's mean speed. scripts/schafer_turek.py computes the same from
// a run's diagnostics.csv.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "support/cases.hpp"

namespace sim::test {

// The benchmark's values (Schafer & Turek 1996, Table 4): 2D-1 C_D and C_L,
// 2D-2 the ranges of max C_D, max C_L and St.
constexpr double kSt1Drag = 5.5795, kSt1Lift = 0.0106;
constexpr double kSt2DragMax[2] = {3.22, 3.24}, kSt2LiftMax[2] = {0.99, 1.01}, kSt2Strouhal[2] = {0.295, 0.305};

struct StRun {
  std::vector<double> time, cd, cl;  // every step
  double drag = 0, lift = 0;         // the last step's coefficients
  double strouhal = 0, drag_max = 0, lift_max = 0;  // over whole lift periods after t_from (2D-2)
  int periods = 0;
  double secs = 0;
};

// The upward zero crossings of the lift after t_from, linear between steps.
inline std::vector<double> lift_up_crossings(const StRun& r, double t_from) {
  std::vector<double> t;
  for (size_t k = 1; k < r.time.size(); ++k)
    if (r.time[k - 1] >= t_from && r.cl[k - 1] < 0 && r.cl[k] >= 0)
      t.push_back(r.time[k - 1] + (r.time[k] - r.time[k - 1]) * (-r.cl[k - 1]) / (r.cl[k] - r.cl[k - 1]));
  return t;
}

// config/schafer_turek_2d<which>.toml with ny cells across (nx = ny 2.2 / 0.41),
// run to t_end on the CPU; the shedding figures from t_from on.
inline StRun run_schafer_turek(int which, int ny, double t_end, double t_from,
                               const std::vector<std::string>& extra = {}) {
  std::vector<std::string> sets{"domain.ny=" + std::to_string(ny),
                                "domain.nx=" + std::to_string(static_cast<int>(std::lround(ny * 2.2 / 0.41))),
                                "run.end_time=" + std::to_string(t_end), "run.backend=\"cpu\""};
  sets.insert(sets.end(), extra.begin(), extra.end());
  const Config c = shipped_config("schafer_turek_2d" + std::to_string(which) + ".toml", sets);
  const double U = c.left.speed, D = 2 * c.obstacles.at(0).radius, scale = 2 / (c.density * U * U * D);
  auto s = make_sim(c);
  StRun r;
  const auto t0 = std::chrono::steady_clock::now();
  while (!s->at_end()) {
    s->step();
    const Diagnostics d = s->diagnostics();
    r.time.push_back(s->time());
    r.cd.push_back(scale * d.obstacle_force[0][0]);
    r.cl.push_back(scale * d.obstacle_force[0][1]);
  }
  r.secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.drag = r.cd.back();
  r.lift = r.cl.back();
  const std::vector<double> up = lift_up_crossings(r, t_from);
  if (up.size() >= 2) {
    r.periods = static_cast<int>(up.size()) - 1;
    r.strouhal = D * r.periods / (up.back() - up.front()) / U;
    r.drag_max = r.lift_max = -1e300;
    for (size_t k = 0; k < r.time.size(); ++k)
      if (r.time[k] >= up.front() && r.time[k] <= up.back()) {
        r.drag_max = std::max(r.drag_max, r.cd[k]);
        r.lift_max = std::max(r.lift_max, r.cl[k]);
      }
  }
  return r;
}

}  // namespace sim::test
