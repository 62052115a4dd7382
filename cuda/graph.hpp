// SPDX-License-Identifier: MIT
// A recorded sequence of launches (a CUDA graph), replayed on a stream.
// record() runs `ops` once under stream capture: the launches it makes on
// the stream are recorded, not run; launch() runs the recording. Relaxed
// capture, so a workspace that grows during the recording is allocated
// then (cudaMalloc is not recorded).
#pragma once
#include <cuda_runtime_api.h>

#include <functional>
#include <utility>

#include "cuda/check.hpp"

namespace sim::cuda {

class GraphExec {
 public:
  GraphExec() = default;
  ~GraphExec() {
    if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
    if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
  }
  GraphExec(GraphExec&& o) noexcept
      : graph_(std::exchange(o.graph_, nullptr)), exec_(std::exchange(o.exec_, nullptr)) {}
  GraphExec& operator=(GraphExec&& o) noexcept {
    std::swap(graph_, o.graph_);
    std::swap(exec_, o.exec_);
    return *this;
  }
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;

  static GraphExec record(cudaStream_t s, const std::function<void()>& ops) {
    SIM_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    cudaGraph_t g = nullptr;
    try {
      ops();
    } catch (...) {
      // ends the capture so the stream is usable again; the error is ops'
      if (cudaStreamEndCapture(s, &g) == cudaSuccess && g != nullptr) (void)cudaGraphDestroy(g);
      throw;
    }
    SIM_CUDA_CHECK(cudaStreamEndCapture(s, &g));
    GraphExec x;
    x.graph_ = g;  // kept: its nodes name what a launch may change (EventTimer::replay)
    SIM_CUDA_CHECK(cudaGraphInstantiate(&x.exec_, g, 0));
    return x;
  }

  void launch(cudaStream_t s) const { SIM_CUDA_CHECK(cudaGraphLaunch(exec_, s)); }
  cudaGraphExec_t get() const { return exec_; }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace sim::cuda
