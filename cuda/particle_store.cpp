// SPDX-License-Identifier: MIT
#include "cuda/particle_store.hpp"

#include <stdexcept>
#include <vector>

namespace sim::cuda {

size_t ParticleStore::bytes(Layout, int64_t capacity, bool two_banks) {
  // AoS records and the SoA fields are both 32 bytes a particle.
  return static_cast<size_t>(capacity) * sizeof(Particle) * (two_banks ? 2 : 1);
}

ParticleStore::ParticleStore(Layout layout, int64_t capacity, bool two_banks)
    : layout_(layout), capacity_(capacity), two_banks_(two_banks) {
  allocate(banks_[0]);
  if (two_banks_) allocate(banks_[1]);
}

void ParticleStore::allocate(Bank& b) {
  const size_t n = static_cast<size_t>(capacity_);
  if (layout_ == Layout::aos) {
    b.aos.allocate(n, "particles (AoS)");
    return;
  }
  for_each_particle_field(b, [n](auto& f) { f.allocate(n, "particles (SoA)"); });
}

DeviceParticles ParticleStore::view(int bank) {
  Bank& b = banks_[bank];
  DeviceParticles p;
  p.layout = layout_;
  p.aos = ParticlesAoSView{b.aos.data(), layout_ == Layout::aos ? capacity_ : 0};
#define SIM_FIELD(T, f) p.soa.p##f = b.f.data();
  SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
  p.soa.n = layout_ == Layout::soa ? capacity_ : 0;
  return p;
}

namespace {
// The per-field buffers and the AoS records of two banks or pinned copies.
template <class A, class B, class F>
void zip_fields(A& a, B& b, F f) {
  f(a.aos, b.aos);
  zip_particle_fields(a, b, f);
}
}  // namespace

void ParticleStore::upload(const HostParticles& h, cudaStream_t s) {
  if (static_cast<int64_t>(h.size()) != capacity_)
    throw std::runtime_error("cuda: state has " + std::to_string(h.size()) + " particle slots, the backend " +
                             std::to_string(capacity_));
  cur_ = 0;
  const size_t n = h.size();
  Bank& b = banks_[0];
  if (layout_ == Layout::aos) {
    const std::vector<Particle> a = to_aos(h);
    b.aos.upload(a.data(), n, s);
    SIM_CUDA_CHECK(cudaStreamSynchronize(s));
    return;
  }
  zip_particle_fields(b, h, [&](auto& dev, const auto& host) { dev.upload(host.data(), n, s); });
  SIM_CUDA_CHECK(cudaStreamSynchronize(s));
}

void ParticleStore::download(HostParticles& h, bool permuted, cudaStream_t s) {
  int bank = cur_;
  if (permuted) {
    if (!two_banks_) throw std::logic_error("cuda: permuted particles without a spare bank");
    scatter_to_canonical(s, current(), spare());
    bank = 1 - cur_;
  }
  const size_t n = static_cast<size_t>(capacity_);
  const Bank& b = banks_[bank];
  if (layout_ == Layout::aos) {
    std::vector<Particle> a(n);
    b.aos.download(a.data(), n, s);
    SIM_CUDA_CHECK(cudaStreamSynchronize(s));
    from_aos(a, h);
    return;
  }
  h.resize(n);
  zip_particle_fields(h, b, [&](auto& host, const auto& dev) { dev.download(host.data(), n, s); });
  SIM_CUDA_CHECK(cudaStreamSynchronize(s));
}



void ParticleStore::copy_canonical_to(ParticleStore& dst, bool permuted, cudaStream_t s) {
  if (dst.layout_ != layout_ || dst.capacity_ != capacity_) throw std::logic_error("cuda: staging store of another shape");
  dst.cur_ = 0;
  if (permuted) {
    if (!two_banks_) throw std::logic_error("cuda: permuted particles without a spare bank");
    scatter_to_canonical(s, current(), dst.current());
    return;
  }
  zip_fields(dst.banks_[0], banks_[cur_], [s](auto& to, const auto& from) { copy_async(to, from, s); });
}

PinnedParticles ParticleStore::pinned_buffers() const {
  const size_t n = static_cast<size_t>(capacity_);
  PinnedParticles h;
  if (layout_ == Layout::aos) {
    h.aos.allocate(n, "snapshot particles");
    return h;
  }
  for_each_particle_field(h, [n](auto& f) { f.allocate(n, "snapshot particles"); });
  return h;
}

void ParticleStore::download_async(PinnedParticles& h, cudaStream_t s) {
  zip_fields(h, banks_[cur_], [s](auto& to, const auto& from) { copy_async(to, from, s); });
}

void PinnedParticles::to_host(HostParticles& h) const {
  if (aos.size() > 0) {
    h.resize(aos.size());
    for (size_t i = 0; i < aos.size(); ++i) h.store(i, aos.data()[i]);
    return;
  }
  zip_particle_fields(h, *this, [](auto& host, const auto& pinned) { assign(host, pinned); });
}

}  // namespace sim::cuda
