// SPDX-License-Identifier: MIT
// Texture objects over the u and v arrays, for sampling=texture: the
// hardware's bilinear filter reads the arrays in place (pitch-2D linear
// memory: rows are padded to 32 floats, 128 bytes), with clamped addressing.
#pragma once
#include <cuda_runtime_api.h>

#include "cuda/device.hpp"
#include "sim/model/grid.hpp"

namespace sim::cuda {

class VelocityTextures {
 public:
  VelocityTextures() = default;
  // Throws when the grid's row pitch or the arrays' alignment do not meet
  // the device's texturePitchAlignment.
  VelocityTextures(const real* u, const real* v, const Grid& g, const DeviceInfo& d);
  ~VelocityTextures();
  VelocityTextures(VelocityTextures&& o) noexcept;
  VelocityTextures& operator=(VelocityTextures&& o) noexcept;
  VelocityTextures(const VelocityTextures&) = delete;
  VelocityTextures& operator=(const VelocityTextures&) = delete;

  cudaTextureObject_t u() const { return u_; }
  cudaTextureObject_t v() const { return v_; }

 private:
  void release() noexcept;
  cudaTextureObject_t u_ = 0, v_ = 0;
};

}  // namespace sim::cuda
