// SPDX-License-Identifier: MIT
#include "cuda/snapshot_staging.hpp"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <utility>
#include <vector>

#include "cuda/device.hpp"

namespace sim::cuda {

struct SnapshotStaging::Slot {
  Slot(size_t cells, Layout layout, int64_t capacity)
      : particles(layout, capacity, false), hp(particles.pinned_buffers()) {
    for (DeviceBuffer<real>* f : {&u, &v, &phi, &open}) f->allocate(cells, "snapshot staging");
    counters.allocate(kCounterCount, "snapshot staging");
    for (PinnedBuffer<real>* f : {&hu, &hv, &hphi, &hopen}) f->allocate(cells, "snapshot fields");
    hcounters.allocate(kCounterCount, "snapshot counters");
  }
  DeviceBuffer<real> u, v, phi, open;
  DeviceBuffer<unsigned long long> counters;
  ParticleStore particles;  // one bank, canonical order
  PinnedBuffer<real> hu, hv, hphi, hopen;
  PinnedBuffer<unsigned long long> hcounters;
  PinnedParticles hp;
  Event staged{cudaEventDisableTiming};
  Event done{cudaEventDisableTiming | cudaEventBlockingSync};  // the writer thread sleeps on it
};

struct SnapshotStaging::Pool {
  Pool(const Grid& g, Layout l, int64_t cap, int dev) : cells(g.size()), layout(l), capacity(cap), device(dev) {}

  // A free slot; a new one while fewer than kSlots exist; else waits for one.
  // nullptr when none exists and none can be made.
  std::unique_ptr<Slot> acquire() {
    std::unique_lock<std::mutex> lk(m);
    for (;;) {
      if (!free.empty()) {
        std::unique_ptr<Slot> s = std::move(free.back());
        free.pop_back();
        return s;
      }
      if (made < kSlots && !cannot_make) {
        ++made;
        lk.unlock();
        try {
          return std::make_unique<Slot>(cells, layout, capacity);
        } catch (const std::exception&) {
          lk.lock();
          --made;
          cannot_make = true;  // memory is short: make do with the slots there are
          if (made == 0) return nullptr;
          continue;
        }
      }
      returned.wait(lk);
    }
  }

  // From any thread, once the slot's copies are complete.
  void release(std::unique_ptr<Slot> s) {
    {
      std::lock_guard<std::mutex> lk(m);
      free.push_back(std::move(s));
    }
    returned.notify_one();
  }

  const size_t cells;
  const Layout layout;
  const int64_t capacity;
  const int device;
  Stream copy;
  std::mutex m;
  std::condition_variable returned;
  std::vector<std::unique_ptr<Slot>> free;
  int made = 0;
  bool cannot_make = false;
};

namespace {

class StagedState final : public PendingState {
 public:
  StagedState(std::shared_ptr<SnapshotStaging::Pool> pool, std::unique_ptr<SnapshotStaging::Slot> slot, SimState header)
      : pool_(std::move(pool)), slot_(std::move(slot)), s_(std::move(header)) {}
  ~StagedState() override {
    if (!slot_) return;
    // Never hand back a slot whose transfer may still be running.
    (void)cudaSetDevice(pool_->device);
    if (cudaEventSynchronize(slot_->done.get()) == cudaSuccess) pool_->release(std::move(slot_));
  }
  StagedState(const StagedState&) = delete;
  StagedState& operator=(const StagedState&) = delete;

  SimState take() override {
    SIM_CUDA_CHECK(cudaSetDevice(pool_->device));  // this runs on the writer thread
    SIM_CUDA_CHECK(cudaEventSynchronize(slot_->done.get()));
    SimState s = std::move(s_);
    assign(s.u, slot_->hu);
    assign(s.v, slot_->hv);
    assign(s.phi, slot_->hphi);
    assign(s.open, slot_->hopen);
    slot_->hp.to_host(s.particles);
    s.counters.removed = static_cast<int64_t>(slot_->hcounters[kRemoved]);
    s.counters.recycled = static_cast<int64_t>(slot_->hcounters[kRecycled]);
    pool_->release(std::move(slot_));
    return s;
  }

 private:
  std::shared_ptr<SnapshotStaging::Pool> pool_;
  std::unique_ptr<SnapshotStaging::Slot> slot_;
  SimState s_;
};

}  // namespace

SnapshotStaging::SnapshotStaging(const Grid& g, Layout layout, int64_t capacity, int device)
    : pool_(std::make_shared<Pool>(g, layout, capacity, device)) {}

SnapshotStaging::~SnapshotStaging() = default;

std::unique_ptr<PendingState> SnapshotStaging::begin(SimState& header, const SnapshotSources& src,
                                                     cudaStream_t compute) {
  std::unique_ptr<Slot> slot = pool_->acquire();
  if (!slot) return nullptr;
  const cudaStream_t copy = pool_->copy.get();
  copy_async(slot->u, *src.u, compute);
  copy_async(slot->v, *src.v, compute);
  copy_async(slot->phi, *src.phi, compute);
  copy_async(slot->open, *src.open, compute);
  copy_async(slot->counters, *src.counters, compute);
  src.particles->copy_canonical_to(slot->particles, src.permuted, compute);
  slot->staged.record(compute);
  SIM_CUDA_CHECK(cudaStreamWaitEvent(copy, slot->staged.get(), 0));
  copy_async(slot->hu, slot->u, copy);
  copy_async(slot->hv, slot->v, copy);
  copy_async(slot->hphi, slot->phi, copy);
  copy_async(slot->hopen, slot->open, copy);
  copy_async(slot->hcounters, slot->counters, copy);
  slot->particles.download_async(slot->hp, copy);
  slot->done.record(copy);
  return std::make_unique<StagedState>(pool_, std::move(slot), std::move(header));
}

}  // namespace sim::cuda
