// SPDX-License-Identifier: MIT
// The CUDA backend's stepping without host round trips (DeviceStepping,
// sim/model/backend.hpp): one GPU alone; the step's scalars stay on the
// device, and recorded segments replay as graphs.
#include "cuda/cuda_backend_impl.hpp"

namespace sim::cuda {

void CudaBackend::compute_rhs_on_device(int solve) {
  cuda::compute_rhs(exec_, so_, u_.data(), v_.data(), open_.data(), rhs_.data(), partials_.data());
  sum_to_device(exec_, scratch(), partials_.data(), static_cast<int>(partials_.size()),
                solve_field<double>(offsetof(StepRecord, rhs2), solve));
  SIM_CUDA_CHECK(cudaMemcpyAsync(solve_field<uint64_t>(offsetof(StepRecord, nonfinite), solve),
                                 counters_.data() + kNonFinite, sizeof(uint64_t), cudaMemcpyDeviceToDevice,
                                 exec_.stream));
}

void CudaBackend::poisson_residual_on_device(int solve) {
  if (!fft_) throw std::logic_error("cuda: the residual on the device is the transform solve's");
  fft_->residual_sum_to(rhs_.data(), x_.data(), open_.data(), solve_field<double>(offsetof(StepRecord, residual2), solve));
}

void CudaBackend::pcg_start_on_device(int solve, double tolerance, int max_iterations) {
  mg().start_on_device(rhs_.data(), open_.data(), solve_field<double>(offsetof(StepRecord, rhs2), solve), tolerance,
                       max_iterations, solve_field<int64_t>(offsetof(StepRecord, iterations), solve),
                       solve_field<double>(offsetof(StepRecord, relative), solve));
}

void CudaBackend::pcg_step_on_device(int solve, double tolerance, int max_iterations) {
  mg().step_on_device(tolerance, max_iterations, solve_field<int64_t>(offsetof(StepRecord, iterations), solve),
                      solve_field<double>(offsetof(StepRecord, relative), solve));
}

// The multigrid loop: its condition from the PCG state.
void CudaBackend::repeat_on_device(const std::function<void()>& body) {
  repeat_while([this](cudaGraphConditionalHandle h, bool) { mg().load_condition(h); }, body);
}

// A while node in the segment being recorded: its condition loaded (by
// `load`, from a loop state on the device) now and at the end of every
// pass; the body recorded from a second stream into the node's graph.
void CudaBackend::repeat_while(const std::function<void(cudaGraphConditionalHandle, bool)>& load,
                               const std::function<void()>& body) {
  const cudaStream_t s = exec_.stream;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  SIM_CUDA_CHECK(cudaStreamGetCaptureInfo(s, &status, nullptr, &graph));
  if (status != cudaStreamCaptureStatusActive)
    throw std::logic_error("cuda: repeat_on_device outside a recorded segment");
  cudaGraphConditionalHandle h{};
  SIM_CUDA_CHECK(cudaGraphConditionalHandleCreate(&h, graph, 0, cudaGraphCondAssignDefault));
  load(h, false);
  const cudaGraphNode_t* deps = nullptr;
  size_t n = 0;
  SIM_CUDA_CHECK(cudaStreamGetCaptureInfo(s, &status, nullptr, &graph, &deps, nullptr, &n));
  cudaGraphNodeParams cp{};
  cp.type = cudaGraphNodeTypeConditional;
  cp.conditional.handle = h;
  cp.conditional.type = cudaGraphCondTypeWhile;
  cp.conditional.size = 1;
  cudaGraphNode_t node = nullptr;
  SIM_CUDA_CHECK(cudaGraphAddNode(&node, graph, deps, nullptr, n, &cp));
  SIM_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(s, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
  cudaGraph_t body_graph = cp.conditional.phGraph_out[0];
  const cudaStream_t b = body_stream_.get();
  SIM_CUDA_CHECK(cudaStreamBeginCaptureToGraph(b, body_graph, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
  exec_.stream = b;
  if (poisson_) poisson_->set_stream(b);
  auto restore = [&] {
    exec_.stream = s;
    if (poisson_) poisson_->set_stream(s);
  };
  try {
    body();
    load(h, true);
  } catch (...) {
    restore();
    (void)cudaStreamEndCapture(b, &body_graph);
    throw;
  }
  restore();
  SIM_CUDA_CHECK(cudaStreamEndCapture(b, &body_graph));
}

// solve_viscous with its scalars on the device: g = gamma dt nu from the
// device's dt, the start pass's norms summed on the device, the plan
// (viscous_plan) made there, the iterations a while node whose body runs
// two of them (the first from iterate 0 into 1, the second back, each
// skipped past the plan), so the buffers of every launch are fixed while
// the newest alternates with the device counter; then the finish pass, the
// newest iterate copied into f, and the record's iterations and relative
// residual. Without viscosity (or gamma 0) nothing runs: x = b, the record
// keeps the zeros choose_dt_on_device wrote.
void CudaBackend::viscous_solve_on_device(VelocityField f, real gamma, int solve, double tolerance) {
  if (solve < 0 || solve >= kViscousSolves) throw std::logic_error("cuda: viscous solve index out of range");
  if (!(k_.nu > real(0)) || !(gamma > real(0))) return;
  allocate_viscous_work();
  ViscousDeviceState* st = viscous_state_.data();
  char* const bytes_of_st = reinterpret_cast<char*>(st);
  double* const r2 = reinterpret_cast<double*>(bytes_of_st + offsetof(ViscousDeviceState, r2));
  double* const b2 = reinterpret_cast<double*>(bytes_of_st + offsetof(ViscousDeviceState, b2));
  const HelmholtzFields h = helmholtz_fields(f);
  const int blocks = helmholtz_blocks(exec_, so_);
  const auto [u, v] = velocity(f);
  const size_t bytes = g_.size() * sizeof(real);
  cuda::viscous_begin(exec_.stream, st, gamma, k_dev_.data());
  for (int s = 0; s < 2; ++s) {
    SIM_CUDA_CHECK(cudaMemcpyAsync(hu_[s].data(), u, bytes, cudaMemcpyDeviceToDevice, exec_.stream));
    SIM_CUDA_CHECK(cudaMemcpyAsync(hv_[s].data(), v, bytes, cudaMemcpyDeviceToDevice, exec_.stream));
  }
  HelmholtzPass start;
  start.st = st;
  start.newest = 0;
  cuda::helmholtz_pass(exec_, so_, h, start, viscous_partials(0), viscous_partials(1));
  sum_to_device(exec_, scratch(), viscous_partials(0), blocks, r2);
  sum_to_device(exec_, scratch(), viscous_partials(1), blocks, b2);
  if (viscous_fft_) {
    // The transform solve: one correction of iterate 1 (= b), the plan's
    // one "iteration", so the finish pass and the copy take iterate 1.
    cuda::viscous_transform_plan(exec_.stream, st);
    const real* g_dev = reinterpret_cast<const real*>(bytes_of_st + offsetof(ViscousDeviceState, g));
    viscous_fft_->set_stream(exec_.stream);
    viscous_fft_->correct(0, u, hu_[1].data(), 0, g_dev);
    viscous_fft_->correct(1, v, hv_[1].data(), 0, g_dev);
    velocity_halo(hu_[1].data(), hv_[1].data());
  } else {
    cuda::viscous_plan(exec_.stream, st, tolerance, k_dev_.data());
    repeat_while(
      [&](cudaGraphConditionalHandle c, bool end) { cuda::viscous_condition(exec_.stream, c, st, end ? 2 : 0); },
      [&] {
        for (int second = 0; second < 2; ++second) {
          HelmholtzPass p;
          p.st = st;
          p.iterate = true;
          p.offset = second;
          cuda::helmholtz_pass(exec_, so_, h, p, nullptr, nullptr);
          velocity_halo(hu_[1 - second].data(), hv_[1 - second].data());  // iteration it + second wrote 1 - second
        }
      });
  }
  HelmholtzPass finish;
  finish.st = st;
  finish.newest = -1;  // after the plan: plan.iterations % 2
  cuda::helmholtz_pass(exec_, so_, h, finish, viscous_partials(0), nullptr);
  sum_to_device(exec_, scratch(), viscous_partials(0), blocks, r2);
  cuda::copy_newest_iterate(exec_.stream, h, st, u, v, g_.size());
  cuda::viscous_record(exec_.stream, st, solve_field<int64_t>(offsetof(StepRecord, viscous_iterations), solve),
                       solve_field<double>(offsetof(StepRecord, viscous_relative), solve));
}

void CudaBackend::start_device_clock(const DeviceClock& clock, const DtRule& rule) {
  rule_ = rule;
  if (step_state_.size() == 0) step_state_.allocate(1, "device step state");
  DeviceStepState init{};
  init.clock = clock;
  step_state_.upload(&init, 1, exec_.stream);
  if (ring_.size() == 0) {
    ring_.allocate(kRing, "step records");
    ring_events_.clear();
    for (int k = 0; k < kRing; ++k) ring_events_.emplace_back(cudaEventDisableTiming | cudaEventBlockingSync);
  }
  head_ = tail_ = 0;
  stream_.synchronize();  // before `init` goes
  graphs_ = true;
}

void CudaBackend::choose_dt_on_device() {
  if (rule_.fixed_dt <= 0) velocity_rate_on_device(exec_, scratch(), u_.data(), v_.data(), step_state());
  cuda::choose_dt_on_device(exec_, rule_, step_state(), k_dev_.data());
}

void CudaBackend::scale_dt_on_device(real factor) {
  cuda::scale_dt_on_device(exec_, factor, step_state(), k_dev_.data());
}

void CudaBackend::close_record() {
  if (head_ - tail_ >= kRing) throw std::logic_error("cuda: more step records in flight than the ring holds");
  const int slot = static_cast<int>(head_ % kRing);
  SIM_CUDA_CHECK(cudaMemcpyAsync(ring_.data() + slot, record_field<StepRecord>(0), sizeof(StepRecord),
                                 cudaMemcpyDeviceToHost, exec_.stream));
  ring_events_[slot].record(exec_.stream);
  ++head_;
}

bool CudaBackend::take_record(StepRecord& r, bool wait) {
  if (tail_ == head_) return false;
  const int slot = static_cast<int>(tail_ % kRing);
  const cudaEvent_t ev = ring_events_[slot].get();
  if (wait) {
    SIM_CUDA_CHECK(cudaEventSynchronize(ev));
  } else {
    const cudaError_t q = cudaEventQuery(ev);
    if (q == cudaErrorNotReady) return false;
    SIM_CUDA_CHECK(q);
  }
  r = ring_.data()[slot];
  ++tail_;
  return true;
}

// Recorded once per key and particle bank (the sort by cell swaps the
// banks). A segment inside one being recorded is part of it. The first
// launch after recording times what the timer logged while recording;
// each later one points the graph's timer nodes at new pairs.
void CudaBackend::segment(int key, const std::function<void()>& ops) {
  if (!graphs_ || recording_) {
    ops();
    return;
  }
  const std::pair<int, int> k{key, store_.bank()};
  auto it = graphs_by_key_.find(k);
  if (it == graphs_by_key_.end()) {
    Recorded r;
    recording_ = true;
    try {
      r.graph = GraphExec::record(exec_.stream, ops);
    } catch (...) {
      recording_ = false;
      (void)timer_.take_recorded();
      throw;
    }
    recording_ = false;
    r.timer_nodes = timer_.take_recorded();
    r.graph.launch(exec_.stream);
    graphs_by_key_.emplace(k, std::move(r));
    return;
  }
  timer_.replay(it->second.graph.get(), it->second.timer_nodes);
  it->second.graph.launch(exec_.stream);
}

}  // namespace sim::cuda
