// SPDX-License-Identifier: MIT
// Bit-for-bit comparison of whole run states and of snapshot files, for the
// reproducibility and restart tests of both backends.
#pragma once
#include <doctest/doctest.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "io/snapshot_reader.hpp"
#include "sim/model/state.hpp"

namespace sim::test {

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

namespace detail {

// "0x3a83126f (0.001)" for a float, "17" for an integer.
template <class T>
std::string show(T v) {
  char buf[64];
  if constexpr (std::is_floating_point_v<T>) {
    if constexpr (sizeof(T) == 4) {
      uint32_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      std::snprintf(buf, sizeof buf, "0x%08" PRIx32 " (%.9g)", bits, static_cast<double>(v));
    } else {
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      std::snprintf(buf, sizeof buf, "0x%016" PRIx64 " (%.17g)", bits, static_cast<double>(v));
    }
  } else if constexpr (std::is_signed_v<T>) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
  }
  return buf;
}

// Appends nothing when a and b have the same bits, else "<name>: a vs b"
// (only the first difference of a comparison is kept).
template <class T>
void scalar(std::string& out, const char* name, const T& a, const T& b) {
  static_assert(std::is_arithmetic_v<T>, "bitwise comparison of a number");
  if (!out.empty() || std::memcmp(&a, &b, sizeof(T)) == 0) return;
  out = std::string(name) + ": " + show(a) + " vs " + show(b);
}

// "<name>: n vs m elements" or "<name>[k]: a[k] vs b[k]" at the first element that differs.
template <class T>
void array(std::string& out, const char* name, const std::vector<T>& a, const std::vector<T>& b) {
  if (!out.empty() || same_bits(a, b)) return;
  if (a.size() != b.size()) {
    out = std::string(name) + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " elements";
    return;
  }
  for (size_t k = 0; k < a.size(); ++k)
    if (std::memcmp(&a[k], &b[k], sizeof(T)) != 0) {
      out = std::string(name) + "[" + std::to_string(k) + "]: " + show(a[k]) + " vs " + show(b[k]);
      return;
    }
}

}  // namespace detail

// "" when a and b are the same bit for bit: the grid, every field (u, v,
// phi, open), every particle array (x, y, vx, vy, d, id, alive), the step,
// time and dt, next_id and the particle counters. Otherwise the first
// difference, naming the field, the element and both values.
inline std::string first_difference(const SimState& a, const SimState& b) {
  std::string d;
  detail::scalar(d, "grid.nx", a.grid.nx, b.grid.nx);
  detail::scalar(d, "grid.ny", a.grid.ny, b.grid.ny);
  detail::scalar(d, "grid.pitch", a.grid.pitch, b.grid.pitch);
  detail::scalar(d, "grid.rows", a.grid.rows, b.grid.rows);
  detail::scalar(d, "grid.dx", a.grid.dx, b.grid.dx);
  detail::scalar(d, "grid.dy", a.grid.dy, b.grid.dy);
  detail::array(d, "u", a.u, b.u);
  detail::array(d, "v", a.v, b.v);
  detail::array(d, "phi", a.phi, b.phi);
  detail::array(d, "open", a.open, b.open);
  detail::array(d, "particles.x", a.particles.x, b.particles.x);
  detail::array(d, "particles.y", a.particles.y, b.particles.y);
  detail::array(d, "particles.vx", a.particles.vx, b.particles.vx);
  detail::array(d, "particles.vy", a.particles.vy, b.particles.vy);
  detail::array(d, "particles.d", a.particles.d, b.particles.d);
  detail::array(d, "particles.id", a.particles.id, b.particles.id);
  detail::array(d, "particles.alive", a.particles.alive, b.particles.alive);
  detail::scalar(d, "step", a.step, b.step);
  detail::scalar(d, "time", a.time, b.time);
  detail::scalar(d, "dt", a.dt, b.dt);
  detail::scalar(d, "next_id", a.next_id, b.next_id);
  detail::scalar(d, "counters.removed", a.counters.removed, b.counters.removed);
  detail::scalar(d, "counters.recycled", a.counters.recycled, b.counters.recycled);
  return d;
}

// Everything first_difference compares, bit for bit; a failure names the
// first difference.
inline void check_identical(const SimState& a, const SimState& b) { CHECK(first_difference(a, b) == ""); }

// Every dataset of kSnapshotFields, the clock, counters, capacity and
// shape, bit for bit.
inline void check_same_snapshot(const SnapshotContents& a, const SnapshotContents& b) {
  CHECK(a.header.step == b.header.step);
  CHECK(std::memcmp(&a.header.time, &b.header.time, sizeof(double)) == 0);
  CHECK(std::memcmp(&a.header.dt, &b.header.dt, sizeof(double)) == 0);
  CHECK(a.header.next_id == b.header.next_id);
  CHECK(a.header.counters.removed == b.header.counters.removed);
  CHECK(a.header.counters.recycled == b.header.counters.recycled);
  CHECK(a.header.capacity == b.header.capacity);
  CHECK(a.header.nx == b.header.nx);
  CHECK(a.header.ny == b.header.ny);
  for (const SnapshotField& f : kSnapshotFields) {
    CAPTURE(f.path());
    std::string d;
    const auto compare = [&](const auto& held_a, const auto& held_b) {
      with_array(f, held_a, [&](const auto& x) {
        with_array(f, held_b, [&](const auto& y) {
          if constexpr (std::is_same_v<decltype(x), decltype(y)>) detail::array(d, f.name, x, y);
        });
      });
    };
    if (f.group() == SnapshotGroup::grid) compare(a.grid, b.grid);
    else compare(a.particles, b.particles);
    CHECK(d == "");
  }
}

}  // namespace sim::test
