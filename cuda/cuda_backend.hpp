// The CUDA backend's entry points, in plain C++. A build without CUDA links
// cuda/stub/cuda_stub.cpp instead, which says the backend was not built, so
// nothing above this header needs an #if.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "sim/backend.hpp"

namespace sim {

// Whether this build contains the CUDA backend (false: the stub is linked).
bool cuda_backend_built();
// Throws std::runtime_error("no CUDA device available: <reason>") without a
// usable device, and an out-of-memory message (bytes needed, bytes free).
std::unique_ptr<Backend> make_cuda_backend(const Config& cfg, const Grid& grid);
bool cuda_device_available();

// Device memory a case needs (cuda/memory_plan.hpp) and what the device has
// free, before anything is allocated. Throws as make_cuda_backend does
// without a device or for counts past the kernels' 32-bit indexing.
struct CudaMemoryNeed {
  uint64_t grid = 0;       // bytes of the per-point arrays: fields, pressure solve, reductions
  uint64_t particles = 0;  // bytes of the per-slot arrays: particles, sorting, deposit
  uint64_t free = 0;       // cudaMemGetInfo's free bytes
  std::string device;      // "NVIDIA H200 (132 SMs, 139.8 GiB)"
};
CudaMemoryNeed cuda_memory_need(const Config& cfg, const Grid& grid);
// Device-to-device cudaMemcpy bandwidth, bytes read + written per second,
// median of `repeats` copies of `bytes` (the ceiling benchmarks compare with).
double cuda_copy_bandwidth(std::size_t bytes, int repeats);

}  // namespace sim
