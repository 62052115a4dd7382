// SPDX-License-Identifier: MIT
// The fluid's reaction to the impulse the particles took (deposit_reaction,
// pay_reaction, give_back_reaction).
#pragma once
#include "cuda/access.cuh"
#include "cuda/block_sum.cuh"
#include "cuda/fixed_point.cuh"
#include "cuda/kernels.hpp"
#include "cuda/particle_launch.cuh"
#include "sim/model/faces.hpp"
#include "sim/model/halo.hpp"
#include "sim/model/coupling_physics.hpp"

namespace sim::cuda {
namespace {

// One block: the partials of `blocks` blocks summed in block order.
__global__ void sum_gained_kernel(const double* __restrict__ partials, unsigned blocks, double* __restrict__ gained) {
  double sx = 0, sy = 0;
  for (unsigned b = threadIdx.x; b < blocks; b += blockDim.x) {
    sx += partials[2 * b];
    sy += partials[2 * b + 1];
  }
  const double tx = block_sum(sx);
  __syncthreads();
  const double ty = block_sum(sy);
  if (threadIdx.x == 0) {
    gained[0] = tx;
    gained[1] = ty;
  }
}

// Every record of what a particle took, onto the faces around where it was
// (the deposit weights), as integers scaled by 2^e (fixed_exponent of the
// bound): the sums do not depend on the order of the atomics.
template <class KP>
__global__ void __launch_bounds__(kParticleBlock) took_deposit_kernel(KP kp, ImpulseFields im, int64_t slots) {
  const Constants& k = kp.get();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kParticleBlock + threadIdx.x;
  if (i >= slots) return;
  const float4 t = im.took[i];
  if (t.z == 0.f && t.w == 0.f) return;
  const int e = fixed_exponent(im.took_bound, slots);
  for_each_deposit_face(t.x, t.y, k, [&](int, int fu, real wu, int fv, real wv) {
    if (fu >= 0) atomicAdd(im.took_u + fu, to_fixed(wu * t.z, e));
    if (fv >= 0) atomicAdd(im.took_v + fv, to_fixed(wv * t.w, e));
  });
}

// Every fluid face of this rank's rows pays its share of what its particles
// took (reaction_share) into stage, kBasePayback times (sim/model/time_scheme.hpp); what it
// could not pay is summed per block, in a fixed order, into im.partials.
template <class KP>
__global__ void reaction_pay_kernel(KP kp, ImpulseFields im, const real* __restrict__ open, int64_t slots, int row0,
                                    int face_end) {
  const Constants& k = kp.get();
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = row0 + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  double lx = 0, ly = 0;
  if (i <= k.nx && j < face_end) {
    const int c = at(k, i, j);
    const int e = fixed_exponent(im.took_bound, slots);
    const real tu = from_fixed(im.took_u[c], e), tv = from_fixed(im.took_v[c], e);
    const bool fu = active_u(i, j, k) && !(k.has_solids && solid_u(open, c));
    const bool fv = active_v(i, j, k) && !(k.has_solids && solid_v(open, c, k.pitch));
    const real pu = fu ? reaction_share(tu, im.u_after[c] - im.u_before[c], k) : real(0);
    const real pv = fv ? reaction_share(tv, im.v_after[c] - im.v_before[c], k) : real(0);
    im.u_free[c] -= kBasePayback * pu / k.cell_mass;
    im.v_free[c] -= kBasePayback * pv / k.cell_mass;
    lx = static_cast<double>(tu) - static_cast<double>(pu);
    ly = static_cast<double>(tv) - static_cast<double>(pv);
  }
  const unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
  const double sx = block_sum(lx);
  __syncthreads();
  const double sy = block_sum(ly);
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    im.partials[2 * b] = sx;
    im.partials[2 * b + 1] = sy;
  }
}

template <class KP>
__global__ void reaction_kernel(KP kp, const double* __restrict__ gained, int64_t faces_u, int64_t faces_v,
                                const real* __restrict__ open, real* __restrict__ us, real* __restrict__ vs, int row0,
                                int face_end) {
  const Constants& k = kp.get();
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = row0 + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i > k.nx || j >= face_end) return;
  const int c = at(k, i, j);
  if (active_u(i, j, k) && !(k.has_solids && solid_u(open, c)))
    us[c] += kBasePayback * reaction_velocity(gained[0], faces_u, k);
  if (active_v(i, j, k) && !(k.has_solids && solid_v(open, c, k.pitch)))
    vs[c] += kBasePayback * reaction_velocity(gained[1], faces_v, k);
}

}  // namespace
}  // namespace sim::cuda
