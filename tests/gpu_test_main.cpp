// SPDX-License-Identifier: MIT
// Runner of the GPU suites. Without a usable CUDA device every test is
// skipped: one line says so, and exit code 77 makes CTest report "Skipped".
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "cuda/cuda_backend.hpp"

namespace {
constexpr int kSkipped = 77;

bool device_present() {
  return sim::cuda_device_available();
}
}  // namespace

int main(int argc, char** argv) {
  if (!device_present()) {
    // the registry of this translation unit's doctest implementation
    const size_t n = doctest::detail::getRegisteredTests().size();
    std::printf("sim_gpu_tests: no CUDA device: all GPU tests skipped\n");
    std::printf("0 passed, 0 failed, %zu skipped\n", n);
    return kSkipped;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
