// SPDX-License-Identifier: MIT
// Particles on the device in the run's layout (AoS records or one array per
// field), plus an optional second bank that sorting gathers into and that
// downloads scatter into to restore the canonical slot order.
#pragma once
#include <cstdint>

#include "cuda/device_buffer.hpp"
#include "cuda/kernels.hpp"
#include "sim/model/particles.hpp"

namespace sim::cuda {

// Page-locked host copies of one bank, in the store's layout: the target of
// the asynchronous snapshot downloads.
struct PinnedParticles {
  PinnedBuffer<Particle> aos;
#define SIM_FIELD(T, f) PinnedBuffer<T> f;
  SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
  // The layout-independent host form; only after the copy into it finished.
  void to_host(HostParticles& h) const;
};

class ParticleStore {
 public:
  // Bytes the store will allocate: capacity slots per bank.
  static size_t bytes(Layout layout, int64_t capacity, bool two_banks);

  ParticleStore(Layout layout, int64_t capacity, bool two_banks);

  DeviceParticles current() { return view(cur_); }
  DeviceParticles spare() { return view(1 - cur_); }
  void swap() { cur_ = 1 - cur_; }  // after a gather into spare()
  int bank() const { return cur_; }  // which bank is current()
  int64_t capacity() const { return capacity_; }

  // Both synchronise the stream (the host vectors are pageable). `permuted`:
  // the slots may be out of canonical order (a sort ran since upload).
  void upload(const HostParticles& h, cudaStream_t s);
  void download(HostParticles& h, bool permuted, cudaStream_t s);

  // Snapshot staging, neither synchronising: the current bank in canonical
  // slot order into `dst` (one bank, same layout and capacity); and the
  // current bank into `h` (from pinned_buffers()) on a copy stream.
  void copy_canonical_to(ParticleStore& dst, bool permuted, cudaStream_t s);
  PinnedParticles pinned_buffers() const;
  void download_async(PinnedParticles& h, cudaStream_t s);

 private:
  struct Bank {
    DeviceBuffer<Particle> aos;
#define SIM_FIELD(T, f) DeviceBuffer<T> f;
    SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
  };
  void allocate(Bank& b);
  DeviceParticles view(int bank);

  Layout layout_;
  int64_t capacity_;
  bool two_banks_;
  Bank banks_[2];
  int cur_ = 0;
};

}  // namespace sim::cuda
