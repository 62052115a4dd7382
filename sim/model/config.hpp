// SPDX-License-Identifier: MIT
// The validated description of a run: plain values in SI units.
// Keys, units, defaults and ranges are defined once, in io/config_schema.cpp;
// docs/CONFIG.md documents the same table.
#pragma once
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <map>
#include <string>
#include <vector>

#include "sim/model/checked.hpp"
#include "sim/model/strategies.hpp"

namespace sim {

struct BoundarySide {
  BoundaryKind kind = BoundaryKind::wall;
  double speed = 0.0;  // wall: tangential speed [m/s]; inflow: mean normal speed into the domain [m/s]
  InflowProfile profile = InflowProfile::uniform;  // inflow: how the normal speed varies along the side
  // The largest speed the side imposes on a face: |speed|, 1.5 |speed| at
  // the peak of a parabolic inflow.
  double peak_speed() const {
    const bool parabolic = kind == BoundaryKind::inflow && profile == InflowProfile::parabolic;
    return (parabolic ? 1.5 : 1.0) * (speed < 0 ? -speed : speed);
  }
};

struct Obstacle {
  ObstacleShape shape = ObstacleShape::circle;
  double x = 0.0, y = 0.0;      // circle centre [m]
  double radius = 0.0;          // [m]
  double x0 = 0.0, y0 = 0.0;    // rectangle lower-left corner [m]
  double x1 = 0.0, y1 = 0.0;    // rectangle upper-right corner [m]
};

// A rectangle filled with particles at start, uniformly at random.
struct ParticleRegion {
  double x0 = 0.0, y0 = 0.0, x1 = 0.0, y1 = 0.0;  // [m]
  int64_t count = 0;
  double diameter_min = 1e-4, diameter_max = 1e-4;  // [m]
  double vx = 0.0, vy = 0.0;                        // initial velocity [m/s]
};

// Particles added while running (e.g. tracers at an inflow), `rate` per second.
struct ParticleInjection {
  double rate = 0.0;  // [1/s]; 0 disables
  double x0 = 0.0, y0 = 0.0, x1 = 0.0, y1 = 0.0;
  double diameter = 1e-4;  // [m]
  double vx = 0.0, vy = 0.0;
};

struct Config {
  std::string source;  // file the config came from (for messages and snapshots)
  // Keys whose value a command-line override gave, to "--set KEY=VALUE" as
  // written: what a message about that value names instead of the file.
  // Empty for a config built in code.
  std::map<std::string, std::string> set_by;

  // [domain]
  int nx = 64, ny = 64;        // cells
  double lx = 1.0, ly = 1.0;   // [m]
  double lz = 0.0;             // slab thickness [m] (fluid mass per cell, two-way coupling); 0 = min(lx, ly) / 100

  // [fluid]
  double density = 1000.0;     // [kg/m^3]
  double viscosity = 1e-3;     // kinematic [m^2/s]
  InitialFlow initial = InitialFlow::rest;
  double initial_u = 0.0, initial_v = 0.0;  // uniform velocity or Taylor-Green amplitude [m/s]
  double force_x = 0.0, force_y = 0.0;      // body force per unit mass on the fluid [m/s^2]
  AdvectionScheme advection = AdvectionScheme::central;
  ViscousScheme viscous = ViscousScheme::implicit;
  ViscousSolver viscous_solver = ViscousSolver::auto_;
  // The viscous term the step treats implicitly: fluid.viscous = implicit,
  // except with two-way coupled particles, whose drag impulse enters the
  // stages before the pressure that holds it is known (the stage-2 payback):
  // the Helmholtz solve would diffuse it and set a settling suspension's
  // fluid moving (measured: 0.55 v_t at loading 10, dt = 20 tau_p; the
  // explicit stages keep it below 1e-6 v_t). Those runs keep it explicit.
  bool implicit_viscosity() const { return viscous == ViscousScheme::implicit && !coupled(); }
  // Particles may exist: a seeded region, a capacity or an injection (does not throw).
  bool has_particles() const {
    if (capacity > 0 || inject.rate > 0) return true;
    for (const auto& r : regions)
      if (r.count > 0) return true;
    return false;
  }
  // The two-way step runs: two_way with particles that may exist.
  bool coupled() const { return two_way && has_particles(); }

  // [gravity]
  double gx = 0.0, gy = -9.81;  // [m/s^2]

  // [time]
  double dt = 0.0;      // fixed step [s]; 0 = adaptive from cfl
  double cfl = 0.5;     // adaptive: dt = cfl * min(advective, viscous limit if explicit), at most dt_max
                        // (no particle limit: the coupled particle step is stable at any dt)
  double dt_max = 1e-2; // adaptive upper bound [s]

  // [pressure]
  PressureSolverKind solver = PressureSolverKind::auto_;
  double tolerance = 1e-6;   // relative residual ||b - A p|| / ||b|| (float32 fields: ~1e-5 is the floor)
  int max_iterations = 2000;
  double omega = 0.0;        // SOR relaxation factor; 0 = optimal for the grid
  int check_every = 10;      // residual checked every N sweeps
  int fixed_iterations = 0;  // > 0: every solve runs exactly this many iterations, no tolerance (a budget)
  int max_failures = 3;      // consecutive unconverged solves that stop the run
  // Over ranks: multigrid levels of at most this many cells held whole by
  // every rank (sim/ranks/level_rows.hpp); -1 = the backend's own
  // (none on the CPU, CudaPoisson::kReplicatedCells on GPU ranks).
  int64_t replicated_cells = -1;

  // [boundary]
  BoundarySide left, right, bottom, top;

  std::vector<Obstacle> obstacles;

  // [particles]
  double particle_density = 2500.0;  // [kg/m^3]
  double restitution = 0.5;          // normal restitution on walls and obstacles
  bool two_way = true;               // deposit the drag reaction on the fluid
  int64_t capacity = 0;              // particle slots; 0 = total seeded count
  std::vector<ParticleRegion> regions;
  ParticleInjection inject;

  // [run]
  int64_t steps = 1000;
  // run.steps came from the file or the command line, not the default: only
  // then does it cap a run with an end time (set by the config loader).
  bool steps_given = false;
  double end_time = 0.0;  // [s] stop at this simulated time, the last step shortened to land on it; 0 = none
  uint64_t seed = 1;
  int64_t snapshot_every = 0;  // 0 = only the last step
  double snapshot_interval = 0.0;  // [s] also a snapshot at every multiple of this simulated time; 0 = none
  bool snapshot_initial = true;    // a fresh run writes the state at t = 0 as its first snapshot
  int64_t diagnostics_every = 10;  // a row of OUTPUT/diagnostics.csv every N steps; 0 = none
  std::string output = "out";
  Layout layout = Layout::soa;
  BackendKind backend = BackendKind::auto_;

  // [gpu] stencil, sampling, deposit and sort_every: auto (kAutoSortEvery)
  // until resolve_strategies (sim/model/strategies.hpp) chooses by the case
  Stencil stencil = Stencil::auto_;
  ConstantsIn constants = ConstantsIn::constant;
  Sampling sampling = Sampling::auto_;
  Deposit deposit = Deposit::auto_;
  int64_t sort_every = kAutoSortEvery;  // sort particles by cell every K steps; 0 = never
  bool graphs = true;       // CUDA: replay each step's launches as graphs, scalars read back later
  int64_t block_level_cells = 1024;  // CUDA: multigrid levels of at most this many cells in one block's launch
  int64_t paired_smoothing_cells = 0;  // CUDA: multigrid levels from this size smooth in red-black pairs; 0 = none
  int64_t dense_transform_cells = 0;  // CUDA: transform solves of at most this many unknowns by dense bases; 0 = none
  RankTransport transport = RankTransport::auto_;  // CUDA ranks: how rows travel between them
  bool overlap = true;  // CUDA ranks: halo copies on a side stream, overlapped with the interior
  int block_x = 0, block_y = 0;  // 0 = the variant's default

  // [output]
  bool compress = false;
  int compression_level = 4;
  bool collective = true;  // over ranks with parallel HDF5: all ranks write each snapshot together

  // Sum of the regions' counts; throws std::overflow_error past 2^63 - 1
  // (io/config_loader refuses such a config first, naming the key).
  int64_t total_seeded() const {
    int64_t n = 0;
    for (const auto& r : regions) {
      const auto sum = checked_add(n, r.count);
      if (!sum) throw std::overflow_error("the particle counts of particles.regions add up past 2^63 - 1");
      n = *sum;
    }
    return n;
  }
  // The step index a run stops at: run.steps, unless an end time governs
  // the run and run.steps was not given (then none).
  int64_t step_limit() const {
    return end_time > 0 && !steps_given ? std::numeric_limits<int64_t>::max() : steps;
  }
  int64_t particle_capacity() const { return capacity > 0 ? capacity : total_seeded(); }
  double dx() const { return lx / nx; }
  double dy() const { return ly / ny; }
  // The slab thickness in force: lz, or min(lx, ly) / 100 when lz = 0.
  double slab_thickness() const { return lz > 0 ? lz : 0.01 * (lx < ly ? lx : ly); }
};

}  // namespace sim
