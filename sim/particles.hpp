// Particle storage layouts and the views kernels and CPU loops use.
// AoS and SoA expose the same accessors, so a templated loop runs on either;
// the run-time --layout switch picks the instantiation once.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/types.hpp"

namespace sim {

// One particle, 28 bytes: what an AoS code streams per particle.
struct Particle {
  real x, y;    // position [m]
  real vx, vy;  // velocity [m/s]
  real d;       // diameter [m]
  uint32_t id;  // stable identity (injection order)
  uint32_t alive;  // 1 in the domain, 0 removed (outflow) or never filled
};
static_assert(sizeof(Particle) == 28, "Particle is 28 bytes");

struct ParticlesAoSView {
  Particle* p = nullptr;
  int64_t n = 0;
  SIM_HD int64_t size() const { return n; }
  SIM_HD real& x(int64_t i) const { return p[i].x; }
  SIM_HD real& y(int64_t i) const { return p[i].y; }
  SIM_HD real& vx(int64_t i) const { return p[i].vx; }
  SIM_HD real& vy(int64_t i) const { return p[i].vy; }
  SIM_HD real& d(int64_t i) const { return p[i].d; }
  SIM_HD uint32_t& id(int64_t i) const { return p[i].id; }
  SIM_HD uint32_t& alive(int64_t i) const { return p[i].alive; }
};

struct ParticlesSoAView {
  real *px = nullptr, *py = nullptr, *pvx = nullptr, *pvy = nullptr, *pd = nullptr;
  uint32_t *pid = nullptr, *palive = nullptr;
  int64_t n = 0;
  SIM_HD int64_t size() const { return n; }
  SIM_HD real& x(int64_t i) const { return px[i]; }
  SIM_HD real& y(int64_t i) const { return py[i]; }
  SIM_HD real& vx(int64_t i) const { return pvx[i]; }
  SIM_HD real& vy(int64_t i) const { return pvy[i]; }
  SIM_HD real& d(int64_t i) const { return pd[i]; }
  SIM_HD uint32_t& id(int64_t i) const { return pid[i]; }
  SIM_HD uint32_t& alive(int64_t i) const { return palive[i]; }
};

// Host storage in one of the two layouts. Files and tests exchange
// particles as the layout-independent HostParticles below.
struct HostParticles {
  std::vector<real> x, y, vx, vy, d;
  std::vector<uint32_t> id, alive;
  void resize(size_t n) {
    x.resize(n); y.resize(n); vx.resize(n); vy.resize(n); d.resize(n);
    id.resize(n); alive.resize(n);
  }
  size_t size() const { return x.size(); }
  ParticlesSoAView view() {
    return {x.data(), y.data(), vx.data(), vy.data(), d.data(), id.data(), alive.data(),
            static_cast<int64_t>(x.size())};
  }
};

inline std::vector<Particle> to_aos(const HostParticles& s) {
  std::vector<Particle> a(s.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = {s.x[i], s.y[i], s.vx[i], s.vy[i], s.d[i], s.id[i], s.alive[i]};
  return a;
}

inline void from_aos(const std::vector<Particle>& a, HostParticles& s) {
  s.resize(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    s.x[i] = a[i].x; s.y[i] = a[i].y; s.vx[i] = a[i].vx; s.vy[i] = a[i].vy;
    s.d[i] = a[i].d; s.id[i] = a[i].id; s.alive[i] = a[i].alive;
  }
}

}  // namespace sim
