// SPDX-License-Identifier: MIT
// Micro-benchmark of the particle step: N particles on a small periodic
// grid (one-way, no injection), in random order, sorted by cell, and sorted
// before every step (run_micro, bench_micro.cpp).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "sim/app/bench/bench.hpp"
#include "sim/app/bench/micro.hpp"
#include "sim/app/bench/traffic.hpp"
#include "sim/model/simulation.hpp"
#include "sim/model/state.hpp"

namespace sim::micro {
namespace {

// The particles reordered by the cell they are in (a counting sort on the
// host): the memory order `--sort-every` gives on the device, where the
// bilinear gathers of neighbouring threads fall into the same cache lines.
// No injection runs in the micro suite, so the slot invariant of
// sim/model/state.hpp is not needed here.
SimState sorted_by_cell(const SimState& s) {
  const Grid& g = s.grid;
  const HostParticles& p = s.particles;
  const size_t n = p.size(), cells = static_cast<size_t>(g.nx) * g.ny;
  std::vector<uint32_t> key(n);
  std::vector<size_t> start(cells + 1, 0);
  for (size_t q = 0; q < n; ++q) {
    const int i = std::clamp(static_cast<int>(p.x[q] / g.dx), 0, g.nx - 1);
    const int j = std::clamp(static_cast<int>(p.y[q] / g.dy), 0, g.ny - 1);
    key[q] = static_cast<uint32_t>(j) * static_cast<uint32_t>(g.nx) + static_cast<uint32_t>(i);
    ++start[key[q] + 1];
  }
  for (size_t c = 0; c < cells; ++c) start[c + 1] += start[c];
  SimState out = s;
  HostParticles& o = out.particles;
  for (size_t q = 0; q < n; ++q) {
    o.store(start[key[q]]++, p.load(q));
  }
  return out;
}

const char* order_suffix(ParticleOrder o) {
  switch (o) {
    case ParticleOrder::cell_sorted: return "/cell-sorted";
    case ParticleOrder::sorted_each_step: return "/sort-every-1";
    case ParticleOrder::random: break;
  }
  return "";
}

}  // namespace

void particle_steps(Context& x, const Config& cfg, int grid_n, int64_t count, ParticleOrder order) {
  Config base = periodic_case(cfg, grid_n);
  base.initial = InitialFlow::taylor_green;
  base.initial_u = kFlowSpeed;
  ParticleRegion region;
  region.x1 = region.y1 = 1.0;
  region.count = count;
  if (!cfg.regions.empty()) {
    region.diameter_min = cfg.regions[0].diameter_min;
    region.diameter_max = cfg.regions[0].diameter_max;
  }
  base.regions = {region};
  std::unique_ptr<SimState> s;  // built for the first variant that runs (64M: 1.8 GB)
  const double dt = micro_dt(base, kFlowSpeed);
  const auto layouts = all_or(x.opts.layouts);
  const auto samplings = x.cuda ? all_or(x.opts.samplings) : std::vector<Sampling>{cfg.sampling};
  const auto constants = x.cuda ? all_or(x.opts.constants) : std::vector<ConstantsIn>{cfg.constants};
  const Grid g = Grid::make(base.nx, base.ny, base.lx, base.ly);
  if (order == ParticleOrder::sorted_each_step) base.sort_every = 1;
  for (const Config& c : combinations(base, {bench_axis(&Config::layout, layouts), bench_axis(&Config::sampling, samplings),
                                             bench_axis(&Config::constants, constants)})) {
    const Layout l = c.layout;
    const Sampling sa = c.sampling;
    const ConstantsIn k = c.constants;
    BenchRow row;
    row.set("benchmark", "particle_step");
    row.set("size", static_cast<double>(count));
    row.set("size_text", count_text(count));
    row.set("items", "particles");
    const std::string sorted = order_suffix(order);
    row.set("variant", x.cuda ? std::string(to_string(l)) + "/" + std::string(to_string(sa)) + "/" +
                                    std::string(to_string(k)) + sorted
                              : std::string(to_string(l)) + sorted);
    row.set("layout", std::string(to_string(l)));
    row.set("sampling", std::string(to_string(sa)));
    row.set("constants", std::string(to_string(k)));
    row.set("backend", x.report.backend);
    std::string error;
    std::unique_ptr<Backend> b;
    if (!out_of_time(x.opts)) {
      if (!s) {
        s = std::make_unique<SimState>(make_initial_state(base));
        if (order == ParticleOrder::cell_sorted) *s = sorted_by_cell(*s);
      }
      b = fresh_backend(x, c, *s, dt, error);
    }
    if (b) row.set("backend", b->name());
    if (!error.empty()) {
      row.set("error", error);
      x.report.rows.push_back(std::move(row));
      continue;
    }
    const double n = static_cast<double>(count);
    const double bytes = (traffic::particle_step(n, 0, l, false) + traffic::velocity_sample(sa, traffic::faces(g)) +
                          traffic::particle_sort(n, l, g, c.sort_every))
                             .bytes /
                         n;
    Backend* bp = b.get();
    measure(x, row, bp, n, bytes, [bp] { bp->step_particles(0, 0); });
  }
}

}  // namespace sim::micro
