// SPDX-License-Identifier: MIT
// Host-callable launchers of every kernel of the CUDA backend, one per
// physics phase, plus the bytes each moves at minimum. Plain C++ (no CUDA
// syntax), so the backend, the tests and a benchmark can call them.
//
// Grid arrays are the MAC arrays of sim/model/grid.hpp (pitch floats per row,
// one-cell halo). Every launcher enqueues on Exec::stream and returns
// without synchronising.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>

#include "cuda/device_buffer.hpp"
#include "sim/model/backend.hpp"
#include "sim/model/boundary_flux.hpp"
#include "sim/model/constants.hpp"
#include "sim/model/injection.hpp"
#include "sim/model/particles.hpp"
#include "sim/model/strategies.hpp"

namespace sim::cuda {

struct DeviceStepState;  // stepping on the device, below

// How every launch runs: the stream and where the constants are read from.
struct Exec {
  cudaStream_t stream = nullptr;
  ConstantsIn constants = ConstantsIn::constant;
  const Constants* k_dev = nullptr;  // the device copy, read when constants == global
  int nx = 0, ny = 0, pitch = 0;     // host copies of the grid shape, for launch geometry
  // The rows a rank of a run split into slabs updates (sim/ranks/slab_rows.hpp):
  // cells and u faces in [row0, row_end), v faces in [row0, face_end);
  // -1: to ny, and ny + 1 (one rank: every row).
  int row0 = 0, row_end = -1, face_end = -1;
  int cell_row_end() const { return row_end < 0 ? ny : row_end; }
  int face_row_end() const { return face_end < 0 ? ny + 1 : face_end; }
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
// 0 = default; validates; `s` resolved (not auto: resolve_strategies)
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
// The blocks of a launch over the cell rows this rank updates (Exec::row0 ..):
// the partial sums a reduction over cell_region(e) writes.
int own_cell_blocks(const Exec& e, const StencilOpts& o);

// --- constants: one __constant__ block per translation unit ------------
void upload_fluid_constants(const Constants& c, cudaStream_t s);
void upload_pressure_constants(const Constants& c, cudaStream_t s);
void upload_particle_constants(const Constants& c, cudaStream_t s);
void upload_reduction_constants(const Constants& c, cudaStream_t s);
// The dt of the device copy *k_dev into every unit's __constant__ block
// (device to device, so a recorded step can change dt).
void copy_dt_to_constants(const Constants* k_dev, cudaStream_t s);
void copy_fluid_dt(const Constants* k_dev, cudaStream_t s);
void copy_pressure_dt(const Constants* k_dev, cudaStream_t s);
void copy_particle_dt(const Constants* k_dev, cudaStream_t s);

// --- fluid (cuda/fluid_kernels.cu) -------------------------------------
// out = a base + b in + dt (c (A + f)(in) + cv nu lap(in)) on active faces,
// 0 on solid faces (Backend::rk_stage, stage_point); base not read when
// a == 0. `clearance`: the advection_clearance field
// (sim/model/advection.hpp), read only by the quick scheme with obstacles
// (else may be null).
void momentum_stage(const Exec& e, const StencilOpts& o, const real* ui, const real* vi, const real* ub,
                    const real* vb, const real* open, const real* clearance, real* uo, real* vo, real a, real b, real cl,
                    real cv);
// The boundary links' sums of one part of the step (sim/model/boundary_flux.hpp)
// into out[2 * owner + component], one block per owner: the weighted
// tendency of velocity (u, v) (link_flux: w_explicit (A + f) + w_viscous
// nu lap), or w times the pressure p. `clear`: the advection clearance, or null.
void boundary_link_flux(cudaStream_t s, const Constants* k_dev, const BoundaryLink* links, const int* first,
                        const real* u, const real* v, const real* open, const real* clear, real w_explicit,
                        real w_viscous, double* out);
void boundary_link_pressure(cudaStream_t s, const Constants* k_dev, const BoundaryLink* links, const int* first,
                            const real* p, real w, double* out);
void boundary_link_pressure(cudaStream_t s, const Constants* k_dev, const BoundaryLink* links, const int* first,
                            const double* p, real w, double* out);

// --- the implicit viscous solve (cuda/fluid_kernels.cu) ----------------
// (I - g lap) x = b on the active faces of u and v (sim/model/viscous.hpp,
// helmholtz_residual_* and chebyshev_point of sim/model/fluid_physics.hpp).
// The right-hand side b and the two iterates, u and v each.
struct HelmholtzFields {
  const real* bu = nullptr;
  const real* bv = nullptr;
  real* xu[2] = {nullptr, nullptr};
  real* xv[2] = {nullptr, nullptr};
  const real* open = nullptr;
};
// A solve's scalars on the device (DeviceStepping::viscous_solve_on_device).
struct ViscousDeviceState {
  ChebyshevPlan plan;
  double b2, r2;  // ||b||^2 and ||b - A x||^2 of the last pass summed
  real g;         // gamma dt nu
  int it;         // iterations done (the loop's counter)
};
// What one pass does. With `st` null: the host's g, newest iterate and
// weights. With `st`: g from st; an iteration is number st->it + offset
// (nothing when that is not below st->plan.iterations), its weights
// chebyshev_weights(plan, it) and its newest iterate it % 2; a residual
// pass with newest < 0 takes the newest after the whole plan
// (plan.iterations % 2).
struct HelmholtzPass {
  real g = 0;
  int newest = 0;
  ChebyshevWeights w{real(0), real(0)};
  bool iterate = false;  // x[1 - newest] = chebyshev_point(x[newest], x[1 - newest], r, w)
  const ViscousDeviceState* st = nullptr;
  int offset = 0;
};
// The partial sums a pass writes: one per block over this rank's face rows.
int helmholtz_blocks(const Exec& e, const StencilOpts& o);
// One pass over the active faces not on a solid of this rank's face rows:
// r = b - A x[newest] each; r_partials[block] = sum of r^2 and
// b_partials[block] = sum of b^2 (either may be null: not summed); with
// p.iterate the new iterate written (its halo not filled).
void helmholtz_pass(const Exec& e, const StencilOpts& o, const HelmholtzFields& f, const HelmholtzPass& p,
                    double* r_partials, double* b_partials);
// to = x[newest] of u and v, every point (n per field); newest from the
// device state's plan (plan.iterations % 2).
// out = alpha out + beta x over n elements (u and v).
void combine_velocity(cudaStream_t s, real* uo, real* vo, const real* ux, const real* vx, real alpha, real beta,
                      size_t n);
void copy_newest_iterate(cudaStream_t s, const HelmholtzFields& f, const ViscousDeviceState* st, real* u, real* v,
                         size_t n);
// The device solve's scalar steps, one thread each: begin (g = gamma dt nu
// from k_dev, the counter zeroed), plan (viscous_plan from st->b2, st->r2),
// condition (the counter advanced by `advance`, then the while node's
// condition: it < plan.iterations), record (the iterations and
// sqrt(r2 / b2), 0 where b2 or g is 0, into the step record);
// transform_plan: the transform solve's (one correction: iterations 1).
void viscous_begin(cudaStream_t s, ViscousDeviceState* st, real gamma, const Constants* k_dev);
void viscous_plan(cudaStream_t s, ViscousDeviceState* st, double tolerance, const Constants* k_dev);
void viscous_transform_plan(cudaStream_t s, ViscousDeviceState* st);
void viscous_condition(cudaStream_t s, cudaGraphConditionalHandle h, ViscousDeviceState* st, int advance);
void viscous_record(cudaStream_t s, const ViscousDeviceState* st, int64_t* rec_iterations, double* rec_relative);

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
// sim/model/strategies.hpp.
void jacobi_sweeps_temporal(const Exec& e, const real* phi, const real* rhs, real* out, int sweeps);
void sor_sweep(const Exec& e, const StencilOpts& o, real* phi, const real* rhs, const real* open, int color);
// partials[b] = sum of (rhs - lap phi)^2 over block b.
void residual(const Exec& e, const StencilOpts& o, const real* phi, const real* rhs, const real* open,
              double* partials);

// --- particles (cuda/particle_kernels.cu, cuda/particle_slots.cu) ------
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
// grid size (the rest are zero and never read). Over ranks only the storage
// rows the rank's particles sample (its rows and one either side: Exec::row0
// .. row_end) are packed.
void pack_velocity(const Exec& e, const real* u, const real* v, float4* u4, float4* v4, size_t size);

struct ParticleStepArgs {
  VelocitySource fluid;  // the fluid after the coupling's update
  bool two_way = false;
  const real* mu = nullptr;  // two-way: the particle mass deposited on the u and v faces (couple_particles)
  const real* mv = nullptr;
  unsigned long long* counters = nullptr;  // [kRemoved, kRecycled, kNonFinite]
};
// Pass 4 of the coupled step (sim/model/particle_physics.hpp): coefficients from
// the loading in mu, mv (phi = 0 one-way), sample the fluid, drag and
// gravity, obstacles, walls. Two-way (`impulse` set): `fluid` is the free
// fluid (stage), and each particle also takes kappa times the first
// projection's impulse (sample_impulse of after, before, free); the
// momentum that gains is summed per block into impulse.partials (2 doubles
// a block, blocks_for(p.size()) of them), then over blocks in order and
// given back to the fluid in `free` (give_back_reaction).
struct ImpulseFields {
  const real *u_after = nullptr, *v_after = nullptr;    // current, projected
  const real *u_before = nullptr, *v_before = nullptr;  // saved, what was projected
  real *u_free = nullptr, *v_free = nullptr;            // stage
  // per slot: where the particle was and the momentum it took (x, y, m dv_x,
  // m dv_y; zero for none), and the largest |m dv| as float bits
  float4* took = nullptr;
  unsigned int* took_bound = nullptr;
  // per face: what the particles took around it, as 64-bit fixed point
  // (scale from took_bound, as deposit=fixed scales its passes); zero between steps
  unsigned long long *took_u = nullptr, *took_v = nullptr;
  double* partials = nullptr;  // 2 per block of the face pass: what the faces could not pay
  double* gained = nullptr;    // 2: their sum, spread over the fluid
};
// The particle step; two-way (impulse): each particle also takes its share
// of the first projection's impulse (update_coupled_particle) and records it
// in impulse->took.
void step_particles(const Exec& e, const DeviceParticles& p, const ParticleStepArgs& a,
                    const ImpulseFields* impulse = nullptr);
// How many blocks a pass over this rank's face rows launches (the partials of pay_reaction).
unsigned face_pass_blocks(const Exec& e);
// The fluid's reaction to what the particles took (give_back_reaction in
// sim/cpu/cpu_backend.cpp is the reference): deposit_reaction adds each
// record onto took_u, took_v (integers: the sums do not depend on the
// order); pay_reaction lets every fluid face pay its share into stage
// (reaction_share), zeroes took_u, took_v, and sums what the faces could not
// pay into f.gained, in a fixed order; give_back_reaction spreads that over
// the fluid faces: stage += kBasePayback reaction_velocity(gained, fluid faces) on every
// active face not touching a solid, over this rank's face rows.
void deposit_reaction(const Exec& e, const ImpulseFields& f, int64_t slots);
void pay_reaction(const Exec& e, const ImpulseFields& f, const real* open, int64_t slots);
void give_back_reaction(const Exec& e, const ImpulseFields& f, const real* open, int64_t faces_u, int64_t faces_v);

// Two-way coupling, passes 1 to 3 (sim/model/particle_physics.hpp). The per-face
// arrays: M (particle mass), A and B of the implicit drag. M must be zero
// before couple_particles; A and B are zero before and after (the face
// update zeroes them), M keeps the step's mass for step_particles.
struct CouplingFields {
  real *mu, *mv, *au, *av, *bu, *bv;
  const real *u = nullptr, *v = nullptr;  // the fluid of the step's start, which pass 2 samples
};
// After couple_particles and the copy of current into stage: the held
// boundary faces of stage take their free values (kept in bu, bv by the
// face update), and bu, bv are zeroed there.
void held_faces_to_stage(const Exec& e, const CouplingFields& f, real* us, real* vs);
// deposit=sorted: every pass writes 8 pairs per slot at 8 (id % capacity) +
// corner in the same order; the keys (2 face + component, or the sentinel)
// and the pair index of pass 1 are sorted once (stably) and each quantity
// is then summed by reduce-by-key in that order (cuda/deposit.cu).
struct DepositBuffers {
  uint32_t *keys, *keys_alt, *unique_keys;
  uint32_t *perm, *perm_alt;  // pair index carried through the sort
  real *values, *values_b;    // per pair: pass 1 the mass, pass 2 the B and the A contributions
  real *gathered, *sums;      // 2 per pair: B and A go through one float2 pass
  int* run_count;     // one int
  uint32_t sentinel;  // key of "no face": deposit_key(grid size, 0)
  void* workspace;
  size_t workspace_bytes;
  int pairs, end_bit;
};
// deposit=gather (cuda/deposit_gather.cuh): one (key, slot) pair per
// particle, keyed by the lower-left node of its u stencil, (su.i + 1) +
// (su.j + 1) (nx + 2), times 4 plus where its v stencil sits against it
// (bit 0: sv.i = su.i - 1, bit 1: sv.j = su.j + 1); `sentinel` = none (dead,
// or lost to the watchdog). Written at the canonical slot id % capacity and
// sorted stably once per step, so a node's particles are in canonical
// order whatever the storage order. Then per sorted particle its stencil
// weights and the value deposited (mass, or B and A per component), and
// every face sums the particles of the 3 x 3 nodes around it in a fixed
// order: no atomics, the same bits whatever the launch or particle order.
struct GatherBuffers {
  uint32_t *keys, *keys_alt, *slots, *slots_alt;  // slot = storage index, carried through the sort
  int2* nodes;                 // per node: [begin, end) of its particles in sorted order; zeroed each step
  float2 *wu, *wv;             // per sorted particle: (wx, wy) of its u and v stencils
  real* mass;                  // per sorted particle: pass 1's value
  float2 *qu, *qv;             // per sorted particle: pass 2's (B, A) of each component
  uint32_t sentinel;           // 4 * node count
  int node_count;              // (nx + 2) (ny + 1)
  int end_bit;                 // bits of the sentinel
  void* workspace;
  size_t workspace_bytes;
};
// Stencil nodes of the gather deposit: (nx + 2) (ny + 1), su.i in [-1, nx], su.j in [-1, ny - 1].
inline int64_t gather_node_count(int nx, int ny) { return int64_t(nx + 2) * int64_t(ny + 1); }

// deposit=fixed (cuda/deposit_kernels.cuh): M, B and A summed per face as
// 64-bit fixed-point integers, whose atomic sums do not depend on the order
// of the additions. The scale of each pass is a power of two, 2^e, from a
// bound on what one particle deposits times the slot count, so no face sum
// reaches 2^62: e = 61 - exponent(bound * slots) (frexp), the bounds taken
// over the live particles at the start of the coupling (`bounds`: the mass,
// then the drag's, as float bits; the largest, an order-free atomicMax).
// Each contribution rounds to the nearest multiple of 2^-e, far below a
// float's resolution of the sum; the face value is the integer times 2^-e,
// rounded once to float. The integers are zeroed by the pass that reads them.
struct FixedBuffers {
  unsigned long long *mu, *mv, *bu, *bv, *au, *av;
  unsigned int* bounds;  // 2
};

struct CouplingArgs {
  CouplingFields f;
  Deposit deposit = Deposit::sorted;
  DepositBuffers pairs{};  // deposit=sorted
  GatherBuffers gather{};  // deposit=gather
  FixedBuffers fixed{};    // deposit=fixed
  uint32_t capacity = 0;
  const real* open = nullptr;  // cell open flags (faces touching a solid are not updated)
  // Over ranks (null on one rank): called after the fixed deposit's bounds
  // (made global), after the mass deposit (folded onto the faces' owners and
  // copied back: a particle reads its loading there) and after the drag
  // deposit (folded), each before anything reads it. Deposits fixed and
  // atomic only.
  std::function<void()> after_bounds, after_mass, after_drag;
};
// Deposits the particle mass onto M, the implicit drag onto A and B, and
// updates the active fluid faces u, v (the halo is not filled).
void couple_particles(const Exec& e, const DeviceParticles& p, const CouplingArgs& a, real* u, real* v);
// New ids [first_id, first_id + count): id k replaces the slot whose id % capacity == k % capacity.
// count_repeats: count the recycling of ids of one residue injected in the
// same step (false on every rank of a split run but rank 0).
void inject_particles(const Exec& e, const DeviceParticles& p, uint64_t first_id, int64_t count, uint64_t seed,
                      const InjectionC& inj, unsigned long long* counters, bool count_repeats = true);

// A rank's slab for the particle migration: rows [row0, row_end) of ny
// over a y side of ly metres (periodic or not).
struct SlabRowsC {
  double ly = 0;
  int ny = 0, row0 = 0, row_end = 0, periodic = 0;
};
// Over ranks, after the particle step and the injection (ids first_id ..
// first_id + count - 1): the particles that left the slab are copied to
// `out` (room for every slot), *n_out of them, and die here; injected
// particles another rank owns die (sort_out_kernel).
void sort_out_particles(const Exec& e, const DeviceParticles& p, const SlabRowsC& b, uint64_t first_id, int64_t count,
                        Particle* out, unsigned int* n_out);
// Particles from other ranks into their slots: slot id % capacity, at
// position where[slot] when the store is sorted (slot_positions), else at
// the slot itself (where null: canonical order).
void store_arrivals(const Exec& e, const DeviceParticles& p, const Particle* in, int n, const uint32_t* where);
// where[slot] = the position that holds the slot, for every position (a
// position's id, alive or not, is congruent to its slot: the store's
// invariant), after a sort permuted the store.
void slot_positions(const Exec& e, const DeviceParticles& p, uint32_t* where);
// The same with the ids and count the step's dt drew on the device.
void inject_particles(const Exec& e, const DeviceParticles& p, const DeviceStepState* state, uint64_t seed,
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
// deposit_sorted of two quantities with the same keys in one pass: a to
// (a_u, a_v), b to (b_u, b_v).
void deposit_sorted2(cudaStream_t s, const DepositBuffers& b, const SortedPairs& sorted, const real* values_a,
                     const real* values_b, real* a_u, real* a_v, real* b_u, real* b_v);
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
// The same sum into the device double *out (no synchronisation).
void sum_to_device(const Exec& e, const ReduceScratch& r, const double* values, int n, double* out);
// The same, and the device counter *count copied back in the same
// synchronisation (one more 8-byte copy, no extra wait).
double sum_to_host(const Exec& e, const ReduceScratch& r, const double* values, int n,
                   const unsigned long long* count, unsigned long long& count_out);
// max over faces (i, j) in [0, nx] x [0, ny] of |u|/dx + |v|/dy (synchronises).
double max_velocity_rate(const Exec& e, const ReduceScratch& r, const real* u, const real* v);

// --- stepping on the device (DeviceStepping) ---------------------------
// The device side of a step's clock and record.
struct DeviceStepState {
  StepRecord rec;       // what the host reads back
  DeviceClock clock;    // step, time and next id after the last chosen dt
  double rate;          // the CFL rate of this step
  uint64_t inject_first;  // this step's injected ids [first, first + count)
  int64_t inject_count;
};
// state->rate = max_velocity_rate, left on the device.
void velocity_rate_on_device(const Exec& e, const ReduceScratch& r, const real* u, const real* v,
                             DeviceStepState* state);
// Simulation::next_dt by `rule` from state->rate (not read for a fixed dt),
// the clock advanced, the injection drawn (injection_count), the record
// opened; k_dev->dt set (then copy_dt_to_constants when constants are
// __constant__).
void choose_dt_on_device(const Exec& e, const DtRule& rule, DeviceStepState* state, Constants* k_dev);
// k_dev->dt = factor * the step's dt (the record's, so factor 1 restores it
// exactly), and the pressure unit's __constant__ dt (what a solve and a
// projection read) when constants are __constant__.
void scale_dt_on_device(const Exec& e, real factor, const DeviceStepState* state, Constants* k_dev);

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
