// SPDX-License-Identifier: MIT
// Lid-driven cavity against the steady centreline velocities of Ghia, Ghia
// & Shin (tests/support/ghia.hpp): Re = 100 and Re = 1000.
#include <doctest/doctest.h>

#include "support/ghia.hpp"

// Catches a wrong steady state (advection, diffusion, walls, the lid).
TEST_CASE("fluid: lid-driven cavity at Re = 100 matches Ghia et al. on both centrelines") {
  const sim::test::CavityRun r = sim::test::run_ghia_cavity(48, 100, 15.0, sim::BackendKind::cpu);
  MESSAGE(r.summary);
  CHECK(r.ghia_worst < 0.01);
}

// The case where the former time splitting made 40% of the error at 128^2.
// 256^2 runs in the GPU suite (tests/gpu_cavity_test.cpp).
TEST_CASE("fluid: lid-driven cavity at Re = 1000 matches Ghia et al. at 128^2") {
  const sim::test::CavityRun r = sim::test::run_ghia_cavity(128, 1000, 40.0, sim::BackendKind::cpu);
  MESSAGE(r.summary);
  CHECK(r.ghia_worst < 0.02);
}
