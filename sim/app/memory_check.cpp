// SPDX-License-Identifier: MIT
#include "sim/app/memory_check.hpp"

#include "sim/model/coupling_physics.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "cuda/cuda_backend.hpp"
#include "io/config_loader.hpp"
#include "io/snapshot_fields.hpp"
#include "io/snapshot_thread.hpp"
#include "sim/app/backend_factory.hpp"
#include "sim/model/grid.hpp"
#include "sim/model/coupling_physics.hpp"
#include "sim/model/particles.hpp"
#include "sim/model/poisson.hpp"
#include "sim/model/state.hpp"

namespace sim {
namespace {

constexpr uint64_t kReal = sizeof(real);
constexpr uint64_t kParticle = sizeof(Particle);  // 32 B: one slot in any layout
// The process before it allocates a field: code, libraries, OpenMP threads,
// HDF5 (measured: about 19 MiB of resident memory for a 16 x 16 run).
constexpr uint64_t kBase = uint64_t(24) << 20;
// io/snapshot_fields.cpp, per cell: the grid datasets of kSnapshotFields.
constexpr uint64_t kSnapshotCell = snapshot_bytes_per(SnapshotGroup::grid);
// io/snapshot_fields.cpp, per alive particle: the slot list (size_t), then
// the particle datasets of kSnapshotFields.
constexpr uint64_t kSnapshotParticle = sizeof(size_t) + snapshot_bytes_per(SnapshotGroup::particles);

// The pressure solver's per-point arrays (sim/cpu/cpu_poisson.cpp, cpu_fft.cpp)
// of the solver resolve_solver picks for the CPU backend, which refuses none.
Bytes cpu_solver_bytes(const Config& cfg, Bytes points, Bytes cells) {
  const PressureSolverKind solver = resolve_solver(cfg);
  if (solver == PressureSolverKind::jacobi || solver == PressureSolverKind::sor) return 0;
  const Bytes x_r_p_q = points * (4 * sizeof(double));  // float64 Krylov vectors (made for fft too)
  if (solver == PressureSolverKind::fft)  // level 0's cx, cy and open mask, CpuFftPoisson's own cx, cy, the FFTW work array
    return points * (2 * kReal + 1) + points * (2 * kReal) + x_r_p_q + cells * sizeof(double);
  // every level: cx, cy, open, e, f; the coarse levels add a third of level 0
  const Bytes levels = points * (4 * kReal + 1);
  return levels + levels / 3 + x_r_p_q;
}

struct Holding {
  Bytes grid, particles;
  Bytes total() const { return grid + particles; }
};

}  // namespace

MemoryNeed host_memory_need(const Config& cfg, bool cuda) {
  const Bytes points = Bytes::count(Grid::points(cfg.nx, cfg.ny));
  const Bytes cells = Bytes::count(cfg.nx) * Bytes::count(cfg.ny);
  int64_t cap = 0;
  try {
    cap = cfg.particle_capacity();
  } catch (const std::overflow_error&) {  // refused by the loader; a Config built in code can hold it
    cap = -1;
  }
  const Bytes slots = cap < 0 ? Bytes::overflow() : Bytes::count(cap);
  const bool levels = cfg.solver != PressureSolverKind::jacobi && cfg.solver != PressureSolverKind::sor;

  // sim/model/state.cpp: u, v, phi, open and the particles.
  const Bytes state_grid = points * (4 * kReal), state_particles = slots * kParticle;
  // Simulation's constructor: the operator (cx, cy) of every level while the solver is set up.
  const Bytes hierarchy = levels ? points * (2 * kReal) + points * (2 * kReal) / 3 : Bytes(0);
  // Snapshots (sim/app/run.cpp, io/snapshot_thread.hpp): at most kMaxPending
  // copies of the state in flight and, while the writer is behind, the next
  // one made before submit() waits; on the GPU as many page-locked staging
  // slots (cuda/snapshot_staging.hpp) and the state the writer makes from one.
  // With only the final snapshot there is one. The writer derives the grid
  // fields, frees them, then the particle arrays: the larger of the two counts.
  const uint64_t copies = cfg.snapshot_every > 0 ? SnapshotThread::kMaxPending + 1 : 1;
  const Bytes derived_grid = cells * kSnapshotCell, derived_particles = slots * kSnapshotParticle;
  const bool grid_larger = !(derived_grid < derived_particles);
  Holding snapshots{state_grid * copies + (grid_larger ? derived_grid : Bytes(0)),
                    state_particles * copies + (grid_larger ? Bytes(0) : derived_particles)};

  Holding setup, stepping;
  if (!cuda) {
    // sim/cpu/cpu_backend.cpp: 10 fields (u v, the saved and stage copies
    // of each, phi and its twin, rhs, open), 6 more when two-way (M, A, B
    // per component), 2 more with particles (the two-way step's start
    // velocity), 4 more with implicit
    // viscosity (the solve's two iterates of u and v), 1 more with
    // fluid.advection = quick and obstacles
    // (the clearance field); the particles in SoA and AoS; per particle when
    // two-way, the deposit record (x, y and 4 values), its row and the
    // coefficients of both components.
    const uint64_t clearance = cfg.advection == AdvectionScheme::quick && !cfg.obstacles.empty() ? 1 : 0;
    const uint64_t viscous = cfg.implicit_viscosity() ? 4 : 0;
    const uint64_t coupling = cfg.two_way ? (cfg.coupled() ? 8 : 6) : 0;
    const Bytes fields = points * ((10 + coupling + viscous + clearance) * kReal);
    const Bytes solver = cpu_solver_bytes(cfg, points, cells);
    const Bytes particles = slots * (2 * kParticle);
    const Bytes reactions =
        cfg.two_way ? slots * (6 * kReal + sizeof(int) + 2 * sizeof(CouplingCoeffs)) : Bytes(0);
    setup = {state_grid + hierarchy + fields + solver, state_particles + particles};
    stepping = {fields + solver + snapshots.grid, particles + reactions + snapshots.particles};
  } else {
    // The fields and particles live on the device; the host holds the
    // initial state while the backend is made, then the snapshots. The
    // device side (check_run_fits: cuda_memory_need, cuda/memory_plan.cpp)
    // counts every deposit's buffers: sorted's pairs, gather's keys, records
    // and node ranges; neither needs host memory.
    setup = {state_grid + hierarchy, state_particles};
    stepping = snapshots;
  }
  const Holding& peak = stepping.total() < setup.total() ? setup : stepping;
  MemoryNeed m;
  m.grid = peak.grid;
  m.particles = peak.particles;
  m.base = kBase;
  return m;
}

namespace {

// The first number on the line of `path` that starts with `key`, times `scale`.
bool read_number(const std::string& path, const std::string& key, uint64_t scale, uint64_t& out) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    std::istringstream s(line.substr(key.size()));
    unsigned long long v = 0;
    if (!(s >> v)) return false;
    const auto scaled = checked_mul<uint64_t>(v, scale);
    out = scaled ? *scaled : UINT64_MAX;
    return true;
  }
  return false;
}

// What a cgroup memory limit (v2, else v1) leaves: limit - usage + inactive
// file pages (reclaimable); UINT64_MAX without a limit.
uint64_t cgroup_available() {
  uint64_t limit = 0, usage = 0, inactive = 0;
  const bool v2 = read_number("/sys/fs/cgroup/memory.max", "", 1, limit);
  const std::string dir = v2 ? "/sys/fs/cgroup/" : "/sys/fs/cgroup/memory/";
  if (!v2 && !read_number(dir + "memory.limit_in_bytes", "", 1, limit)) return UINT64_MAX;  // also "max" in v2
  if (limit >= (uint64_t(1) << 62)) return UINT64_MAX;  // v1 writes "no limit" as about 2^63
  if (!read_number(dir + (v2 ? "memory.current" : "memory.usage_in_bytes"), "", 1, usage)) return UINT64_MAX;
  read_number(dir + "memory.stat", v2 ? "inactive_file " : "total_inactive_file ", 1, inactive);
  const uint64_t used = usage > inactive ? usage - inactive : 0;
  return limit > used ? limit - used : 0;
}

std::string seeded_text(const Config& cfg) {
  try {
    return std::to_string(cfg.total_seeded());
  } catch (const std::overflow_error&) {
    return "more than 2^63 - 1";
  }
}

}  // namespace

uint64_t host_memory_available() {
  uint64_t avail = 0;
  if (!read_number("/proc/meminfo", "MemAvailable:", 1024, avail)) {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) avail = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  }
  return avail == 0 ? 0 : std::min(avail, cgroup_available());
}

std::string format_size(Bytes b) {
  if (b.over()) return "more than 16.0 EiB";
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(b.value());
  int u = 0;
  while (v >= 1024.0 && u < 6) v /= 1024.0, ++u;
  char buf[48];
  if (u == 0) std::snprintf(buf, sizeof buf, "%.0f B", v);
  else std::snprintf(buf, sizeof buf, v < 9.995 ? "%.2f %s" : v < 99.95 ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

std::string memory_shortfall(const Config& cfg, const MemoryNeed& need, uint64_t available, const std::string& kind,
                             const std::string& on) {
  const Bytes total = need.total();
  if (available == 0 || !(total > Bytes(available))) return {};  // fits, or nothing known to compare with
  // The keys that drive the size, the first that a --set gave named instead
  // of the file: that is where the size came from.
  std::string subject;
  std::vector<std::string> keys;
  if (!(need.particles > need.grid)) {
    subject = "domain.nx x domain.ny = " + std::to_string(cfg.nx) + " x " + std::to_string(cfg.ny);
    keys = cfg.nx >= cfg.ny ? std::vector<std::string>{"domain.nx", "domain.ny"}
                            : std::vector<std::string>{"domain.ny", "domain.nx"};
  } else if (cfg.capacity > 0) {
    subject = "particles.capacity = " + std::to_string(cfg.capacity);
    keys = {"particles.capacity"};
  } else {
    subject = "particles.regions (" + seeded_text(cfg) + " particles)";
    std::size_t largest = 0;
    for (std::size_t i = 1; i < cfg.regions.size(); ++i)
      if (cfg.regions[i].count > cfg.regions[largest].count) largest = i;
    if (!cfg.regions.empty()) keys = {"particles.regions[" + std::to_string(largest) + "].count"};
  }
  std::string from = cfg.source;
  for (const auto& key : keys)
    if (std::string o = override_of(cfg, key); !o.empty()) {
      from = std::move(o);
      break;
    }
  return from + ": " + subject + " needs " + format_size(total) + " of " + kind + " memory (grid " +
         format_size(need.grid) + ", particles " + format_size(need.particles) + "), " + format_size(available) +
         " available" + on;
}

MemoryNeed host_memory_need_on_host(const Config& cfg, bool cuda, int ranks_on_host, bool split) {
  MemoryNeed need = host_memory_need(cfg, cuda);
  if (ranks_on_host <= 1) return need;
  const Bytes n = Bytes::count(ranks_on_host);
  need.grid = need.grid * n;
  need.base = need.base * n;
  // CPU ranks hold only their own particles (a compacted store, seeded and
  // restarted by position): every record lives on one rank, so the ranks
  // together hold one run's particles, and at most one copy more of each
  // while rank 0 gathers a snapshot. The host's copies of GPU ranks hold
  // every slot.
  need.particles = need.particles * (split && !cuda ? Bytes::count(std::min(ranks_on_host, 2)) : n);
  return need;
}

void check_run_fits(const Config& cfg, int ranks_on_host, bool split) {
  require_backend_built(cfg);
  const bool cuda = resolves_to_cuda(cfg);
  const MemoryNeed host_need = host_memory_need_on_host(cfg, cuda, ranks_on_host, split);
  std::string on;
  if (ranks_on_host > 1)
    on = " (" + std::to_string(ranks_on_host) + " ranks on this host, each holding the whole grid)";
  const std::string host = memory_shortfall(cfg, host_need, host_memory_available(), "host", on);
  if (!host.empty()) throw std::runtime_error(host);
  if (cuda) {
    // A split run on the CUDA backend runs GPU ranks (make_split_backend):
    // each rank's plan, with the pressure solver they run.
    const bool gpu_ranks = split && split_runs_on_cuda(cfg);
    const CudaMemoryNeed d = cuda_memory_need(cfg, Grid::make(cfg.nx, cfg.ny, cfg.lx, cfg.ly), gpu_ranks);
    MemoryNeed need;
    need.grid = d.grid;
    need.particles = d.particles;
    std::string where = " on " + d.device;
    if (gpu_ranks) {
      // GPU ranks: each holds the whole grid, every slot, a slot's room for
      // the particles leaving its slab (32 bytes) and each slot's position in
      // the sorted store (4); ranks beyond the host's GPUs share them.
      need.particles = need.particles + Bytes::count(cfg.particle_capacity()) * Bytes::count(32);
      const int per_gpu = (ranks_on_host + std::max(d.devices, 1) - 1) / std::max(d.devices, 1);
      if (per_gpu > 1) {
        need.grid = need.grid * Bytes::count(per_gpu);
        need.particles = need.particles * Bytes::count(per_gpu);
        where += " (" + std::to_string(per_gpu) + " ranks on this GPU, each holding the whole grid)";
      }
    }
    const std::string device = memory_shortfall(cfg, need, d.free, "device", where);
    if (!device.empty()) throw std::runtime_error(device);
  }
}

}  // namespace sim
