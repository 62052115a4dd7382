// SPDX-License-Identifier: MIT
// The device the backend runs on, and RAII owners of streams and events.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "cuda/check.hpp"

namespace sim::cuda {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int sm_count = 0;
  size_t total_bytes = 0;
  size_t texture_pitch_alignment = 0;  // bytes; rows of a pitch-2D texture are a multiple of it
  int max_shared_per_block = 0;        // bytes without opt-in
  int cc_major = 0, cc_minor = 0;
};

// Selects the current device and reads its properties; throws
// "no CUDA device available: <reason>" when there is none.
DeviceInfo query_device();

// "NVIDIA H200 (132 SMs, 139.8 GiB)".
std::string describe(const DeviceInfo& d);

// Throws "cuda: <what> needs N bytes of device memory, M bytes free on <device>"
// when `bytes` exceeds what cudaMemGetInfo reports free.
void require_free_memory(size_t bytes, const std::string& what, const DeviceInfo& d);

class Stream {
 public:
  Stream() { SIM_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s_ != nullptr) (void)cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void synchronize() const { SIM_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { SIM_CUDA_CHECK(cudaEventCreate(&e_)); }
  // e.g. cudaEventDisableTiming | cudaEventBlockingSync: a waiting host thread sleeps instead of spinning
  explicit Event(unsigned flags) { SIM_CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags)); }
  ~Event() {
    if (e_ != nullptr) (void)cudaEventDestroy(e_);
  }
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    std::swap(e_, o.e_);
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s) { SIM_CUDA_CHECK(cudaEventRecord(e_, s)); }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace sim::cuda
