// Bitwise comparison of two whole run states, for the reproducibility tests
// of both backends.
#pragma once
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "sim/state.hpp"

namespace simtest {

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Every field and particle array, bit for bit, and the clock.
inline void check_identical(const sim::SimState& a, const sim::SimState& b) {
  CHECK(same_bits(a.u, b.u));
  CHECK(same_bits(a.v, b.v));
  CHECK(same_bits(a.phi, b.phi));
  CHECK(same_bits(a.particles.x, b.particles.x));
  CHECK(same_bits(a.particles.y, b.particles.y));
  CHECK(same_bits(a.particles.vx, b.particles.vx));
  CHECK(same_bits(a.particles.vy, b.particles.vy));
  CHECK(same_bits(a.particles.id, b.particles.id));
  CHECK(same_bits(a.particles.alive, b.particles.alive));
  CHECK(a.time == b.time);
}

}  // namespace simtest
