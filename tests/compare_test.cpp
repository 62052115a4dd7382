// SPDX-License-Identifier: MIT
// The comparison the reproducibility tests rest on: check_identical must
// see a change of one bit anywhere in a SimState, and name where it is.
#include "support/compare.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/cases.hpp"

using namespace sim;

namespace {

// A few steps of a coupled box with an obstacle: every array is non-empty
// and holds values other than zero.
SimState sample_state() {
  Config c = test::quiet_box(16);
  c.lx = c.ly = 0.1;
  c.density = 1000.0;
  c.viscosity = 1e-4;
  c.gy = -9.81;
  c.two_way = true;
  c.obstacles.push_back({ObstacleShape::circle, 0.05, 0.03, 0.01});
  c.regions.push_back({0.02, 0.05, 0.08, 0.09, 40, 1e-4, 3e-4, 0.0, 0.0});
  SimState s = test::run_steps(c, 3);
  s.counters.removed = 5;
  s.counters.recycled = 7;
  return s;
}

template <class T>
void flip_bit(T& v, int bit) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
  std::memcpy(&v, bytes, sizeof(T));
}

// One member of SimState: its name in first_difference's reports, whether
// it is an array, its number of elements, bits per element, and a flip of
// one bit of one element.
struct Member {
  std::string name;
  bool is_array;
  std::function<size_t(SimState&)> size;
  int bits;
  std::function<void(SimState&, size_t element, int bit)> flip;
};

template <class Get>  // SimState& -> a number
Member scalar(const std::string& name, Get get) {
  using T = std::remove_reference_t<decltype(get(std::declval<SimState&>()))>;
  return {name, false, [](SimState&) { return size_t{1}; }, 8 * int(sizeof(T)),
          [get](SimState& s, size_t, int bit) { flip_bit(get(s), bit); }};
}

template <class Get>  // SimState& -> a vector
Member array(const std::string& name, Get get) {
  using T = typename std::remove_reference_t<decltype(get(std::declval<SimState&>()))>::value_type;
  return {name, true, [get](SimState& s) { return get(s).size(); }, 8 * int(sizeof(T)),
          [get](SimState& s, size_t k, int bit) { flip_bit(get(s)[k], bit); }};
}

#define SCALAR(m) \
  scalar(         \
      #m, [](SimState & s) -> auto& { return s.m; })
#define ARRAY(m) \
  array(         \
      #m, [](SimState & s) -> auto& { return s.m; })

// Every member of SimState, listed here independently of first_difference.
std::vector<Member> every_member() {
  // clang-format off
  return {SCALAR(grid.nx), SCALAR(grid.ny), SCALAR(grid.pitch), SCALAR(grid.rows), SCALAR(grid.dx), SCALAR(grid.dy),
          ARRAY(u), ARRAY(v), ARRAY(phi), ARRAY(open),
          ARRAY(particles.x), ARRAY(particles.y), ARRAY(particles.vx), ARRAY(particles.vy), ARRAY(particles.d),
          ARRAY(particles.id), ARRAY(particles.alive),
          SCALAR(step), SCALAR(time), SCALAR(dt), SCALAR(next_id),
          SCALAR(counters.removed), SCALAR(counters.recycled)};
  // clang-format on
}

#undef SCALAR
#undef ARRAY

}  // namespace

TEST_CASE("compare: check_identical names a one-bit change in any member of the state") {
  // A new member of SimState changes its size: compare it in
  // first_difference (tests/support/compare.hpp) and list it above.
  CHECK_MESSAGE(sizeof(SimState) == 336, "SimState has a member first_difference and this test do not know");
  CHECK(sizeof(Grid) == 24);

  const SimState a = sample_state();
  CHECK(test::first_difference(a, a) == "");
  test::check_identical(a, a);

  std::string report;
  int flips = 0;
  for (const Member& m : every_member()) {
    CAPTURE(m.name);
    SimState probe = a;
    const size_t n = m.size(probe);
    REQUIRE(n > 0);
    // Arrays: the first, a middle and the last element; scalars: the value.
    const std::vector<size_t> where = m.is_array ? std::vector<size_t>{0, n / 2, n - 1} : std::vector<size_t>{0};
    for (size_t k : where)
      for (int bit = 0; bit < m.bits; ++bit) {
        CAPTURE(k);
        CAPTURE(bit);
        SimState b = a;
        m.flip(b, k, bit);
        const std::string prefix = m.is_array ? m.name + "[" + std::to_string(k) + "]: " : m.name + ": ";
        const std::string d = test::first_difference(a, b);
        CHECK(d.rfind(prefix, 0) == 0);
        CHECK(test::first_difference(b, a).rfind(prefix, 0) == 0);
        ++flips;
        if (k == where.back() && bit == 0) report += "\n  " + d;
      }
  }
  MESSAGE(flips << " one-bit flips, each reported; the last element's lowest bit:" << report);
}

TEST_CASE("compare: arrays of different lengths are a difference") {
  const SimState a = sample_state();
  SimState b = a;
  b.particles.d.pop_back();
  CHECK(test::first_difference(a, b) == "particles.d: " + std::to_string(a.particles.d.size()) + " vs " +
                                            std::to_string(b.particles.d.size()) + " elements");
}
