// SPDX-License-Identifier: MIT
// What a backend provides to the step loop. The step itself (order of
// phases, dt, convergence) lives once in Simulation and PressureSolver;
// a backend owns the state in its memory and runs each phase its own way.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "sim/model/config.hpp"
#include "sim/model/constants.hpp"
#include "sim/model/fluid_physics.hpp"
#include "sim/model/poisson.hpp"
#include "sim/model/stability.hpp"
#include "sim/model/state.hpp"

namespace sim {

class RankSplit;  // sim/ranks/rank_split.hpp

// momentum: the two stage updates (advection, diffusion, body force) and
// the copy of the old velocity; pressure and project: both stages' solves.
enum class Phase { momentum, pressure, project, particles, output, count };
constexpr int kPhaseCount = static_cast<int>(Phase::count);
const char* phase_name(Phase p);

// Accumulates wall time per phase: a steady clock on the CPU, events on the GPU.
class PhaseTimer {
 public:
  virtual ~PhaseTimer() = default;
  virtual void begin(Phase p) = 0;
  virtual void end(Phase p) = 0;
  virtual std::array<double, kPhaseCount> totals_ms() = 0;  // may synchronise
  virtual void reset() = 0;
};

struct Diagnostics {
  double max_div = 0;      // max |div u| over fluid cells [1/s]
  double max_speed = 0;    // max |u| over faces [m/s]
  double kinetic_energy = 0;  // sum 1/2 rho (u^2 + v^2) dx dy per unit depth [J/m]
  double fluid_momentum[2] = {0, 0};     // sum cell_mass * u over owned faces [kg m/s]
  double particle_momentum[2] = {0, 0};  // sum m_p v_p [kg m/s]
  double particle_mean_v[2] = {0, 0};    // mean particle velocity [m/s]
  int64_t alive = 0;
  ParticleCounters counters;
  // The last step's momentum exchange with the boundaries
  // (sim/model/boundary_flux.hpp), per unit depth, in the step's average (sim/model/time_scheme.hpp);
  // measured where measures_boundaries(cfg) (an obstacle, an inflow or an
  // outflow), else all zero and `boundaries` false.
  bool boundaries = false;
  double side_intake[4][2] = {};  // x, y momentum the fluid took in through each Side [N/m]
  // The force the fluid exerted on each obstacle (config order): pressure,
  // viscous stress and the advective flux of the held faces [N/m]. Not the
  // particles' contacts or drag on the solid faces.
  double obstacle_force[kMaxObstacles][2] = {};
};

// Primitives of the pressure Poisson solve; iterative drivers in
// sim/model/pressure.hpp combine them, so every solver runs on every backend.
class PressureOps {
 public:
  virtual ~PressureOps() = default;
  virtual double compute_rhs() = 0;        // rhs = div(u**)/dt on fluid cells; returns ||rhs||_2
  virtual void fill_pressure_halo() = 0;
  virtual void jacobi_sweep() = 0;         // phi <- Jacobi(phi); halo filled after
  // n jacobi_sweep()s, bit for bit; a backend may do several per pass through memory.
  virtual void jacobi_sweeps(int n) {
    for (int k = 0; k < n; ++k) jacobi_sweep();
  }
  virtual void sor_sweep(int color) = 0;   // cells with (i + j) % 2 == color; halo filled after
  virtual double residual_norm() = 0;      // ||rhs - lap phi||_2 over fluid cells

  // ---- The solvers' own interfaces, set up once before the first solve ----
  // Multigrid-preconditioned CG on the hierarchy `h`, bound to this
  // backend's rhs, open mask and phi; project() then uses its x.
  virtual MultigridOps& multigrid_setup(const PoissonHierarchy& h) = 0;
  virtual MultigridOps* multigrid() = 0;  // what multigrid_setup set up last, or null
  // The transform solve (only where fft_unsupported_reason is empty), bound
  // the same way; project() then uses its x.
  virtual TransformOps& transform_setup(const PoissonHierarchy& h) = 0;
};

// The velocity fields of a step: the current one (what compute_rhs and
// project act on, and what is written out), the step's starting velocity
// kept for the second stage, and a stage's input.
// `start`: the step's starting velocity of a two-way step, kept while
// saved serves the particles (allocated by two-way runs only).
enum class VelocityField { current, saved, stage, start };

// A backend's buffer of one of them.
template <class T>
T& of_field(VelocityField f, T& current, T& saved, T& stage, T& start) {
  return f == VelocityField::saved ? saved : f == VelocityField::stage ? stage : f == VelocityField::start ? start : current;
}

// The pressure solves of a step (one per stage, sim/model/time_scheme.hpp)
// and its implicit viscous solves.
constexpr int kStepSolves = 3;
constexpr int kViscousSolves = 3;

// What an asynchronous step leaves on the device for the host to read
// later (DeviceStepping::take_record): everything the host decides or reports
// from. Squared norms, so the device takes no square roots the host would
// round differently.
struct StepRecord {
  int64_t step = 0;       // steps done after this one
  double time = 0;        // simulated time after it [s]
  double dt = 0;          // its dt [s]
  double rate = 0;        // the CFL rate of next_dt (NaN: a non-finite face)
  uint64_t next_id = 0;   // the next particle id after its injection
  int64_t viscous_limited = 0;  // 1 if the viscous limit set dt
  int64_t dt_max_limited = 0;   // 1 if time.dt_max set dt
  int64_t inject_overflow = 0;  // 1 if the injected count passed 2^53 (injection_count)
  double rhs2[kStepSolves] = {};       // ||div u**/dt||^2 of each solve
  double residual2[kStepSolves] = {};  // ||b - A x||^2 of each solve
  uint64_t nonfinite[kStepSolves] = {};  // the particle watchdog's count at each solve
  int64_t iterations[kStepSolves] = {};  // iterative solves: iterations done
  double relative[kStepSolves] = {};     // iterative solves: the relative residual at the last check
  // The implicit viscous solves (sim/model/viscous.hpp), where the step has them.
  int64_t viscous_iterations[kViscousSolves] = {};
  double viscous_relative[kViscousSolves] = {};  // ||b - A x|| / ||b|| after the solve
};


// Where the device clock starts (the state's step, time and next id).
struct DeviceClock {
  int64_t step = 0;
  double time = 0;
  uint64_t next_id = 0;
};

// Stepping without host round trips, what only an asynchronous backend (the
// CUDA backend on one rank) implements: it keeps a step's scalars on the
// device and replays a fixed sequence of launches; Simulation then steps
// through the calls below and reads each step's StepRecord later, while the
// next steps already run.
class DeviceStepping {
 public:
  virtual ~DeviceStepping() = default;
  // Runs `ops` (calls on the backend). Records the launches `ops` makes the
  // first time it sees `key` and replays the recording after that without
  // calling `ops`: so `ops` must make the same launches every time (no host
  // decision, no host scalar read). Segments nest: one inside a segment
  // being recorded is part of it.
  virtual void segment(int key, const std::function<void()>& ops) = 0;
  // Starts stepping on the device from `clock`, with dt chosen by `rule`.
  virtual void start_device_clock(const DeviceClock& clock, const DtRule& rule) = 0;
  // The step's dt by `rule` from the current velocity (choose_dt), set as
  // the constants' dt; the clock advanced by it; the particles to inject
  // drawn from the clock. Opens the step's record.
  virtual void choose_dt_on_device() = 0;
  // The constants' dt of the pressure solve and the projection that follow
  // set to `factor` times the step's dt (until the next choose_dt_on_device).
  virtual void scale_dt_on_device(real factor) = 0;
  // Before a step's segments: what must run from the host every step (the
  // sort of the particles by cell, when due).
  virtual void prepare_step_on_device() = 0;
  // step_particles with the injected ids and count from the device clock.
  virtual void step_particles_on_device() = 0;
  // Queues the copy of the step's record to the host.
  virtual void close_record() = 0;
  // The oldest record not yet taken, in step order: false if there is none
  // queued, or (wait == false) if its step has not finished yet.
  virtual bool take_record(StepRecord& r, bool wait) = 0;
  virtual int records_in_flight() const = 0;

  // ---- The pressure primitives with their scalars left on the device ----
  // compute_rhs, with ||rhs||^2 and the particle watchdog's count written
  // into solve `solve` (0 .. kStepSolves - 1) of the step's StepRecord instead of returned.
  virtual void compute_rhs_on_device(int solve) = 0;
  // poisson_residual_norm()^2 into the StepRecord's solve `solve`.
  virtual void poisson_residual_on_device(int solve) = 0;
  // The conjugate-gradient loop of MultigridSolver with its scalars on the
  // device: pcg_start, then the loop state (tolerance, iteration limit) for
  // solve `solve`; pcg_step_on_device is pcg_dot_rz, pcg_direction,
  // pcg_apply and pcg_update with the host's alpha, beta and exit tests
  // done on the device; repeat_on_device runs `body` (V-cycle + step) for
  // as long as the last start or step says to go on.
  virtual void pcg_start_on_device(int solve, double tolerance, int max_iterations) = 0;
  virtual void pcg_step_on_device(int solve, double tolerance, int max_iterations) = 0;
  virtual void repeat_on_device(const std::function<void()>& body) = 0;
  // The implicit viscous solve of solve_viscous (sim/model/viscous.hpp)
  // with its scalars on the device: (I - gamma dt nu lap) x = b in `f`,
  // dt the device's step dt, the iteration count from the measured initial
  // residual and `tolerance` as on the host, the same iterates bit for bit;
  // its iterations and relative residual into viscous solve `solve` of the
  // StepRecord.
  virtual void viscous_solve_on_device(VelocityField f, real gamma, int solve, double tolerance) = 0;
};

// A copy of the state on its way to host memory (Backend::begin_download).
class PendingState {
 public:
  virtual ~PendingState() = default;
  // Waits for the copy to land and returns the state; called once, from any
  // thread (the snapshot writer's). Throws what the copy failed with.
  virtual SimState take() = 0;
};

// A state already in host memory, as a PendingState.
std::unique_ptr<PendingState> ready_state(SimState s);

class Backend : public PressureOps {
 public:
  virtual std::string name() const = 0;        // device or threads, one line
  virtual std::string strategies() const = 0;  // e.g. "layout=soa stencil=ldg ..."
  virtual void upload(const SimState& s) = 0;
  // The whole state (over ranks on rank 0: download_own gathered by the
  // split, RankSplit::gather_state).
  virtual void download(SimState& s) = 0;
  // This process's own copy of the state, nothing gathered: one process's
  // is the whole state; a rank's has the fields in the storage of the whole
  // grid, current in the rows ranks() gives it and the halo rows next to
  // them, and its own particles (in the run's slots, or the CPU's only its
  // live records) and counters (what a snapshot all ranks write together
  // takes, write_snapshot_collective).
  virtual void download_own(SimState& s) = 0;
  // The rank split this backend computes its rows of: one process, or a
  // rank of a run split into slabs (sim/ranks/rank_split.hpp).
  virtual const RankSplit& ranks() const = 0;
  // Starts copying the state into host memory and returns without waiting
  // for the copy, so the stepping can go on while it runs; the result has
  // `header`'s grid and scalars (step, time, dt, next_id) and this backend's
  // fields, particles (in canonical slot order) and counters as of the call.
  // The default downloads now.
  virtual std::unique_ptr<PendingState> begin_download(SimState header);
  virtual void set_constants(const Constants& c) = 0;  // whenever dt or anything else changes
  // Why this backend cannot run the transform solve, or empty when it can
  // (then fft_unsupported_reason decides): what resolve_solver
  // (sim/model/poisson.hpp) takes, auto then taking multigrid.
  virtual std::string transform_refusal() const { return {}; }

  virtual double max_velocity_rate() = 0;  // max over faces of |u|/dx + |v|/dy, for the CFL dt
  virtual void fill_velocity_halo(VelocityField f) = 0;
  void fill_velocity_halo() { fill_velocity_halo(VelocityField::current); }
  // The coupled particle step (sim/model/particle_physics.hpp): with two-way
  // coupling the current fluid velocity first takes the step's implicit
  // drag of the particles (updated in place, halo filled); then every
  // particle samples it and moves (drag, gravity, obstacles, walls); then
  // `count` new particles are injected with ids first_id... (slot = id % capacity),
  // drawn by injected_particle() from the config's injection and seed.
  virtual void step_particles(uint64_t first_id, int64_t count) = 0;
  // to = from on every point, halo included.
  virtual void copy_velocity(VelocityField from, VelocityField to) = 0;
  // out = alpha out + beta x on every point, halo included.
  virtual void combine_velocity(VelocityField out, real alpha, VelocityField x, real beta) = 0;
  // out = a base + b in + dt (c (A + f)(in) + cv nu lap(in)) on active
  // faces (stage_point of sim/model/fluid_physics.hpp), 0 on solid faces;
  // halo of out filled after. `out` must differ from `in`; `base` is not
  // read when a == 0.
  virtual void rk_stage(VelocityField in, VelocityField base, VelocityField out, real a, real b, real c,
                        real cv) = 0;
  // The implicit viscous solve's passes (solve_viscous, sim/model/viscous.hpp),
  // on the active faces of u and v, g = gamma dt nu, b the values of `f`;
  // the iterates live in two work fields of the backend's own.
  // helmholtz_start: both iterates = f (halo and held faces included);
  // returns ||b||^2 and ||b - A b||^2 (A = I - g lap, helmholtz_residual_*).
  // chebyshev_iteration: x_{k+1} = chebyshev_point(x_k, x_{k-1}, b - A x_k)
  // into the older iterate, halo filled, which becomes the newer.
  // helmholtz_finish: returns ||b - A x||^2 of the newest iterate and
  // copies it into f (halo filled).
  struct HelmholtzNorms {
    double b2 = 0, r2 = 0;
  };
  virtual HelmholtzNorms helmholtz_start(VelocityField f, real g) = 0;
  virtual void chebyshev_iteration(VelocityField f, real g, const ChebyshevWeights& w) = 0;
  virtual double helmholtz_finish(VelocityField f, real g) = 0;
  // The transform solve instead of the iterations (viscous_takes_transform):
  // whether this backend runs it for this run, and, after helmholtz_start,
  // the newest iterate x = b corrected by (I - g lap_0)^-1 (b - A x) (the
  // residual with the boundary values; sim/model/helmholtz_fft.hpp), halo
  // filled.
  virtual bool viscous_transform() const { return false; }
  virtual void helmholtz_correct(VelocityField, real) {
    throw std::logic_error("this backend has no transform viscous solve");
  }
  // Two-way coupling, passes 1 to 3 of the coupled step
  // (sim/model/particle_physics.hpp): the current fluid takes the step's implicit
  // drag (halo filled), stage becomes the free fluid the particles will
  // sample (current, with the free values of the held boundary faces), and
  // each face keeps its particles' response kappa_f. Then, after the first
  // stage's projection, step_particles moves every particle against stage
  // plus its share of the projection's impulse (current - saved) and gives
  // that share back to the fluid in stage, the second stage's base.
  virtual void couple_fluid() = 0;
  virtual void project() = 0;  // u = u** - dt grad phi; halo filled after
  // u -= dt grad phi with the float32 phi every solve leaves and a restart
  // reads back (the incremental pressure of the implicit stages: the same
  // bits after a restart as in the run that wrote it); halo filled after.
  virtual void project_stored() = 0;
  // The step's momentum exchange with the boundaries (sim/model/boundary_flux.hpp),
  // kept for diagnostics(); nothing where the case does not measure it.
  // Part `part` (BoundaryPart) of the step's sums, each link's value
  // weighted by its share of the step (sim/model/time_scheme.hpp):
  // boundary_flux: w_explicit (A + f) + w_viscous nu lap of `in`;
  // boundary_pressure: w times the links' share of the pressure the
  // stage's projection just used.
  virtual void boundary_flux(VelocityField in, int part, real w_explicit, real w_viscous) = 0;
  virtual void boundary_pressure(int part, real w) = 0;
  virtual Diagnostics diagnostics() = 0;
  // Alive particles whose position or velocity was not finite in a particle
  // step since the last upload (counted inside the particle step itself).
  // Current after the step's compute_rhs: the CUDA backend reads its device
  // counter back with the rhs norm, in the same synchronisation.
  virtual int64_t nonfinite_particles() = 0;
  // Particle records this process stores (its memory for particles): the
  // CPU's compacted store holds the live particles its rank owns, the GPU
  // every slot of the run's capacity.
  virtual int64_t particle_records() const = 0;
  virtual PhaseTimer& timer() = 0;
  virtual void synchronize() {}  // wait for queued device work (benchmarks)

  // The backend's stepping without host round trips (DeviceStepping), or
  // null where it has none (the CPU; CUDA over ranks).
  virtual DeviceStepping* device_stepping() { return nullptr; }
};

}  // namespace sim
