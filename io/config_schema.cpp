// SPDX-License-Identifier: MIT
#include "io/config_schema.hpp"

#include "io/config_writer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

namespace sim {
namespace {

Range any() { return {}; }
Range ge(double v, std::string why = {}) { return {Bound{v, false}, std::nullopt, std::move(why)}; }
Range gt(double v, std::string why = {}) { return {Bound{v, true}, std::nullopt, std::move(why)}; }
Range interval(double lo, bool lo_open, double hi, bool hi_open) {
  return {Bound{lo, lo_open}, Bound{hi, hi_open}, {}};
}
Range non_empty() {
  Range r;
  r.non_empty = true;
  return r;
}

template <class T>
Field<T> base(std::string key, ValueType type, std::string unit, Range range, std::string desc) {
  Field<T> f;
  f.key = std::move(key);
  f.type = type;
  f.unit = std::move(unit);
  f.range = std::move(range);
  f.description = std::move(desc);
  return f;
}

// `acc` is a generic lambda returning a reference to the member, so one
// accessor serves both the setter (T&) and the getter (const T&).
template <class T, class F>
Field<T> number(std::string key, F acc, std::string unit, Range r, std::string desc) {
  auto f = base<T>(std::move(key), ValueType::number, std::move(unit), std::move(r), std::move(desc));
  f.float32 = true;  // but see held_in_float64
  f.set = [acc](T& c, const ConfigValue& v) { acc(c) = std::get<double>(v); };
  f.get = [acc](const T& c) { return ConfigValue(static_cast<double>(acc(c))); };
  return f;
}

// The few numbers only ever used in float64 (a factor of the step, a
// residual threshold, a rate): exempt from the float32 range.
template <class T>
Field<T> held_in_float64(Field<T> f) {
  f.float32 = false;
  return f;
}

template <class T, class F>
Field<T> integer(std::string key, F acc, std::string unit, Range r, std::string desc) {
  using M = std::decay_t<decltype(acc(std::declval<T&>()))>;
  auto f = base<T>(std::move(key), ValueType::integer, std::move(unit), std::move(r), std::move(desc));
  if constexpr (sizeof(M) < sizeof(int64_t)) f.type_max = std::numeric_limits<M>::max();
  else f.type_max = std::numeric_limits<int64_t>::max();  // TOML integers are int64
  f.set = [acc](T& c, const ConfigValue& v) { acc(c) = static_cast<M>(std::get<int64_t>(v)); };
  f.get = [acc](const T& c) { return ConfigValue(static_cast<int64_t>(acc(c))); };
  return f;
}

// An integer that also takes the word "auto" for `auto_value`.
template <class T>
Field<T> with_auto(Field<T> f, int64_t auto_value) {
  f.auto_value = auto_value;
  return f;
}

template <class T, class F>
Field<T> boolean(std::string key, F acc, std::string desc) {
  auto f = base<T>(std::move(key), ValueType::boolean, "", any(), std::move(desc));
  f.set = [acc](T& c, const ConfigValue& v) { acc(c) = std::get<bool>(v); };
  f.get = [acc](const T& c) { return ConfigValue(static_cast<bool>(acc(c))); };
  return f;
}

template <class T, class F>
Field<T> string(std::string key, F acc, Range r, std::string desc) {
  auto f = base<T>(std::move(key), ValueType::string, "", std::move(r), std::move(desc));
  f.set = [acc](T& c, const ConfigValue& v) { acc(c) = std::get<std::string>(v); };
  f.get = [acc](const T& c) { return ConfigValue(std::string(acc(c))); };
  return f;
}

template <class E, class T, class F>
Field<T> enumeration(std::string key, F acc, std::string desc) {
  auto f = base<T>(std::move(key), ValueType::enumeration, "", any(), std::move(desc));
  for (const auto& [value, name] : enum_names<E>()) f.choices.emplace_back(name);
  f.set = [acc](T& c, const ConfigValue& v) { acc(c) = *parse_enum<E>(std::get<std::string>(v)); };
  f.get = [acc](const T& c) { return ConfigValue(std::string(to_string(acc(c)))); };
  return f;
}

#define SIM_MEMBER(expr) [](auto& c) -> auto& { return c.expr; }

// The domain and its slab thickness.
void domain_keys(std::vector<Field<Config>>& k) {
  using C = Config;
  k.push_back(integer<C>("domain.nx", SIM_MEMBER(nx), "cells", ge(8, "at least 8 cells a side"), "Cells along x."));
  k.push_back(integer<C>("domain.ny", SIM_MEMBER(ny), "cells", ge(8, "at least 8 cells a side"), "Cells along y."));
  k.push_back(number<C>("domain.lx", SIM_MEMBER(lx), "m", gt(0), "Domain width; the domain is [0, lx] x [0, ly]."));
  k.push_back(number<C>("domain.ly", SIM_MEMBER(ly), "m", gt(0), "Domain height."));
  k.push_back(number<C>("domain.lz", SIM_MEMBER(lz), "m", ge(0),
                        "Thickness of the slab the 2D fluid and the particles occupy; sets the fluid mass per cell "
                        "(density dx dy lz) for two-way coupling, so the mass loading does not depend on the grid. "
                        "0 = min(lx, ly) / 100."));
}

// The fluid and gravity.
void fluid_keys(std::vector<Field<Config>>& k) {
  using C = Config;
  k.push_back(number<C>("fluid.density", SIM_MEMBER(density), "kg/m^3", gt(0), "Fluid density."));
  k.push_back(number<C>("fluid.viscosity", SIM_MEMBER(viscosity), "m^2/s", ge(0), "Kinematic viscosity; 0 = inviscid."));
  k.push_back(enumeration<InitialFlow, C>("fluid.initial", SIM_MEMBER(initial),
                                          "Initial velocity field: at rest, uniform (initial_u, initial_v), or the Taylor-Green vortex of amplitude initial_u."));
  k.push_back(number<C>("fluid.initial_u", SIM_MEMBER(initial_u), "m/s", any(), "Uniform x velocity, or the Taylor-Green amplitude U."));
  k.push_back(number<C>("fluid.initial_v", SIM_MEMBER(initial_v), "m/s", any(), "Uniform y velocity."));
  k.push_back(number<C>("fluid.force_x", SIM_MEMBER(force_x), "m/s^2", any(),
                        "Uniform body force per unit mass on the fluid, x (e.g. the mean pressure gradient of a periodic channel)."));
  k.push_back(number<C>("fluid.force_y", SIM_MEMBER(force_y), "m/s^2", any(), "Uniform body force per unit mass on the fluid, y."));
  k.push_back(enumeration<AdvectionScheme, C>(
      "fluid.advection", SIM_MEMBER(advection),
      "Momentum advection: central (second order; fills the flow with grid-scale noise once the cell Reynolds "
      "number |u| h / nu passes about 15, and a run warns then) or quick (QUICK upwind-biased values with a "
      "fourth-order advecting velocity, third order: damps that noise; central fluxes next to closed sides and "
      "obstacles). See docs/ARCHITECTURE.md."));
  k.push_back(enumeration<ViscousScheme, C>(
      "fluid.viscous", SIM_MEMBER(viscous),
      "The viscous term: implicit (one Helmholtz solve per stage, three per step, L-stable: dt is not bounded "
      "by the viscous limit) or explicit (in the Runge-Kutta stages: dt at most cfl times the "
      "viscous limit 1 / (2 nu (1/dx^2 + 1/dy^2))). See docs/ARCHITECTURE.md, \"The time step\"."));
  k.push_back(enumeration<ViscousSolver, C>(
      "fluid.viscous_solver", SIM_MEMBER(viscous_solver),
      "The implicit viscous solves: transform (direct, by fast sine/cosine/Fourier transforms: no obstacle, not "
      "over GPU ranks, each velocity component's sides periodic or closed alike), chebyshev (iterative, any domain), or "
      "auto (transform where it applies, chebyshev elsewhere)."));

  k.push_back(number<C>("gravity.x", SIM_MEMBER(gx), "m/s^2", any(),
                        "Gravity, x component. It acts on the particles (with buoyancy), not on the fluid: the "
                        "pressure has no hydrostatic part (use fluid.force_x for a force on the fluid)."));
  k.push_back(number<C>("gravity.y", SIM_MEMBER(gy), "m/s^2", any(),
                        "Gravity, y component; on the particles only, as gravity.x."));
}

// The time step.
void time_keys(std::vector<Field<Config>>& k) {
  using C = Config;
  k.push_back(number<C>("time.dt", SIM_MEMBER(dt), "s", ge(0),
                        "Fixed time step; 0 = adaptive. A fixed step must respect the viscous and advective limits."));
  k.push_back(held_in_float64(number<C>("time.cfl", SIM_MEMBER(cfl), "", interval(0, true, 1, false),
                                        "Adaptive step: dt = min(cfl * min(advective, viscous limit), dt_max).")));
  k.push_back(number<C>("time.dt_max", SIM_MEMBER(dt_max), "s", gt(0), "Upper bound of the adaptive step."));
}

// The pressure solve.
void pressure_keys(std::vector<Field<Config>>& k) {
  using C = Config;
  k.push_back(enumeration<PressureSolverKind, C>("pressure.solver", SIM_MEMBER(solver), "Pressure Poisson solver."));
  k.push_back(held_in_float64(number<C>(
      "pressure.tolerance", SIM_MEMBER(tolerance), "", interval(1e-12, false, 1, true),
      "Stop when the relative residual norm(b - A p) / norm(b) falls below this. jacobi and sor "
      "iterate on the float32 pressure and stall near 1e-5 (more on fine grids: give them 1e-4); multigrid and fft "
      "solve for a float64 pressure and reach 1e-12.")));
  k.push_back(integer<C>("pressure.max_iterations", SIM_MEMBER(max_iterations), "iterations", ge(1),
                         "Iteration limit per solve (jacobi and sor: sweeps; multigrid: preconditioned CG iterations)."));
  k.push_back(integer<C>("pressure.replicated_cells", SIM_MEMBER(replicated_cells), "cells", ge(-1),
                         "Over MPI ranks: the multigrid levels of at most this many cells are held whole by every "
                         "rank, with no message below the first of them; -1 = the backend's choice (the CPU: none but "
                         "levels of too few rows; GPU ranks: 1048576). The result is the same bit for bit."));
  k.push_back(integer<C>("pressure.max_failures", SIM_MEMBER(max_failures), "solves", ge(1),
                         "Stop the run with an error after this many consecutive solves that miss the tolerance."));
  k.push_back(number<C>("pressure.omega", SIM_MEMBER(omega), "", interval(0, false, 2, true),
                        "SOR relaxation factor (jacobi ignores it); 0 = the optimal factor for the grid, 2 / (1 + sin(pi / max(nx, ny)))."));
  k.push_back(integer<C>("pressure.check_every", SIM_MEMBER(check_every), "sweeps", ge(1),
                         "Residual computed every N sweeps."));
  k.push_back(integer<C>(
      "pressure.fixed_iterations", SIM_MEMBER(fixed_iterations), "iterations", ge(0),
      "0: every solve runs to pressure.tolerance. N > 0: a fixed budget, as benchmarks time a solver: every "
      "solve runs exactly N sweeps whatever its residual, which the summary reports; the tolerance, "
      "max_iterations and max_failures do not apply. Needs pressure.solver jacobi or sor (sweeps stay "
      "stable past convergence; conjugate gradients do not)."));
}

// The four sides.
void boundary_keys(std::vector<Field<Config>>& k) {
  using C = Config;
  const std::pair<const char*, BoundarySide C::*> sides[] = {
      {"left", &C::left}, {"right", &C::right}, {"bottom", &C::bottom}, {"top", &C::top}};
  for (const auto& [name, side] : sides) {
    const std::string prefix = std::string("boundary.") + name;
    auto s = side;
    k.push_back(enumeration<BoundaryKind, C>(prefix + ".kind", [s](auto& c) -> auto& { return (c.*s).kind; },
                                             std::string("Condition on the ") + name + " side."));
    k.push_back(number<C>(prefix + ".speed", [s](auto& c) -> auto& { return (c.*s).speed; }, "m/s", any(),
                          "wall: tangential velocity (along +x on bottom/top, +y on left/right); "
                          "inflow: mean normal speed into the domain."));
    k.push_back(enumeration<InflowProfile, C>(
        prefix + ".profile", [s](auto& c) -> auto& { return (c.*s).profile; },
        "inflow: the normal speed along the side, uniform or parabolic (zero at both ends of the side, "
        "1.5 speed in the middle; each face takes the parabola's exact mean over it, so the side brings "
        "speed times its length either way). Only on an inflow side."));
  }
}

// The particles and their injection.
void particles_keys(std::vector<Field<Config>>& k) {
  using C = Config;
  k.push_back(number<C>("particles.density", SIM_MEMBER(particle_density), "kg/m^3", gt(0), "Particle material density."));
  k.push_back(number<C>("particles.restitution", SIM_MEMBER(restitution), "", interval(0, false, 1, false),
                        "Normal restitution on walls and obstacles."));
  k.push_back(boolean<C>("particles.two_way", SIM_MEMBER(two_way), "Deposit the drag reaction on the fluid."));
  k.push_back(integer<C>("particles.capacity", SIM_MEMBER(capacity), "particles", ge(0),
                         "Particle slots; 0 = the seeded count. Must leave room when particles are injected."));
  k.push_back(held_in_float64(number<C>("particles.inject.rate", SIM_MEMBER(inject.rate), "1/s", ge(0),
                                        "Particles injected per second; 0 disables injection.")));
  k.push_back(number<C>("particles.inject.x0", SIM_MEMBER(inject.x0), "m", any(), "Injection rectangle, lower x."));
  k.push_back(number<C>("particles.inject.y0", SIM_MEMBER(inject.y0), "m", any(), "Injection rectangle, lower y."));
  k.push_back(number<C>("particles.inject.x1", SIM_MEMBER(inject.x1), "m", any(), "Injection rectangle, upper x."));
  k.push_back(number<C>("particles.inject.y1", SIM_MEMBER(inject.y1), "m", any(), "Injection rectangle, upper y."));
  k.push_back(number<C>("particles.inject.diameter", SIM_MEMBER(inject.diameter), "m", gt(0), "Diameter of injected particles."));
  k.push_back(number<C>("particles.inject.vx", SIM_MEMBER(inject.vx), "m/s", any(), "Initial x velocity of injected particles."));
  k.push_back(number<C>("particles.inject.vy", SIM_MEMBER(inject.vy), "m/s", any(), "Initial y velocity of injected particles."));
}

// The run: steps, seed, output, layout, backend.
void run_keys(std::vector<Field<Config>>& k) {
  using C = Config;
  k.push_back(integer<C>("run.steps", SIM_MEMBER(steps), "steps", ge(0),
                         "Time steps to run (the step index to stop at). With run.end_time, a cap only when given "
                         "(in the file or by --steps): the default does not cut an end-time run short."));
  auto end_time = held_in_float64(number<C>(
      "run.end_time", SIM_MEMBER(end_time), "s", gt(0),
      "Simulated time to stop at: the last step is shortened to land on it exactly (a step that would leave less "
      "than 1/1000 of itself is stretched to it instead). Default 0: none, the run stops at run.steps."));
  end_time.default_is_none = true;
  k.push_back(std::move(end_time));
  k.push_back(integer<C>("run.seed", SIM_MEMBER(seed), "", ge(0), "Random seed (particle placement and injection)."));
  k.push_back(integer<C>("run.snapshot_every", SIM_MEMBER(snapshot_every), "steps", ge(0),
                         "Write a snapshot every N steps; 0 = only after the last step (and the initial one)."));
  auto snap_interval = held_in_float64(number<C>(
      "run.snapshot_interval", SIM_MEMBER(snapshot_interval), "s", gt(0),
      "Also write a snapshot whenever the simulated time reaches a multiple of this: the step before is cut "
      "to land on it exactly, as on run.end_time. With run.snapshot_every both apply. Default 0: none."));
  snap_interval.default_is_none = true;
  k.push_back(std::move(snap_interval));
  k.push_back(boolean<C>("run.snapshot_initial", SIM_MEMBER(snapshot_initial),
                         "Write the initial state (step 0, t = 0) as the first snapshot of a fresh run (a restart "
                         "does not rewrite the snapshot it starts from)."));
  k.push_back(integer<C>("run.diagnostics_every", SIM_MEMBER(diagnostics_every), "steps", ge(0),
                         "Append a row to OUTPUT/diagnostics.csv every N steps (and at step 0 of a fresh run); "
                         "0 = no diagnostics.csv."));
  k.push_back(string<C>("run.output", SIM_MEMBER(output), non_empty(), "Output directory."));
  k.push_back(enumeration<Layout, C>("run.layout", SIM_MEMBER(layout), "Particle storage: array of structs or struct of arrays."));
  k.push_back(enumeration<BackendKind, C>("run.backend", SIM_MEMBER(backend), "auto = cuda when a device is present, else cpu."));
}

// The CUDA backend's strategies.
void gpu_keys(std::vector<Field<Config>>& k) {
  using C = Config;
  k.push_back(enumeration<Stencil, C>("gpu.stencil", SIM_MEMBER(stencil), "Grid stencil kernels: plain loads, read-only cache, shared-memory tiles, (vector) the Jacobi sweep with 16-byte loads and rows in registers, or (temporal) as vector with four Jacobi sweeps per pass through memory. auto: with the jacobi solver vector, temporal from 8192^2 cells on; else ldg."));
  k.push_back(enumeration<ConstantsIn, C>("gpu.constants", SIM_MEMBER(constants), "Where kernels read the run constants from."));
  k.push_back(enumeration<Sampling, C>("gpu.sampling", SIM_MEMBER(sampling), "Fluid velocity at particles: software bilinear (8 gathers), texture hardware, or packed (the 4 corners of each stencil in one 16-byte load per component). auto: packed from 2^20 particle slots on, else software."));
  k.push_back(enumeration<Deposit, C>("gpu.deposit", SIM_MEMBER(deposit), "Two-way force deposit: per-particle float atomics (not reproducible), a face-sorted reduction of 8 pairs a particle (each face summed in the CPU's order), a gather by stencil node (one sort key a particle), or 64-bit fixed-point atomics (integer sums, which have no order, at the cost of the float atomics); sorted, gather and fixed are bitwise reproducible, whatever the order of the particles in memory. auto: fixed with two-way coupling and particles, else sorted."));
  k.push_back(with_auto(integer<C>("gpu.sort_every", SIM_MEMBER(sort_every), "steps", ge(-1), "Sort particles by cell every K steps; 0 = never. auto (or -1): 10 from 2^20 particle slots on, else 0."), kAutoSortEvery));
  k.push_back(boolean<C>("gpu.graphs", SIM_MEMBER(graphs),
                         "Step without host round trips: each step's launches recorded once as CUDA graphs and replayed, "
                         "dt chosen on the device, the step's norms read back a few steps later (with the fft solver)."));
  k.push_back(integer<C>("gpu.block_level_cells", SIM_MEMBER(block_level_cells), "cells", ge(0),
                         "Multigrid levels of at most this many cells are smoothed, restricted and prolonged by one "
                         "thread block in one launch per V-cycle (the coarsest level always, up to 16384 cells); "
                         "0 = every operation its own launch. The result is the same bit for bit."));
  k.push_back(integer<C>("gpu.paired_smoothing_cells", SIM_MEMBER(paired_smoothing_cells), "cells", ge(0),
                         "Multigrid levels of at least this many cells (and out of the one-block levels) smooth a red "
                         "and a black half-sweep in one pass through memory (shared-memory tiles with a ring of two "
                         "cells), where no side is periodic; 0 = never. The result is the same bit for bit. Off by "
                         "default: on the H200 it is slower than two launches at every size measured "
                         "(docs/PERFORMANCE.md)."));
  k.push_back(integer<C>("gpu.dense_transform_cells", SIM_MEMBER(dense_transform_cells), "cells", ge(0),
                         "Transform solves (the pressure's and the viscous step's) of at most this many unknowns, "
                         "and at most 1024 along each axis, multiply by the dense 1-D eigenbases (three launches a "
                         "solve) instead of running cuFFT (seven or more); 0 = cuFFT always. The answers agree to "
                         "rounding (float64). Off by default: slower than cuFFT on an H100 at 64^2 and 96^2 "
                         "(docs/GPU_BACKEND.md)."));
  k.push_back(enumeration<RankTransport, C>("gpu.transport", SIM_MEMBER(transport),
                                           "How GPU ranks exchange rows: NCCL, or host memory and MPI; auto = NCCL "
                                           "when every rank has a GPU of its own, host when ranks share one. The "
                                           "result is the same bit for bit."));
  k.push_back(boolean<C>("gpu.overlap", SIM_MEMBER(overlap),
                         "GPU ranks: the halo rows' copies run on a side stream while the interior is computed; "
                         "false keeps every copy in line (to measure what the overlap saves)."));
  k.push_back(integer<C>("gpu.block_x", SIM_MEMBER(block_x), "threads", interval(0, false, 1024, false),
                         "Thread block width; 0 = the kernel's default. block_x * block_y <= 1024."));
  k.push_back(integer<C>("gpu.block_y", SIM_MEMBER(block_y), "threads", interval(0, false, 1024, false),
                         "Thread block height; 0 = the kernel's default."));
}

// Snapshot files.
void output_keys(std::vector<Field<Config>>& k) {
  using C = Config;
  k.push_back(boolean<C>("output.compress", SIM_MEMBER(compress), "Compress snapshot datasets (HDF5 deflate)."));
  k.push_back(integer<C>("output.compression_level", SIM_MEMBER(compression_level), "", interval(0, false, 9, false),
                         "Deflate level when compress = true."));
  k.push_back(boolean<C>("output.collective", SIM_MEMBER(collective),
                         "Over MPI ranks with parallel HDF5: all ranks write each snapshot together; false: rank 0 "
                         "gathers the state and writes it on its writer thread, behind the stepping."));
}

// Every config key, section by section in this order.
std::vector<Field<Config>> config_keys() {
  std::vector<Field<Config>> k;
  domain_keys(k);
  fluid_keys(k);
  time_keys(k);
  pressure_keys(k);
  boundary_keys(k);
  particles_keys(k);
  run_keys(k);
  gpu_keys(k);
  output_keys(k);
  return k;
}

std::vector<Field<Obstacle>> obstacle_keys() {
  using O = Obstacle;
  std::vector<Field<O>> k;
  k.push_back(enumeration<ObstacleShape, O>("shape", SIM_MEMBER(shape), "circle uses x, y, radius; rectangle uses x0, y0, x1, y1."));
  k.push_back(number<O>("x", SIM_MEMBER(x), "m", any(), "Circle centre, x."));
  k.push_back(number<O>("y", SIM_MEMBER(y), "m", any(), "Circle centre, y."));
  k.push_back(number<O>("radius", SIM_MEMBER(radius), "m", ge(0), "Circle radius; must be > 0 for a circle."));
  k.push_back(number<O>("x0", SIM_MEMBER(x0), "m", any(), "Rectangle lower-left corner, x."));
  k.push_back(number<O>("y0", SIM_MEMBER(y0), "m", any(), "Rectangle lower-left corner, y."));
  k.push_back(number<O>("x1", SIM_MEMBER(x1), "m", any(), "Rectangle upper-right corner, x (> x0)."));
  k.push_back(number<O>("y1", SIM_MEMBER(y1), "m", any(), "Rectangle upper-right corner, y (> y0)."));
  return k;
}

std::vector<Field<ParticleRegion>> region_keys() {
  using R = ParticleRegion;
  std::vector<Field<R>> k;
  k.push_back(number<R>("x0", SIM_MEMBER(x0), "m", any(), "Rectangle lower-left corner, x."));
  k.push_back(number<R>("y0", SIM_MEMBER(y0), "m", any(), "Rectangle lower-left corner, y."));
  k.push_back(number<R>("x1", SIM_MEMBER(x1), "m", any(), "Rectangle upper-right corner, x (> x0)."));
  k.push_back(number<R>("y1", SIM_MEMBER(y1), "m", any(), "Rectangle upper-right corner, y (> y0)."));
  k.push_back(integer<R>("count", SIM_MEMBER(count), "particles", ge(0), "Particles placed uniformly at random in the rectangle."));
  k.push_back(number<R>("diameter_min", SIM_MEMBER(diameter_min), "m", gt(0), "Smallest diameter (uniform distribution)."));
  k.push_back(number<R>("diameter_max", SIM_MEMBER(diameter_max), "m", gt(0), "Largest diameter (>= diameter_min)."));
  k.push_back(number<R>("vx", SIM_MEMBER(vx), "m/s", any(), "Initial x velocity."));
  k.push_back(number<R>("vy", SIM_MEMBER(vy), "m/s", any(), "Initial y velocity."));
  return k;
}

#undef SIM_MEMBER

std::string range_words(const Range& r, bool prefix_in) {
  auto bound = [](const Bound& b) { return format_number(b.value); };
  if (r.min && r.max)
    return std::string(prefix_in ? "in " : "") + (r.min->exclusive ? "(" : "[") + bound(*r.min) + ", " +
           bound(*r.max) + (r.max->exclusive ? ")" : "]");
  if (r.min) return (r.min->exclusive ? "> " : ">= ") + bound(*r.min);
  if (r.max) return (r.max->exclusive ? "< " : "<= ") + bound(*r.max);
  return {};
}

}  // namespace

const ConfigSchema& config_schema() {
  static const ConfigSchema schema = [] {
    ConfigSchema s;
    s.keys = config_keys();
    s.obstacles = {"obstacles", "Solid obstacles (no-slip) inside the domain, at most 16.", obstacle_keys(),
                   [](Config& c) -> std::vector<Obstacle>& { return c.obstacles; },
                   [](const Config& c) -> const std::vector<Obstacle>& { return c.obstacles; }};
    s.regions = {"particles.regions", "Rectangles seeded with particles at the start.", region_keys(),
                 [](Config& c) -> std::vector<ParticleRegion>& { return c.regions; },
                 [](const Config& c) -> const std::vector<ParticleRegion>& { return c.regions; }};
    return s;
  }();
  return schema;
}

const Field<Config>* ConfigSchema::find(std::string_view key) const {
  for (const auto& f : keys)
    if (f.key == key) return &f;
  return nullptr;
}

std::vector<std::string> ConfigSchema::tables() const {
  std::vector<std::string> out;
  auto add_prefixes = [&](const std::string& key) {
    for (std::size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', dot + 1))
      if (std::find(out.begin(), out.end(), key.substr(0, dot)) == out.end()) out.push_back(key.substr(0, dot));
  };
  for (const auto& f : keys) add_prefixes(f.key);
  add_prefixes(obstacles.key);
  add_prefixes(regions.key);
  return out;
}

bool ConfigSchema::is_table(std::string_view key) const {
  const auto t = tables();
  return std::find(t.begin(), t.end(), key) != t.end();
}

std::string expected_text(const FieldInfo& f) {
  std::string s;
  switch (f.type) {
    case ValueType::integer: s = "an integer"; break;
    case ValueType::number: s = "a number"; break;
    case ValueType::boolean: s = "true or false"; break;
    case ValueType::string: s = f.range.non_empty ? "a non-empty string" : "a string"; break;
    case ValueType::enumeration: {
      s = "one of ";
      for (std::size_t i = 0; i < f.choices.size(); ++i) s += (i ? "|" : "") + f.choices[i];
      break;
    }
  }
  if (f.type == ValueType::integer || f.type == ValueType::number) {
    const std::string words = range_words(f.range, true);
    if (!words.empty()) s += " " + words;
  }
  if (f.auto_value) s += " or \"auto\"";
  if (!f.range.why.empty()) s += " (" + f.range.why + ")";
  return s;
}

std::string allowed_text(const FieldInfo& f) {
  switch (f.type) {
    case ValueType::integer: return range_words(f.range, false) + (f.auto_value ? ", `\"auto\"`" : "");
    case ValueType::number: return range_words(f.range, false);
    case ValueType::boolean: return "`true`, `false`";
    case ValueType::string: return f.range.non_empty ? "non-empty" : "";
    case ValueType::enumeration: {
      std::string s;
      for (std::size_t i = 0; i < f.choices.size(); ++i) s += (i ? ", `" : "`") + f.choices[i] + "`";
      return s;
    }
  }
  return {};
}

bool value_allowed(const FieldInfo& f, const ConfigValue& v) {
  auto in_range = [&](double x) {
    if (f.range.min && (f.range.min->exclusive ? !(x > f.range.min->value) : !(x >= f.range.min->value))) return false;
    if (f.range.max && (f.range.max->exclusive ? !(x < f.range.max->value) : !(x <= f.range.max->value))) return false;
    return true;
  };
  switch (f.type) {
    case ValueType::integer: {
      const int64_t x = std::get<int64_t>(v);
      return in_range(static_cast<double>(x)) && (!f.type_max || x <= *f.type_max);
    }
    case ValueType::number: {
      const double x = std::get<double>(v);
      return std::isfinite(x) && in_range(x) && float32_problem(f, x).empty();
    }
    case ValueType::boolean: return true;
    case ValueType::string: {
      const std::string& s = std::get<std::string>(v);
      return (!f.range.non_empty || !s.empty()) && s.size() <= kMaxStringValue;
    }
    case ValueType::enumeration:
      return std::find(f.choices.begin(), f.choices.end(), std::get<std::string>(v)) != f.choices.end();
  }
  return false;
}

std::string float32_problem(const FieldInfo& f, double x) {
  if (!f.float32 || x == 0 || !std::isfinite(x)) return {};
  const double a = std::abs(x);
  if (a < std::numeric_limits<float>::min())
    return "rounds to 0 or to a subnormal in float32, which the solver computes in (a nonzero value needs a "
           "magnitude >= 1.18e-38)";
  if (a > std::numeric_limits<float>::max())
    return "overflows float32, which the solver computes in (magnitudes up to 3.4e+38)";
  return {};
}

std::string format_number(double v) {
  // Shortest round-trip digits; plain decimals for everyday magnitudes
  // ("0.0002", not "2e-04"), exponents only for the very small or large.
  char buf[64];
  const double a = std::abs(v);
  const auto fmt = (a == 0 || (a >= 1e-5 && a < 1e16)) ? std::chars_format::fixed : std::chars_format::general;
  const auto res = std::to_chars(buf, buf + sizeof buf, v, fmt);
  return std::string(buf, res.ptr);
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::optional<std::string> closest_match(std::string_view key, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(2, key.size() / 4);
  std::optional<std::string> best;
  std::size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    // The distance is at least the difference in length.
    const std::size_t gap = key.size() > c.size() ? key.size() - c.size() : c.size() - key.size();
    if (gap >= best_d) continue;
    const std::size_t d = edit_distance(key, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

namespace {

std::string md_cell(std::string s) {
  std::string out;
  for (const char ch : s) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

const char* type_name(ValueType t) {
  switch (t) {
    case ValueType::integer: return "integer";
    case ValueType::number: return "number";
    case ValueType::boolean: return "bool";
    case ValueType::string: return "string";
    case ValueType::enumeration: return "enum";
  }
  return "";
}

template <class T>
void md_table(std::string& out, const std::string& heading, const std::vector<const Field<T>*>& fields,
              const std::string& key_prefix) {
  out += "### `" + heading + "`\n\n";
  out += "| Key | Type | Unit | Default | Allowed | Description |\n";
  out += "|-----|------|------|---------|---------|-------------|\n";
  for (const Field<T>* f : fields) {
    out += "| `" + key_prefix + f->key + "` | " + type_name(f->type) + " | " + (f->unit.empty() ? "-" : f->unit) +
           " | `" + md_cell(format_toml_value(*f, f->default_value())) + "` | " +
           md_cell(allowed_text(*f).empty() ? "any" : allowed_text(*f)) + " | " + md_cell(f->description) + " |\n";
  }
  out += "\n";
}

template <class T>
std::vector<const Field<T>*> pointers(const std::vector<Field<T>>& v) {
  std::vector<const Field<T>*> out;
  for (const auto& f : v) out.push_back(&f);
  return out;
}

}  // namespace

std::string schema_markdown() {
  const ConfigSchema& s = config_schema();
  std::string out;
  std::vector<const Field<Config>*> group;
  std::string table;
  auto flush = [&] {
    if (!group.empty()) md_table<Config>(out, "[" + table + "]", group, "");
    group.clear();
  };
  for (const auto& f : s.keys) {
    const std::string t = f.key.substr(0, f.key.rfind('.'));
    if (t != table) {
      flush();
      table = t;
    }
    group.push_back(&f);
  }
  flush();
  md_table<Obstacle>(out, "[[" + s.obstacles.key + "]]", pointers(s.obstacles.fields), s.obstacles.key + "[i].");
  md_table<ParticleRegion>(out, "[[" + s.regions.key + "]]", pointers(s.regions.fields), s.regions.key + "[i].");
  return out;
}

}  // namespace sim
