// SPDX-License-Identifier: MIT
// The particle step kernel (step_particles): pass 4 of the coupled step.
#pragma once
#include "cuda/access.cuh"
#include "cuda/kernels.hpp"
#include "cuda/particle_launch.cuh"
#include "sim/model/faces.hpp"
#include "sim/model/halo.hpp"
#include "sim/model/coupling_physics.hpp"

namespace sim::cuda {
namespace {

// Pass 4 of the coupled step: the particle's coefficients from the loading
// in mu, mv (two-way; phi = 0 one-way), the updated fluid sampled, drag and
// gravity, obstacles, walls.
// kCoupled (two-way): `sample` reads the free fluid, and the particle also
// takes its share of the first projection's impulse; where it was and the
// momentum that took go to im.took (zero for none), the largest |m dv| to
// im.took_bound (an order-free atomicMax per warp).
template <bool kCoupled, class View, class Sampler, class KP>
__global__ void __launch_bounds__(kParticleBlock) particle_step_kernel(KP kp, View p, Sampler sample, bool two_way,
                                                                       const real* __restrict__ mu,
                                                                       const real* __restrict__ mv,
                                                                       unsigned long long* __restrict__ counters,
                                                                       ImpulseFields im) {
  const Constants& k = kp.get();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kParticleBlock + threadIdx.x;
  float bound = 0.f;
  if (i < p.size()) {
    // Every load of the slot issued before the gathers of the sampling.
    const bool live = p.alive(i) != 0;
    const ParticleMotion s{p.x(i), p.y(i), p.vx(i), p.vy(i)};
    const real d = p.d(i);
    float4 took = make_float4(0.f, 0.f, 0.f, 0.f);
    if (live) {
      real ufx = 0, ufy = 0;
      sample(s.x, s.y, k, ufx, ufy);
      CouplingCoeffs cx, cy;
      particle_coeffs(Loaded<LdgAccess>{mu}, Loaded<LdgAccess>{mv}, two_way, s.x, s.y, d, k, cx, cy);
      ParticleUpdate up;
      if constexpr (kCoupled) {
        real dux, duy;
        sample_impulse(Loaded<LdgAccess>{im.u_after}, Loaded<LdgAccess>{im.v_after}, Loaded<LdgAccess>{im.u_before},
                       Loaded<LdgAccess>{im.v_before}, Loaded<LdgAccess>{im.u_free}, Loaded<LdgAccess>{im.v_free}, s.x,
                       s.y, k, dux, duy);
        real dvx, dvy;
        up = update_coupled_particle(s, d, ufx, ufy, dux, duy, cx, cy, k, dvx, dvy);
        const real m = particle_mass(d, k);
        const real tx = m * dvx, ty = m * dvy;
        // the CPU's rule: a particle lost to the watchdog gives nothing back
        if (finite_motion({s.x, s.y, tx, ty}) && (tx != real(0) || ty != real(0))) {
          took = make_float4(s.x, s.y, tx, ty);
          bound = fmaxf(fabsf(tx), fabsf(ty));
        }
      } else {
        up = update_particle(s, d, ufx, ufy, cx, cy, k);
      }
      // The watchdog's particle half: compares in registers; the atomic only
      // runs for a particle that is already lost.
      if (!finite_motion(s) || !finite_motion(up.s)) atomicAdd(counters + kNonFinite, 1ull);
      if (store_update(p, i, up)) atomicAdd(counters + kRemoved, 1ull);
    }
    if constexpr (kCoupled) im.took[i] = took;
  }
  if constexpr (kCoupled) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) bound = fmaxf(bound, __shfl_down_sync(0xffffffffu, bound, o));
    if ((threadIdx.x & 31) == 0 && bound > 0.f) atomicMax(im.took_bound, __float_as_uint(bound));
  }
}

}  // namespace
}  // namespace sim::cuda
