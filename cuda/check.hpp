// SPDX-License-Identifier: MIT
// Every CUDA runtime call and every kernel launch is checked; a failure
// becomes a std::runtime_error naming the call site and the CUDA error.
#pragma once
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace sim::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line) {
  // A failed call leaves its error as the thread's last error: cleared, so
  // the next launch check does not report it again (a sticky error stays).
  (void)cudaGetLastError();
  throw std::runtime_error(std::string("cuda: ") + file + ":" + std::to_string(line) + ": " + what + ": " +
                           cudaGetErrorString(err));
}

inline void check_cuda(cudaError_t err, const char* what, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, what, file, line);
}

}  // namespace sim::cuda

#define SIM_CUDA_CHECK(call) ::sim::cuda::check_cuda((call), #call, __FILE__, __LINE__)
// After a <<<...>>> launch: configuration errors surface here, faults at the next sync.
#define SIM_CUDA_CHECK_LAUNCH(kernel) ::sim::cuda::check_cuda(cudaGetLastError(), "launch " kernel, __FILE__, __LINE__)
