// SPDX-License-Identifier: MIT
// The CUDA backend's entry points, in plain C++. A build without CUDA links
// cuda/stub/cuda_stub.cpp instead, which says the backend was not built, so
// nothing above this header needs an #if.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "sim/model/backend.hpp"

namespace sim {

class RankSplit;

// Whether this build contains the CUDA backend (false: the stub is linked).
bool cuda_backend_built();
// Throws std::runtime_error("no CUDA device available: <reason>") without a
// usable device, and an out-of-memory message (bytes needed, bytes free).
// `ranks`: this process's rank of a run split into slabs of rows
// (sim/ranks/rank_split.hpp; its GPU: the rank's place on its host
// modulo the host's GPUs, rows exchanged through NCCL), or null for a run
// of one process. Collective over the ranks when given. The GPU strategies
// `cfg` leaves automatic are resolved here (resolve_strategies), as the
// config loader resolves them.
std::unique_ptr<Backend> make_cuda_backend(const Config& cfg, const Grid& grid,
                                           std::shared_ptr<const RankSplit> ranks = nullptr);
bool cuda_device_available();
// Whether this build can run GPU ranks (the CUDA backend with MPI and NCCL).
bool cuda_ranks_built();

// Device memory a case needs (cuda/memory_plan.hpp) and what the device has
// free, before anything is allocated; `ranks`: for one of the GPU ranks of a
// split run (as make_cuda_backend with ranks). Throws as make_cuda_backend
// does without a device or for counts past the kernels' 32-bit indexing.
struct CudaMemoryNeed {
  uint64_t grid = 0;       // bytes of the per-point arrays: fields, pressure solve, reductions
  uint64_t particles = 0;  // bytes of the per-slot arrays: particles, sorting, deposit
  uint64_t free = 0;       // cudaMemGetInfo's free bytes
  std::string device;      // "NVIDIA H200 (132 SMs, 139.8 GiB)"
  int devices = 1;         // the host's CUDA devices
};
CudaMemoryNeed cuda_memory_need(const Config& cfg, const Grid& grid, bool ranks = false);
// Device-to-device cudaMemcpy bandwidth, bytes read + written per second,
// median of `repeats` copies of `bytes` (the ceiling benchmarks compare with).
double cuda_copy_bandwidth(std::size_t bytes, int repeats);

}  // namespace sim
