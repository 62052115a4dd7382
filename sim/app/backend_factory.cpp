// SPDX-License-Identifier: MIT
#include "sim/app/backend_factory.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "cuda/cuda_backend.hpp"
#include "sim/cpu/cpu_backend.hpp"

namespace sim {

std::unique_ptr<Backend> make_backend(const Config& cfg, const Grid& grid, std::string* notice) {
  switch (cfg.backend) {
    case BackendKind::cpu: return make_cpu_backend(cfg, grid);
    case BackendKind::cuda:
      require_backend_built(cfg);
      return make_cuda_backend(cfg, grid);
    case BackendKind::auto_:
      if (cuda_device_available()) return make_cuda_backend(cfg, grid);
      if (notice)
        *notice = cuda_backend_built() ? "no CUDA device found: running on the CPU backend"
                                       : "built without CUDA: running on the CPU backend";
      return make_cpu_backend(cfg, grid);
  }
  throw std::runtime_error("unknown backend");
}

void require_backend_built(const Config& cfg) {
  if (cfg.backend == BackendKind::cuda && !cuda_backend_built())
    throw std::runtime_error("--backend cuda: this sim was built without CUDA (configure with nvcc on the PATH)");
}

int cpu_threads_for(const Config& cfg, const SimState& s, int processors) {
  int64_t alive = 0;
  for (const auto a : s.particles.alive) alive += a != 0;
  const double work = double(cfg.nx) * cfg.ny + 0.5 * double(std::max<int64_t>(alive, cfg.particle_capacity()));
  const double threads = std::max(1.0, std::floor(work / kCpuWorkPerThread));
  return static_cast<int>(std::min<double>(threads, std::max(processors, 1)));
}

void fit_cpu_threads(const Config& cfg, const SimState& s, int ranks) {
  if (std::getenv("OMP_NUM_THREADS") != nullptr) return;  // the user's choice stands
  omp_set_num_threads(std::max(1, cpu_threads_for(cfg, s, omp_get_num_procs()) / std::max(ranks, 1)));
}

bool split_runs_on_cuda(const Config& cfg) { return cuda_ranks_built() && resolves_to_cuda(cfg); }

std::unique_ptr<Backend> make_split_backend(const Config& cfg, const Grid& grid, std::shared_ptr<const RankSplit> slabs) {
  if (split_runs_on_cuda(cfg)) return make_cuda_backend(cfg, grid, std::move(slabs));
  return make_cpu_backend(cfg, grid, std::move(slabs));
}

bool resolves_to_cuda(const Config& cfg) {
  if (cfg.backend == BackendKind::cuda) return true;
  if (cfg.backend == BackendKind::auto_) return cuda_device_available();
  return false;
}

}  // namespace sim
