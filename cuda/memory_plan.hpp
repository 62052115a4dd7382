// SPDX-License-Identifier: MIT
// Device memory a case needs, computed before anything is allocated so an
// oversized case fails with one message instead of halfway through setup.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "cuda/kernels.hpp"
#include "sim/model/config.hpp"
#include "sim/model/grid.hpp"

namespace sim::cuda {

// Bits of the largest radix-sort key, at least 1.
int key_bits(uint64_t max_key);

struct MemoryPlan {
  // what the run needs
  int64_t capacity = 0;
  bool sorts = false;           // gpu.sort_every > 0: a second particle bank and sort keys
  bool couples = false;         // two-way coupling with particle slots: the coupling's 6 face arrays
  bool sorted_deposit = false;  // two-way with gpu.deposit = sorted: 8 pairs per slot
  bool gather_deposit = false;
  bool fixed_deposit = false;   // two-way with gpu.deposit = fixed: 64-bit M, B, A per face  // two-way with gpu.deposit = gather: one key per slot, a range per stencil node
  bool advection_clearance = false;  // fluid.advection = quick with obstacles: one grid array more
  bool viscous_work = false;  // fluid.viscous = implicit: the solve's two iterates of u and v, 4 grid arrays
  int64_t pairs = 0;
  int cell_key_bits = 1, deposit_key_bits = 1;
  uint32_t deposit_sentinel = 0;
  int64_t gather_nodes = 0;  // gather: stencil nodes, (nx + 2) (ny + 1)
  int gather_key_bits = 1;
  uint32_t gather_sentinel = 0;  // 4 * gather_nodes
  size_t sort_workspace = 0, deposit_workspace = 0;
  // bytes by use
  size_t fields = 0, reductions = 0, particles = 0, sorting = 0, deposit = 0;
  size_t multigrid = 0;  // MGPCG levels and float64 vectors (pressure.solver multigrid, or auto where fft does not apply)
  size_t transform = 0;  // the transform pressure solve: float64 x, spectrum, cuFFT work area (estimated)
  size_t viscous_transform = 0;  // the transform viscous solve: the larger component's spectrum, cuFFT work area
  size_t total() const {
    return fields + reductions + particles + sorting + deposit + multigrid + transform + viscous_transform;
  }
  std::string breakdown() const;  // "fields X, particles Y, ..."
};

// Why the CUDA backend cannot run the transform solve (its
// transform_refusal()): over GPU ranks (`ranks`) it does not; empty on one
// process.
std::string transform_refusal(bool ranks);

// `cfg`'s strategies resolved (resolve_strategies: cuda_memory_need and
// make_cuda_backend plan that way). Throws when a count exceeds the 32-bit
// indexing of the kernels. `ranks`:
// one rank of a run over GPU ranks. The pressure solver budgeted is the one
// the run makes: resolve_solver (sim/model/poisson.hpp) with
// transform_refusal(ranks).
MemoryPlan plan_memory(const Config& cfg, const Grid& g, const StencilOpts& o, bool ranks = false);

}  // namespace sim::cuda
