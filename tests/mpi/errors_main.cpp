// SPDX-License-Identifier: MIT
// How a run ends on an error, checked from outside by
// tests/mpi/expect_failure.cmake: every rank must stop, with a non-zero
// status and the line printed once.
//   sim_mpi_errors abort      the last rank calls abort_all while the others
//                             wait in a barrier it never reaches
//   sim_mpi_errors truncate   rank 1 (rank 0 alone) sends rank 0 a longer
//                             message than its receive; rank 0 turns the
//                             exception into abort_all
//   sim_mpi_errors short      the same with a shorter message: MPI completes
//                             the receive and Comm::exchange's size check
//                             throws (Open MPI 4.1.4 sometimes never
//                             completes a truncated receive between two
//                             processes, so the run over ranks tests this)
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/ranks/comm.hpp"

int main(int argc, char** argv) {
  sim::MpiSession session(&argc, &argv);
  const sim::Comm world = sim::Comm::world();
  const int me = world.rank(), last = world.size() - 1;
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "abort") {
    if (me == last)
      world.abort_all("sim_mpi_errors: rank " + std::to_string(me) + " of " + std::to_string(world.size()) +
                          " stops every rank",
                      3);
  } else if (mode == "truncate" || mode == "short") {
    double sent[2] = {1, 2}, got[2] = {0, 0};
    const size_t longer = sizeof sent, shorter = sizeof sent / 2;
    try {
      std::vector<sim::SendBuffer> sends;
      std::vector<sim::RecvBuffer> recvs;
      if (me == last) sends.push_back({0, 5, sent, mode == "truncate" ? longer : shorter});
      if (me == 0) recvs.push_back({last, 5, got, mode == "truncate" ? shorter : longer});
      world.exchange(sends, recvs);
    } catch (const std::runtime_error& e) {
      world.abort_all(std::string("sim_mpi_errors: ") + e.what(), 4);
    }
  } else {
    world.abort_all("usage: sim_mpi_errors abort|truncate|short", 2);
  }
  world.barrier();
  return 0;
}
