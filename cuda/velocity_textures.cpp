// SPDX-License-Identifier: MIT
#include "cuda/velocity_textures.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace sim::cuda {
namespace {

// Texels are the faces -1 .. n + 1 in each direction, halo included; no
// sample reaches beyond them, and clamping covers rounding at the edges.
cudaTextureObject_t make_texture(const real* p, const Grid& g, const DeviceInfo& d) {
  const size_t pitch_bytes = static_cast<size_t>(g.pitch) * sizeof(real);
  const size_t align = d.texture_pitch_alignment > 0 ? d.texture_pitch_alignment : 1;
  if (pitch_bytes % align != 0 || reinterpret_cast<uintptr_t>(p) % align != 0)
    throw std::runtime_error("gpu.sampling = texture: rows of " + std::to_string(pitch_bytes) +
                             " bytes are not a multiple of this device's texturePitchAlignment (" +
                             std::to_string(align) + " bytes); use sampling = software");
  cudaResourceDesc res{};
  res.resType = cudaResourceTypePitch2D;
  res.res.pitch2D.devPtr = const_cast<real*>(p);
  res.res.pitch2D.desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  res.res.pitch2D.width = static_cast<size_t>(g.nx) + 3;
  res.res.pitch2D.height = static_cast<size_t>(g.ny) + 3;
  res.res.pitch2D.pitchInBytes = pitch_bytes;
  cudaTextureDesc tex{};
  tex.addressMode[0] = cudaAddressModeClamp;
  tex.addressMode[1] = cudaAddressModeClamp;
  tex.filterMode = cudaFilterModeLinear;
  tex.readMode = cudaReadModeElementType;
  tex.normalizedCoords = 0;
  cudaTextureObject_t t = 0;
  SIM_CUDA_CHECK(cudaCreateTextureObject(&t, &res, &tex, nullptr));
  return t;
}

}  // namespace

VelocityTextures::VelocityTextures(const real* u, const real* v, const Grid& g, const DeviceInfo& d) {
  u_ = make_texture(u, g, d);
  try {
    v_ = make_texture(v, g, d);
  } catch (...) {
    release();
    throw;
  }
}

VelocityTextures::~VelocityTextures() { release(); }

VelocityTextures::VelocityTextures(VelocityTextures&& o) noexcept
    : u_(std::exchange(o.u_, 0)), v_(std::exchange(o.v_, 0)) {}

VelocityTextures& VelocityTextures::operator=(VelocityTextures&& o) noexcept {
  std::swap(u_, o.u_);
  std::swap(v_, o.v_);
  return *this;
}

void VelocityTextures::release() noexcept {
  if (u_ != 0) (void)cudaDestroyTextureObject(u_);
  if (v_ != 0) (void)cudaDestroyTextureObject(v_);
  u_ = v_ = 0;
}

}  // namespace sim::cuda
