// Host-callable launchers of every kernel of the CUDA backend, one per
// physics phase, plus the bytes each moves at minimum. Plain C++ (no CUDA
// syntax), so the backend, the tests and a benchmark can call them.
//
// Grid arrays are the MAC arrays of sim/grid.hpp (pitch floats per row,
// one-cell halo). Every launcher enqueues on Exec::stream and returns
// without synchronising.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/device_buffer.hpp"
#include "sim/constants.hpp"
#include "sim/injection.hpp"
#include "sim/particles.hpp"
#include "sim/strategies.hpp"

namespace sim::cuda {

// How every launch runs: the stream and where the constants are read from.
struct Exec {
  cudaStream_t stream = nullptr;
  ConstantsIn constants = ConstantsIn::constant;
  const Constants* k_dev = nullptr;  // the device copy, read when constants == global
  int nx = 0, ny = 0, pitch = 0;     // host copies of the grid shape, for launch geometry
};

// The memory-access variant of a grid stencil and its thread block.
struct StencilOpts {
  Stencil variant = Stencil::ldg;
  int block_x = 32, block_y = 8;
  bool solids = false;  // Constants::has_solids: false reads no mask at all
  // fluid.advection: picks the momentum stage's instantiation, a
  // neighbourhood of radius stage_radius() (quick: 2, central: 1)
  AdvectionScheme advection = AdvectionScheme::central;
  int stage_radius() const { return advection == AdvectionScheme::quick ? 2 : 1; }
};

// Defaults when the config leaves gpu.block_x/y at 0: 32 wide for full
// 128-byte rows per warp; the shared tile is taller so its two halo rows
// cost a smaller fraction of the loads (34x18 loads for 32x16 points).
int default_block_x(Stencil s);
int default_block_y(Stencil s);
// 0 = default; validates
StencilOpts make_stencil_opts(Stencil s, int block_x, int block_y, bool solids,
                              AdvectionScheme advection = AdvectionScheme::central);

// Shared tile row pitch in floats for a block bx wide with a halo of
// `radius` cells, padded so the rows a warp touches fall in distinct banks:
// a warp covering 32 / bx rows of a narrow block needs rows offset by bx
// banks (pitch = bx + 32, which holds a halo of up to 16); a block of whole
// warps per row only needs the halo (bx + 2 radius); any other width takes
// an odd pitch.
SIM_HD int tile_pitch(int bx, int radius = 1) {
  if (bx % 32 == 0) return bx + 2 * radius;
  if (32 % bx == 0) return bx + 32;
  return (bx + 2 * radius) | 1;
}
// Dynamic shared memory of a `fields`-tile stencil launch with a halo of `radius` cells.
size_t shared_tile_bytes(int fields, int bx, int by, int radius = 1);

// Blocks of a launch over the nx x ny cells: the number of partial sums
// compute_rhs and residual write.
int cell_blocks(const Exec& e, const StencilOpts& o);

// --- constants: one __constant__ block per translation unit ------------
void upload_fluid_constants(const Constants& c, cudaStream_t s);
void upload_pressure_constants(const Constants& c, cudaStream_t s);
void upload_particle_constants(const Constants& c, cudaStream_t s);
void upload_reduction_constants(const Constants& c, cudaStream_t s);

// --- fluid (cuda/fluid_kernels.cu) -------------------------------------
// out = a base + b (in + dt L(in)) on active faces, 0 on solid faces
// (Backend::rk_stage); base not read when a == 0. `clearance`: the
// advection_clearance field (sim/advection.hpp), read only by the quick
// scheme with obstacles (else may be null).
void momentum_stage(const Exec& e, const StencilOpts& o, const real* ui, const real* vi, const real* ub,
                    const real* vb, const real* open, const real* clearance, real* uo, real* vo, real a, real b);
// u = u** - dt grad phi on active faces.
void project(const Exec& e, const StencilOpts& o, const real* phi, const real* open, real* u, real* v);
void fill_velocity_halo(const Exec& e, real* u, real* v);

// --- pressure (cuda/pressure_kernels.cu) -------------------------------
// rhs = div(u)/dt on fluid cells; partials[b] = sum of rhs^2 over block b (double).
void compute_rhs(const Exec& e, const StencilOpts& o, const real* u, const real* v, const real* open, real* rhs,
                 double* partials);
void fill_pressure_halo(const Exec& e, real* phi);
void jacobi_sweep(const Exec& e, const StencilOpts& o, const real* phi, const real* rhs, const real* open,
                  real* out);
// stencil=temporal: `sweeps` (1..kTemporalSweeps) Jacobi sweeps in one pass
// through memory, phi -> out, equal bit for bit to that many jacobi_sweep
// calls with fill_pressure_halo after each (out's halo is not filled).
// Only without obstacles and with no periodic side (the caller falls back
// to single sweeps otherwise). Four: the pass then moves 3.1 B per cell and
// sweep, far below the copy roof, so deeper passes would only add
// redundant halo work and registers (docs/GPU_BACKEND.md). kTemporalSweeps:
// sim/strategies.hpp.
void jacobi_sweeps_temporal(const Exec& e, const real* phi, const real* rhs, real* out, int sweeps);
void sor_sweep(const Exec& e, const StencilOpts& o, real* phi, const real* rhs, const real* open, int color);
// partials[b] = sum of (rhs - lap phi)^2 over block b.
void residual(const Exec& e, const StencilOpts& o, const real* phi, const real* rhs, const real* open,
              double* partials);

// --- particles (cuda/particle_kernels.cu) ------------------------------
struct DeviceParticles {
  Layout layout = Layout::soa;
  ParticlesAoSView aos;
  ParticlesSoAView soa;
  int64_t size() const { return layout == Layout::aos ? aos.n : soa.n; }
};

// Device counters kept across steps (ParticleCounters), and the alive
// particles found not finite in a step (Backend::nonfinite_particles).
enum CounterIndex { kRemoved = 0, kRecycled = 1, kNonFinite = 2, kCounterCount = 3 };

// Where the particle kernels read the fluid velocity, by sampling path.
struct VelocitySource {
  Sampling sampling = Sampling::software;
  const real* u = nullptr;  // software
  const real* v = nullptr;
  cudaTextureObject_t tex_u = 0, tex_v = 0;  // texture
  const float4* u4 = nullptr;                // packed (pack_velocity)
  const float4* v4 = nullptr;
};

// Packed sampling: u4[c] = (u[c], u[c + 1], u[c + pitch], u[c + pitch + 1]),
// the 4 corners of the bilinear stencil whose lower-left node is storage
// index c (the same for v4 and v), for every c with c + pitch + 1 < the
// grid size (the rest are zero and never read).
void pack_velocity(const Exec& e, const real* u, const real* v, float4* u4, float4* v4, size_t size);

struct ParticleStepArgs {
  VelocitySource fluid;  // the fluid after the coupling's update
  bool two_way = false;
  const real* mu = nullptr;  // two-way: the particle mass deposited on the u and v faces (couple_particles)
  const real* mv = nullptr;
  unsigned long long* counters = nullptr;  // [kRemoved, kRecycled, kNonFinite]
};
// Pass 4 of the coupled step (sim/particle_physics.hpp): coefficients from
// the loading in mu, mv (phi = 0 one-way), sample the fluid, drag and
// gravity, obstacles, walls.
void step_particles(const Exec& e, const DeviceParticles& p, const ParticleStepArgs& a);

// Two-way coupling, passes 1 to 3 (sim/particle_physics.hpp). The per-face
// arrays: M (particle mass), A and B of the implicit drag. M must be zero
// before couple_particles; A and B are zero before and after (the face
// update zeroes them), M keeps the step's mass for step_particles.
struct CouplingFields {
  real *mu, *mv, *au, *av, *bu, *bv;
};
// deposit=sorted: every pass writes 8 pairs per slot at 8 (id % capacity) +
// corner in the same order; the keys (2 face + component, or the sentinel)
// and the pair index of pass 1 are sorted once (stably) and each quantity
// is then summed by reduce-by-key in that order (cuda/deposit.cu).
struct DepositBuffers {
  uint32_t *keys, *keys_alt, *unique_keys;
  uint32_t *perm, *perm_alt;  // pair index carried through the sort
  real *values, *values_b;    // per pair: pass 1 the mass, pass 2 the B and the A contributions
  real *gathered, *sums;
  int* run_count;     // one int
  uint32_t sentinel;  // key of "no face": deposit_key(grid size, 0)
  void* workspace;
  size_t workspace_bytes;
  int pairs, end_bit;
};
struct CouplingArgs {
  CouplingFields f;
  Deposit deposit = Deposit::sorted;
  DepositBuffers pairs{};  // deposit=sorted
  uint32_t capacity = 0;
  const real* open = nullptr;  // cell open flags (faces touching a solid are not updated)
};
// Deposits the particle mass onto M, the implicit drag onto A and B, and
// updates the active fluid faces u, v (the halo is not filled).
void couple_particles(const Exec& e, const DeviceParticles& p, const CouplingArgs& a, real* u, real* v);
// New ids [first_id, first_id + count): id k replaces the slot whose id % capacity == k % capacity.
void inject_particles(const Exec& e, const DeviceParticles& p, uint64_t first_id, int64_t count, uint64_t seed,
                      const InjectionC& inj, unsigned long long* counters);
// keys[s] = cell index of slot s (nx * ny when dead), slots[s] = s.
void particle_cell_keys(const Exec& e, const DeviceParticles& p, uint32_t* keys, uint32_t* slots);
// Fluid velocity at n points, by the given sampling path (tests and benchmarks).
void sample_fluid_velocity(const Exec& e, const VelocitySource& fluid, const real* x, const real* y, int n, real* ufx,
                           real* ufy);

// --- particle order (cuda/particle_sort.cu) ----------------------------
// Stable radix sort of (key, value) pairs over the low end_bit bits, in
// place through the alternate buffers; returns true when the result ended
// in the alternate buffers.
bool radix_sort_pairs(cudaStream_t s, uint32_t* keys, uint32_t* keys_alt, uint32_t* values, uint32_t* values_alt,
                      int n, int end_bit, void* workspace, size_t workspace_bytes);
bool radix_sort_pairs(cudaStream_t s, uint32_t* keys, uint32_t* keys_alt, real* values, real* values_alt, int n,
                      int end_bit, void* workspace, size_t workspace_bytes);
size_t radix_sort_workspace_bytes(int n, int end_bit);
// dst[s] = src[perm[s]], every field.
void gather_particles(cudaStream_t s, const DeviceParticles& src, const DeviceParticles& dst, const uint32_t* perm);
// dst[id % capacity] = src[s]: the canonical slot order of the host state.
void scatter_to_canonical(cudaStream_t s, const DeviceParticles& src, const DeviceParticles& dst);

// --- two-way deposit, sorted (cuda/deposit.cu) -------------------------
// Bitwise reproducible run to run. sort_deposit_pairs: the pair keys sorted
// stably, the pair index carried along; deposit_sorted: per run of one key,
// the values at the carried indices summed in a fixed order and added to
// to_u / to_v (by the key's component). One sort serves every quantity of
// the step, as all are emitted at the same pair slots.
struct SortedPairs {
  const uint32_t* keys;
  const uint32_t* perm;
};
SortedPairs sort_deposit_pairs(cudaStream_t s, const DepositBuffers& b);
void deposit_sorted(cudaStream_t s, const DepositBuffers& b, const SortedPairs& sorted, const real* values,
                    real* to_u, real* to_v);
size_t deposit_workspace_bytes(int pairs, int end_bit);
// Key of a face deposit: 2 * face + component (0 u, 1 v); `sentinel` = none.
SIM_HD uint32_t deposit_key(int face, int component) { return 2u * static_cast<uint32_t>(face) + component; }

// --- reductions (cuda/reductions.cu) -----------------------------------
// CUB temporary storage grows on first use (a few KiB: reductions are single pass).
struct ReduceScratch {
  DeviceBuffer<unsigned char>* workspace = nullptr;
  double* d_out = nullptr;  // >= 8 doubles of device memory
  double* h_out = nullptr;  // >= 8 doubles of pinned host memory
};
// Sum of n doubles, read back (synchronises the stream).
double sum_to_host(const Exec& e, const ReduceScratch& r, const double* values, int n);
// The same, and the device counter *count copied back in the same
// synchronisation (one more 8-byte copy, no extra wait).
double sum_to_host(const Exec& e, const ReduceScratch& r, const double* values, int n,
                   const unsigned long long* count, unsigned long long& count_out);
// max over faces (i, j) in [0, nx] x [0, ny] of |u|/dx + |v|/dy (synchronises).
double max_velocity_rate(const Exec& e, const ReduceScratch& r, const real* u, const real* v);

struct FluidSums {
  double momentum[2];
  double kinetic_energy;
  double max_speed;
  double max_div;
};
FluidSums fluid_sums(const Exec& e, const ReduceScratch& r, const real* u, const real* v, const real* open);
struct ParticleSums {
  double momentum[2];
  double velocity[2];
  double alive;
};
ParticleSums particle_sums(const Exec& e, const ReduceScratch& r, const DeviceParticles& p);

// Bytes and flops per kernel, for bandwidth figures: sim/app/bench/traffic.hpp (one model for every backend).

}  // namespace sim::cuda
