// Particle kernels: one thread per slot, templated on the particle view
// (AoS or SoA), the fluid sampler (software bilinear, texture or packed),
// the constants policy and the deposit mode. The per-particle sequence is
// CpuBackend::particles_impl's: sample, drag (+ reaction), obstacles, walls.
#include "cuda/access.cuh"
#include "cuda/constants.cuh"
#include "cuda/kernels.hpp"
#include "sim/halo.hpp"
#include "sim/particle_physics.hpp"

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
    const real fx = x * k.inv_dx, fy = y * k.inv_dy;
    ufx = tex2D<float>(u, fx + real(1.5), fy + real(1));
    ufy = tex2D<float>(v, fx + real(1), fy + real(1.5));
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
                                     float4* __restrict__ v4, int pitch, int64_t size) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= size) return;
  float4 a = make_float4(0, 0, 0, 0), b = a;
  if (c + pitch + 1 < size) {
    a = make_float4(__ldg(u + c), __ldg(u + c + 1), __ldg(u + c + pitch), __ldg(u + c + pitch + 1));
    b = make_float4(__ldg(v + c), __ldg(v + c + 1), __ldg(v + c + pitch), __ldg(v + c + pitch + 1));
  }
  u4[c] = a;
  v4[c] = b;
}

enum class DepositMode { none, atomic, sorted };

struct DepositTargets {
  real* fu;
  real* fv;
  uint32_t* keys;
  real* values;
  uint32_t capacity;
};

constexpr int kParticleBlock = 256;

template <class View, class Sampler, class KP, DepositMode kDeposit>
__global__ void __launch_bounds__(kParticleBlock) particle_step_kernel(KP kp, View p, Sampler sample,
                                                                       DepositTargets dep,
                                                                       unsigned long long* __restrict__ counters) {
  const Constants& k = kp.get();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kParticleBlock + threadIdx.x;
  if (i >= p.size()) return;
  // Every load of the slot issued before the gathers of the sampling.
  const bool live = p.alive(i) != 0;
  const ParticleMotion s{p.x(i), p.y(i), p.vx(i), p.vy(i)};
  const real d = p.d(i);
  real ufx = 0, ufy = 0;
  if (live) sample(s.x, s.y, k, ufx, ufy);
  real x0 = 0, y0 = 0, ax = 0, ay = 0;  // old position and drag reaction (an acceleration of one cell of fluid)
  if (live) {
    const ParticleUpdate up = update_particle(s, d, ufx, ufy, k);
    // The watchdog's particle half: compares in registers; the atomic only
    // runs for a particle that is already lost.
    if (!finite_motion(s) || !finite_motion(up.s)) atomicAdd(counters + kNonFinite, 1ull);
    if constexpr (kDeposit != DepositMode::none) {
      x0 = s.x;
      y0 = s.y;
      ax = up.ax;
      ay = up.ay;
    }
    p.x(i) = up.s.x;
    p.y(i) = up.s.y;
    p.vx(i) = up.s.vx;
    p.vy(i) = up.s.vy;
    if (!up.inside) {
      p.alive(i) = 0;
      atomicAdd(counters + kRemoved, 1ull);
    }
  }
  const bool deposits = ax != real(0) || ay != real(0);
  if constexpr (kDeposit == DepositMode::atomic) {
    if (deposits)
      for_each_deposit_face(x0, y0, ax, ay, k, [&](int, int fu, real a_u, int fv, real a_v) {
        if (fu >= 0) atomicAdd(dep.fu + fu, a_u);
        if (fv >= 0) atomicAdd(dep.fv + fv, a_v);
      });
  } else if constexpr (kDeposit == DepositMode::sorted) {
    // Pairs at the canonical slot id % capacity: after a stable sort by face,
    // each face's contributions are in CPU (slot) order whatever the permutation.
    // A slot's 8 keys and 8 values are one 32-byte sector each, written with
    // two 16-byte stores apiece: whole sectors, also when sorting by cell
    // has scattered the canonical slots over the threads.
    const uint32_t sentinel = deposit_key(k.pitch * k.rows, 0);
    const size_t base = 8 * static_cast<size_t>(p.id(i) % dep.capacity);
    uint32_t key[8];
    real val[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      key[c] = sentinel;
      val[c] = real(0);
    }
    if (deposits)
      for_each_deposit_face(x0, y0, ax, ay, k, [&](int c, int fu, real a_u, int fv, real a_v) {
        key[2 * c] = fu >= 0 ? deposit_key(fu, 0) : sentinel;
        val[2 * c] = a_u;
        key[2 * c + 1] = fv >= 0 ? deposit_key(fv, 1) : sentinel;
        val[2 * c + 1] = a_v;
      });
    uint4* kd = reinterpret_cast<uint4*>(dep.keys + base);
    float4* vd = reinterpret_cast<float4*>(dep.values + base);
    kd[0] = make_uint4(key[0], key[1], key[2], key[3]);
    kd[1] = make_uint4(key[4], key[5], key[6], key[7]);
    vd[0] = make_float4(val[0], val[1], val[2], val[3]);
    vd[1] = make_float4(val[4], val[5], val[6], val[7]);
  }
}

// The slot whose id % capacity == r takes the last new id k == r (mod
// capacity) in [first, first + count); each earlier one, and the old
// particle if it was alive, counts as recycled (the CPU's sequential rule).
template <class View>
__global__ void inject_kernel(View p, uint64_t first, int64_t count, uint64_t seed, InjectionC inj,
                              unsigned long long* __restrict__ counters) {
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= p.size()) return;
  const uint64_t cap = static_cast<uint64_t>(p.size());
  const uint64_t r = p.id(s) % cap;
  const uint64_t off = (r + cap - first % cap) % cap;  // first k >= first with k % cap == r is first + off
  if (off >= static_cast<uint64_t>(count)) return;
  const uint64_t m = (static_cast<uint64_t>(count) - 1 - off) / cap + 1;  // ids of this residue
  const uint64_t recycled = (p.alive(s) ? 1u : 0u) + (m - 1);
  if (recycled > 0) atomicAdd(counters + kRecycled, static_cast<unsigned long long>(recycled));
  p.store(s, injected_particle(seed, first + off + (m - 1) * cap, inj));
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
  }
}

template <DepositMode kMode, class View, class Sampler, class KP>
void launch_step(const Exec& e, View view, Sampler smp, KP kp, const DepositTargets& dep,
                 unsigned long long* counters) {
  particle_step_kernel<View, Sampler, KP, kMode>
      <<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(kp, view, smp, dep, counters);
  SIM_CUDA_CHECK_LAUNCH("particle_step_kernel");
}

}  // namespace

void upload_particle_constants(const Constants& c, cudaStream_t s) { upload_unit_constants(c, s); }

void step_particles(const Exec& e, const DeviceParticles& p, const ParticleStepArgs& a) {
  if (p.size() == 0) return;
  const DepositTargets dep{a.fu, a.fv, a.pair_keys, a.pair_values, a.capacity};
  with_view(p, [&](auto view) {
    with_sampler(a.fluid, [&](auto smp) {
      with_constants(e.constants, e.k_dev, [&](auto kp) {
        if (!a.two_way) launch_step<DepositMode::none>(e, view, smp, kp, dep, a.counters);
        else if (a.deposit == Deposit::atomic) launch_step<DepositMode::atomic>(e, view, smp, kp, dep, a.counters);
        else launch_step<DepositMode::sorted>(e, view, smp, kp, dep, a.counters);
      });
    });
  });
}

void inject_particles(const Exec& e, const DeviceParticles& p, uint64_t first_id, int64_t count, uint64_t seed,
                      const InjectionC& inj, unsigned long long* counters) {
  if (count <= 0 || p.size() == 0) return;
  with_view(p, [&](auto view) {
    inject_kernel<<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(view, first_id, count, seed, inj, counters);
    SIM_CUDA_CHECK_LAUNCH("inject_kernel");
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
  pack_velocity_kernel<<<blocks_for(static_cast<int64_t>(size)), kParticleBlock, 0, e.stream>>>(
      u, v, u4, v4, e.pitch, static_cast<int64_t>(size));
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
