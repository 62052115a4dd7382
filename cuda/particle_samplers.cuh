// SPDX-License-Identifier: MIT
// The fluid samplers of the particle kernels (gpu.sampling): each turns a
// position into the fluid velocity there, the same bilinear interpolation
// by three memory paths; with_sampler picks one from the VelocitySource.
#pragma once
#include "cuda/access.cuh"
#include "cuda/kernels.hpp"
#include "sim/model/faces.hpp"
#include "sim/model/halo.hpp"
#include "sim/model/coupling_physics.hpp"

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

template <class Sampler, class KP>
__global__ void sample_kernel(KP kp, Sampler sample, const real* __restrict__ x, const real* __restrict__ y, int n,
                              real* __restrict__ ufx, real* __restrict__ ufy) {
  const int q = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (q < n) sample(x[q], y[q], kp.get(), ufx[q], ufy[q]);
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
}  // namespace sim::cuda
