// Particle kernels: one thread per slot, templated on the particle view
// (AoS or SoA), the fluid sampler (software bilinear, texture or packed),
// the constants policy and the deposit mode. The passes of the coupled step
// are CpuBackend::particles_impl's (sim/model/particle_physics.hpp): mass
// deposit, drag deposit, the fluid faces' update, then per particle
// coefficients, sampling, drag, obstacles, walls.
#include <algorithm>

#include "sim/ranks/decomposition.hpp"
#include "cuda/access.cuh"
#include "cuda/block_sum.cuh"
#include "cuda/check.hpp"
#include "cuda/constants.cuh"
#include "cuda/kernels.hpp"
#include "sim/model/faces.hpp"
#include "sim/model/halo.hpp"
#include "sim/model/particle_physics.hpp"

namespace sim::cuda {
namespace {

// The CPU's bilinear sampling, through the read-only cache.
struct SoftwareSampler {
  const real* __restrict__ u;
  const real* __restrict__ v;
  __device__ __forceinline__ void operator()(real x, real y, const Constants& k, real& ufx, real& ufy) const {
    sample_velocity(Loaded<LdgAccess>{u}, Loaded<LdgAccess>{v}, x, y, k, ufx, ufy);
  }
};

// The texture unit's bilinear filter (weights in 9-bit fixed point). Texel
// (a, b) holds face (a - 1, b - 1) (the halo) and is centred at
// (a + 1/2, b + 1/2), so face coordinate f maps to texture coordinate
// f + 3/2; u faces sit at f = (x/dx, y/dy - 1/2), v faces at (x/dx - 1/2, y/dy).
struct TextureSampler {
  cudaTextureObject_t u, v;
  __device__ __forceinline__ void operator()(real x, real y, const Constants& k, real& ufx, real& ufy) const {
    // tangential coordinates clamped along closed axes, as stencil_u / stencil_v
    const real fx = x * k.inv_dx, fy = y * k.inv_dy;
    const real fuy = tangential_coordinate(fy - real(0.5), k.ny, is_periodic(k, kBottom));
    const real fvx = tangential_coordinate(fx - real(0.5), k.nx, is_periodic(k, kLeft));
    ufx = tex2D<float>(u, fx + real(1.5), fuy + real(1.5));
    ufy = tex2D<float>(v, fvx + real(1.5), fy + real(1.5));
  }
};

// Packed: stencil_u / stencil_v as in software sampling, then the 4
// corners of each stencil in one 16-byte load (pack_velocity laid them out
// per lower-left node): 2 gathers per particle instead of 8. The operands
// and the arithmetic are the software sampler's, so the results are too.
struct PackedSampler {
  const float4* __restrict__ u4;
  const float4* __restrict__ v4;
  __device__ __forceinline__ void operator()(real x, real y, const Constants& k, real& ufx, real& ufy) const {
    const BilinearStencil su = stencil_u(x, y, k), sv = stencil_v(x, y, k);
    const float4 a = __ldg(u4 + at(k, su.i, su.j)), b = __ldg(v4 + at(k, sv.i, sv.j));
    ufx = bilinear(a.x, a.y, a.z, a.w, su.wx, su.wy);
    ufy = bilinear(b.x, b.y, b.z, b.w, sv.wx, sv.wy);
  }
};

__global__ void pack_velocity_kernel(const real* __restrict__ u, const real* __restrict__ v, float4* __restrict__ u4,
                                     float4* __restrict__ v4, int pitch, int64_t first, int64_t last, int64_t size) {
  const int64_t c = first + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= last) return;
  float4 a = make_float4(0, 0, 0, 0), b = a;
  if (c + pitch + 1 < size) {
    a = make_float4(__ldg(u + c), __ldg(u + c + 1), __ldg(u + c + pitch), __ldg(u + c + pitch + 1));
    b = make_float4(__ldg(v + c), __ldg(v + c + 1), __ldg(v + c + pitch), __ldg(v + c + pitch + 1));
  }
  u4[c] = a;
  v4[c] = b;
}

enum class DepositMode { atomic, sorted, fixed };

// ---- deposit=fixed (FixedBuffers, cuda/kernels.hpp) -----------------------

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

constexpr int kParticleBlock = 256;

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
// took (reaction_share) into stage, twice (its weight in stage 2); what it
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
    im.u_free[c] -= real(2) * pu / k.cell_mass;
    im.v_free[c] -= real(2) * pv / k.cell_mass;
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
    us[c] += real(2) * reaction_velocity(gained[0], faces_u, k);
  if (active_v(i, j, k) && !(k.has_solids && solid_v(open, c, k.pitch)))
    vs[c] += real(2) * reaction_velocity(gained[1], faces_v, k);
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

// The slot whose id % capacity == r takes the last new id k == r (mod
// capacity) in [first, first + count); each earlier one, and the old
// particle if it was alive, counts as recycled (the CPU's sequential rule).
template <class View>
__device__ void inject_slot(View p, int64_t s, uint64_t first, int64_t count, uint64_t seed, const InjectionC& inj,
                            unsigned long long* __restrict__ counters, bool count_repeats = true) {
  const uint64_t cap = static_cast<uint64_t>(p.size());
  const uint64_t r = p.id(s) % cap;
  const uint64_t off = (r + cap - first % cap) % cap;  // first k >= first with k % cap == r is first + off
  if (off >= static_cast<uint64_t>(count)) return;
  const uint64_t m = (static_cast<uint64_t>(count) - 1 - off) / cap + 1;  // ids of this residue
  // over ranks the slot is alive on one rank at most; the repeats are counted on rank 0 alone
  const uint64_t recycled = (p.alive(s) ? 1u : 0u) + (count_repeats ? m - 1 : 0u);
  if (recycled > 0) atomicAdd(counters + kRecycled, static_cast<unsigned long long>(recycled));
  p.store(s, injected_particle(seed, first + off + (m - 1) * cap, inj));
}

template <class View>
__global__ void inject_kernel(View p, uint64_t first, int64_t count, uint64_t seed, InjectionC inj,
                              unsigned long long* __restrict__ counters, bool count_repeats) {
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s < p.size()) inject_slot(p, s, first, count, seed, inj, counters, count_repeats);
}

// Over ranks, after the particle step and the injection: a particle whose
// position another rank's slab holds leaves (copied into `out`, dead here),
// unless this step injected it (every rank injected it; it dies on all but
// its owner). A non-finite position stays for the watchdog, unless just
// injected (then it dies everywhere, as on the CPU).
template <class View>
__global__ void sort_out_kernel(View p, SlabRowsC b, uint64_t first, int64_t count, Particle* __restrict__ out,
                                unsigned int* __restrict__ n_out) {
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= p.size() || p.alive(s) == 0) return;
  const double x = p.x(s), y = p.y(s);
  bool injected = false;
  if (count > 0) {
    const uint64_t cap = static_cast<uint64_t>(p.size());
    const uint64_t off = (p.id(s) % cap + cap - first % cap) % cap;
    injected = off < static_cast<uint64_t>(count);
  }
  if (isfinite(x) && isfinite(y)) {
    const int row = cell_along(y, b.ly, b.ny, b.periodic != 0);
    if (row >= b.row0 && row < b.row_end) return;
  } else if (!injected) {
    return;
  }
  if (!injected) out[atomicAdd(n_out, 1u)] = p.load(s);
  p.alive(s) = 0;
}

// Arrivals into their slots (id % capacity), at the slot's position when
// the store is sorted (`where`), else at the slot itself.
template <class View>
__global__ void store_arrivals_kernel(View p, const Particle* __restrict__ in, int n, const uint32_t* __restrict__ where) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= n) return;
  const uint64_t slot = in[k].id % static_cast<uint64_t>(p.size());
  p.store(where != nullptr ? static_cast<int64_t>(where[slot]) : static_cast<int64_t>(slot), in[k]);
}

template <class View>
__global__ void slot_positions_kernel(View p, uint32_t* __restrict__ where) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < p.size()) where[p.id(k) % static_cast<uint64_t>(p.size())] = static_cast<uint32_t>(k);
}

// The ids and count the step's dt drew on the device (choose_dt_on_device).
template <class View>
__global__ void inject_drawn_kernel(View p, const DeviceStepState* __restrict__ st, uint64_t seed, InjectionC inj,
                                    unsigned long long* __restrict__ counters) {
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t count = st->inject_count;
  if (s < p.size() && count > 0) inject_slot(p, s, st->inject_first, count, seed, inj, counters);
}

template <class View, class KP>
__global__ void cell_key_kernel(KP kp, View p, uint32_t* __restrict__ keys, uint32_t* __restrict__ slots) {
  const Constants& k = kp.get();
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= p.size()) return;
  uint32_t key = static_cast<uint32_t>(k.nx) * static_cast<uint32_t>(k.ny);  // dead slots last
  if (p.alive(s)) {
    const int i = clampi(static_cast<int>(floorf(p.x(s) * k.inv_dx)), 0, k.nx - 1);
    const int j = clampi(static_cast<int>(floorf(p.y(s) * k.inv_dy)), 0, k.ny - 1);
    key = static_cast<uint32_t>(j) * static_cast<uint32_t>(k.nx) + static_cast<uint32_t>(i);
  }
  keys[s] = key;
  slots[s] = static_cast<uint32_t>(s);
}

template <class Sampler, class KP>
__global__ void sample_kernel(KP kp, Sampler sample, const real* __restrict__ x, const real* __restrict__ y, int n,
                              real* __restrict__ ufx, real* __restrict__ ufy) {
  const int q = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (q < n) sample(x[q], y[q], kp.get(), ufx[q], ufy[q]);
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + kParticleBlock - 1) / kParticleBlock); }

template <class Body>
void with_view(const DeviceParticles& p, Body&& body) {
  if (p.layout == Layout::aos) body(p.aos);
  else body(p.soa);
}

template <class Body>
void with_sampler(const VelocitySource& f, Body&& body) {
  switch (f.sampling) {
    case Sampling::texture: body(TextureSampler{f.tex_u, f.tex_v}); break;
    case Sampling::packed: body(PackedSampler{f.u4, f.v4}); break;
    case Sampling::software: body(SoftwareSampler{f.u, f.v}); break;
    case Sampling::auto_: break;  // resolved before the backend is made (resolve_strategies)
  }
}

}  // namespace

void upload_particle_constants(const Constants& c, cudaStream_t s) { upload_unit_constants(c, s); }
void copy_particle_dt(const Constants* k_dev, cudaStream_t s) { copy_unit_dt(k_dev, s); }

void step_particles(const Exec& e, const DeviceParticles& p, const ParticleStepArgs& a, const ImpulseFields* impulse) {
  if (p.size() == 0) return;
  if (impulse) SIM_CUDA_CHECK(cudaMemsetAsync(impulse->took_bound, 0, sizeof(unsigned int), e.stream));
  with_view(p, [&](auto view) {
    with_sampler(a.fluid, [&](auto smp) {
      with_constants(e.constants, e.k_dev, [&](auto kp) {
        if (impulse)
          particle_step_kernel<true><<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(
              kp, view, smp, a.two_way, a.mu, a.mv, a.counters, *impulse);
        else
          particle_step_kernel<false><<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(
              kp, view, smp, a.two_way, a.mu, a.mv, a.counters, ImpulseFields{});
        SIM_CUDA_CHECK_LAUNCH("particle_step_kernel");
      });
    });
  });
}

namespace {
constexpr unsigned kFaceBlockX = 32, kFaceBlockY = 8;
dim3 face_pass_grid(const Exec& e) {
  const int rows = e.face_row_end() - e.row0;
  return dim3((e.nx + 1 + kFaceBlockX - 1) / kFaceBlockX, (rows + kFaceBlockY - 1) / kFaceBlockY);
}
}  // namespace

unsigned face_pass_blocks(const Exec& e) {
  const dim3 g = face_pass_grid(e);
  return g.x * g.y;
}

void deposit_reaction(const Exec& e, const ImpulseFields& f, int64_t slots) {
  if (slots == 0) return;
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    took_deposit_kernel<<<blocks_for(slots), kParticleBlock, 0, e.stream>>>(kp, f, slots);
    SIM_CUDA_CHECK_LAUNCH("took_deposit_kernel");
  });
}

void pay_reaction(const Exec& e, const ImpulseFields& f, const real* open, int64_t slots) {
  const dim3 grid = face_pass_grid(e);
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    reaction_pay_kernel<<<grid, dim3(kFaceBlockX, kFaceBlockY), 0, e.stream>>>(kp, f, open, slots, e.row0,
                                                                              e.face_row_end());
    SIM_CUDA_CHECK_LAUNCH("reaction_pay_kernel");
  });
  const size_t faces = static_cast<size_t>(Grid::pitch_for(e.nx)) * static_cast<size_t>(Grid::rows_for(e.ny));
  SIM_CUDA_CHECK(cudaMemsetAsync(f.took_u, 0, faces * sizeof(unsigned long long), e.stream));
  SIM_CUDA_CHECK(cudaMemsetAsync(f.took_v, 0, faces * sizeof(unsigned long long), e.stream));
  sum_gained_kernel<<<1, 256, 0, e.stream>>>(f.partials, grid.x * grid.y, f.gained);
  SIM_CUDA_CHECK_LAUNCH("sum_gained_kernel");
}

void give_back_reaction(const Exec& e, const ImpulseFields& f, const real* open, int64_t faces_u, int64_t faces_v) {
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    const dim3 grid = face_pass_grid(e);
    reaction_kernel<<<grid, dim3(kFaceBlockX, kFaceBlockY), 0, e.stream>>>(kp, f.gained, faces_u, faces_v, open,
                                                                          f.u_free, f.v_free, e.row0, e.face_row_end());
    SIM_CUDA_CHECK_LAUNCH("reaction_kernel");
  });
}

void held_faces_to_stage(const Exec& e, const CouplingFields& f, real* us, real* vs) {
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    const int lines = (e.nx > e.ny ? e.nx : e.ny) + 1;
    held_faces_kernel<<<(lines + 127) / 128, 128, 0, e.stream>>>(kp, f, us, vs, e.row0, e.face_row_end());
    SIM_CUDA_CHECK_LAUNCH("held_faces_kernel");
  });
}

void couple_particles(const Exec& e, const DeviceParticles& p, const CouplingArgs& a, real* u, real* v) {
  if (p.size() == 0) return;
  const unsigned blocks = blocks_for(p.size());
  with_view(p, [&](auto view) {
    with_constants(e.constants, e.k_dev, [&](auto kp) {
      using View = decltype(view);
      using KP = decltype(kp);
      const int64_t slots = static_cast<int64_t>(view.size());
      if (a.deposit == Deposit::gather) {
        // below, with the face update's launch shape
      } else if (a.deposit == Deposit::atomic) {
        mass_deposit_kernel<View, KP, DepositMode::atomic>
            <<<blocks, kParticleBlock, 0, e.stream>>>(kp, view, a.f, a.pairs, a.fixed, a.capacity);
        SIM_CUDA_CHECK_LAUNCH("mass_deposit_kernel");
        if (a.after_mass) a.after_mass();
        drag_deposit_kernel<View, KP, DepositMode::atomic>
            <<<blocks, kParticleBlock, 0, e.stream>>>(kp, view, a.f, a.pairs, a.fixed, a.capacity);
        SIM_CUDA_CHECK_LAUNCH("drag_deposit_kernel");
        if (a.after_drag) a.after_drag();
      } else if (a.deposit == Deposit::fixed) {
        SIM_CUDA_CHECK(cudaMemsetAsync(a.fixed.bounds, 0, 2 * sizeof(unsigned int), e.stream));
        const unsigned bound_blocks = static_cast<unsigned>((slots + kBoundsBlock - 1) / kBoundsBlock);
        fixed_bounds_kernel<<<bound_blocks, kBoundsBlock, 0, e.stream>>>(kp, view, a.f.u, a.f.v, a.fixed.bounds);
        SIM_CUDA_CHECK_LAUNCH("fixed_bounds_kernel");
        if (a.after_bounds) a.after_bounds();
        mass_deposit_kernel<View, KP, DepositMode::fixed>
            <<<blocks, kParticleBlock, 0, e.stream>>>(kp, view, a.f, a.pairs, a.fixed, a.capacity);
        SIM_CUDA_CHECK_LAUNCH("mass_deposit_kernel");
        if (a.after_mass) a.after_mass();
        const int faces = static_cast<int>(Grid::pitch_for(e.nx) * Grid::rows_for(e.ny));
        fixed_mass_kernel<<<(faces + 255) / 256 < 1024 ? (faces + 255) / 256 : 1024, 256, 0, e.stream>>>(
            kp, a.fixed, slots, a.f.mu, a.f.mv);
        SIM_CUDA_CHECK_LAUNCH("fixed_mass_kernel");
        drag_deposit_kernel<View, KP, DepositMode::fixed>
            <<<blocks, kParticleBlock, 0, e.stream>>>(kp, view, a.f, a.pairs, a.fixed, a.capacity);
        SIM_CUDA_CHECK_LAUNCH("drag_deposit_kernel");
        if (a.after_drag) a.after_drag();
      } else {
        mass_deposit_kernel<View, KP, DepositMode::sorted>
            <<<blocks, kParticleBlock, 0, e.stream>>>(kp, view, a.f, a.pairs, a.fixed, a.capacity);
        SIM_CUDA_CHECK_LAUNCH("mass_deposit_kernel");
        // one sort of the pass-1 keys serves the mass, B and A
        const SortedPairs sorted = sort_deposit_pairs(e.stream, a.pairs);
        deposit_sorted(e.stream, a.pairs, sorted, a.pairs.values, a.f.mu, a.f.mv);
        drag_deposit_kernel<View, KP, DepositMode::sorted>
            <<<blocks, kParticleBlock, 0, e.stream>>>(kp, view, a.f, a.pairs, a.fixed, a.capacity);
        SIM_CUDA_CHECK_LAUNCH("drag_deposit_kernel");
        deposit_sorted2(e.stream, a.pairs, sorted, a.pairs.values, a.pairs.values_b, a.f.bu, a.f.bv, a.f.au, a.f.av);
      }
      const dim3 block(32, 8);
      const dim3 grid((e.nx + 1 + block.x - 1) / block.x, (e.ny + 1 + block.y - 1) / block.y);
      // the face update over this rank's face rows (every row on one rank)
      const int row0 = e.row0, face_end = e.face_row_end();
      const dim3 face_grid(grid.x, (face_end - row0 + block.y - 1) / block.y);
      if (a.deposit == Deposit::gather) {
        const GatherBuffers& b = a.gather;
        const int n = static_cast<int>(view.size());
        SIM_CUDA_CHECK(cudaMemsetAsync(b.nodes, 0, static_cast<size_t>(b.node_count) * sizeof(int2), e.stream));
        gather_key_kernel<<<blocks, kParticleBlock, 0, e.stream>>>(kp, view, b, a.capacity);
        SIM_CUDA_CHECK_LAUNCH("gather_key_kernel");
        // one sort of the keys serves the mass, B and A (the particles do not move in between)
        const bool alt = radix_sort_pairs(e.stream, b.keys, b.keys_alt, b.slots, b.slots_alt, n, b.end_bit,
                                          b.workspace, b.workspace_bytes);
        const uint32_t* keys = alt ? b.keys_alt : b.keys;
        const uint32_t* slots = alt ? b.slots_alt : b.slots;
        gather_mass_kernel<<<blocks, kParticleBlock, 0, e.stream>>>(kp, view, b, keys, slots, n);
        SIM_CUDA_CHECK_LAUNCH("gather_mass_kernel");
        face_gather_kernel<<<grid, block, 0, e.stream>>>(kp, b, keys, GatherMass{b.mass},
                                                         GatherOut<1>{{a.f.mu}, {a.f.mv}});
        SIM_CUDA_CHECK_LAUNCH("face_gather_kernel (mass)");
        gather_drag_kernel<<<blocks, kParticleBlock, 0, e.stream>>>(kp, view, b, keys, slots, n, a.f.mu, a.f.mv,
                                                                    a.f.u, a.f.v);
        SIM_CUDA_CHECK_LAUNCH("gather_drag_kernel");
        face_gather_kernel<<<grid, block, 0, e.stream>>>(kp, b, keys, GatherDrag{b.qu, b.qv},
                                                         GatherOut<2>{{a.f.bu, a.f.au}, {a.f.bv, a.f.av}});
        SIM_CUDA_CHECK_LAUNCH("face_gather_kernel (drag)");
      }
      if (a.deposit == Deposit::fixed)
        coupled_faces_kernel<true>
            <<<face_grid, block, 0, e.stream>>>(kp, a.f, a.fixed, slots, a.open, u, v, row0, face_end);
      else
        coupled_faces_kernel<false>
            <<<face_grid, block, 0, e.stream>>>(kp, a.f, a.fixed, slots, a.open, u, v, row0, face_end);
      SIM_CUDA_CHECK_LAUNCH("coupled_faces_kernel");
    });
  });
}

void inject_particles(const Exec& e, const DeviceParticles& p, uint64_t first_id, int64_t count, uint64_t seed,
                      const InjectionC& inj, unsigned long long* counters, bool count_repeats) {
  if (count <= 0 || p.size() == 0) return;
  with_view(p, [&](auto view) {
    inject_kernel<<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(view, first_id, count, seed, inj, counters,
                                                                            count_repeats);
    SIM_CUDA_CHECK_LAUNCH("inject_kernel");
  });
}

void sort_out_particles(const Exec& e, const DeviceParticles& p, const SlabRowsC& b, uint64_t first_id, int64_t count,
                        Particle* out, unsigned int* n_out) {
  SIM_CUDA_CHECK(cudaMemsetAsync(n_out, 0, sizeof *n_out, e.stream));
  if (p.size() == 0) return;
  with_view(p, [&](auto view) {
    sort_out_kernel<<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(view, b, first_id, count, out, n_out);
    SIM_CUDA_CHECK_LAUNCH("sort_out_kernel");
  });
}

void store_arrivals(const Exec& e, const DeviceParticles& p, const Particle* in, int n, const uint32_t* where) {
  if (n <= 0 || p.size() == 0) return;
  with_view(p, [&](auto view) {
    store_arrivals_kernel<<<(n + kParticleBlock - 1) / kParticleBlock, kParticleBlock, 0, e.stream>>>(view, in, n,
                                                                                                     where);
    SIM_CUDA_CHECK_LAUNCH("store_arrivals_kernel");
  });
}

void slot_positions(const Exec& e, const DeviceParticles& p, uint32_t* where) {
  if (p.size() == 0) return;
  with_view(p, [&](auto view) {
    slot_positions_kernel<<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(view, where);
    SIM_CUDA_CHECK_LAUNCH("slot_positions_kernel");
  });
}

void inject_particles(const Exec& e, const DeviceParticles& p, const DeviceStepState* state, uint64_t seed,
                      const InjectionC& inj, unsigned long long* counters) {
  if (p.size() == 0) return;
  with_view(p, [&](auto view) {
    inject_drawn_kernel<<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(view, state, seed, inj, counters);
    SIM_CUDA_CHECK_LAUNCH("inject_drawn_kernel");
  });
}

void particle_cell_keys(const Exec& e, const DeviceParticles& p, uint32_t* keys, uint32_t* slots) {
  if (p.size() == 0) return;
  with_view(p, [&](auto view) {
    with_constants(e.constants, e.k_dev, [&](auto kp) {
      cell_key_kernel<<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(kp, view, keys, slots);
      SIM_CUDA_CHECK_LAUNCH("cell_key_kernel");
    });
  });
}

void pack_velocity(const Exec& e, const real* u, const real* v, float4* u4, float4* v4, size_t size) {
  if (size == 0) return;
  // A particle of cell row j reads the packed points of storage rows j and
  // j + 1 (u's stencil may start a row lower): grid rows row0 - 1 .. row_end.
  const bool split = e.row0 > 0 || e.row_end >= 0;
  const int64_t n = static_cast<int64_t>(size);
  const int64_t first = split ? std::max<int64_t>(0, static_cast<int64_t>(e.row0) * e.pitch) : 0;
  const int64_t last = split ? std::min<int64_t>(n, static_cast<int64_t>(e.cell_row_end() + 2) * e.pitch) : n;
  if (last <= first) return;
  pack_velocity_kernel<<<blocks_for(last - first), kParticleBlock, 0, e.stream>>>(u, v, u4, v4, e.pitch, first, last,
                                                                                  n);
  SIM_CUDA_CHECK_LAUNCH("pack_velocity_kernel");
}

void sample_fluid_velocity(const Exec& e, const VelocitySource& fluid, const real* x, const real* y, int n, real* ufx,
                           real* ufy) {
  if (n <= 0) return;
  with_sampler(fluid, [&](auto smp) {
    with_constants(e.constants, e.k_dev, [&](auto kp) {
      sample_kernel<<<blocks_for(n), kParticleBlock, 0, e.stream>>>(kp, smp, x, y, n, ufx, ufy);
      SIM_CUDA_CHECK_LAUNCH("sample_kernel");
    });
  });
}

}  // namespace sim::cuda
