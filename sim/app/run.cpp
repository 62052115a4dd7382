// SPDX-License-Identifier: MIT
#include "sim/app/run.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "io/config_schema.hpp"
#include "io/output_lock.hpp"
#include "io/restart.hpp"
#include "io/snapshot_files.hpp"
#include "sim/app/run_output.hpp"
#include "sim/app/report.hpp"
#include "sim/app/backend_factory.hpp"
#include "cuda/cuda_backend.hpp"
#include "sim/app/cli.hpp"
#include "sim/model/advection.hpp"
#include "sim/app/memory_check.hpp"
#include "sim/ranks/agree.hpp"
#include "sim/ranks/slab_rows.hpp"
#include "sim/model/simulation.hpp"

namespace sim {
namespace {

// The summary as JSON into `path`, whole or not at all (through a temporary,
// io/snapshot_files.hpp); `flag` names the option that asked for it, if any.
void write_summary_json(const std::string& path, const RunSummary& s, const std::string& flag = "") {
  try {
    write_file_atomically(path, summary_json(s));
  } catch (const std::exception& e) {
    if (flag.empty()) throw;
    throw std::runtime_error(flag + " " + path + ": " + e.what());
  }
}

using Clock = std::chrono::steady_clock;

// SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 end the run cleanly after
// the current step: the final snapshot is written, so an interrupted run
// can be restarted from it, and the status is 128 + the signal's number.
// The first signal is kept (a lock-free atomic: safe in a handler); one
// that comes before the stepping (install_stop_signals runs first thing)
// stops the run before its first step.
std::atomic<Simulation*> g_interruptible{nullptr};
std::atomic<int> g_stop_signal{0};
extern "C" void request_stop_on_signal(int sig) {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, sig);
  if (Simulation* s = g_interruptible.load()) s->request_stop();
}
const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "a signal";
  }
}
class StopOnSignal {
 public:
  explicit StopOnSignal(Simulation& s) {
    g_interruptible.store(&s);
    for (int k = 0; k < kSignals; ++k) previous_[k] = std::signal(kStopSignals[k], request_stop_on_signal);
    if (g_stop_signal.load() != 0) s.request_stop();
  }
  ~StopOnSignal() {
    for (int k = 0; k < kSignals; ++k) std::signal(kStopSignals[k], previous_[k]);
    g_interruptible.store(nullptr);
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  static constexpr int kSignals = 5;
  static constexpr int kStopSignals[kSignals] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
  void (*previous_[kSignals])(int) = {SIG_DFL, SIG_DFL, SIG_DFL, SIG_DFL, SIG_DFL};
};

// A directory already holding a series belongs to another run: writing into
// it would mix two runs in one sim.xdmf. It is taken over only when asked
// (--overwrite) or continued (--restart from one of its snapshots). Taken
// over, the old series is set aside, not deleted: it goes once this run has
// results (RunOutput commits it), and comes back if this run fails first.
// Temporaries a killed run left are removed first (the lock is held: no
// live run owns them); only files sim recognises as its own count.
void claim_output(const Config& cfg, const RunOptions& opts, std::optional<SetAsideSeries>& aside, std::ostream& err) {
  remove_stale_temporaries(cfg.output);
  for (const std::string& d : stale_aside_dirs(cfg.output))
    err << "sim: note: '" << d << "' holds a series an earlier --overwrite set aside (that run ended before it "
        << "had results); sim leaves it alone\n";
  const std::vector<std::string> foreign = foreign_series_files(cfg.output);
  if (!foreign.empty())
    throw std::runtime_error("output directory '" + cfg.output + "' holds '" + foreign.front() +
                             "' under a name of its series, not a file sim wrote and can read (another program's, "
                             "or damaged); move it or write elsewhere");
  const std::vector<std::string> old = series_files(cfg.output);
  const bool continues = !opts.restart.empty() && same_directory(opts.restart, cfg.output);
  if (continues && opts.overwrite)
    throw std::runtime_error("--overwrite would remove the snapshot to restart from; drop one of the two");
  if (old.empty() || continues) return;
  if (opts.overwrite) {
    aside.emplace(cfg.output, old);
    return;
  }
  // a snapshot or the index named first, diagnostics.csv only when alone
  const std::string first = old.front() == kDiagnosticsName && old.size() > 1 ? old[1] : old.front();
  throw std::runtime_error("output directory '" + cfg.output + "' holds snapshots of another run (" + first +
                           (old.size() > 1 ? " and " + std::to_string(old.size() - 1) + " more" : "") +
                           "); pass --overwrite to replace them or --restart one of them");
}

// Before anything is allocated: rank 0 checks the run against the machine
// and claims the output directory (`lock`, and `aside` with --overwrite);
// agreed over ranks.
void claim_run(const Config& cfg, const RunOptions& opts, std::optional<OutputLock>& lock,
               std::optional<SetAsideSeries>& aside, std::ostream& err) {
  const Comm& comm = opts.comm;
  const bool root = comm.rank() == 0;
  const int ranks_on_host = comm.ranks_sharing_memory();
  agree(comm, [&] {
    check_split_run(cfg, comm.size());
    // Past a file-size limit (ulimit -f) a write fails with EFBIG and the run
    // stops with its one-line error, instead of SIGXFSZ killing the process
    // with a half-written temporary and no message. Every rank: with
    // parallel HDF5 all of them write.
    std::signal(SIGXFSZ, SIG_IGN);
    if (!root) return;  // rank 0 alone touches the output directory
    // Before anything is created: a NUL would cut the path short at the
    // system call, so the run would write somewhere else than asked.
    check_path("output directory", cfg.output);
    if (!opts.restart.empty()) check_path("--restart", opts.restart);
    // Before anything is allocated or created: a run the machine cannot hold
    // is refused in one line with the memory it needs and what there is.
    check_run_fits(cfg, ranks_on_host, comm.size() > 1);
    // Before any work: a run that cannot write its results should not start.
    prepare_output_dir(cfg.output);
    lock.emplace(cfg.output);
    claim_output(cfg, opts, aside, err);
  });
}

// The state the run starts from: the config's, or the snapshot of --restart.
// A CPU rank of a split run seeds only the particles its slab holds.
SimState start_state(const Config& cfg, const RunOptions& opts) {
  SimState state;
  agree(opts.comm, [&] {
    // CPU ranks seed or read back only the particles their slab holds.
    const bool own = opts.comm.size() > 1 && !split_runs_on_cuda(cfg);
    const Decomposition slabs = Decomposition::slabs(domain_of(cfg), own ? opts.comm.size() : 1);
    const int rank = opts.comm.rank();
    const auto keep = [&](double x, double y) { return slabs.owner_of_point(x, y) == rank; };
    if (!opts.restart.empty()) state = own ? load_restart(cfg, opts.restart, keep) : load_restart(cfg, opts.restart);
    else state = own ? make_initial_state(cfg, keep) : make_initial_state(cfg);
    // A restart that has nothing left to run is an error, not a success: it
    // writes nothing, and a script chaining restarts must not take it for progress.
    if (!opts.restart.empty() && state.step >= cfg.step_limit())
      throw std::runtime_error("nothing to do: the snapshot is at step " + std::to_string(state.step) +
                               " and --steps is " + std::to_string(cfg.steps));
    if (!opts.restart.empty() && cfg.end_time > 0 && state.time >= cfg.end_time)
      throw std::runtime_error("nothing to do: the snapshot is at t = " + format_number(state.time) +
                               " s and run.end_time is " + format_number(cfg.end_time) + " s");
  });
  return state;
}

// The backend of one rank, or over several this rank's slab of the run
// (`slabs`); `notice`: a line for the user, or empty.
std::unique_ptr<Backend> make_run_backend(const Config& cfg, const Comm& comm, const SimState& state,
                                          std::shared_ptr<SlabRows>& slabs, std::string& notice) {
  const bool split = comm.size() > 1;
  const bool root = comm.rank() == 0;
  std::unique_ptr<Backend> backend;
  agree(comm, [&] {
    if (!split) {
      fit_cpu_threads(cfg, state);
      backend = make_backend(cfg, state.grid, &notice);
      return;
    }
    if (root && resolves_to_cuda(cfg) && !split_runs_on_cuda(cfg))
      notice = "a run over " + std::to_string(comm.size()) +
               " ranks runs on the CPU backend (this sim was built without NCCL), though a CUDA device is present";
    slabs = std::make_shared<SlabRows>(comm, domain_of(cfg));
    if (!split_runs_on_cuda(cfg)) fit_cpu_threads(cfg, state, comm.size());
    backend = make_split_backend(cfg, state.grid, slabs);
  });
  return backend;
}

// How the stepping ended: stopped by a signal (sig, 0 when none), or at the last step.
struct StepsDone {
  bool stopped = false;
  int sig = 0;
};

// How a run shows its progress: a line redrawn on a terminal every 0.2 s,
// or in a batch run (output to a file or a pipe) a line of its own on
// stderr every RunOptions::progress_every seconds, so a long job's log
// says how far it got.
enum class Progress { none, terminal, batch };

// Steps to cfg.steps or to run.end_time (Config::step_limit: the first
// reached), with its progress shown (`progress`, on `out` on a terminal,
// else on `err`), unless a signal stops the run first: over several ranks,
// a signal one rank caught stops all of them after the same step (every
// rank's clock is the same).
StepsDone step_to_end(const Config& cfg, const Comm& comm, Simulation& sim, RunOutput& output, Progress progress,
                      double batch_every, std::ostream& out, std::ostream& err, Clock::time_point t0) {
  const bool split = comm.size() > 1;
  const int64_t first = sim.step_index();
  const int64_t last = cfg.step_limit();
  const double start_time = cfg.end_time > 0 ? sim.time() : 0.0;
  auto last_print = t0;
  // the signal that stops the run (0: none), the same on every rank
  auto stop_signal = [&] {
    const int64_t sig = sim.stop_requested() ? g_stop_signal.load() : 0;
    return split ? comm.allreduce_max(sig) : sig;
  };
  auto stop = [&] { return stop_signal() != 0; };
  bool stopped = false;
  while (sim.step_index() < last && !sim.at_end() && !(stopped = stop())) {
    sim.step();
    output.after_step(sim);
    if (progress != Progress::none) {
      const auto now = Clock::now();
      const bool due = progress == Progress::terminal
                           ? now - last_print > std::chrono::milliseconds(200) || sim.step_index() == last
                           : std::chrono::duration<double>(now - last_print).count() >= batch_every;
      if (due) {
        last_print = now;
        const double el = std::chrono::duration<double>(now - t0).count();
        const double done = static_cast<double>(sim.step_index() - first);
        const double ms = 1e3 * el / done;
        const double t = sim.time();
        // ETA by steps, or with an end time by simulated time (when it comes first)
        double eta = last == std::numeric_limits<int64_t>::max() ? std::numeric_limits<double>::infinity()
                                                                 : ms * 1e-3 * (last - sim.step_index());
        if (cfg.end_time > 0 && t > start_time)
          eta = std::min(eta, el * (cfg.end_time - t) / (t - start_time));
        const std::string line = progress_line(sim.step_index(), last, t, ms, eta, cfg.end_time);
        if (progress == Progress::terminal) out << "\r" << line << "   " << std::flush;
        else err << "sim: progress: " << line << std::endl;
      }
    }
  }
  if (!split) stopped = sim.stop_requested();
  else if (!stopped) stopped = stop();
  const int sig = stopped ? static_cast<int>(stop_signal()) : 0;
  if (progress == Progress::terminal) out << "\n";
  return {stopped, sig};
}

// The run's report: `steps` steps in `wall` seconds.
RunSummary summarize(const Config& cfg, const Comm& comm, Simulation& sim, const RunOutput& output,
                     const SlabRows* slabs, int64_t steps, double wall) {
  RunSummary s;
  s.config = cfg.source;
  s.backend = sim.backend().name();
  s.strategies = sim.backend().strategies();
  s.pressure_solver = sim.pressure_solver_name();
  s.advection = std::string(to_string(cfg.advection));
  s.steps = steps;
  s.sim_time = sim.time();
  s.end_time = cfg.end_time;
  s.wall_s = wall;
  s.phase_ms = sim.backend().timer().totals_ms();
  s.phase_ms[static_cast<int>(Phase::output)] += output.main_thread_ms();
  const SnapshotTiming out_t = output.timing();
  s.output_hidden_ms = out_t.hidden_ms();
  s.snapshots = out_t.written;
  s.snapshot_bytes = out_t.bytes;
  s.snapshot_take_ms = out_t.take_ms;
  s.snapshot_fields_ms = out_t.fields_ms;
  s.snapshot_hdf5_ms = out_t.hdf5_ms;
  s.snapshot_sync_ms = out_t.sync_ms;
  s.pressure_iterations_mean = s.steps > 0 ? double(sim.pressure_iterations_total()) / s.steps : 0.0;
  s.last_pressure = sim.last_pressure();
  s.tolerance = cfg.tolerance;
  s.fixed_iterations = cfg.fixed_iterations;
  s.pressure_unconverged = sim.pressure_unconverged();
  s.pressure_worst_residual = sim.pressure_worst_residual();
  s.viscous_limited_steps = sim.viscous_limited_steps();
  s.dt_max_steps = sim.dt_max_steps();
  s.fixed_dt = cfg.dt > 0;
  s.implicit_viscosity = cfg.implicit_viscosity();
  s.implicit_asked = cfg.viscous == ViscousScheme::implicit;
  s.viscous_iterations_mean = s.steps > 0 ? double(sim.viscous_iterations_total()) / s.steps : 0.0;
  s.viscous_transform = s.implicit_viscosity && cfg.viscosity > 0 && sim.backend().viscous_transform();
  s.viscous_unconverged = sim.viscous_unconverged();
  s.viscous_worst_residual = sim.viscous_worst_residual();
  s.diag = sim.diagnostics();
  for (const Obstacle& o : cfg.obstacles) s.obstacles.push_back(o.shape == ObstacleShape::circle ? "circle" : "rectangle");
  s.h = std::min(cfg.dx(), cfg.dy());
  if (slabs) {
    s.ranks = comm.size();
    s.collective_output = output.collective();
    s.rank_comm_ms = comm.allgather(sim.backend().ranks().comm_ms());
    s.comm_calls_max = comm.allreduce_max(static_cast<double>(sim.backend().ranks().comm_calls()));
    for (int r = 0; r < comm.size(); ++r) s.rank_rows.push_back(slabs->end_row(r) - slabs->first_row(r));
  }
  return s;
}

// The answer checked: what the projection left of the divergence. A direct
// or Krylov solve that failed its job (a system with no solution, as
// boundaries that cannot conserve mass) stops with status 1 after the report
// (a throw); the fixed-sweep solvers only warn (they are kept for
// comparison). Then the summary, printed and, with --summary-json, written.
void report_run(const Config& cfg, const RunOptions& opts, RunSummary& s, double speed, std::ostream& out,
                std::ostream& err) {
  const bool root = opts.comm.rank() == 0, talk = root && !opts.quiet;
  const std::string wrong = divergence_failure(cfg, s.diag, s.h);
  const bool sweeps = s.pressure_solver == "jacobi" || s.pressure_solver == "sor";
  if (!wrong.empty() && sweeps && talk)
    err << "sim: warning: " << wrong
        << (cfg.fixed_iterations > 0 ? " (pressure.fixed_iterations: a fixed budget of sweeps, not a solve)" : "")
        << "\n";
  if (speed == 0 && talk) {
    const std::string late = central_advection_warning(cfg, s.diag.max_speed, "the largest face speed reached");
    if (!late.empty()) err << late << "\n";
  }
  if (talk) print_summary(out, s);
  s.answer_check = wrong;
  agree(opts.comm, [&] {
    if (root && !opts.summary_json.empty())
      write_summary_json(opts.summary_json, s, "--summary-json");
  });
  if (!wrong.empty() && !sweeps) throw CollectiveError(wrong);
}

int run(const Config& cfg, const RunOptions& opts, std::ostream& out, std::ostream& err) {
  const Comm& comm = opts.comm;
  const bool root = comm.rank() == 0;
  const bool talk = root && !opts.quiet;  // rank 0 alone prints
  std::optional<OutputLock> lock;
  std::optional<SetAsideSeries> aside;  // --overwrite: the old series until this run has results
  claim_run(cfg, opts, lock, aside, err);
  SimState state = start_state(cfg, opts);
  if (!opts.restart.empty() && talk)
    out << "restart: step " << state.step << ", t = " << state.time << " s from " << opts.restart << "\n";
  std::string notice;
  std::shared_ptr<SlabRows> slabs;
  std::unique_ptr<Backend> backend = make_run_backend(cfg, comm, state, slabs, notice);
  if (!notice.empty() && talk) out << notice << "\n";
  if (talk) out << "backend: " << backend->name() << "\n";
  if (talk && !opts.case_choices.empty() && backend->name().rfind("cuda", 0) == 0)
    out << "strategies chosen by the case: " << opts.case_choices << "\n";
  // Central advection at a high cell Reynolds number: once, from the
  // config's speeds now or, when it sets none, from the flow at the end.
  const double speed = reference_speed(cfg);
  const std::string advection_warning = central_advection_warning(cfg, speed, "the reference speed of the config");
  if (!advection_warning.empty() && talk) err << advection_warning << "\n";
  std::optional<Simulation> sim_holder;
  agree(comm, [&] { sim_holder.emplace(cfg, std::move(backend), state); });
  Simulation& sim = *sim_holder;
  std::optional<RunOutput> output_holder;
  agree(comm, [&] {
    output_holder.emplace(cfg, state, opts, sim.backend(), sim.pressure_solver_name(), aside ? &*aside : nullptr);
  });
  RunOutput& output = *output_holder;
  state = SimState{};

  const Progress progress = !talk                                          ? Progress::none
                            : &out == &std::cout && isatty(STDOUT_FILENO) ? Progress::terminal
                            : opts.progress_every > 0                     ? Progress::batch
                                                                          : Progress::none;
  const int64_t first = sim.step_index();
  const double first_time = sim.time();
  const auto t0 = Clock::now();
  const StopOnSignal stop_on_signal(sim);  // until the run returns: the last snapshot's writes included
  output.start(sim);  // the initial snapshot and the first row of diagnostics.csv
  const StepsDone done = step_to_end(cfg, comm, sim, output, progress, opts.progress_every, out, err, t0);
  output.finish(sim);
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  RunSummary s = summarize(cfg, comm, sim, output, slabs.get(), sim.step_index() - first, wall);
  s.start_time = first_time;

  report_run(cfg, opts, s, speed, out, err);
  // OUTPUT/summary.json: the last run into the directory that ended well (or
  // was stopped with its snapshot); a failed one leaves the one before it.
  if (aside && !done.stopped) aside->commit();  // status 0: this run's results replace the old series
  const bool own_results = !aside || aside->committed();
  agree(comm, [&] {
    if (root && own_results && std::filesystem::is_directory(cfg.output))
      write_summary_json(join_path(cfg.output, "summary.json"), s);
  });
  if (done.stopped) {
    if (root)
      out << "stopped by " << signal_name(done.sig) << " at step " << sim.step_index() << "; its snapshot is in "
          << cfg.output << "\n";
    return 128 + (done.sig > 0 ? done.sig : SIGINT);
  }
  return 0;
}

}  // namespace

void install_stop_signals() {
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) std::signal(s, request_stop_on_signal);
}

std::string divergence_failure(const Config& cfg, const Diagnostics& d, double h) {
  if (!(d.max_speed > 0) && !(d.max_div > 0)) return {};  // a fluid at rest
  const double ratio = d.max_speed > 0 ? d.max_div * h / d.max_speed : std::numeric_limits<double>::infinity();
  const double limit = divergence_limit(cfg.tolerance);
  if (ratio <= limit) return {};
  char line[400];
  std::snprintf(line, sizeof line,
                "the answer fails its check: max |div u| h / max |u| = %.3g after the last projection, above "
                "%.3g (%g x pressure.tolerance, at least %g float32 roundings): not divergence-free",
                ratio, limit, kDivergencePerTolerance, kDivergenceRoundings);
  return line;
}

// What a run over several ranks cannot do yet, refused before any work.
void check_split_run(const Config& cfg, int ranks) {
  if (ranks < 2) return;
  if (cfg.backend == BackendKind::cuda && cuda_backend_built() && !cuda_ranks_built())
    throw std::runtime_error("--backend cuda over " + std::to_string(ranks) +
                             " MPI ranks: this sim was built without NCCL, which GPU ranks exchange their rows "
                             "through (drop --backend cuda for CPU ranks, or run on one rank)");
}

Domain domain_of(const Config& cfg) {
  Domain d;
  d.nx = cfg.nx;
  d.ny = cfg.ny;
  d.lx = cfg.lx;
  d.ly = cfg.ly;
  d.periodic_x = cfg.left.kind == BoundaryKind::periodic;
  d.periodic_y = cfg.bottom.kind == BoundaryKind::periodic;
  return d;
}

int run_simulation(const Config& cfg, const RunOptions& opts, std::ostream& out, std::ostream& err) {
  const Comm& comm = opts.comm;
  try {
    return run(cfg, opts, out, err);
  } catch (const std::exception& e) {
    const std::string line = "sim: error: " + error_line(e.what());
    // Errors every rank meets alike: one line from rank 0, status 1 on all.
    const bool alike = dynamic_cast<const CollectiveError*>(&e) || dynamic_cast<const NonFiniteError*>(&e) ||
                       dynamic_cast<const PressureFailure*>(&e);
    if (comm.size() > 1 && !alike) comm.abort_all(line + " (rank " + std::to_string(comm.rank()) + ")", 1);
    if (comm.rank() == 0) err << line << "\n";
    return 1;
  }
}

}  // namespace sim
