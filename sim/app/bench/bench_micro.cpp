// SPDX-License-Identifier: MIT
// Micro-benchmarks of single primitives, on cases built for them: the
// pressure sweeps on an n x n periodic grid without obstacles (12 B/cell for
// Jacobi), one momentum stage per advection scheme on the same grid, and
// the particle step of N particles on a small periodic grid
// (one-way, no injection), for every memory strategy that applies, with the
// particles in random order, sorted by cell, and sorted before every step.
// Each figure is the median over trials of R back-to-back calls between two
// synchronize() calls, R chosen so that a trial lasts about 10 ms.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <ostream>
#include <stdexcept>

#include "sim/app/backend_factory.hpp"
#include "sim/app/bench/bench.hpp"
#include "sim/app/bench/micro.hpp"
#include "sim/model/random.hpp"
#include "sim/model/stability.hpp"
#include "sim/model/state.hpp"

namespace sim {
namespace micro {

// The timed configuration's step: cfl * min(viscous, advective at speed u) capped by dt_max.
double micro_dt(const Config& c, double speed) {
  if (c.dt > 0) return c.dt;
  const double lim = std::min(viscous_dt_limit(c.viscosity, c.dx(), c.dy()), advective_dt_limit(speed, speed, c.dx(), c.dy()));
  return std::min(c.cfl * lim, c.dt_max);
}

// A unit periodic square of n x n cells with nothing in it but fluid.
Config periodic_case(const Config& cfg, int n) {
  Config c = cfg;
  c.nx = c.ny = n;
  c.lx = c.ly = 1.0;
  for (BoundarySide* s : {&c.left, &c.right, &c.bottom, &c.top}) *s = BoundarySide{BoundaryKind::periodic, 0.0};
  c.obstacles.clear();
  c.regions.clear();
  c.inject = ParticleInjection{};
  c.capacity = 0;
  c.two_way = false;
  c.sort_every = 0;
  c.initial = InitialFlow::rest;
  c.dt = 0;
  return c;
}

// Random face velocities and pressure in [-1, 1]: never time on zeros.
void randomize(SimState& s, uint64_t seed) {
  const Grid& g = s.grid;
#pragma omp parallel for schedule(static)
  for (int j = 0; j <= g.ny; ++j)
    for (int i = 0; i <= g.nx; ++i) {
      const uint64_t c = static_cast<uint64_t>(g.idx(i, j));
      s.u[c] = static_cast<real>(2 * uniform01(seed, c, 0) - 1);
      s.v[c] = static_cast<real>(2 * uniform01(seed, c, 1) - 1);
      s.phi[c] = static_cast<real>(2 * uniform01(seed, c, 2) - 1);
    }
}

// The randomized state of a sweep benchmark, built for the first variant
// that runs (none may: the suite can be out of time), then shared.
const SimState& random_state(std::unique_ptr<SimState>& s, const Config& base, uint64_t seed) {
  if (!s) {
    s = std::make_unique<SimState>(make_initial_state(base));
    randomize(*s, seed);
  }
  return *s;
}

std::string count_text(int64_t n) {
  if (n % (1 << 20) == 0) return std::to_string(n >> 20) + "M";
  if (n % 1000000 == 0) return std::to_string(n / 1000000) + "e6";
  return std::to_string(n);
}

std::unique_ptr<Backend> fresh_backend(Context& x, const Config& c, const SimState& s, double dt, std::string& error) {
  try {
    std::unique_ptr<Backend> b = make_backend(c, s.grid, nullptr);
    Constants k = make_constants(c, s.grid);
    k.dt = static_cast<real>(dt);
    b->set_constants(k);
    b->upload(s);
    b->fill_velocity_halo();
    if (x.report.device.empty()) x.report.device = b->name();
    return b;
  } catch (const std::exception& e) {
    error = std::string("failed: ") + e.what();
    x.log << "backend for " << variant_name(c, x.cuda) << ": " << error << "\n";
    return nullptr;
  }
}

namespace {

// The CPU backend's ceiling: the host's copy bandwidth on the threads the
// backend runs (omp_get_max_threads), two arrays of `mib` MiB each, first
// touched by the thread that copies the block, best of kHostCopyRepeats
// copies after one untimed; bytes read + written. Two rows: "memcpy" (each
// thread one memcpy of its block) and "loop" (each thread a plain float
// loop over its block, stores through the cache as the sweeps' are). The
// better of the two is what the host can copy: the ceiling the CPU rows'
// copy_pct refer to (both rows' copy_pct too).
constexpr int kHostCopyRepeats = 10;
constexpr int64_t kHostCopyMiB = 256;  // per array, unless --copy-mib

double host_copy_gbps(size_t bytes, bool loop) {
  const size_t n = bytes / sizeof(float);
  std::unique_ptr<float[]> src(new float[n]), dst(new float[n]);  // untouched until the threads write
  const int threads = omp_get_max_threads();
  const size_t block = (n + threads - 1) / threads;
  using Clock = std::chrono::steady_clock;
  double best = 0;
  for (int r = -1; r < kHostCopyRepeats; ++r) {
    const auto t0 = Clock::now();
#pragma omp parallel num_threads(threads)
    {
      const size_t t = static_cast<size_t>(omp_get_thread_num());
      const size_t b = std::min(n, t * block), e = std::min(n, b + block);
      float* __restrict d = dst.get();
      const float* __restrict s = src.get();
      if (r < 0) {
        std::fill(src.get() + b, src.get() + e, 1.5f);
        std::fill(d + b, d + e, 0.0f);
      } else if (loop) {
        for (size_t i = b; i < e; ++i) d[i] = s[i] + 0.0f;  // + 0: a loop, not a memcpy call
      } else {
        std::memcpy(d + b, s + b, (e - b) * sizeof(float));
      }
    }
    const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
    if (r >= 0 && sec > 0) best = std::max(best, 2.0 * static_cast<double>(n * sizeof(float)) / sec / 1e9);
  }
  if (dst[n - 1] != 1.5f) throw std::runtime_error("host copy: the copy did not arrive");
  return best;
}

// Measures both rows and returns the better figure (0 when out of time).
double host_copy_rows(Context& x) {
  const int64_t mib = x.opts.copy_mib > 0 ? x.opts.copy_mib : kHostCopyMiB;
  const size_t bytes = static_cast<size_t>(mib) << 20;
  double ceiling = 0;
  for (const bool loop : {false, true}) {
    BenchRow row;
    row.set("benchmark", "host_copy");
    row.set("size", static_cast<double>(mib));
    row.set("size_text", std::to_string(mib) + " MiB x 2");
    row.set("items", "bytes");
    row.set("variant", loop ? "loop" : "memcpy");
    row.set("backend", "host (" + std::to_string(omp_get_max_threads()) + " OpenMP threads)");
    if (out_of_time(x.opts)) {
      row.set("error", "skipped: --max-seconds reached");
      x.report.rows.push_back(std::move(row));
      continue;
    }
    x.log << "host_copy " << row.text("variant") << std::flush;
    try {
      const double gbps = host_copy_gbps(bytes, loop);
      const double ms = 2.0 * static_cast<double>(bytes) / (gbps * 1e6);
      row.set("repeats", static_cast<double>(kHostCopyRepeats));
      row.set("ms_per_op", ms);
      row.set("gitems_per_s", static_cast<double>(bytes) / (ms * 1e6));
      row.set("bytes_per_item", 2.0);
      row.set("gbps", gbps);
      ceiling = std::max(ceiling, gbps);
      x.log << ": " << gbps << " GB/s\n";
    } catch (const std::exception& e) {
      row.set("error", std::string("failed: ") + e.what());
      x.log << ": failed: " << e.what() << "\n";
    }
    x.report.rows.push_back(std::move(row));
  }
  for (BenchRow& row : x.report.rows)
    if (row.text("benchmark") == "host_copy" && !std::isnan(row.number("gbps")))
      row.set("copy_pct", ceiling > 0 ? 100 * row.number("gbps") / ceiling : std::nan(""));
  return ceiling;
}

}  // namespace
}  // namespace micro

BenchReport run_micro(const Config& cfg, const BenchOptions& opts, bool cuda, double ceiling_gbps, std::ostream& log) {
  using namespace micro;
  BenchReport r = start_report("micro", cfg, opts, cuda, micro_columns());
  Context x{opts, cuda, ceiling_gbps, log, r};
  const std::vector<int> sizes = opts.micro_sizes.empty() ? std::vector<int>{2048, 8192, 16384} : opts.micro_sizes;
  const std::vector<int64_t> counts =
      opts.micro_particles.empty() ? std::vector<int64_t>{int64_t(16) << 20, int64_t(64) << 20} : opts.micro_particles;
  if (!cuda) r.notes.push_back("stencil, constants and sampling fixed at the config's values (the CPU backend has one implementation)");
  if (!cuda) r.notes.push_back("no sort-every-1 particle rows: the CPU backend does not sort particles by cell");
  // CPU: the host copy on the backend's threads, measured now, is the
  // ceiling of the rows' copy_pct; its two rows go after the others.
  std::vector<BenchRow> host_rows;
  if (!cuda) {
    const double host = host_copy_rows(x);
    host_rows.swap(r.rows);
    if (host > 0) {
      x.ceiling_gbps = host;
      r.ceiling_gbps = host;
      const int64_t mib = opts.copy_mib > 0 ? opts.copy_mib : kHostCopyMiB;
      r.ceiling_what = "host copy, the better of memcpy and a float loop per OpenMP thread (" +
                       std::to_string(omp_get_max_threads()) + " threads), 2 x " + std::to_string(mib) +
                       " MiB, best of " + std::to_string(kHostCopyRepeats) + ", bytes read + written";
      r.notes.push_back("copy_pct of the CPU rows: % of the better host_copy row of this run");
    }
  }
  for (int n : sizes) sweeps(x, cfg, n);
  for (int n : sizes) jacobi_passes(x, cfg, n);
  // MGPCG rows: 2048^2, 4096^2, 8192^2 on the GPU; the CPU backend, at
  // ~100x less bandwidth, runs only the smallest of the micro sizes, capped at 1024^2.
  const bool mg = opts.solvers.empty() ||
                  std::find(opts.solvers.begin(), opts.solvers.end(), PressureSolverKind::multigrid) != opts.solvers.end();
  if (mg) {
    if (cuda)
      for (int n : {2048, 4096, 8192}) multigrid_rows(x, cfg, n);
    else
      multigrid_rows(x, cfg, std::min(1024, *std::min_element(sizes.begin(), sizes.end())));
  }
  fft_solves(x, cfg);
  const int grid_n = std::min(kParticleGrid, *std::min_element(sizes.begin(), sizes.end()));
  for (int64_t count : counts)
    for (ParticleOrder order : {ParticleOrder::random, ParticleOrder::cell_sorted, ParticleOrder::sorted_each_step})
      if (cuda || order != ParticleOrder::sorted_each_step)  // the CPU backend does not sort (gpu.sort_every)
        particle_steps(x, cfg, grid_n, count, order);
  for (int n : sizes) momentum_stages(x, cfg, n);
  for (BenchRow& row : host_rows) r.rows.push_back(std::move(row));
  if (r.device.empty()) r.device = r.backend;
  return r;
}

}  // namespace sim

