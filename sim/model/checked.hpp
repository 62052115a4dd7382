// SPDX-License-Identifier: MIT
// Overflow-checked 64-bit arithmetic for sizes and counts, computed before
// anything is allocated. Plain comparisons against the type's limits (no
// compiler builtins), so every compiler of the project, nvcc's front end
// included, reads it the same way.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

namespace sim {

// a + b, or nullopt when the exact result does not fit T (a 64-bit integer).
template <class T>
constexpr std::optional<T> checked_add(T a, T b) {
  static_assert(std::is_integral_v<T>, "integers only");
  using L = std::numeric_limits<T>;
  if (b > 0 && a > L::max() - b) return std::nullopt;
  if constexpr (std::is_signed_v<T>)
    if (b < 0 && a < L::min() - b) return std::nullopt;
  return static_cast<T>(a + b);
}

// a * b, or nullopt when the exact result does not fit T. For counts and
// sizes: both factors >= 0.
template <class T>
constexpr std::optional<T> checked_mul(T a, T b) {
  static_assert(std::is_integral_v<T>, "integers only");
  if constexpr (std::is_signed_v<T>)
    if (a < 0 || b < 0) return std::nullopt;
  if (a != 0 && b > std::numeric_limits<T>::max() / a) return std::nullopt;
  return static_cast<T>(a * b);
}

// A byte count that remembers an overflow: once a sum or product exceeds
// 2^64 - 1, it stays "more than 2^64 - 1" (over()), and value() is 2^64 - 1,
// which no machine has. Memory estimates add and multiply these so that a
// huge count cannot wrap around into a small, acceptable number.
class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr Bytes(uint64_t v) : v_(v) {}  // NOLINT: implicit on purpose, Bytes(n) * 4 reads as the arithmetic
  static constexpr Bytes overflow() {
    Bytes b(std::numeric_limits<uint64_t>::max());
    b.over_ = true;
    return b;
  }
  // A signed count (particles, cells); a negative one counts as 0.
  static constexpr Bytes count(int64_t n) { return Bytes(n > 0 ? static_cast<uint64_t>(n) : 0); }

  constexpr bool over() const { return over_; }
  constexpr uint64_t value() const { return v_; }

  friend constexpr Bytes operator+(Bytes a, Bytes b) {
    if (a.over_ || b.over_) return overflow();
    const auto s = checked_add(a.v_, b.v_);
    return s ? Bytes(*s) : overflow();
  }
  friend constexpr Bytes operator*(Bytes a, Bytes b) {
    if ((a.over_ && b.v_ != 0) || (b.over_ && a.v_ != 0)) return overflow();
    const auto p = checked_mul(a.v_, b.v_);
    return p ? Bytes(*p) : overflow();
  }
  friend constexpr Bytes operator/(Bytes a, uint64_t d) { return a.over_ ? a : Bytes(a.v_ / d); }
  Bytes& operator+=(Bytes b) { return *this = *this + b; }
  friend constexpr bool operator<(Bytes a, Bytes b) { return !a.over_ && (b.over_ || a.v_ < b.v_); }
  friend constexpr bool operator>(Bytes a, Bytes b) { return b < a; }

 private:
  uint64_t v_ = 0;
  bool over_ = false;
};

}  // namespace sim
