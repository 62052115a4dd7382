// Lid-driven cavity against the steady centreline velocities of Ghia, Ghia
// & Shin (tests/support/ghia.hpp): Re = 100 and Re = 1000.
#include <doctest/doctest.h>

#include <chrono>

#include "support/cases.hpp"
#include "support/ghia.hpp"

namespace {

double cavity_error(int n, double re, double t_end, bool re1000) {
  const sim::Config c = sim::test::ghia_cavity(n, re, sim::BackendKind::cpu);
  auto s = sim::test::make_sim(c);
  const auto t0 = std::chrono::steady_clock::now();
  while (s->time() < t_end) s->step();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const sim::SimState st = s->download();
  const double worst = re1000 ? sim::test::ghia_worst(st, sim::test::kGhiaU1000, sim::test::kGhiaV1000)
                              : sim::test::ghia_worst(st, sim::test::kGhiaU100, sim::test::kGhiaV100);
  MESSAGE(n << "x" << n << " Re = " << re << ", t = " << s->time() << " (" << s->step_index() << " steps, " << secs
            << " s): worst |u - u_Ghia|, |v - v_Ghia| on the centrelines = " << worst << " (lid speed 1)");
  return worst;
}

}  // namespace

// Catches a wrong steady state (advection, diffusion, walls, the lid).
TEST_CASE("fluid: lid-driven cavity at Re = 100 matches Ghia et al. on both centrelines") {
  CHECK(cavity_error(48, 100, 15.0, false) < 0.01);
}

// The case where the former time splitting made 40% of the error at 128^2.
// 256^2 runs in the GPU suite (tests/gpu_cavity_test.cpp).
TEST_CASE("fluid: lid-driven cavity at Re = 1000 matches Ghia et al. at 128^2") {
  CHECK(cavity_error(128, 1000, 40.0, true) < 0.02);
}
