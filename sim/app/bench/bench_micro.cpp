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

#include "sim/app/bench/bench.hpp"
#include "sim/model/random.hpp"
#include "sim/app/backend_factory.hpp"
#include "sim/model/poisson.hpp"
#include "sim/model/pressure.hpp"
#include "sim/model/simulation.hpp"
#include "sim/model/stability.hpp"
#include "sim/model/state.hpp"
#include "sim/app/bench/traffic.hpp"

namespace sim {
namespace {

constexpr double kTrialMs = 10;
constexpr int kTrials = 5;
constexpr int kParticleGrid = 512;  // u and v: 2 MB, resident in any L2 of interest
constexpr double kFlowSpeed = 0.1;  // Taylor-Green amplitude the particles move in [m/s]

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

bool out_of_time(const BenchOptions& o) { return o.max_seconds > 0 && bench_clock_s() > o.max_seconds; }

struct Timing {
  double ms = 0;
  int64_t repeats = 0;
};

template <class Op>
Timing time_op(Backend& b, int64_t warmup, int64_t min_repeats, Op op) {
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
  for (int64_t k = 0; k < warmup; ++k) op();
  b.synchronize();
  auto t0 = Clock::now();
  op();
  b.synchronize();
  const double once = std::max(ms_since(t0), 1e-4);
  Timing t;
  t.repeats = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(kTrialMs / once)), std::max<int64_t>(min_repeats, 1), 1000000);
  std::vector<double> trial;
  for (int k = 0; k < kTrials; ++k) {
    t0 = Clock::now();
    for (int64_t r = 0; r < t.repeats; ++r) op();
    b.synchronize();
    trial.push_back(ms_since(t0) / static_cast<double>(t.repeats));
  }
  std::sort(trial.begin(), trial.end());
  t.ms = trial[kTrials / 2];
  return t;
}

std::string count_text(int64_t n) {
  if (n % (1 << 20) == 0) return std::to_string(n >> 20) + "M";
  if (n % 1000000 == 0) return std::to_string(n / 1000000) + "e6";
  return std::to_string(n);
}

struct Context {
  const BenchOptions& opts;
  bool cuda;
  double ceiling_gbps;
  std::ostream& log;
  BenchReport& report;
};

// Times `op` into `row`, or records why not.
template <class Op>
void measure(Context& x, BenchRow row, Backend* b, double items, double bytes_per_item, Op op) {
  const std::string what = row.text("benchmark") + " " + row.text("size_text") + " " + row.text("variant");
  if (out_of_time(x.opts)) {
    row.set("error", "skipped: --max-seconds reached");
  } else if (b == nullptr) {
    row.set("error", "skipped: the backend could not be made");
  } else {
    x.log << what << std::flush;
    try {
      const Timing t = time_op(*b, x.opts.warmup, x.opts.steps, op);
      const double gbps = items * bytes_per_item / (t.ms * 1e6);
      row.set("repeats", static_cast<double>(t.repeats));
      row.set("ms_per_op", t.ms);
      row.set("gitems_per_s", items / (t.ms * 1e6));
      row.set("bytes_per_item", bytes_per_item);
      row.set("gbps", gbps);
      row.set("copy_pct", x.ceiling_gbps > 0 ? 100 * gbps / x.ceiling_gbps : std::nan(""));
      x.log << ": " << t.ms << " ms\n";
    } catch (const std::exception& e) {
      row.set("error", std::string("failed: ") + e.what());
      x.log << ": failed: " << e.what() << "\n";
    }
  }
  x.report.rows.push_back(std::move(row));
}

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

void sweeps(Context& x, const Config& cfg, int n) {
  const Config base = periodic_case(cfg, n);
  std::unique_ptr<SimState> s;  // built for the first variant that runs (16384^2: 4.3 GB)
  const double dt = micro_dt(base, 1.0);
  const double cells = static_cast<double>(n) * n;
  const auto stencils = x.cuda ? all_or(x.opts.stencils) : std::vector<Stencil>{cfg.stencil};
  const auto constants = x.cuda ? all_or(x.opts.constants) : std::vector<ConstantsIn>{cfg.constants};
  for (Stencil st : stencils)
    for (ConstantsIn k : constants) {
      Config c = base;
      c.stencil = st;
      c.constants = k;
      std::string error;
      std::unique_ptr<Backend> b;
      if (!out_of_time(x.opts)) {
        b = fresh_backend(x, c, random_state(s, base, cfg.seed), dt, error);
        try {
          if (b) {
            b->compute_rhs();  // rhs = div(u)/dt of the random velocity
            b->fill_pressure_halo();
          }
        } catch (const std::exception& e) {
          error = std::string("failed: ") + e.what();
          b.reset();
        }
      }
      for (PressureSolverKind solver : all_or(x.opts.solvers)) {
        if (solver != PressureSolverKind::jacobi && solver != PressureSolverKind::sor) continue;  // sweeps only
        BenchRow row;
        const bool jacobi = solver == PressureSolverKind::jacobi;
        row.set("benchmark", jacobi ? "jacobi_sweep" : "sor_sweep");
        row.set("size", static_cast<double>(n));
        row.set("size_text", std::to_string(n) + "^2");
        row.set("items", "cells");
        row.set("variant", x.cuda ? std::string(to_string(st)) + "/" + std::string(to_string(k)) : std::string("cpu"));
        row.set("backend", b ? b->name() : x.report.backend);
        row.set("stencil", std::string(to_string(st)));
        row.set("constants", std::string(to_string(k)));
        if (!error.empty()) row.set("error", error);
        const double bytes = (jacobi ? traffic::jacobi_sweep(1) : traffic::sor_sweep(1)).bytes;
        Backend* bp = b.get();
        if (!error.empty()) {
          x.report.rows.push_back(std::move(row));
        } else if (jacobi) {
          measure(x, row, bp, cells, bytes, [bp] { bp->jacobi_sweep(); });
        } else {
          measure(x, row, bp, cells, bytes, [bp] {
            bp->sor_sweep(0);
            bp->sor_sweep(1);
          });
        }
      }
    }
}

// stencil=temporal (GPU only, when the stencil and solver lists hold it and
// jacobi): Backend::jacobi_sweeps(2 kTemporalSweeps), two passes of
// kTemporalSweeps sweeps, on an n x n closed box (the passes need sides
// that are not periodic) from the same random state. items are effective
// cell updates (sweeps x cells), bytes_per_item the model's bytes per
// effective sweep (traffic::jacobi_pass: 12 / kTemporalSweeps B), so
// copy_pct is the share of the copy bandwidth the passes move, and
// gitems_per_s compares with the single sweep's roof of copy GB/s / 12.
void jacobi_passes(Context& x, const Config& cfg, int n) {
  if (!x.cuda) return;
  const auto stencils = all_or(x.opts.stencils);
  const auto solvers = all_or(x.opts.solvers);
  if (std::find(stencils.begin(), stencils.end(), Stencil::temporal) == stencils.end() ||
      std::find(solvers.begin(), solvers.end(), PressureSolverKind::jacobi) == solvers.end())
    return;
  Config base = periodic_case(cfg, n);
  for (BoundarySide* s : {&base.left, &base.right, &base.bottom, &base.top}) *s = BoundarySide{BoundaryKind::wall, 0.0};
  base.stencil = Stencil::temporal;
  std::unique_ptr<SimState> s;
  const double dt = micro_dt(base, 1.0);
  const int sweeps = 2 * kTemporalSweeps;
  const double items = static_cast<double>(n) * n * sweeps;
  for (ConstantsIn k : all_or(x.opts.constants)) {
    Config c = base;
    c.constants = k;
    std::string error;
    std::unique_ptr<Backend> b;
    if (!out_of_time(x.opts)) {
      b = fresh_backend(x, c, random_state(s, base, cfg.seed), dt, error);
      try {
        if (b) {
          b->compute_rhs();
          b->fill_pressure_halo();
        }
      } catch (const std::exception& e) {
        error = std::string("failed: ") + e.what();
        b.reset();
      }
    }
    BenchRow row;
    row.set("benchmark", "jacobi_pass");
    row.set("size", static_cast<double>(n));
    row.set("size_text", std::to_string(n) + "^2");
    row.set("items", "cell sweeps");
    row.set("variant", "temporal/" + std::string(to_string(k)) + "/x" + std::to_string(kTemporalSweeps));
    row.set("backend", b ? b->name() : x.report.backend);
    row.set("stencil", std::string(to_string(Stencil::temporal)));
    row.set("constants", std::string(to_string(k)));
    if (!error.empty()) {
      row.set("error", error);
      x.report.rows.push_back(std::move(row));
      continue;
    }
    Backend* bp = b.get();
    measure(x, row, bp, items, traffic::jacobi_pass(1, kTemporalSweeps).bytes / kTemporalSweeps,
            [bp, sweeps] { bp->jacobi_sweeps(sweeps); });
  }
}

// One momentum stage (Backend::rk_stage, the first stage: no base field) on
// an n x n periodic grid holding a random velocity, for every stencil
// variant (GPU) and advection scheme (--advection, default central and
// quick): the stencil whose reach fluid.advection = quick widens to two
// cells, where the shared-memory tile should pay. bytes_per_item is the
// least a stage moves per face point (traffic::stage: 16 B).
void momentum_stages(Context& x, const Config& cfg, int n) {
  const Config base = periodic_case(cfg, n);
  std::unique_ptr<SimState> s;
  const double dt = micro_dt(base, 1.0);
  const double points = static_cast<double>(n + 1) * (n + 1);
  const auto stencils = x.cuda ? all_or(x.opts.stencils) : std::vector<Stencil>{cfg.stencil};
  const auto schemes = all_or(x.opts.advections);
  for (Stencil st : stencils)
    for (AdvectionScheme scheme : schemes) {
      Config c = base;
      c.stencil = st;
      c.advection = scheme;
      BenchRow row;
      row.set("benchmark", "momentum_stage");
      row.set("size", static_cast<double>(n));
      row.set("size_text", std::to_string(n) + "^2");
      row.set("items", "faces");
      row.set("variant", x.cuda ? std::string(to_string(st)) + "/" + std::string(to_string(scheme))
                                : std::string(to_string(scheme)));
      row.set("stencil", std::string(to_string(st)));
      row.set("constants", std::string(to_string(c.constants)));
      row.set("advection", std::string(to_string(scheme)));
      row.set("backend", x.report.backend);
      std::string error;
      std::unique_ptr<Backend> b;
      if (!out_of_time(x.opts)) {
        b = fresh_backend(x, c, random_state(s, base, cfg.seed), dt, error);
        if (b) {
          row.set("backend", b->name());
          b->copy_velocity(VelocityField::current, VelocityField::saved);  // with the halo just filled
        }
      }
      if (!error.empty()) {
        row.set("error", error);
        x.report.rows.push_back(std::move(row));
        continue;
      }
      Backend* bp = b.get();
      measure(x, row, bp, points, traffic::stage(1, false, false, scheme).bytes, [bp] {
        bp->rk_stage(VelocityField::saved, VelocityField::saved, VelocityField::current, real(0), real(1), real(1));
      });
    }
}

// One transform pressure solve (PressureOps::fft_solve: load rhs, forward
// transform, divide, inverse transform, store x, phi and their halos) on an
// n x n periodic grid, rhs from a random velocity. bytes_per_item is the
// least a solve must move: rhs read (4 B), x and phi written (8 + 4 B).
// Sizes: 2048^2, 4096^2, 8192^2 by default; with --micro-sizes, those sizes
// only when --pressure-solver names fft (keeps tiny runs to the sweeps).
void fft_solves(Context& x, const Config& cfg) {
  const bool asked = std::find(x.opts.solvers.begin(), x.opts.solvers.end(), PressureSolverKind::fft) != x.opts.solvers.end();
  std::vector<int> sizes;
  if (x.opts.micro_sizes.empty() && (x.opts.solvers.empty() || asked)) sizes = {2048, 4096, 8192};
  else if (asked) sizes = x.opts.micro_sizes;
  for (int n : sizes) {
    Config c = periodic_case(cfg, n);
    c.solver = PressureSolverKind::fft;
    BenchRow row;
    row.set("benchmark", "fft_solve");
    row.set("size", static_cast<double>(n));
    row.set("size_text", std::to_string(n) + "^2");
    row.set("items", "cells");
    row.set("variant", x.cuda ? "cufft/f64" : "fftw/f64");
    row.set("backend", x.report.backend);
    std::string error;
    std::unique_ptr<Backend> b;
    TransformOps* transform = nullptr;
    if (!out_of_time(x.opts)) {
      try {
        SimState s = make_initial_state(c);
        randomize(s, cfg.seed);
        b = fresh_backend(x, c, s, micro_dt(c, 1.0), error);
        if (b) {
          const PoissonHierarchy h = build_poisson_hierarchy(s.grid, s.open, make_constants(c, s.grid));
          transform = &b->transform_setup(h);
          b->compute_rhs();
          row.set("backend", b->name());
        }
      } catch (const std::exception& e) {
        error = std::string("failed: ") + e.what();
        b.reset();
      }
    }
    if (!error.empty()) {
      row.set("error", error);
      x.report.rows.push_back(std::move(row));
      continue;
    }
    Backend* bp = b.get();
    measure(x, row, bp, static_cast<double>(n) * n, 16.0, [transform] { transform->fft_solve(); });
  }
}

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

// random: slots in no relation to positions; cell_sorted: reordered by cell
// once, before the upload; sorted_each_step: random at the start, and the
// backend sorts by cell before every step (sort_every = 1), so the row is a
// sorted step plus one whole sort: its cost over the cell_sorted row is
// what one sort costs.
enum class ParticleOrder { random, cell_sorted, sorted_each_step };

const char* order_suffix(ParticleOrder o) {
  switch (o) {
    case ParticleOrder::cell_sorted: return "/cell-sorted";
    case ParticleOrder::sorted_each_step: return "/sort-every-1";
    case ParticleOrder::random: break;
  }
  return "";
}

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

// MGPCG on an n x n closed box (walls, no obstacle, cavity-like), the
// right-hand side div(u)/dt of a random velocity. Two rows per size: one
// V-cycle (the preconditioner alone, as MultigridSolver runs it with
// smoothing = 2) and one whole solve to 1e-6 from zero; both use the byte
// count of one V-cycle (traffic::mg_vcycle) per cell, the solve row that of
// its iterations (V-cycle + PCG vectors) per cell and solve.
constexpr int kMgSmoothing = 2;
constexpr double kMgTolerance = 1e-6;

void multigrid_rows(Context& x, const Config& cfg, int n) {
  Config c = periodic_case(cfg, n);
  for (BoundarySide* s : {&c.left, &c.right, &c.bottom, &c.top}) *s = BoundarySide{BoundaryKind::wall, 0.0};
  c.solver = PressureSolverKind::multigrid;
  const double cells = static_cast<double>(n) * n;
  std::string error;
  std::unique_ptr<Backend> b;
  PoissonHierarchy h;
  std::unique_ptr<PressureSolver> solver;
  if (!out_of_time(x.opts)) {
    SimState s = make_initial_state(c);
    randomize(s, cfg.seed);
    b = fresh_backend(x, c, s, micro_dt(c, 1.0), error);
    try {
      if (b) {
        Constants k = make_constants(c, s.grid);
        h = build_poisson_hierarchy(s.grid, s.open, k);
        solver = make_pressure_solver(PressureSolverKind::multigrid, &h, false);
        solver->prepare(*b, h);
        b->compute_rhs();
        b->multigrid()->pcg_start();
      }
    } catch (const std::exception& e) {
      error = std::string("failed: ") + e.what();
      b.reset();
    }
  }
  const int levels = static_cast<int>(h.levels.size()), sweeps = h.coarse_sweeps;
  Backend* bp = b.get();
  MultigridOps* mg = bp ? bp->multigrid() : nullptr;
  auto vcycle = [mg, levels, sweeps] {
    mg->mg_load_residual();
    const int last = levels - 1;
    for (int l = 0; l < last; ++l) {
      for (int k = 0; k < kMgSmoothing; ++k) {
        mg->mg_smooth(l, 0);
        mg->mg_smooth(l, 1);
      }
      mg->mg_restrict(l);
    }
    for (int k = 0; k < sweeps; ++k) {
      mg->mg_smooth(last, 0);
      mg->mg_smooth(last, 1);
    }
    for (int k = 0; k < sweeps; ++k) {
      mg->mg_smooth(last, 1);
      mg->mg_smooth(last, 0);
    }
    for (int l = last - 1; l >= 0; --l) {
      mg->mg_prolong(l);
      for (int k = 0; k < kMgSmoothing; ++k) {
        mg->mg_smooth(l, 1);
        mg->mg_smooth(l, 0);
      }
    }
  };
  const double cycle_bytes = traffic::mg_vcycle(n, n, kMgSmoothing).bytes / cells;
  // the iteration count of one solve (the same every solve: it starts from zero)
  PressureStats st;
  PressureSettings ps;
  ps.tolerance = kMgTolerance;
  ps.max_iterations = 200;
  ps.smoothing = kMgSmoothing;
  if (bp && error.empty()) {
    try {
      st = solver->solve(*bp, ps);
    } catch (const std::exception& e) {
      error = std::string("failed: ") + e.what();
    }
  }
  for (const bool solve : {false, true}) {
    BenchRow row;
    row.set("benchmark", solve ? "mgpcg_solve_1e-6" : "mg_vcycle");
    row.set("size", static_cast<double>(n));
    row.set("size_text", std::to_string(n) + "^2");
    row.set("items", "cells");
    row.set("variant", x.cuda ? std::string("closed box") : std::string("cpu closed box"));
    row.set("backend", b ? b->name() : x.report.backend);
    if (!error.empty()) {
      row.set("error", error);
      x.report.rows.push_back(std::move(row));
      continue;
    }
    const double iters = st.iterations;
    row.set("iterations", iters);
    if (iters > 0 && st.residual > 0) row.set("conv_factor", std::pow(st.residual, 1.0 / iters));
    if (solve) {
      // bytes per cell of the whole solve: its V-cycles and vector updates
      const double bytes = iters * (cycle_bytes + traffic::pcg_iteration(1).bytes) + traffic::pcg_start_finish(1).bytes;
      measure(x, row, bp, cells, bytes, [bp, &solver, &ps] { solver->solve(*bp, ps); });
    } else {
      measure(x, row, bp, cells, cycle_bytes, vcycle);
    }
  }
}

}  // namespace

BenchReport run_micro(const Config& cfg, const BenchOptions& opts, bool cuda, double ceiling_gbps, std::ostream& log) {
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
