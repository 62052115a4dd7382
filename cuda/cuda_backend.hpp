// The CUDA backend's entry points, in plain C++. A build without CUDA links
// cuda/stub/cuda_stub.cpp instead, which says the backend was not built, so
// nothing above this header needs an #if.
#pragma once
#include <cstddef>
#include <memory>

#include "sim/backend.hpp"

namespace sim {

// Whether this build contains the CUDA backend (false: the stub is linked).
bool cuda_backend_built();
// Throws std::runtime_error("no CUDA device available: <reason>") without a
// usable device, and an out-of-memory message (bytes needed, bytes free).
std::unique_ptr<Backend> make_cuda_backend(const Config& cfg, const Grid& grid);
bool cuda_device_available();
// Device-to-device cudaMemcpy bandwidth, bytes read + written per second,
// median of `repeats` copies of `bytes` (the ceiling benchmarks compare with).
double cuda_copy_bandwidth(std::size_t bytes, int repeats);

}  // namespace sim
