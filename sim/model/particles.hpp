// SPDX-License-Identifier: MIT
// Particle storage layouts and the views kernels and CPU loops use.
// AoS and SoA expose the same accessors, so a templated loop runs on either;
// the run-time --layout switch picks the instantiation once.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/model/types.hpp"

namespace sim {

// X(type, name) for every per-particle field, in record order: the one list
// every layout, buffer set and copy below is generated from.
#define SIM_PARTICLE_FIELDS(X)                                                \
  X(real, x) X(real, y)   /* position [m] */                                  \
  X(real, vx) X(real, vy) /* velocity [m/s] */                                \
  X(real, d)              /* diameter [m] */                                  \
  X(uint32_t, alive)      /* 1 in the domain, 0 removed (outflow) or never filled */ \
  X(uint64_t, id)         /* stable identity (injection order) */

// One particle, 32 bytes: what an AoS code streams per particle (the 64-bit
// id last, so the record has no padding).
struct Particle {
#define SIM_FIELD(T, f) T f;
  SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
};
static_assert(sizeof(Particle) == 32, "Particle is 32 bytes");

// f(a.x, b.x), f(a.y, b.y), ... for two objects with one member per field
// (host vectors, device buffers, pinned copies, particles).
template <class A, class B, class F>
void zip_particle_fields(A& a, B& b, F&& f) {
#define SIM_FIELD(T, n) f(a.n, b.n);
  SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
}

// f(a.x), f(a.y), ... for an object with one member per field.
template <class A, class F>
void for_each_particle_field(A& a, F&& f) {
#define SIM_FIELD(T, n) f(a.n);
  SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
}

struct ParticlesAoSView {
  Particle* p = nullptr;
  int64_t n = 0;
  SIM_HD int64_t size() const { return n; }
#define SIM_FIELD(T, f) \
  SIM_HD T& f(int64_t i) const { return p[i].f; }
  SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
  SIM_HD Particle load(int64_t i) const { return p[i]; }
  SIM_HD void store(int64_t i, const Particle& q) const { p[i] = q; }
};

struct ParticlesSoAView {
#define SIM_FIELD(T, f) T* p##f = nullptr;
  SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
  int64_t n = 0;
  SIM_HD int64_t size() const { return n; }
#define SIM_FIELD(T, f) \
  SIM_HD T& f(int64_t i) const { return p##f[i]; }
  SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
  SIM_HD Particle load(int64_t i) const {
    Particle q;
#define SIM_FIELD(T, f) q.f = p##f[i];
    SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
    return q;
  }
  SIM_HD void store(int64_t i, const Particle& q) const {
#define SIM_FIELD(T, f) p##f[i] = q.f;
    SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
  }
};

// The layout-independent host form that files and tests exchange.
struct HostParticles {
#define SIM_FIELD(T, f) std::vector<T> f;
  SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
  void resize(size_t n) {
    for_each_particle_field(*this, [n](auto& f) { f.resize(n); });
  }
  size_t size() const { return x.size(); }
  ParticlesSoAView view() {
    ParticlesSoAView v;
#define SIM_FIELD(T, f) v.p##f = f.data();
    SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
    v.n = static_cast<int64_t>(size());
    return v;
  }
  Particle load(size_t i) const {
    Particle q;
#define SIM_FIELD(T, f) q.f = f[i];
    SIM_PARTICLE_FIELDS(SIM_FIELD)
#undef SIM_FIELD
    return q;
  }
  void store(size_t i, const Particle& q) { view().store(static_cast<int64_t>(i), q); }
};

inline std::vector<Particle> to_aos(const HostParticles& s) {
  std::vector<Particle> a(s.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = s.load(i);
  return a;
}

inline void from_aos(const std::vector<Particle>& a, HostParticles& s) {
  s.resize(a.size());
  for (size_t i = 0; i < a.size(); ++i) s.store(i, a[i]);
}

}  // namespace sim
