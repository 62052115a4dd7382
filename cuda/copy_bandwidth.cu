// SPDX-License-Identifier: MIT
// The ceiling `sim bench` compares every effective bandwidth with: a
// device-to-device cudaMemcpy, which reads `bytes` and writes `bytes`.
// Each copy is timed alone with a pair of events on its own stream; the
// median of `repeats` is the figure (after two untimed copies, so the
// first-touch and clock ramp stay out).
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "cuda/device.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/cuda_backend.hpp"

namespace sim {

double cuda_copy_bandwidth(size_t bytes, int repeats) {
  if (bytes == 0 || repeats < 1) throw std::invalid_argument("cuda_copy_bandwidth: empty copy");
  (void)cuda::query_device();  // selects the device; throws with a reason when there is none
  cuda::DeviceBuffer<unsigned char> src(bytes, "copy-bandwidth source"), dst(bytes, "copy-bandwidth target");
  cuda::Stream stream;
  // Not zeros: the copy moves real data (a zero page could be special-cased).
  SIM_CUDA_CHECK(cudaMemsetAsync(src.data(), 0x5a, bytes, stream.get()));
  SIM_CUDA_CHECK(cudaMemsetAsync(dst.data(), 0xa5, bytes, stream.get()));
  constexpr int kWarmup = 2;
  for (int k = 0; k < kWarmup; ++k)
    SIM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream.get()));

  std::vector<cuda::Event> start(static_cast<size_t>(repeats)), stop(static_cast<size_t>(repeats));
  for (int k = 0; k < repeats; ++k) {
    start[k].record(stream.get());
    SIM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
    stop[k].record(stream.get());
  }
  stream.synchronize();
  std::vector<double> ms(static_cast<size_t>(repeats));
  for (int k = 0; k < repeats; ++k) {
    float t = 0;
    SIM_CUDA_CHECK(cudaEventElapsedTime(&t, start[k].get(), stop[k].get()));
    ms[k] = t;
  }
  unsigned char last = 0;
  SIM_CUDA_CHECK(cudaMemcpy(&last, dst.data() + bytes - 1, 1, cudaMemcpyDeviceToHost));
  if (last != 0x5a) throw std::runtime_error("cuda_copy_bandwidth: the copy did not arrive");

  std::sort(ms.begin(), ms.end());
  const double median_ms = repeats % 2 == 1 ? ms[repeats / 2] : 0.5 * (ms[repeats / 2 - 1] + ms[repeats / 2]);
  if (median_ms <= 0) throw std::runtime_error("cuda_copy_bandwidth: the copy took no measurable time");
  return 2.0 * static_cast<double>(bytes) / (median_ms * 1e-3);
}

}  // namespace sim
