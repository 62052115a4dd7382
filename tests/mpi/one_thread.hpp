// SPDX-License-Identifier: MIT
// One OpenMP thread a rank for the life of the object: the ranks of a test
// share the machine's cores, and OpenMP threads spinning beside other ranks
// slow every collective step a hundredfold.
#pragma once
#include <omp.h>

namespace sim::test {

class OneThreadPerRank {
 public:
  OneThreadPerRank() : threads_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneThreadPerRank() { omp_set_num_threads(threads_); }
  OneThreadPerRank(const OneThreadPerRank&) = delete;
  OneThreadPerRank& operator=(const OneThreadPerRank&) = delete;

 private:
  int threads_;
};

}  // namespace sim::test
