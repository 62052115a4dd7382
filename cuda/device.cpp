// SPDX-License-Identifier: MIT
#include "cuda/device.hpp"

#include <cstdio>
#include <stdexcept>

#include "cuda/device_buffer.hpp"
#include "cuda/cuda_backend.hpp"

namespace sim {

bool cuda_backend_built() { return true; }

bool cuda_device_available() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return n > 0;
}

namespace cuda {

std::string format_bytes(size_t bytes) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%zu bytes (%.2f GiB)", bytes, static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

[[noreturn]] void throw_out_of_memory(size_t bytes, const char* what) {
  size_t free_b = 0, total_b = 0;
  const bool known = cudaMemGetInfo(&free_b, &total_b) == cudaSuccess;
  throw std::runtime_error(std::string("cuda: out of device memory: ") + what + " needs " + format_bytes(bytes) +
                           ", " + (known ? format_bytes(free_b) : std::string("an unknown number of bytes")) +
                           " free");
}

DeviceInfo query_device() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw std::runtime_error(std::string("no CUDA device available: ") + cudaGetErrorString(err));
  }
  if (n == 0) throw std::runtime_error("no CUDA device available: the driver reports 0 devices");
  DeviceInfo d;
  SIM_CUDA_CHECK(cudaGetDevice(&d.ordinal));
  SIM_CUDA_CHECK(cudaSetDevice(d.ordinal));
  cudaDeviceProp p{};
  SIM_CUDA_CHECK(cudaGetDeviceProperties(&p, d.ordinal));
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.total_bytes = p.totalGlobalMem;
  d.texture_pitch_alignment = p.texturePitchAlignment;
  d.max_shared_per_block = static_cast<int>(p.sharedMemPerBlock);
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  return d;
}

std::string describe(const DeviceInfo& d) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s (%d SMs, %.1f GiB)", d.name.c_str(), d.sm_count,
                static_cast<double>(d.total_bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

void require_free_memory(size_t bytes, const std::string& what, const DeviceInfo& d) {
  size_t free_b = 0, total_b = 0;
  SIM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (bytes > free_b)
    throw std::runtime_error("cuda: " + what + " needs " + format_bytes(bytes) + " of device memory, only " +
                             format_bytes(free_b) + " free on " + describe(d));
}

}  // namespace cuda
}  // namespace sim
