// The last rank calls abort_all while the others wait in a barrier that it
// never reaches: every rank must end, with a non-zero status and the line
// printed once (tests/mpi/expect_abort.cmake checks both).
#include <string>

#include "sim/parallel/comm.hpp"

int main(int argc, char** argv) {
  sim::MpiSession session(&argc, &argv);
  const sim::Comm world = sim::Comm::world();
  if (world.rank() == world.size() - 1)
    world.abort_all("sim_mpi_abort: rank " + std::to_string(world.rank()) + " of " + std::to_string(world.size()) +
                        " stops every rank",
                    3);
  world.barrier();
  return 0;
}
