// SPDX-License-Identifier: MIT
// The communicator on the run's ranks (Comm::world) and on one process
// without MPI (Comm::serial): each check runs on both.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/ranks/comm.hpp"

namespace {

using sim::Comm;

std::vector<Comm> comms() { return {Comm::world(), Comm::serial()}; }

std::string name(const Comm& c) {
  return (c.is_serial() ? "serial, rank " : "world, rank ") + std::to_string(c.rank()) + " of " +
         std::to_string(c.size());
}

// A partial whose sum depends on the order of addition.
double partial(int r) { return r == 0 ? 1e16 : r % 2 ? 1.0 + r * 0.1 : -3e15 + r; }

}  // namespace

TEST_CASE("comm: rank, size and the run's world") {
  const Comm w = Comm::world();
  CHECK(w.rank() >= 0);
  CHECK(w.rank() < w.size());
  CHECK(w.is_serial() == !sim::MpiSession::built_with_mpi());
  const Comm s = Comm::serial();
  CHECK(s.rank() == 0);
  CHECK(s.size() == 1);
  CHECK(s.is_serial());
  MESSAGE("built with MPI: ", sim::MpiSession::built_with_mpi(), ", ", w.size(), " rank(s)");
}

TEST_CASE("comm: reductions over every rank") {
  for (const Comm& c : comms()) {
    INFO(name(c));
    const int n = c.size(), r = c.rank();
    CHECK(c.allreduce_sum(double(r + 1)) == n * (n + 1) / 2.0);
    CHECK(c.allreduce_min(double(r) - 0.5) == -0.5);
    CHECK(c.allreduce_max(double(r) - 0.5) == n - 1.5);
    // 64-bit: values past 2^32 keep every bit.
    const int64_t big = int64_t(1) << 40;
    CHECK(c.allreduce_sum(big + r) == n * big + int64_t(n) * (n - 1) / 2);
    CHECK(c.allreduce_min(-big * (r + 1)) == -big * n);
    CHECK(c.allreduce_max(big * (r + 1)) == big * n);
  }
}

TEST_CASE("comm: the deterministic sum is the rank-order sum, bit for bit on every rank") {
  for (const Comm& c : comms()) {
    INFO(name(c));
    double expected = partial(0);
    for (int k = 1; k < c.size(); ++k) expected += partial(k);
    const double got = c.deterministic_sum(partial(c.rank()));
    CHECK(std::memcmp(&got, &expected, sizeof got) == 0);
    const std::vector<double> all = c.allgather(got);
    REQUIRE(all.size() == size_t(c.size()));
    for (double a : all) CHECK(std::memcmp(&a, &got, sizeof a) == 0);
    const std::vector<double> parts = c.allgather(partial(c.rank()));
    for (int k = 0; k < c.size(); ++k) CHECK(parts[size_t(k)] == partial(k));
  }
}

TEST_CASE("comm: broadcast of bytes and strings from any root") {
  for (const Comm& c : comms()) {
    INFO(name(c));
    for (int root = 0; root < c.size(); ++root) {
      const std::string text = std::string("from rank ") + std::to_string(root) + std::string(1, '\0') + " and on";
      const std::string got = c.broadcast(c.rank() == root ? text : std::string(c.rank() * 3, 'x'), root);
      CHECK(got == text);
      std::vector<char> bytes(size_t(c.rank()) * 5, 'y');  // the root's are empty when it is rank 0
      if (c.rank() == root) bytes.assign(size_t(root) * 7, 'z');
      c.broadcast(bytes, root);
      CHECK(bytes == std::vector<char>(size_t(root) * 7, 'z'));
    }
    std::vector<char> b;
    CHECK_THROWS_AS(c.broadcast(b, c.size()), std::invalid_argument);
  }
}

TEST_CASE("comm: gatherv collects every rank's values in rank order on rank 0") {
  for (const Comm& c : comms()) {
    INFO(name(c));
    // Rank r sends r + 1 values, except rank 1, which sends none.
    const int r = c.rank();
    std::vector<int32_t> mine;
    if (r != 1)
      for (int k = 0; k <= r; ++k) mine.push_back(100 * r + k);
    std::vector<size_t> counts{99};
    const std::vector<int32_t> all = c.gatherv(mine, &counts);
    if (r != 0) {
      CHECK(all.empty());
      CHECK(counts.empty());
      continue;
    }
    std::vector<int32_t> expected;
    std::vector<size_t> expected_counts;
    for (int q = 0; q < c.size(); ++q) {
      expected_counts.push_back(q == 1 ? 0 : size_t(q) + 1);
      if (q != 1)
        for (int k = 0; k <= q; ++k) expected.push_back(100 * q + k);
    }
    CHECK(all == expected);
    CHECK(counts == expected_counts);
  }
}

TEST_CASE("comm: neighbour exchange around a ring, in order per tag") {
  for (const Comm& c : comms()) {
    INFO(name(c));
    const int n = c.size(), r = c.rank();
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    // To the right: r + 1 doubles, then two int messages with one tag (order
    // kept); to the left: 2 r + 3 doubles. With two ranks both go to the
    // same peer and the tags tell them apart; with one, to the rank itself.
    auto payload = [](int from, int len, double scale) {
      std::vector<double> v(static_cast<size_t>(len));
      for (int k = 0; k < len; ++k) v[size_t(k)] = scale * from + k;
      return v;
    };
    const std::vector<double> to_right = payload(r, r + 1, 1000), to_left = payload(r, 2 * r + 3, -1000);
    const int32_t first = 10 * r + 1, second = 10 * r + 2;
    std::vector<double> from_left(size_t(left) + 1), from_right(size_t(2 * right) + 3);
    int32_t got_first = 0, got_second = 0;
    c.exchange({{right, 0, to_right.data(), to_right.size() * sizeof(double)},
                {right, 2, &first, sizeof first},
                {right, 2, &second, sizeof second},
                {left, 1, to_left.data(), to_left.size() * sizeof(double)}},
               {{left, 0, from_left.data(), from_left.size() * sizeof(double)},
                {left, 2, &got_first, sizeof got_first},
                {left, 2, &got_second, sizeof got_second},
                {right, 1, from_right.data(), from_right.size() * sizeof(double)}});
    CHECK(from_left == payload(left, left + 1, 1000));
    CHECK(from_right == payload(right, 2 * right + 3, -1000));
    CHECK(got_first == 10 * left + 1);
    CHECK(got_second == 10 * left + 2);
    c.exchange({}, {});  // nothing to move is fine
  }
}

TEST_CASE("comm: a bad exchange is an exception naming the problem") {
  for (const Comm& c : comms()) {
    INFO(name(c));
    double a[2] = {1, 2}, b[2] = {0, 0};
    const int me = c.rank();
    CHECK_THROWS_WITH_AS(c.exchange({{c.size(), 0, a, sizeof a}}, {}),
                         ("exchange with rank " + std::to_string(c.size()) + " in a communicator of " +
                          std::to_string(c.size()) + " rank(s)")
                             .c_str(),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(c.exchange({}, {{me, 40000, b, sizeof b}}), "exchange tag 40000 outside 0..32767",
                         std::invalid_argument);
    // Around the ring (to itself on one rank): a shorter message than the
    // receive, which every rank meets. A longer one is tested to the rank
    // itself only: between ranks MPI reports it (MPI_ERR_TRUNCATE, which
    // sim_mpi_errors checks), and leaves MPI unusable after it.
    const int right = (me + 1) % c.size(), left = (me + c.size() - 1) % c.size();
    std::string shorter;
    try {
      c.exchange({{right, 6, a, sizeof(double)}}, {{left, 6, b, sizeof b}});
    } catch (const std::runtime_error& e) {
      shorter = e.what();
    }
    CHECK(shorter == "exchange: rank " + std::to_string(left) + " sent 8 bytes with tag 6, 16 expected");
    CHECK_THROWS_WITH_AS(c.exchange({{me, 5, a, sizeof a}}, {{me, 5, b, sizeof(double)}}),
                         ("exchange: rank " + std::to_string(me) + " sent 16 bytes with tag 5, 8 expected").c_str(),
                         std::runtime_error);
    // A message to itself that no receive takes, or a receive with no message.
    CHECK_THROWS_AS(c.exchange({{me, 7, a, sizeof a}}, {}), std::runtime_error);
    CHECK_THROWS_AS(c.exchange({}, {{me, 7, b, sizeof b}}), std::runtime_error);
    c.barrier();
  }
}

TEST_CASE("comm: split forms sub-communicators ranked by key") {
  const Comm w = Comm::world();
  // Even and odd ranks, each group in reverse order.
  const Comm half = w.split(w.rank() % 2, -w.rank());
  const int members = (w.size() + (w.rank() % 2 ? 0 : 1)) / 2;
  CHECK(half.size() == members);
  CHECK(half.allreduce_sum(int64_t(1)) == members);
  CHECK(half.rank() == members - 1 - w.rank() / 2);
  CHECK(half.allreduce_max(int64_t(w.rank())) == (w.rank() % 2 ? (w.size() % 2 ? w.size() - 2 : w.size() - 1)
                                                                : (w.size() % 2 ? w.size() - 1 : w.size() - 2)));
  CHECK_THROWS_AS(w.split(-1, 0), std::invalid_argument);
  const Comm s = Comm::serial().split(3, 0);
  CHECK(s.is_serial());
  CHECK(s.size() == 1);
}
