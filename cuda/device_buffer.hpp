// SPDX-License-Identifier: MIT
// Owners of device and pinned host memory. Nothing else in the backend
// calls cudaMalloc/cudaFree: a failed allocation reports the bytes asked
// for and the bytes free, and memory is released on every exit path.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda/check.hpp"

namespace sim::cuda {

// "1.50 GiB (1610612736 bytes)": what the out-of-memory messages print.
std::string format_bytes(size_t bytes);

// Throws when cudaMalloc failed for lack of memory: "... needs N bytes, M bytes free".
[[noreturn]] void throw_out_of_memory(size_t bytes, const char* what);

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n, const char* what = "device buffer") { allocate(n, what); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }

  void allocate(size_t n, const char* what = "device buffer") {
    release();
    if (n == 0) return;
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, n * sizeof(T));
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky: clear it before reporting
      throw_out_of_memory(n * sizeof(T), what);
    }
    check_cuda(err, "cudaMalloc", __FILE__, __LINE__);
    p_ = static_cast<T*>(p);
    n_ = n;
  }
  // Keeps the contents when already large enough (CUB temporary storage).
  void reserve(size_t n, const char* what = "workspace") {
    if (n > n_) allocate(n, what);
  }

  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }
  size_t bytes() const { return n_ * sizeof(T); }

  // Pageable host memory: call cudaStreamSynchronize before reusing it.
  void upload(const T* src, size_t n, cudaStream_t s) {
    if (n > 0) SIM_CUDA_CHECK(cudaMemcpyAsync(p_, src, n * sizeof(T), cudaMemcpyHostToDevice, s));
  }
  void download(T* dst, size_t n, cudaStream_t s) const {
    if (n > 0) SIM_CUDA_CHECK(cudaMemcpyAsync(dst, p_, n * sizeof(T), cudaMemcpyDeviceToHost, s));
  }
  void zero(cudaStream_t s) {
    if (n_ > 0) SIM_CUDA_CHECK(cudaMemsetAsync(p_, 0, n_ * sizeof(T), s));
  }

 private:
  void release() noexcept {
    if (p_ != nullptr) (void)cudaFree(p_);  // no throw from a destructor path
    p_ = nullptr;
    n_ = 0;
  }
  T* p_ = nullptr;
  size_t n_ = 0;
};

// Page-locked host memory: the target of the scalar read-backs in the step
// loop and of the snapshot copies (cudaMemcpyAsync from it or into it runs
// beside the host: no synchronisation until the data is used).
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t n, const char* what = "pinned host buffer") { allocate(n, what); }
  ~PinnedBuffer() { release(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }

  void allocate(size_t n, const char* what = "pinned host buffer") {
    release();
    if (n == 0) return;
    void* p = nullptr;
    const cudaError_t err = cudaMallocHost(&p, n * sizeof(T));
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw std::runtime_error("cuda: " + std::string(what) + " needs " + format_bytes(n * sizeof(T)) +
                               " of page-locked host memory, which the system refused");
    }
    check_cuda(err, "cudaMallocHost", __FILE__, __LINE__);
    p_ = static_cast<T*>(p);
    n_ = n;
  }

  T* data() { return p_; }
  const T* data() const { return p_; }
  T& operator[](size_t i) { return p_[i]; }
  size_t size() const { return n_; }

 private:
  void release() noexcept {
    if (p_ != nullptr) (void)cudaFreeHost(p_);
    p_ = nullptr;
    n_ = 0;
  }
  T* p_ = nullptr;
  size_t n_ = 0;
};

// Stream-ordered copies of a whole buffer, neither synchronising: device
// to device, and device to page-locked host memory of at least that size.
template <class T>
void copy_async(DeviceBuffer<T>& dst, const DeviceBuffer<T>& src, cudaStream_t s) {
  if (src.size() > 0) SIM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.bytes(), cudaMemcpyDeviceToDevice, s));
}
template <class T>
void copy_async(PinnedBuffer<T>& dst, const DeviceBuffer<T>& src, cudaStream_t s) {
  if (src.size() > 0) SIM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.bytes(), cudaMemcpyDeviceToHost, s));
}

// A page-locked copy into host vector storage (after its copy finished).
template <class T>
void assign(std::vector<T>& dst, const PinnedBuffer<T>& src) {
  dst.assign(src.data(), src.data() + src.size());
}

}  // namespace sim::cuda
