// SPDX-License-Identifier: MIT
#include "cuda/memory_plan.hpp"

#include <algorithm>
#include <climits>
#include <optional>
#include <stdexcept>

#include "cuda/cuda_fft.hpp"
#include "cuda/cuda_helmholtz_fft.hpp"
#include "cuda/cuda_poisson.hpp"
#include "cuda/particle_store.hpp"
#include "sim/model/checked.hpp"
#include "sim/model/poisson.hpp"
#include "sim/model/viscous.hpp"

namespace sim::cuda {

namespace {
// u v, the saved and stage copies of each (the stages' base and input), phi and its Jacobi twin, rhs, open.
constexpr int kGridArrays = 10;
// Two-way coupling: deposited mass M and the implicit drag's A and B, per component.
constexpr int kCouplingArrays = 8;  // mass, A, B per component; the step's start velocity (u, v)
// The implicit viscous solve: two iterates of u and v.
constexpr int kViscousArrays = 4;
// CUB's single-pass reductions need a few KiB; room for the diagnostics' structs.
constexpr size_t kReduceWorkspace = 1 << 20;
}  // namespace

namespace {
// fluid.viscous = implicit: the solve's two iterates of u and v, the
// partial sums of a face pass (r^2 and b^2 per block) and its device scalars.
void plan_viscous(MemoryPlan& p, const Config& cfg, const Grid& g, const Exec& e, const StencilOpts& o, bool ranks) {
  p.viscous_work = true;
  p.fields += kViscousArrays * g.size() * sizeof(real);
  p.reductions += 2 * static_cast<size_t>(helmholtz_blocks(e, o)) * sizeof(double) + sizeof(ViscousDeviceState);
  const Constants k = make_constants(cfg, g);
  if (cfg.viscosity > 0 && viscous_takes_transform(cfg, k, ranks)) p.viscous_transform = CudaFftHelmholtz::bytes(k, cfg.dense_transform_cells);
}
}  // namespace

int key_bits(uint64_t max_key) {
  int b = 0;
  while (max_key != 0) {
    ++b;
    max_key >>= 1;
  }
  return b > 0 ? b : 1;
}

std::string MemoryPlan::breakdown() const {
  std::string s = "grid fields " + format_bytes(fields) + ", particles " + format_bytes(particles) + ", sorting " +
                  format_bytes(sorting) + ", deposit " + format_bytes(deposit) + ", reductions " + format_bytes(reductions);
  if (multigrid > 0) s += ", multigrid " + format_bytes(multigrid);
  if (transform > 0) s += ", transform solve " + format_bytes(transform);
  if (viscous_transform > 0) s += ", viscous transform solve " + format_bytes(viscous_transform);
  return s;
}

std::string transform_refusal(bool ranks) {
  return ranks ? "the transform solve does not run over GPU ranks (multigrid does)" : std::string();
}

MemoryPlan plan_memory(const Config& cfg, const Grid& g, const StencilOpts& o, bool ranks) {
  MemoryPlan p;
  p.capacity = cfg.particle_capacity();
  p.couples = cfg.two_way && p.capacity > 0;
  p.advection_clearance = cfg.advection == AdvectionScheme::quick && !cfg.obstacles.empty();
  p.fields = (kGridArrays + (p.couples ? kCouplingArrays : 0) + (p.advection_clearance ? 1 : 0)) * g.size() *
                 sizeof(real) +
             sizeof(Constants);
  const Exec e{nullptr, ConstantsIn::constant, nullptr, g.nx, g.ny};
  p.reductions = static_cast<size_t>(cell_blocks(e, o)) * sizeof(double) + kReduceWorkspace;
  if (cfg.implicit_viscosity()) plan_viscous(p, cfg, g, e, o, ranks);
  // the boundary links and their sums (sim/model/boundary_flux.hpp)
  if (measures_boundaries(cfg))
    p.reductions += static_cast<size_t>(boundary_link_bound(cfg)) * sizeof(BoundaryLink) +
                    (kBoundaryOwners + 1) * sizeof(int) + kBoundaryParts * kBoundaryOwners * 2 * sizeof(double);

  const PressureSolverKind solver = resolve_solver(cfg, transform_refusal(ranks));
  if (solver == PressureSolverKind::fft)
    p.transform = g.size() * sizeof(double) + CudaFftPoisson::bytes(g.nx, g.ny, cfg.dense_transform_cells);
  else if (solver == PressureSolverKind::multigrid)
    p.multigrid = CudaPoisson::bytes(g);

  p.sorts = cfg.sort_every > 0 && p.capacity > 0;
  p.sorted_deposit = cfg.two_way && cfg.deposit == Deposit::sorted && p.capacity > 0;
  // Counts past 32-bit ints (kernel indices, CUB item counts) are refused
  // before any product of them is formed: 8 pairs a slot, 32 bytes a slot.
  // (Grid::make already refused a grid of 2^31 points or more.)
  const std::optional<int64_t> pairs = checked_mul<int64_t>(p.sorted_deposit ? 8 : 0, p.capacity);
  if (p.capacity >= INT_MAX || !pairs || *pairs >= INT_MAX)
    throw std::runtime_error("cuda: " + std::to_string(p.capacity) +
                             " particle slots exceed the backend's 32-bit indexing (at most 268435455 with "
                             "gpu.deposit = sorted, 2147483646 otherwise)");
  p.pairs = *pairs;
  p.gather_deposit = cfg.two_way && cfg.deposit == Deposit::gather && p.capacity > 0;
  if (p.gather_deposit) {
    p.gather_nodes = gather_node_count(g.nx, g.ny);
    if (4 * p.gather_nodes > int64_t(UINT32_MAX) || p.gather_nodes >= INT_MAX)
      throw std::runtime_error("cuda: gpu.deposit = gather keys 4 (nx + 2) (ny + 1) = " +
                               std::to_string(4 * p.gather_nodes) + " stencil nodes, past 32-bit keys");
    p.gather_sentinel = static_cast<uint32_t>(4 * p.gather_nodes);
    p.gather_key_bits = key_bits(p.gather_sentinel);
  }
  p.fixed_deposit = cfg.two_way && cfg.deposit == Deposit::fixed && p.capacity > 0;
  // M, B and A per component as 64-bit integers, and the two bounds
  if (p.fixed_deposit) p.deposit = 6 * g.size() * sizeof(unsigned long long) + 2 * sizeof(unsigned int);
  p.particles = ParticleStore::bytes(cfg.layout, p.capacity, p.sorts) + 2 * sizeof(unsigned long long);
  // two-way: per slot what the particle took from the projection (x, y and
  // the momentum, 16 B) and its bound; per face the same deposited as 64-bit
  // integers (u and v)
  if (p.couples) {
    p.particles += static_cast<size_t>(p.capacity) * sizeof(float4) + sizeof(unsigned int);
    p.fields += 2 * g.size() * sizeof(unsigned long long);
  }
  if (cfg.sampling == Sampling::packed && p.capacity > 0) p.particles += 2 * g.size() * sizeof(float4);

  p.cell_key_bits = key_bits(static_cast<uint64_t>(g.nx) * static_cast<uint64_t>(g.ny));  // dead slots: nx * ny
  p.deposit_sentinel = deposit_key(static_cast<int>(std::min<size_t>(g.size(), INT_MAX)), 0);
  p.deposit_key_bits = key_bits(p.deposit_sentinel);
  if (p.sorts) {
    p.sort_workspace = radix_sort_workspace_bytes(static_cast<int>(p.capacity), p.cell_key_bits);
    p.sorting = 4 * static_cast<size_t>(p.capacity) * sizeof(uint32_t) + p.sort_workspace;
  }
  if (p.sorted_deposit) {
    p.deposit_workspace = deposit_workspace_bytes(static_cast<int>(p.pairs), p.deposit_key_bits);
    // keys, their sort twin, unique keys, the pair index and its sort twin;
    // values of the mass or B, of A, the gathered values and the run sums
    // (two each: B and A in one pass)
    p.deposit = static_cast<size_t>(p.pairs) * (5 * sizeof(uint32_t) + 6 * sizeof(real)) + sizeof(int) +
                p.deposit_workspace;
  }
  if (p.gather_deposit) {
    p.deposit_workspace = radix_sort_workspace_bytes(static_cast<int>(p.capacity), p.gather_key_bits);
    // per slot: the key and slot with their sort twins (16 B), the u and v
    // stencil weights (16 B), the mass (4 B), B and A per component (16 B);
    // per stencil node its range (8 B)
    p.deposit = static_cast<size_t>(p.capacity) * (4 * sizeof(uint32_t) + 4 * sizeof(float2) + sizeof(real)) +
                static_cast<size_t>(p.gather_nodes) * sizeof(int2) + p.deposit_workspace;
  }
  return p;
}

}  // namespace sim::cuda
