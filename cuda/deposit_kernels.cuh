// SPDX-License-Identifier: MIT
// The deposit passes of the atomic, fixed and sorted strategies
// (cuda/deposit_strategies.cuh), one kernel per pass templated on the
// mode, and the face update (pass 3) every strategy ends with.
#pragma once
#include "cuda/access.cuh"
#include "cuda/fixed_point.cuh"
#include "cuda/kernels.hpp"
#include "cuda/particle_launch.cuh"
#include "sim/model/faces.hpp"
#include "sim/model/halo.hpp"
#include "sim/model/coupling_physics.hpp"

namespace sim::cuda {
namespace {

enum class DepositMode { atomic, sorted, fixed };

// ---- deposit=fixed (FixedBuffers, cuda/kernels.hpp) -----------------------

constexpr int kBoundsBlock = 256;

// The bounds of what one live particle deposits: its mass onto M; onto B
// and A, m alpha and m (alpha s - beta_m1 g dt) with its slip s = v - u(x_p)
// against the fluid of the step's start, 0 <= alpha <= 1 and |beta_m1| <= 1
// (sim/model/particle_physics.hpp, coupling_coeffs), so m max(1, |s_x| + |g_x dt|,
// |s_y| + |g_y dt|). One atomicMax per warp.
template <class View, class KP>
__global__ void __launch_bounds__(kBoundsBlock) fixed_bounds_kernel(KP kp, View p, const real* __restrict__ u,
                                                                    const real* __restrict__ v,
                                                                    unsigned int* __restrict__ bounds) {
  const Constants& k = kp.get();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kBoundsBlock + threadIdx.x;
  float bm = 0.f, bd = 0.f;
  if (i < p.size()) {
    const real x = p.x(i), y = p.y(i), vx = p.vx(i), vy = p.vy(i);
    if (p.alive(i) != 0 && finite_motion({x, y, vx, vy})) {
      const real m = particle_mass(p.d(i), k);
      real ufx, ufy;
      sample_velocity(Loaded<LdgAccess>{u}, Loaded<LdgAccess>{v}, x, y, k, ufx, ufy);
      bm = m;
      bd = m * fmaxf(1.f, fmaxf(fabsf(vx - ufx) + fabsf(k.g_eff_x * k.dt), fabsf(vy - ufy) + fabsf(k.g_eff_y * k.dt)));
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    bm = fmaxf(bm, __shfl_down_sync(0xffffffffu, bm, o));
    bd = fmaxf(bd, __shfl_down_sync(0xffffffffu, bd, o));
  }
  if ((threadIdx.x & 31) == 0) {
    if (bm > 0.f) atomicMax(bounds, __float_as_uint(bm));
    if (bd > 0.f) atomicMax(bounds + 1, __float_as_uint(bd));
  }
}

// M from its integers (assigned: every face), which are zeroed.
template <class KP>
__global__ void fixed_mass_kernel(KP kp, FixedBuffers fx, int64_t slots, real* __restrict__ mu, real* __restrict__ mv) {
  const Constants& k = kp.get();
  const int e = fixed_exponent(fx.bounds, slots);
  const int n = k.pitch * (k.ny + 3);
  for (int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); c < n;
       c += static_cast<int>(gridDim.x * blockDim.x)) {
    mu[c] = from_fixed(fx.mu[c], e);
    mv[c] = from_fixed(fx.mv[c], e);
    fx.mu[c] = fx.mv[c] = 0ull;
  }
}

// Sorted pairs: a slot's 8 keys and 8 values are one 32-byte sector each,
// written with two 16-byte stores apiece: whole sectors, also when sorting
// by cell has scattered the canonical slots over the threads.
__device__ __forceinline__ void store8(uint32_t* dst, const uint32_t (&a)[8]) {
  uint4* d = reinterpret_cast<uint4*>(dst);
  d[0] = make_uint4(a[0], a[1], a[2], a[3]);
  d[1] = make_uint4(a[4], a[5], a[6], a[7]);
}
__device__ __forceinline__ void store8(real* dst, const real (&a)[8]) {
  float4* d = reinterpret_cast<float4*>(dst);
  d[0] = make_float4(a[0], a[1], a[2], a[3]);
  d[1] = make_float4(a[4], a[5], a[6], a[7]);
}

// Pass 1: the particle mass onto M. Sorted: the pairs at the canonical slot
// id % capacity (after a stable sort by face, each face's contributions are
// in CPU slot order whatever the permutation), with the face keys every
// later pass reuses and the pair index the sort carries.
template <class View, class KP, DepositMode kDeposit>
__global__ void __launch_bounds__(kParticleBlock) mass_deposit_kernel(KP kp, View p, CouplingFields f,
                                                                      DepositBuffers b, FixedBuffers fx,
                                                                      uint32_t capacity) {
  const Constants& k = kp.get();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kParticleBlock + threadIdx.x;
  if (i >= p.size()) return;
  const real x = p.x(i), y = p.y(i), m = particle_mass(p.d(i), k);
  // a particle already lost to the watchdog leaves the fluid as it is (the CPU's rule)
  const bool live = p.alive(i) != 0 && finite_motion({x, y, p.vx(i), p.vy(i)});
  if constexpr (kDeposit == DepositMode::atomic) {
    if (live)
      for_each_deposit_face(x, y, k, [&](int, int fu, real wu, int fv, real wv) {
        if (fu >= 0) atomicAdd(f.mu + fu, wu * m);
        if (fv >= 0) atomicAdd(f.mv + fv, wv * m);
      });
  } else if constexpr (kDeposit == DepositMode::fixed) {
    const int e = fixed_exponent(fx.bounds, p.size());
    if (live)
      for_each_deposit_face(x, y, k, [&](int, int fu, real wu, int fv, real wv) {
        if (fu >= 0) atomicAdd(fx.mu + fu, to_fixed(wu * m, e));
        if (fv >= 0) atomicAdd(fx.mv + fv, to_fixed(wv * m, e));
      });
  } else {
    const size_t base = 8 * static_cast<size_t>(p.id(i) % capacity);
    uint32_t key[8], index[8];
    real val[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      key[c] = b.sentinel;
      index[c] = static_cast<uint32_t>(base) + c;
      val[c] = real(0);
    }
    if (live)
      for_each_deposit_face(x, y, k, [&](int c, int fu, real wu, int fv, real wv) {
        key[2 * c] = fu >= 0 ? deposit_key(fu, 0) : b.sentinel;
        val[2 * c] = wu * m;
        key[2 * c + 1] = fv >= 0 ? deposit_key(fv, 1) : b.sentinel;
        val[2 * c + 1] = wv * m;
      });
    store8(b.keys + base, key);
    store8(b.perm + base, index);
    store8(b.values + base, val);
  }
}

// Pass 2: the loading sampled from M, the coefficients, and the implicit
// drag's contributions onto B and A (sorted: at the pair slots of pass 1).
template <class View, class KP, DepositMode kDeposit>
__global__ void __launch_bounds__(kParticleBlock) drag_deposit_kernel(KP kp, View p, CouplingFields f,
                                                                      DepositBuffers b, FixedBuffers fx,
                                                                      uint32_t capacity) {
  const Constants& k = kp.get();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kParticleBlock + threadIdx.x;
  if (i >= p.size()) return;
  const real x = p.x(i), y = p.y(i), vx = p.vx(i), vy = p.vy(i), d = p.d(i);
  const bool live = p.alive(i) != 0 && finite_motion({x, y, vx, vy});
  CouplingDeposit q{0, 0, 0, 0};
  if (live)
    q = particle_drag_deposit(Loaded<LdgAccess>{f.mu}, Loaded<LdgAccess>{f.mv}, Loaded<LdgAccess>{f.u},
                              Loaded<LdgAccess>{f.v}, x, y, vx, vy, d, k);
  if constexpr (kDeposit == DepositMode::atomic) {
    if (live && (q.bu != real(0) || q.au != real(0) || q.bv != real(0) || q.av != real(0)))
      for_each_deposit_face(x, y, k, [&](int, int fu, real wu, int fv, real wv) {
        if (fu >= 0) {
          atomicAdd(f.bu + fu, wu * q.bu);
          atomicAdd(f.au + fu, wu * q.au);
        }
        if (fv >= 0) {
          atomicAdd(f.bv + fv, wv * q.bv);
          atomicAdd(f.av + fv, wv * q.av);
        }
      });
  } else if constexpr (kDeposit == DepositMode::fixed) {
    const int e = fixed_exponent(fx.bounds + 1, p.size());
    if (live && (q.bu != real(0) || q.au != real(0) || q.bv != real(0) || q.av != real(0)))
      for_each_deposit_face(x, y, k, [&](int, int fu, real wu, int fv, real wv) {
        if (fu >= 0) {
          atomicAdd(fx.bu + fu, to_fixed(wu * q.bu, e));
          atomicAdd(fx.au + fu, to_fixed(wu * q.au, e));
        }
        if (fv >= 0) {
          atomicAdd(fx.bv + fv, to_fixed(wv * q.bv, e));
          atomicAdd(fx.av + fv, to_fixed(wv * q.av, e));
        }
      });
  } else {
    const size_t base = 8 * static_cast<size_t>(p.id(i) % capacity);
    real vb[8], va[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) vb[c] = va[c] = real(0);
    if (live)
      for_each_deposit_face(x, y, k, [&](int c, int, real wu, int, real wv) {
        vb[2 * c] = wu * q.bu;
        va[2 * c] = wu * q.au;
        vb[2 * c + 1] = wv * q.bv;
        va[2 * c + 1] = wv * q.av;
      });
    store8(b.values + base, vb);
    store8(b.values_b + base, va);
  }
}

// Pass 3: every active fluid face not touching a solid takes the implicit
// drag of the particles around it; A and B are zeroed for the next step.
// kFixed: A and B from their integers (deposit=fixed).
template <bool kFixed, class KP>
__global__ void coupled_faces_kernel(KP kp, CouplingFields f, FixedBuffers fx, int64_t slots,
                                     const real* __restrict__ open, real* __restrict__ u, real* __restrict__ v,
                                     int row0, int face_end) {
  const Constants& k = kp.get();
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = row0 + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i > k.nx || j >= face_end) return;
  const int c = at(k, i, j);
  real au, bu, av, bv;
  if constexpr (kFixed) {
    const int e = fixed_exponent(fx.bounds + 1, slots);
    au = from_fixed(fx.au[c], e);
    bu = from_fixed(fx.bu[c], e);
    av = from_fixed(fx.av[c], e);
    bv = from_fixed(fx.bv[c], e);
    fx.au[c] = fx.bu[c] = fx.av[c] = fx.bv[c] = 0ull;
  } else {
    au = f.au[c];
    bu = f.bu[c];
    av = f.av[c];
    bv = f.bv[c];
  }
  if (active_u(i, j, k) && !(k.has_solids && solid_u(open, c)))
    u[c] = coupled_face_velocity(u[c], au, bu, k.cell_mass);
  if (active_v(i, j, k) && !(k.has_solids && solid_v(open, c, k.pitch)))
    v[c] = coupled_face_velocity(v[c], av, bv, k.cell_mass);
  // a held boundary face keeps its free value in B until held_faces_to_stage
  const real half = face_fluid_mass(true, k);
  const bool hu = j < k.ny && held_face_u(i, k), hv = i < k.nx && held_face_v(j, k);
  f.bu[c] = hu ? coupled_face_velocity(u[c], au, bu, half) : real(0);
  f.bv[c] = hv ? coupled_face_velocity(v[c], av, bv, half) : real(0);
  f.au[c] = f.av[c] = real(0);
}

// Thread t: the held u faces (0, t) and (nx, t), the held v faces (t, 0)
// and (t, ny), within this rank's face rows.
template <class KP>
__global__ void held_faces_kernel(KP kp, CouplingFields f, real* __restrict__ us, real* __restrict__ vs, int row0,
                                  int face_end) {
  const Constants& k = kp.get();
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (t < k.ny && t >= row0 && t < face_end)
    for (int i : {0, k.nx})
      if (held_face_u(i, k)) {
        const int c = at(k, i, t);
        us[c] = f.bu[c];
        f.bu[c] = real(0);
      }
  if (t < k.nx)
    for (int j : {0, k.ny})
      if (j >= row0 && j < face_end && held_face_v(j, k)) {
        const int c = at(k, t, j);
        vs[c] = f.bv[c];
        f.bv[c] = real(0);
      }
}

}  // namespace
}  // namespace sim::cuda
