// SPDX-License-Identifier: MIT
// The kernels of the gather deposit (GatherDeposit, cuda/deposit_strategies.cuh).
#pragma once
#include "cuda/access.cuh"
#include "cuda/kernels.hpp"
#include "cuda/particle_launch.cuh"
#include "sim/model/faces.hpp"
#include "sim/model/halo.hpp"
#include "sim/model/coupling_physics.hpp"

namespace sim::cuda {
namespace {

// ---- deposit=gather ------------------------------------------------------
// Bitwise reproducible and free of atomics: one (key, slot) pair per
// particle sorted by stencil node (GatherBuffers), then every face sums the
// particles of the nodes around it in a fixed order. The key of a live
// particle at (x, y): the lower-left node (su.i, su.j) of its u stencil,
// and in 2 bits where its v stencil's node lies against it. With the
// clamps of stencil_u and stencil_v (both from the same x / dx and y / dy),
// sv.i - su.i is -1 or 0 and sv.j - su.j is 0 or 1 for every finite
// position, inside the domain or not, so a u face (i, j) is reached only
// from the nodes {i - 1, i} x {j - 1, j} and a v face only from
// {i - 1, i, i + 1} x {j - 2, j - 1, j}.
__device__ __forceinline__ uint32_t gather_key(real x, real y, const Constants& k) {
  const BilinearStencil su = stencil_u(x, y, k), sv = stencil_v(x, y, k);
  const uint32_t node = static_cast<uint32_t>(su.i + 1) + static_cast<uint32_t>(su.j + 1) * static_cast<uint32_t>(k.nx + 2);
  return 4u * node + (sv.i != su.i ? 1u : 0u) + (sv.j != su.j ? 2u : 0u);
}

// Keys at the canonical slot id % capacity: after the stable sort a node's
// particles are in canonical order, whatever order the store holds them in.
template <class View, class KP>
__global__ void __launch_bounds__(kParticleBlock) gather_key_kernel(KP kp, View p, GatherBuffers b, uint32_t capacity) {
  const Constants& k = kp.get();
  const int64_t s = static_cast<int64_t>(blockIdx.x) * kParticleBlock + threadIdx.x;
  if (s >= p.size()) return;
  const real x = p.x(s), y = p.y(s);
  // a particle already lost to the watchdog leaves the fluid as it is (the CPU's rule)
  const bool live = p.alive(s) != 0 && finite_motion({x, y, p.vx(s), p.vy(s)});
  const uint32_t c = static_cast<uint32_t>(p.id(s) % capacity);
  b.keys[c] = live ? gather_key(x, y, k) : b.sentinel;
  b.slots[c] = static_cast<uint32_t>(s);
}

// Per sorted particle: its node's range (the first and the last of a run
// of one node write it; the ranges were zeroed), its stencil weights and
// pass 1's value, the mass.
template <class View, class KP>
__global__ void __launch_bounds__(kParticleBlock) gather_mass_kernel(KP kp, View p, GatherBuffers b,
                                                                     const uint32_t* __restrict__ keys,
                                                                     const uint32_t* __restrict__ slots, int n) {
  const Constants& k = kp.get();
  const int r = static_cast<int>(blockIdx.x * kParticleBlock + threadIdx.x);
  if (r >= n) return;
  const uint32_t key = keys[r];
  if (key >= b.sentinel) return;
  const uint32_t node = key >> 2;
  if (r == 0 || (keys[r - 1] >> 2) != node) b.nodes[node].x = r;
  if (r == n - 1 || (keys[r + 1] >> 2) != node) b.nodes[node].y = r + 1;
  const uint32_t s = slots[r];
  const real x = p.x(s), y = p.y(s);
  const BilinearStencil su = stencil_u(x, y, k), sv = stencil_v(x, y, k);
  b.wu[r] = make_float2(su.wx, su.wy);
  b.wv[r] = make_float2(sv.wx, sv.wy);
  b.mass[r] = particle_mass(p.d(s), k);
}

// Per sorted particle: pass 2's values, B and A of each component per unit
// face weight, from the loading in M (the function the other deposits use).
template <class View, class KP>
__global__ void __launch_bounds__(kParticleBlock) gather_drag_kernel(KP kp, View p, GatherBuffers b,
                                                                     const uint32_t* __restrict__ keys,
                                                                     const uint32_t* __restrict__ slots, int n,
                                                                     const real* __restrict__ mu,
                                                                     const real* __restrict__ mv,
                                                                     const real* __restrict__ u,
                                                                     const real* __restrict__ v) {
  const Constants& k = kp.get();
  const int r = static_cast<int>(blockIdx.x * kParticleBlock + threadIdx.x);
  if (r >= n || keys[r] >= b.sentinel) return;
  const uint32_t s = slots[r];
  const CouplingDeposit q = particle_drag_deposit(Loaded<LdgAccess>{mu}, Loaded<LdgAccess>{mv}, Loaded<LdgAccess>{u},
                                                  Loaded<LdgAccess>{v}, p.x(s), p.y(s), p.vx(s), p.vy(s), p.d(s), k);
  b.qu[r] = make_float2(q.bu, q.au);
  b.qv[r] = make_float2(q.bv, q.av);
}

// The values a face gathers: pass 1 one per particle for both components,
// pass 2 (B, A) per component.
struct GatherMass {
  const real* __restrict__ m;
  static constexpr int K = 1;
  __device__ __forceinline__ void u(int r, real (&o)[1]) const { o[0] = __ldg(m + r); }
  __device__ __forceinline__ void v(int r, real (&o)[1]) const { o[0] = __ldg(m + r); }
};
struct GatherDrag {
  const float2* __restrict__ qu;
  const float2* __restrict__ qv;
  static constexpr int K = 2;
  __device__ __forceinline__ void u(int r, real (&o)[2]) const {
    const float2 q = __ldg(qu + r);
    o[0] = q.x;
    o[1] = q.y;
  }
  __device__ __forceinline__ void v(int r, real (&o)[2]) const {
    const float2 q = __ldg(qv + r);
    o[0] = q.x;
    o[1] = q.y;
  }
};
template <int K>
struct GatherOut {
  real* u[K];
  real* v[K];
};

// The first unwrapped index of a face of an axis (-1 the lowest a stencil
// reaches) that wraps onto `i` on a periodic axis; `i` itself otherwise.
__device__ __forceinline__ int first_image(int i, int n, bool periodic) {
  if (!periodic) return i;
  while (i - n >= -1) i -= n;
  return i;
}

// One thread per point (i, j) of [0, nx] x [0, ny]: the u face (i, j) and
// the v face (i, j) where they own momentum (deposit_face_u / _v), each the
// sum, in a fixed order (unwrapped images, nodes by row then column,
// particles in sorted order), of corner_weight times the value of every
// particle whose stencil reaches it. Added to the face (zero before).
template <class In, class KP>
__global__ void face_gather_kernel(KP kp, GatherBuffers b, const uint32_t* __restrict__ keys, In in,
                                   GatherOut<In::K> out) {
  constexpr int K = In::K;
  const Constants& k = kp.get();
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i > k.nx || j > k.ny) return;
  const bool own_u = owns_deposit_u(i, j, k);
  const bool own_v = owns_deposit_v(i, j, k);
  if (!own_u && !own_v) return;
  real su[K], sv[K];
  SIM_UNROLL
  for (int q = 0; q < K; ++q) su[q] = sv[q] = real(0);
  const bool px = is_periodic(k, kLeft), py = is_periodic(k, kBottom);
  const int row = k.nx + 2;
  // unwrapped faces reach at most index nx + 1 (u: su.i + 1 <= nx + 1; v: sv.j + 1 <= ny + 1)
  for (int jy = first_image(j, k.ny, py); jy <= k.ny + 1; jy += k.ny) {
    for (int ix = first_image(i, k.nx, px); ix <= k.nx + 1; ix += k.nx) {
      const int nj0 = max(jy - 2, -1), nj1 = min(jy, k.ny - 1);
      const int ni0 = max(ix - 1, -1), ni1 = min(ix + 1, k.nx);
      for (int nj = nj0; nj <= nj1; ++nj)
        for (int ni = ni0; ni <= ni1; ++ni) {
          const int2 range = b.nodes[(ni + 1) + (nj + 1) * row];
          const int ui = ix - ni, uj = jy - nj;  // corner of the u stencil, if in {0, 1}^2
          const bool u_here = own_u && (ui == 0 || ui == 1) && (uj == 0 || uj == 1);
          for (int r = range.x; r < range.y; ++r) {
            if (u_here) {
              const float2 w = __ldg(b.wu + r);
              const real wt = corner_weight(w.x, w.y, ui, uj);
              real val[K];
              in.u(r, val);
              SIM_UNROLL
              for (int q = 0; q < K; ++q) su[q] += wt * val[q];
            }
            if (own_v) {
              const uint32_t key = __ldg(keys + r);
              const int vi = ix - ni + ((key & 1u) ? 1 : 0), vj = jy - nj - ((key & 2u) ? 1 : 0);
              if ((vi == 0 || vi == 1) && (vj == 0 || vj == 1)) {
                const float2 w = __ldg(b.wv + r);
                const real wt = corner_weight(w.x, w.y, vi, vj);
                real val[K];
                in.v(r, val);
                SIM_UNROLL
                for (int q = 0; q < K; ++q) sv[q] += wt * val[q];
              }
            }
          }
        }
      if (!px) break;
    }
    if (!py) break;
  }
  const int c = at(k, i, j);  // deposit_face_u / _v of the owner (i, j)
  SIM_UNROLL
  for (int q = 0; q < K; ++q) {
    if (own_u) out.u[q][c] += su[q];
    if (own_v) out.v[q][c] += sv[q];
  }
}

}  // namespace
}  // namespace sim::cuda
