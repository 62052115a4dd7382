// SPDX-License-Identifier: MIT
// For the GPU suites only: the shipped cases, shrunk on request, and the
// differences to the CPU reference the suites bound.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/cuda_backend.hpp"
#include "sim/model/state.hpp"
#include "support/cases.hpp"

namespace sim::test {

// SIM_GPU_TEST_SMALL=1 shrinks every case (grid, particles, sweeps, steps)
// so the whole suite runs under compute-sanitizer in minutes; every
// strategy combination is still exercised.
inline bool small_mode() {
  const char* e = std::getenv("SIM_GPU_TEST_SMALL");
  return e && std::string(e) == "1";
}

// `normal` steps, or 3 in small mode.
inline int gpu_steps(int normal) { return small_mode() ? 3 : normal; }

// SIM_GPU_TEST_STENCIL=shared (say) restricts the strategy matrix to one
// stencil variant: racecheck only inspects shared memory, so it runs the
// tiled kernels alone to fit its time.
inline std::vector<Stencil> stencils() {
  const char* e = std::getenv("SIM_GPU_TEST_STENCIL");
  if (e)
    if (auto s = parse_enum<Stencil>(e)) return {*s};
  return enum_values<Stencil>();
}

// config/<name> for `steps` steps, shrunk in small mode.
inline Config gpu_case(const std::string& name, int steps) {
  std::vector<std::string> o{"run.steps=" + std::to_string(steps)};
  if (small_mode()) {
    o.push_back("pressure.max_iterations=40");
    if (name == "channel.toml") {
      o.insert(o.end(), {"domain.nx=64", "domain.ny=16", "particles.inject.rate=4000"});
    } else {
      o.insert(o.end(), {"domain.nx=32", "domain.ny=32"});
      if (!shipped_config(name).regions.empty()) o.push_back("particles.regions[0].count=500");
    }
  }
  return shipped_config(name, o);
}

// ||a - b||_2 / ||b||_2 (absolute when b is all zero).
struct RelL2 {
  double diff2 = 0, ref2 = 0;
  void add(double a, double b) {
    diff2 += (a - b) * (a - b);
    ref2 += b * b;
  }
  double value() const { return ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2); }
};

enum class Where { u_faces, v_faces, cells };

// Over the interior points of a field: u faces i in [0, nx], j in [0, ny);
// v faces i in [0, nx), j in [0, ny]; cells [0, nx) x [0, ny). With
// `minus_mean`, each field's mean over the points is removed first (the
// pressure of a closed domain is defined up to a constant).
inline double rel_l2(const std::vector<float>& a, const std::vector<float>& b, const Grid& g, Where w,
                     bool minus_mean = false) {
  const int ni = w == Where::u_faces ? g.nx + 1 : g.nx, nj = w == Where::v_faces ? g.ny + 1 : g.ny;
  double ma = 0, mb = 0;
  if (minus_mean) {
    for (int j = 0; j < nj; ++j)
      for (int i = 0; i < ni; ++i) {
        ma += a[g.idx(i, j)];
        mb += b[g.idx(i, j)];
      }
    ma /= double(ni) * nj;
    mb /= double(ni) * nj;
  }
  RelL2 r;
  for (int j = 0; j < nj; ++j)
    for (int i = 0; i < ni; ++i) r.add(a[g.idx(i, j)] - ma, b[g.idx(i, j)] - mb);
  return r.value();
}

struct Differences {
  double u = 0, v = 0, phi = 0;         // grid fields
  double x = 0, y = 0, vx = 0, vy = 0;  // alive particles, slot by slot
  bool same_slots = true;               // same id and alive flag in every slot
  bool same_counters = true;            // removed and recycled
  double fluid() const { return std::max({u, v, phi}); }
  double particles() const { return std::max({x, y, vx, vy}); }
  // Every difference, for INFO beside the checks.
  std::string text() const {
    std::ostringstream o;
    o << "u " << u << ", v " << v << ", phi " << phi << "; particles x " << x << ", y " << y << ", vx " << vx
      << ", vy " << vy;
    return o.str();
  }
};

// Relative L2 differences of a GPU state to the CPU reference. `closed`: no
// outflow side, so phi is compared without its mean.
inline Differences gpu_vs_cpu(const SimState& gpu, const SimState& cpu, bool closed) {
  Differences d;
  const Grid& g = cpu.grid;
  d.u = rel_l2(gpu.u, cpu.u, g, Where::u_faces);
  d.v = rel_l2(gpu.v, cpu.v, g, Where::v_faces);
  d.phi = rel_l2(gpu.phi, cpu.phi, g, Where::cells, closed);
  const HostParticles& a = gpu.particles;
  const HostParticles& b = cpu.particles;
  RelL2 x, y, vx, vy;
  d.same_slots = a.size() == b.size();
  for (size_t s = 0; d.same_slots && s < b.size(); ++s) {
    if (a.id[s] != b.id[s] || a.alive[s] != b.alive[s]) {
      d.same_slots = false;
      break;
    }
    if (!b.alive[s]) continue;
    x.add(a.x[s], b.x[s]);
    y.add(a.y[s], b.y[s]);
    vx.add(a.vx[s], b.vx[s]);
    vy.add(a.vy[s], b.vy[s]);
  }
  d.x = x.value();
  d.y = y.value();
  d.vx = vx.value();
  d.vy = vy.value();
  d.same_counters = gpu.counters.removed == cpu.counters.removed && gpu.counters.recycled == cpu.counters.recycled;
  return d;
}

}  // namespace sim::test
