// SPDX-License-Identifier: MIT
// 64-bit fixed point of the order-free atomic sums: the fixed deposit
// (FixedBuffers) and the reaction records (ImpulseFields::took_u, took_v).
#pragma once
#include <cstdint>

#include "sim/model/types.hpp"

namespace sim::cuda {
namespace {

// The exponent e of a pass's scale 2^e: no face sum reaches 2^62 (a face
// takes at most one contribution per slot, each at most the bound). 0 when
// nothing is deposited (or the bound is not finite: the watchdog stops
// that run).
__device__ __forceinline__ int fixed_exponent(const unsigned int* bound_bits, int64_t slots) {
  const float b = __uint_as_float(*bound_bits);
  if (!(b > 0.f) || !(b <= 3.0e38f)) return 0;
  int x = 0;
  frexp(static_cast<double>(b) * static_cast<double>(slots), &x);
  return 61 - x;
}
__device__ __forceinline__ unsigned long long to_fixed(real v, int e) {
  return static_cast<unsigned long long>(__double2ll_rn(ldexp(static_cast<double>(v), e)));
}
__device__ __forceinline__ real from_fixed(unsigned long long s, int e) {
  return static_cast<real>(ldexp(static_cast<double>(static_cast<long long>(s)), -e));
}

}  // namespace
}  // namespace sim::cuda
