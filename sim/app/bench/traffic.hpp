// SPDX-License-Identifier: MIT
// The byte and flop model of every kernel: the fewest bytes each must move
// through device memory (each array element it needs read once, each
// output written once, at the 32-byte sector granularity of the memory
// system) and the arithmetic it does per point. `sim bench` divides these
// by measured times for effective GB/s; docs/BENCH.md states the
// same arithmetic. One model for every backend: on the CPU the same bytes
// cross the memory bus (when the arrays exceed the caches).
//
// Counting rules:
// - float32 fields: 4 B per value. A cell kernel runs over nx * ny cells;
//   a face kernel over (nx + 1) * (ny + 1) points (u and v faces together).
// - Neighbour reads are free (a stencil's halo comes from cache).
// - The solid mask `open` is read only when the config has obstacles
//   (Constants::has_solids); 4 B per point more.
// - Halo fills (O(nx + ny)) and reductions' partial sums are left out.
// - Flops are the adds, multiplies and divides written in
//   sim/model/fluid_physics.hpp and sim/model/particle_physics.hpp (an FMA counts 2,
//   as the two operations it replaces; exp and floor count 1 each).
#pragma once
#include <algorithm>
#include <cstdint>

#include "sim/model/config.hpp"
#include "sim/model/grid.hpp"
#include "sim/model/strategies.hpp"

namespace sim::traffic {

struct Cost {
  double bytes = 0;
  double flops = 0;
  Cost& operator+=(const Cost& o) {
    bytes += o.bytes;
    flops += o.flops;
    return *this;
  }
  friend Cost operator+(Cost a, const Cost& b) { return a += b; }
  friend Cost operator*(double s, Cost c) { return {s * c.bytes, s * c.flops}; }
};

constexpr double kFloat = 4;  // bytes of one field value
constexpr int kCoarsestSideModel = 4;  // sim/model/poisson.hpp kCoarsestSide (this header stays free of sim/model/poisson.hpp)

inline double cells(const Grid& g) { return static_cast<double>(g.nx) * g.ny; }
inline double faces(const Grid& g) { return static_cast<double>(g.nx + 1) * (g.ny + 1); }
inline double mask(bool solids) { return solids ? kFloat : 0.0; }

// --- pressure, per cell ------------------------------------------------
// Jacobi: read phi, rhs; write phi_new: 12 B.
// phi = (ax (pw + pe) + ay (ps + pn) - rhs) / diag: off 5, diag 3, subtract and divide 2 = 10 flops.
inline Cost jacobi_sweep(double n_cells, bool solids = false) { return {n_cells * (3 * kFloat + mask(solids)), n_cells * 10}; }
// stencil=temporal: `sweeps` Jacobi sweeps in one pass through memory (no
// obstacles) read phi and rhs once and write phi once: 12 B per cell and
// pass, 12 / sweeps B per cell and effective sweep (3 B at the pass depth
// kTemporalSweeps = 4). The overlap of the kernel's windows (8 of every 128
// elements read twice) and its redundant halo updates are left out, as any
// halo is.
inline Cost jacobi_pass(double n_cells, int sweeps) { return {n_cells * 3 * kFloat, n_cells * 10 * sweeps}; }
// One red-black colour: the colours interleave inside every 32-byte sector,
// so a half-sweep reads all of phi and rhs and writes back every sector of
// phi: 12 B per cell, as much as a Jacobi sweep, for half the updates
// (Jacobi 10 + relaxation pc + omega (pj - pc) 3 = 13 flops per updated cell).
inline Cost sor_half_sweep(double n_cells, bool solids = false) {
  return {n_cells * (3 * kFloat + mask(solids)), n_cells * 0.5 * 13};
}
inline Cost sor_sweep(double n_cells, bool solids = false) { return 2.0 * sor_half_sweep(n_cells, solids); }
// ||rhs - lap phi||: read phi, rhs: 8 B; Laplacian 9, rhs - lap 1, square and sum 2 = 12 flops.
inline Cost residual(double n_cells, bool solids = false) { return {n_cells * (2 * kFloat + mask(solids)), n_cells * 12}; }
// rhs = div(u)/dt: read u, v; write rhs: 12 B; divergence 5, scale 1, square and sum 2.
inline Cost rhs(double n_cells, bool solids = false) { return {n_cells * (3 * kFloat + mask(solids)), n_cells * 8}; }

// --- multigrid-preconditioned CG (cuda/multigrid_kernels.cu, pcg_kernels.cu), per cell
// A level of n cells (float32 e, f; 1-byte face bits on a uniform level):
// half-sweep reads e, f, bits and writes back every sector of e: 13 B (a
// non-uniform level reads cx, cy instead of the bits: 20 B); the first
// level-0 half-sweep is fused with f = (float) r: r 8, bits 1, f and e
// written 8 = 17 B. Restriction per fine cell: e, f, bits (9 B) and the
// coarse f, e written (2 B) = 11 B; prolongation: e read and written, bits,
// the parent's e (1 B) = 10 B. The coarsest level is L2-resident: 0 B.
// Per V-cycle with nu sweep pairs each way: level 0 25 + 52 nu B per cell,
// a coarser level 21 + 52 nu B per cell of its own.
// Flops: relaxation 4 mul + 3 add + 1 sub + 1 div + diag 3 = 12 per updated cell.
inline Cost mg_vcycle(int nx, int ny, int nu) {
  Cost c;
  bool first = true;
  while (!(std::min(nx, ny) <= kCoarsestSideModel || nx < 2 || ny < 2)) {
    const double n = static_cast<double>(nx) * ny;
    c += Cost{n * ((first ? 25.0 : 21.0) + 52.0 * nu), n * (4 * nu * 0.5 * 12 + 4 * 9 / 4.0 + 1)};
    first = false;
    nx = (nx + 1) / 2;
    ny = (ny + 1) / 2;
  }
  return c;
}
// One PCG iteration less its V-cycle, float64 vectors: <r, z> (r 8, e 4),
// p = z + beta p (e 4, p 8 read, p 8 written), q = A p with <p, q> (p 8,
// bits 1, q 8), x += alpha p and r -= alpha q with ||r|| (x, r read and
// written 32, p, q 16): 97 B per cell.
inline Cost pcg_iteration(double n_cells) { return {n_cells * 97, n_cells * (2 + 2 + 12 + 6)}; }
// Start (sum of rhs 4, rhs again 4 and open 4, r 8 and x 8 written) and
// finish (x 8 read, phi 4 written): 40 B per cell.
inline Cost pcg_start_finish(double n_cells) { return {n_cells * 40, n_cells * 4}; }

// --- fluid, per face point (u and v faces together) ---------------------
// One momentum stage (Backend::rk_stage): read u, v, write u, v (16 B), and
// the base field when it has a weight (stages 2 and 3: 8 B more). Per component:
// central advection (advect_*_point) 22 flops; quick (sim/model/fluid_physics.hpp,
// every flux wide) 104: two normal fluxes of 21 (midpoint4 5, quick_value 5,
// the product and the curvature term 3, the curvature 8), two corner fluxes
// of 28 (three corner products 12, the curvature 3, quick_flux 13), and the
// difference 6; the Laplacian with nu 9, the force and stage_point 4. So
// 70 flops per face point (central) or 234 (quick). Quick with obstacles
// reads the clearance field once more (4 B; its neighbours come from cache).
inline Cost stage(double n_faces, bool base, bool solids = false,
                  AdvectionScheme scheme = AdvectionScheme::central) {
  const bool quick = scheme == AdvectionScheme::quick;
  return {n_faces * ((base ? 6 : 4) * kFloat + mask(solids) + (quick ? mask(solids) : 0.0)),
          n_faces * (quick ? 234 : 70)};
}
// The momentum stages of one step (sim/model/time_scheme.hpp): stage 1
// copies u, v to the saved field (16 B) and runs on it; stages 2 and 3 each
// copy u, v to the stage field (16 B) and run on it with the saved field as
// their base: 112 B per face point (136 with quick and obstacles), 210
// flops (central) or 702 (quick).
inline Cost momentum(double n_faces, bool solids = false, AdvectionScheme scheme = AdvectionScheme::central) {
  return Cost{n_faces * 12 * kFloat, 0} + stage(n_faces, false, solids, scheme) +
         2.0 * stage(n_faces, true, solids, scheme);
}
// The implicit viscous solves (sim/model/viscous.hpp), per face point: a
// solve's start copies u, v into both iterates (24 B) and sums the residual
// of x = b (16 B read); each Chebyshev iteration reads x_k, x_{k-1}, b and
// writes x_{k+1} (16 B per component), 17 flops (the Laplacian 9, the
// residual 3, the update 5); the finish reads x, b (16 B) and copies x into
// u, v (16 B). `iterations`: the step's, over both solves.
inline Cost viscous(double n_faces, double solves, double iterations) {
  return {n_faces * (solves * (24 + 16 + 16 + 16) + iterations * 2 * 4 * kFloat), n_faces * 2 * 17 * iterations};
}
// u -= dt dphi/dx: read phi, u, v; write u, v: 20 B; 4 flops each; once per stage (three a step).
inline Cost project(double n_faces, bool solids = false) { return {n_faces * (5 * kFloat + mask(solids)), n_faces * 8}; }

// --- particles, per slot -------------------------------------------------
// Bytes of one particle's update. AoS streams the whole 32-byte record both
// ways: the 16 written bytes (x, y, vx, vy) of consecutive records dirty
// every sector. SoA reads x, y, vx, vy, d, alive (24 B) and writes x, y, vx,
// vy (16 B; alive only when a particle leaves). A dead slot reads only its
// alive flag (SoA 4 B; AoS the record's sectors, 32 B).
inline double particle_bytes(Layout layout, bool alive) {
  if (layout == Layout::aos) return alive ? 64.0 : 32.0;
  return alive ? 40.0 : kFloat;
}
// Per alive particle: 2 bilinear samples (stencil 7 + bilinear 11 each),
// Stokes drag integrated exactly (30), walls (5): 71; the reaction when two-way (17).
inline double particle_flops(bool two_way) { return 2 * 18 + 30 + 5 + (two_way ? 17 : 0); }

inline Cost particle_step(double alive, double dead, Layout layout, bool two_way) {
  return {alive * particle_bytes(layout, true) + dead * particle_bytes(layout, false), alive * particle_flops(two_way)};
}
// The velocity the particles sample: u and v read once (8 B per face point).
inline Cost fluid_sample(double n_faces) { return {n_faces * 2 * kFloat, 0}; }

// The velocity the particles sample, by sampling path: u and v read once;
// packed sampling first writes the 4 corners of every stencil (16 B per
// face point and component) and the gathers read those instead.
inline Cost velocity_sample(Sampling s, double n_faces) {
  return s == Sampling::packed ? Cost{n_faces * 2 * (kFloat + 16 + 16), 0} : fluid_sample(n_faces);
}

// Passes of a CUB onesweep radix sort: 8 key bits per pass.
inline int radix_passes(int key_bits) { return (key_bits + 7) / 8; }
inline int key_bits(uint64_t max_key) {
  int b = 0;
  for (; max_key != 0; max_key >>= 1) ++b;
  return b > 0 ? b : 1;
}

// Two-way deposit of the drag reaction, per step.
// atomic: 8 atomicAdds per particle resolve in L2; device memory sees fu, fv
//   read and written once (16 B per face point).
// sorted: 8 (key, value) pairs per slot: written by the step (8 B each), a
//   histogram read of the keys (4 B) and `passes` radix passes reading and
//   writing keys and values (16 B each), the reduce-by-key read (8 B); then
//   per run (at most 2 per face point) the unique key and sum written, read
//   by the scatter, and the face read and written (24 B).
// gather: one (key, slot) pair per slot written (8 B), a histogram read (4
//   B) and `passes` radix passes (16 B each) over keys of 4 (nx + 2)(ny + 1);
//   the node ranges zeroed (8 B per node); per sorted slot the key and slot
//   read (8 B), its stencil weights and value written (20 B); the face pass
//   reads every node's range (8 B), per particle the key, the weights and
//   the value (24 B), and each face point's fu, fv (16 B).
inline double gather_nodes(const Grid& g) { return static_cast<double>(g.nx + 2) * (g.ny + 1); }
inline int gather_passes(const Grid& g) {
  return radix_passes(key_bits(4 * static_cast<uint64_t>(g.nx + 2) * static_cast<uint64_t>(g.ny + 1)));
}
inline Cost deposit(Deposit mode, double slots, const Grid& g) {
  if (mode == Deposit::atomic) return {faces(g) * 4 * kFloat, slots * 8 * 2};
  if (mode == Deposit::fixed) return {faces(g) * 4 * 8, slots * 8 * 2};  // 64-bit integers
  if (mode == Deposit::gather)
    return {slots * (8 + 4 + 16.0 * gather_passes(g) + 8 + 20 + 24) + gather_nodes(g) * 16 + faces(g) * 4 * kFloat,
            slots * 8 * 2};
  const double pairs = 8 * slots;
  const int passes = radix_passes(key_bits(2 * static_cast<uint64_t>(g.size())));
  const double runs = pairs < 2 * faces(g) ? pairs : 2 * faces(g);
  return {pairs * (8 + 4 + 16.0 * passes + 8) + runs * 24, pairs * 2};
}

// The implicit two-way coupling (sim/model/particle_physics.hpp), per step, on top
// of the particle step: pass 1 reads each particle's position, diameter and
// alive flag (SoA 16 B, AoS the 32-byte record) and deposits its mass; pass
// 2 reads the record again (SoA 24 B) with M and u, v at its faces and
// deposits B and A; the face update reads u, v, M, A, B (32 B per face point), writes u, v
// and zeroes M, A, B for the next step (32 B); the particle step reads M
// again (8 B per face point). Three deposits: with atomics three times the
// one; sorted, the pairs are sorted once and each quantity gathered (8 B
// per pair), reduced (8 B) and scattered by run (24 B). The reaction to the
// particles' share of the projection (every mode): the particle step writes
// each slot's record of what it took (16 B), a pass reads it and adds it onto
// two 64-bit integers per face point (16 B read and written), and the face
// pass reads them, the impulse (u, v after and before, 16 B) and stage
// (8 B), writes stage (8 B) and zeroes the integers (16 B).
// gather: the keys read each slot's position, velocity, alive flag and id
// (SoA 28 B), the mass pass x, y, d through the sorted slot (SoA 12 B), the
// drag pass x, y, vx, vy, d (SoA 20 B) (AoS 32 B each); the drag pass reads
// the key and slot (8 B) and writes B and A of both components (16 B); its
// face pass reads the node ranges (8 B per node), per particle the key,
// weights and B, A of both components (36 B), and fu, fv of B and A (32 B
// per face point).
inline Cost reaction(double alive, double slots, const Grid& g) {
  return {slots * 32 + faces(g) * (16 + 16 + 16 + 16 + 16), alive * 8 * 2 + faces(g) * 12};
}
inline Cost coupling(Deposit mode, double alive, double slots, Layout layout, const Grid& g) {
  if (mode == Deposit::gather) {
    const bool aos = layout == Layout::aos;
    const double records = slots * (aos ? 32.0 : 28.0) + alive * ((aos ? 32.0 : 12.0) + (aos ? 32.0 : 20.0));
    const Cost c{records + faces(g) * (2 * kFloat + 64 + 2 * kFloat), alive * 60};
    return c + deposit(mode, slots, g) + reaction(alive, slots, g) +
           Cost{alive * (8 + 16 + 36) + gather_nodes(g) * 8 + faces(g) * 8 * kFloat, alive * 4 * 2};
  }
  const double records = alive * ((layout == Layout::aos ? 32.0 : 16.0) + (layout == Layout::aos ? 32.0 : 24.0));
  Cost c = Cost{records + faces(g) * (2 * kFloat + 64 + 2 * kFloat), alive * 60} + reaction(alive, slots, g);
  if (mode == Deposit::atomic) return c + 3.0 * deposit(mode, slots, g);
  // fixed: as atomic with 64-bit sums, plus the bounds pass (the record
  // again, 16 B) and M from its integers (16 B read, 8 B written, 16 B zeroed
  // per face point)
  if (mode == Deposit::fixed) return c + 3.0 * deposit(mode, slots, g) + Cost{alive * 16 + faces(g) * 40, 0};
  const double pairs = 8 * slots;
  const double runs = pairs < 2 * faces(g) ? pairs : 2 * faces(g);
  return c + deposit(mode, slots, g) + 2.0 * Cost{pairs * 16 + runs * 24, pairs * 2};
}

// Sorting particles by cell every `every` steps, per step: keys from x, y,
// alive (SoA 12 B read, AoS 32), key and slot written (8 B), a histogram
// read and `passes` passes over (key, slot) pairs (16 B each), then every
// record gathered (32 B read, 32 B written).
inline Cost particle_sort(double slots, Layout layout, const Grid& g, int64_t every) {
  if (every <= 0) return {};
  const int passes = radix_passes(key_bits(static_cast<uint64_t>(g.nx) * static_cast<uint64_t>(g.ny)));
  const double per = (layout == Layout::aos ? 32 : 12) + 8 + 4 + 16.0 * passes + 64;
  return (1.0 / static_cast<double>(every)) * Cost{slots * per, slots * 4};
}

// One step of the step loop, by phase, for the counts the run reports.
struct StepCounts {
  double alive = 0, dead = 0;  // particle slots
  double sweeps = 0;           // pressure sweeps this step (PressureStats::iterations)
  double residuals = 0;        // residual evaluations this step
  double viscous_iterations = 0;  // Chebyshev iterations of the implicit viscous solves this step
};
struct StepCost {
  Cost dt, particles, momentum, pressure, project;
  Cost total() const { return dt + particles + momentum + pressure + project; }
};

inline StepCost step_cost(const Config& cfg, const Grid& g, const StepCounts& n) {
  const bool solids = !cfg.obstacles.empty();
  const double slots = n.alive + n.dead;
  StepCost c;
  if (cfg.dt <= 0) c.dt = fluid_sample(faces(g));  // max |u|/dx + |v|/dy reads u and v once
  if (slots > 0) {
    c.particles = particle_step(n.alive, n.dead, cfg.layout, cfg.two_way) + velocity_sample(cfg.sampling, faces(g)) +
                  particle_sort(slots, cfg.layout, g, cfg.sort_every);
    if (cfg.two_way) c.particles += coupling(cfg.deposit, n.alive, slots, cfg.layout, g);
  }
  // three solves and projections a step (sim/model/simulation.cpp); n.sweeps and
  // n.residuals count all of them
  c.momentum = momentum(faces(g), solids, cfg.advection);
  if (cfg.implicit_viscosity()) c.momentum += viscous(faces(g), 2, n.viscous_iterations);
  c.pressure = 3.0 * rhs(cells(g), solids);
  switch (cfg.solver) {
    case PressureSolverKind::multigrid:  // n.sweeps counts PCG iterations
      c.pressure += 3.0 * pcg_start_finish(cells(g)) + n.sweeps * (mg_vcycle(g.nx, g.ny, 2) + pcg_iteration(cells(g)));
      break;
    case PressureSolverKind::fft:  // rhs read, x and phi written, and the float64 residual check
      c.pressure += 3.0 * (Cost{cells(g) * 16, 0} + Cost{cells(g) * 20, cells(g) * 10});
      break;
    default: {
      const Cost sweep =
          cfg.solver == PressureSolverKind::jacobi ? jacobi_sweep(cells(g), solids) : sor_sweep(cells(g), solids);
      c.pressure += n.residuals * residual(cells(g), solids) + n.sweeps * sweep;
    }
  }
  c.project = 3.0 * project(faces(g), solids);
  return c;
}

}  // namespace sim::traffic
