// SPDX-License-Identifier: MIT
// Linked instead of the CUDA backend when the build has no CUDA: every entry
// point says so, and no device is ever available.
#include <stdexcept>

#include "cuda/cuda_backend.hpp"

namespace sim {
namespace {
[[noreturn]] void not_built() {
  throw std::runtime_error("this sim was built without CUDA (configure with nvcc on the PATH)");
}
}  // namespace

bool cuda_backend_built() { return false; }
std::unique_ptr<Backend> make_cuda_backend(const Config&, const Grid&, std::shared_ptr<const RankSplit>) { not_built(); }
bool cuda_device_available() { return false; }
bool cuda_ranks_built() { return false; }
CudaMemoryNeed cuda_memory_need(const Config&, const Grid&, bool) { not_built(); }
double cuda_copy_bandwidth(std::size_t, int) { not_built(); }

}  // namespace sim
