// SPDX-License-Identifier: MIT
// One outcome for every rank of a run: an error one rank meets becomes
// every rank's, so that all of them stop at the same point instead of
// some waiting forever in the next collective.
#pragma once
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/ranks/comm.hpp"

namespace sim {

// An error every rank of a run meets alike (the same check on the same
// data, or one rank's error shared by agree()): rank 0 reports it, every
// rank ends with status 1. Any other error on a rank of several ends all
// of them from there (Comm::abort_all).
struct CollectiveError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs `f` on every rank; if it threw on any, every rank throws the
// CollectiveError of the lowest such rank's message.
template <class F>
void agree(const Comm& comm, F&& f) {
  std::string message;
  try {
    f();
  } catch (const std::exception& e) {
    message = e.what();
    if (message.empty()) message = "unknown error";
  }
  if (comm.size() == 1) {
    if (!message.empty()) throw CollectiveError(message);
    return;
  }
  std::vector<size_t> counts;
  const std::vector<char> all = comm.gatherv(message.data(), message.size(), &counts);
  std::string first;
  size_t at = 0;
  for (const size_t c : counts) {
    if (c > 0 && first.empty()) first.assign(all.data() + at, c);
    at += c;
  }
  first = comm.broadcast(first, 0);
  if (!first.empty()) throw CollectiveError(first);
}

}  // namespace sim
