// SPDX-License-Identifier: MIT
// doctest on every rank of the run, inside one MPI session; the run passes
// only when every rank passed. Rank 0 reports in full, the others only
// their failures.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdint>

#include "sim/ranks/comm.hpp"

int main(int argc, char** argv) {
  sim::MpiSession session(&argc, &argv);
  const sim::Comm world = sim::Comm::world();
  doctest::Context context(argc, argv);
  if (world.rank() != 0) context.setOption("minimal", true);
  const int rc = context.run();
  if (context.shouldExit()) return rc;
  return world.allreduce_max(int64_t(rc != 0)) != 0 ? 1 : 0;
}
