// Which MAC faces the step updates (the others are set by boundary
// conditions), as CpuBackend::active_u / active_v.
#pragma once
#include "sim/constants.hpp"

namespace sim::cuda {

__device__ __forceinline__ bool active_u(int i, int j, const Constants& k) {
  return i >= k.u_i_begin && i < k.u_i_end && j < k.ny;
}
__device__ __forceinline__ bool active_v(int i, int j, const Constants& k) {
  return j >= k.v_j_begin && j < k.v_j_end && i < k.nx;
}

}  // namespace sim::cuda
