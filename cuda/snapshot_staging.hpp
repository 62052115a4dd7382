// SPDX-License-Identifier: MIT
// Snapshots from the device without stalling the stepping. begin() queues,
// on the compute stream, a device-to-device copy of the fields, counters and
// particles (in canonical slot order) into a staging slot, then, on a copy
// stream that waits for it, the copy of the slot into page-locked host
// memory. It returns at once: the compute stream is held up only by the
// device-to-device copies (at device bandwidth), and the transfer to the
// host overlaps the next steps. The writer thread's PendingState::take()
// waits for the transfer and converts the pinned copy into a SimState.
//
// There are at most kSlots slots, made on first use; begin() waits for one
// to come back when all are in flight. If not even the first slot can be
// allocated (device or page-locked memory short), begin() returns nullptr
// and the caller downloads synchronously instead.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "cuda/device_buffer.hpp"
#include "cuda/particle_store.hpp"
#include "sim/model/backend.hpp"
#include "sim/model/grid.hpp"

namespace sim::cuda {

// What a snapshot copies: the backend's buffers as of the call.
struct SnapshotSources {
  const DeviceBuffer<real>* u;
  const DeviceBuffer<real>* v;
  const DeviceBuffer<real>* phi;
  const DeviceBuffer<real>* open;
  const DeviceBuffer<unsigned long long>* counters;
  ParticleStore* particles;
  bool permuted;  // the particle slots are out of canonical order
};

class SnapshotStaging {
 public:
  static constexpr int kSlots = 2;  // SnapshotThread::kMaxPending: one written, one queued

  SnapshotStaging(const Grid& g, Layout layout, int64_t capacity, int device);
  ~SnapshotStaging();
  SnapshotStaging(const SnapshotStaging&) = delete;
  SnapshotStaging& operator=(const SnapshotStaging&) = delete;

  // Starts the copy and moves `header` into the result; nullptr (header
  // untouched) when no staging memory could be had.
  std::unique_ptr<PendingState> begin(SimState& header, const SnapshotSources& src, cudaStream_t compute);

  struct Slot;
  struct Pool;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace sim::cuda
