// SPDX-License-Identifier: MIT
#include "sim/app/report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <cstdio>
#include <ostream>

namespace sim {
namespace {
std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
}  // namespace

std::string progress_line(int64_t step, int64_t total, double sim_time, double ms_per_step, double eta_s,
                          double end_time) {
  std::string line = "step " + std::to_string(step);
  if (total != std::numeric_limits<int64_t>::max()) line += "/" + std::to_string(total);
  line += "  t = " + fmt("%.4g", sim_time);
  if (end_time > 0) line += "/" + fmt("%.4g", end_time);
  line += " s  " + fmt("%.3g", ms_per_step) + " ms/step";
  if (std::isfinite(eta_s)) line += "  ETA " + fmt("%.1f", eta_s) + " s";
  return line;
}

std::string steps_line(const RunSummary& s) {
  const double wall = std::max(s.wall_s, 1e-12);
  std::string line = std::to_string(s.steps) + " steps, simulated time " + fmt("%.6g", s.sim_time) + " s";
  line += " (";
  if (s.end_time > 0) line += "end time " + fmt("%.6g", s.end_time) + " s, ";
  line += fmt("%.4g", (s.sim_time - s.start_time) / wall) + " s per wall second), wall " +
          fmt("%.3f", s.wall_s) + " s, " + fmt("%.1f", s.steps / wall) + " steps/s";
  return line;
}

// Which limit set dt: the summary's "time step" line.
static void print_time_step(std::ostream& os, const RunSummary& s) {
  if (s.fixed_dt) {
    os << "time step: fixed (time.dt)\n";
  } else {
    const int64_t cfl = s.steps - s.viscous_limited_steps - s.dt_max_steps;
    os << "time step: set by the advective CFL in " << cfl << " of " << s.steps << " steps";
    if (s.dt_max_steps > 0) os << ", by time.dt_max in " << s.dt_max_steps;
    if (s.viscous_limited_steps > 0)
      os << ", by the viscous limit of the explicit diffusion in " << s.viscous_limited_steps
         << (s.implicit_asked ? " (a finer grid shrinks it as h^2)"
                              : " (a finer grid shrinks it as h^2; fluid.viscous = \"implicit\" lifts it)");
    os << "\n";
  }
}

// The phase table, output and snapshot lines.
static void print_phases(std::ostream& os, const RunSummary& s, double steps) {
  double total = 0;
  for (double v : s.phase_ms) total += v;
  os << "  phase        total ms    ms/step   share\n";
  for (int p = 0; p < kPhaseCount; ++p) {
    char line[128];
    std::snprintf(line, sizeof line, "  %-10s %10.1f %10.4f  %5.1f%%\n", phase_name(static_cast<Phase>(p)),
                  s.phase_ms[p], s.phase_ms[p] / steps, total > 0 ? 100.0 * s.phase_ms[p] / total : 0.0);
    os << line;
  }
  char line[128];
  std::snprintf(line, sizeof line, "  %-10s %10.1f %10.4f\n", "total", total, total / steps);
  os << line;
  if (s.output_hidden_ms > 0) os << "  output hidden behind stepping: " << fmt("%.1f", s.output_hidden_ms) << " ms\n";
  if (s.snapshots > 0 && s.snapshot_bytes > 0) {
    const double file_ms = s.snapshot_hdf5_ms + s.snapshot_sync_ms;
    os << "  snapshots: " << s.snapshots << ", " << fmt("%.1f", s.snapshot_bytes / 1e6) << " MB, to disk at "
       << fmt("%.0f", file_ms > 0 ? s.snapshot_bytes / (1e3 * file_ms) : 0.0) << " MB/s (writer thread: state copy "
       << fmt("%.1f", s.snapshot_take_ms) << " ms, fields " << fmt("%.1f", s.snapshot_fields_ms) << ", HDF5 "
       << fmt("%.1f", s.snapshot_hdf5_ms) << ", fsync " << fmt("%.1f", s.snapshot_sync_ms) << ")\n";
  }
}

// Ranks, their slabs and their communication (multi-rank runs only).
static void print_ranks(std::ostream& os, const RunSummary& s, double steps) {
  if (s.ranks <= 1 || s.rank_comm_ms.empty()) return;
  const auto [lo, hi] = std::minmax_element(s.rank_comm_ms.begin(), s.rank_comm_ms.end());
  const auto [rlo, rhi] = std::minmax_element(s.rank_rows.begin(), s.rank_rows.end());
  const double wall_ms = 1e3 * s.wall_s;
  os << "  ranks: " << s.ranks << " in slabs of " << *rlo;
  if (*rhi != *rlo) os << "-" << *rhi;
  os << " rows; communication (reductions, halo rows, transposes, deposit folds, migration; waits included) "
     << fmt("%.1f", *lo) << "-" << fmt("%.1f", *hi) << " ms per rank, " << fmt("%.1f", 100.0 * *hi / std::max(1e-9, wall_ms))
     << "% of the wall time at most, in " << fmt("%.0f", s.comm_calls_max / steps)
     << " exchanges and reductions a step\n";
  // Each rank's share, up to 16 of them (mpirun -np N sim bench compares rank counts).
  if (s.ranks <= 16)
    for (int r = 0; r < s.ranks; ++r) {
      const double c = s.rank_comm_ms[static_cast<size_t>(r)];
      os << "    rank " << r << ": " << s.rank_rows[static_cast<size_t>(r)] << " rows, communication "
         << fmt("%.1f", c) << " ms, the rest " << fmt("%.1f", std::max(0.0, wall_ms - c)) << " ms\n";
    }
  os << "  snapshots: " << (s.collective_output ? "written by all ranks together (parallel HDF5)"
                                                : "gathered onto rank 0, which writes them")
     << "\n";
}

// The pressure and viscous solves.
static void print_solves(std::ostream& os, const RunSummary& s) {
  os << "\npressure: " << fmt("%.1f", s.pressure_iterations_mean) << " iterations/step over its three solves ("
     << fmt("%.1f", s.pressure_iterations_mean / 3) << " a solve; last step " << s.last_pressure.iterations
     << "), final relative residual " << fmt("%.3g", s.last_pressure.residual);
  if (s.fixed_iterations > 0)
    os << " (a fixed budget of " << s.fixed_iterations << " iterations a solve, pressure.fixed_iterations)\n";
  else
    os << " (tolerance " << fmt("%.3g", s.tolerance) << ")\n";
  if (s.pressure_unconverged > 0)
    os << "pressure: " << s.pressure_unconverged << " of " << 3 * s.steps
       << " solves (three a step) missed the tolerance, worst relative residual "
       << fmt("%.3g", s.pressure_worst_residual) << "\n";
  if (!s.implicit_viscosity && s.implicit_asked)
    os << "viscous: explicit (two-way coupled particles: fluid.viscous = \"implicit\" applies to runs without them)\n";
  if (s.implicit_viscosity) {
    if (s.viscous_transform)
      os << "viscous: implicit, transform solves (three a step, fluid.viscous_solver)\n";
    else
      os << "viscous: implicit, " << fmt("%.1f", s.viscous_iterations_mean)
         << " Chebyshev iterations/step (three solves a step)\n";
    if (s.viscous_unconverged > 0)
      os << "viscous: " << s.viscous_unconverged << " of " << 3 * s.steps
         << " solves missed the tolerance, worst relative residual " << fmt("%.3g", s.viscous_worst_residual) << "\n";
  }
}

void print_summary(std::ostream& os, const RunSummary& s) {
  const double steps = std::max<int64_t>(s.steps, 1);
  os << "\nsim " << SIM_VERSION << " | " << s.config << " | " << s.backend << "\n";
  os << "strategies: " << s.strategies << ", pressure solver " << s.pressure_solver << ", advection " << s.advection
     << "\n";
  os << steps_line(s) << "\n\n";
  print_phases(os, s, steps);
  print_ranks(os, s, steps);
  print_solves(os, s);
  print_time_step(os, s);
  const double rel_div = s.diag.max_speed > 0 ? s.diag.max_div * s.h / s.diag.max_speed : 0.0;
  os << "fluid: max |div u| " << fmt("%.3g", s.diag.max_div) << " 1/s (x h / max|u| = " << fmt("%.3g", rel_div)
     << "), max |u| " << fmt("%.4g", s.diag.max_speed) << " m/s, kinetic energy " << fmt("%.4g", s.diag.kinetic_energy)
     << " J/m\n";
  if (s.diag.boundaries)
    for (size_t k = 0; k < s.obstacles.size(); ++k)
      os << "obstacle " << k << " (" << s.obstacles[k] << "): the fluid's force on it in the last step ("
         << fmt("%.6g", s.diag.obstacle_force[k][0]) << ", " << fmt("%.6g", s.diag.obstacle_force[k][1])
         << ") N/m (x: drag, y: lift; pressure and viscous stress per unit depth)\n";
  os << "particles: " << s.diag.alive << " alive, " << s.diag.counters.removed << " removed at outflows, "
     << s.diag.counters.recycled << " recycled; mean velocity (" << fmt("%.4g", s.diag.particle_mean_v[0]) << ", "
     << fmt("%.4g", s.diag.particle_mean_v[1]) << ") m/s\n";
}

}  // namespace sim
