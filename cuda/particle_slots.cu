// SPDX-License-Identifier: MIT
// The particle slots' kernels that read no constants: injection into
// the slot of an id, and the migration of particles between the ranks' slabs.
#include "sim/ranks/decomposition.hpp"
#include "cuda/access.cuh"
#include "cuda/check.hpp"
#include "cuda/kernels.hpp"
#include "cuda/particle_launch.cuh"
#include "sim/model/coupling_physics.hpp"

namespace sim::cuda {
namespace {

// The slot whose id % capacity == r takes the last new id k == r (mod
// capacity) in [first, first + count); each earlier one, and the old
// particle if it was alive, counts as recycled (the CPU's sequential rule).
template <class View>
__device__ void inject_slot(View p, int64_t s, uint64_t first, int64_t count, uint64_t seed, const InjectionC& inj,
                            unsigned long long* __restrict__ counters, bool count_repeats = true) {
  const uint64_t cap = static_cast<uint64_t>(p.size());
  const uint64_t r = p.id(s) % cap;
  const uint64_t off = (r + cap - first % cap) % cap;  // first k >= first with k % cap == r is first + off
  if (off >= static_cast<uint64_t>(count)) return;
  const uint64_t m = (static_cast<uint64_t>(count) - 1 - off) / cap + 1;  // ids of this residue
  // over ranks the slot is alive on one rank at most; the repeats are counted on rank 0 alone
  const uint64_t recycled = (p.alive(s) ? 1u : 0u) + (count_repeats ? m - 1 : 0u);
  if (recycled > 0) atomicAdd(counters + kRecycled, static_cast<unsigned long long>(recycled));
  p.store(s, injected_particle(seed, first + off + (m - 1) * cap, inj));
}

template <class View>
__global__ void inject_kernel(View p, uint64_t first, int64_t count, uint64_t seed, InjectionC inj,
                              unsigned long long* __restrict__ counters, bool count_repeats) {
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s < p.size()) inject_slot(p, s, first, count, seed, inj, counters, count_repeats);
}

// Over ranks, after the particle step and the injection: a particle whose
// position another rank's slab holds leaves (copied into `out`, dead here),
// unless this step injected it (every rank injected it; it dies on all but
// its owner). A non-finite position stays for the watchdog, unless just
// injected (then it dies everywhere, as on the CPU).
template <class View>
__global__ void sort_out_kernel(View p, SlabRowsC b, uint64_t first, int64_t count, Particle* __restrict__ out,
                                unsigned int* __restrict__ n_out) {
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= p.size() || p.alive(s) == 0) return;
  const double x = p.x(s), y = p.y(s);
  bool injected = false;
  if (count > 0) {
    const uint64_t cap = static_cast<uint64_t>(p.size());
    const uint64_t off = (p.id(s) % cap + cap - first % cap) % cap;
    injected = off < static_cast<uint64_t>(count);
  }
  if (isfinite(x) && isfinite(y)) {
    const int row = cell_along(y, b.ly, b.ny, b.periodic != 0);
    if (row >= b.row0 && row < b.row_end) return;
  } else if (!injected) {
    return;
  }
  if (!injected) out[atomicAdd(n_out, 1u)] = p.load(s);
  p.alive(s) = 0;
}

// Arrivals into their slots (id % capacity), at the slot's position when
// the store is sorted (`where`), else at the slot itself.
template <class View>
__global__ void store_arrivals_kernel(View p, const Particle* __restrict__ in, int n, const uint32_t* __restrict__ where) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= n) return;
  const uint64_t slot = in[k].id % static_cast<uint64_t>(p.size());
  p.store(where != nullptr ? static_cast<int64_t>(where[slot]) : static_cast<int64_t>(slot), in[k]);
}

template <class View>
__global__ void slot_positions_kernel(View p, uint32_t* __restrict__ where) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < p.size()) where[p.id(k) % static_cast<uint64_t>(p.size())] = static_cast<uint32_t>(k);
}

// The ids and count the step's dt drew on the device (choose_dt_on_device).
template <class View>
__global__ void inject_drawn_kernel(View p, const DeviceStepState* __restrict__ st, uint64_t seed, InjectionC inj,
                                    unsigned long long* __restrict__ counters) {
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t count = st->inject_count;
  if (s < p.size() && count > 0) inject_slot(p, s, st->inject_first, count, seed, inj, counters);
}

}  // namespace

void inject_particles(const Exec& e, const DeviceParticles& p, uint64_t first_id, int64_t count, uint64_t seed,
                      const InjectionC& inj, unsigned long long* counters, bool count_repeats) {
  if (count <= 0 || p.size() == 0) return;
  with_view(p, [&](auto view) {
    inject_kernel<<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(view, first_id, count, seed, inj, counters,
                                                                            count_repeats);
    SIM_CUDA_CHECK_LAUNCH("inject_kernel");
  });
}

void sort_out_particles(const Exec& e, const DeviceParticles& p, const SlabRowsC& b, uint64_t first_id, int64_t count,
                        Particle* out, unsigned int* n_out) {
  SIM_CUDA_CHECK(cudaMemsetAsync(n_out, 0, sizeof *n_out, e.stream));
  if (p.size() == 0) return;
  with_view(p, [&](auto view) {
    sort_out_kernel<<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(view, b, first_id, count, out, n_out);
    SIM_CUDA_CHECK_LAUNCH("sort_out_kernel");
  });
}

void store_arrivals(const Exec& e, const DeviceParticles& p, const Particle* in, int n, const uint32_t* where) {
  if (n <= 0 || p.size() == 0) return;
  with_view(p, [&](auto view) {
    store_arrivals_kernel<<<(n + kParticleBlock - 1) / kParticleBlock, kParticleBlock, 0, e.stream>>>(view, in, n,
                                                                                                     where);
    SIM_CUDA_CHECK_LAUNCH("store_arrivals_kernel");
  });
}

void slot_positions(const Exec& e, const DeviceParticles& p, uint32_t* where) {
  if (p.size() == 0) return;
  with_view(p, [&](auto view) {
    slot_positions_kernel<<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(view, where);
    SIM_CUDA_CHECK_LAUNCH("slot_positions_kernel");
  });
}

void inject_particles(const Exec& e, const DeviceParticles& p, const DeviceStepState* state, uint64_t seed,
                      const InjectionC& inj, unsigned long long* counters) {
  if (p.size() == 0) return;
  with_view(p, [&](auto view) {
    inject_drawn_kernel<<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(view, state, seed, inj, counters);
    SIM_CUDA_CHECK_LAUNCH("inject_drawn_kernel");
  });
}

}  // namespace sim::cuda
