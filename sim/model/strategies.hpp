// SPDX-License-Identifier: MIT
// Every run-time switch is a small enum that parses from and prints to the
// same strings the CLI, the config, the report and the benchmark use.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sim {

struct Config;

enum class Layout { aos, soa };
enum class BackendKind { auto_, cpu, cuda };
// naive: plain loads; ldg: const __restrict__ + __ldg; shared: tile + halo in
// shared memory; vector: the Jacobi sweep with 16-byte loads and rows kept in
// registers (other stencils as ldg); temporal: as vector, and the Jacobi
// solve does several sweeps per pass through memory (PressureOps::jacobi_sweeps).
// auto (here, in Sampling and in Deposit): chosen by the case
// (resolve_strategies) before a backend is made.
enum class Stencil { auto_, naive, ldg, shared, vector, temporal };
// Jacobi sweeps per pass through memory of stencil=temporal (cuda/kernels.hpp).
constexpr int kTemporalSweeps = 4;
enum class ConstantsIn { constant, global };
enum class Sampling { auto_, software, texture, packed };
enum class Deposit { auto_, atomic, sorted, gather, fixed };
// gpu.sort_every chosen by the case (Config::sort_every; "auto" in a config).
constexpr int64_t kAutoSortEvery = -1;
enum class PressureSolverKind { auto_, jacobi, sor, multigrid, fft };
enum class BoundaryKind { wall, free_slip, periodic, inflow, outflow };
// The normal velocity across an inflow side (sim/model/inflow.hpp).
enum class InflowProfile { uniform, parabolic };
enum class InitialFlow { rest, uniform, taylor_green };
enum class ObstacleShape { circle, rectangle };
// Momentum advection: second-order central, or QUICK with a fourth-order
// advecting velocity (third order; sim/model/fluid_physics.hpp).
enum class AdvectionScheme { central, quick };
// The viscous term: implicit in two Helmholtz solves per step (the
// default; no viscous limit on dt) or explicit in the Runge-Kutta stages
// (sim/model/time_scheme.hpp).
enum class ViscousScheme { implicit, explicit_ };
// How the implicit viscous step solves its Helmholtz problems: auto = the
// transform solve where the domain allows it (no obstacle, no GPU ranks, each
// velocity component's sides periodic, or closed with matching tangential
// rules), Chebyshev iteration elsewhere (sim/model/viscous.hpp).
enum class ViscousSolver { auto_, transform, chebyshev };
// How GPU ranks exchange rows: auto = NCCL when each rank has a GPU of its
// own, host memory and MPI when ranks share one (cuda/device_rows.hpp).
enum class RankTransport { auto_, nccl, host };

// The one table of names per enum.
template <class E>
const std::vector<std::pair<E, std::string_view>>& enum_names();

template <class E>
std::string_view to_string(E value) {
  for (const auto& [v, name] : enum_names<E>())
    if (v == value) return name;
  return "?";
}

template <class E>
std::optional<E> parse_enum(std::string_view text) {
  for (const auto& [v, name] : enum_names<E>())
    if (name == text) return v;
  return std::nullopt;
}

// Every value of E that names one choice, in table order: auto, which
// stands for one of the others, left out (the benchmark's axes, the tests'
// strategy matrices).
template <class E>
std::vector<E> enum_values() {
  std::vector<E> out;
  for (const auto& [v, name] : enum_names<E>())
    if (name != "auto") out.push_back(v);
  return out;
}

// The GPU strategies a config leaves automatic (gpu.stencil, gpu.sampling,
// gpu.deposit = auto, gpu.sort_every = kAutoSortEvery), chosen by the case
// as the measurements in docs/PERFORMANCE.md found fastest among the exact,
// deterministic ones: the fixed-point deposit at every size (on the H200
// box.toml 5,591 steps/s against 4,598 sorted and 5,601 with float atomics;
// bench_large 13.17 ms against 15.70 gather and 12.67 atomic); from
// kManyParticles slots on packed sampling and a sort by cell every 10
// steps, below them software sampling and no sort (launch-bound); for the
// Jacobi solver the vector sweep, and from kTemporalCells cells on the
// temporally blocked one (on the H200: 384 against 338 Gcell/s at 8192^2,
// 424 against 357 at 16384^2; at 4096^2 it loses, 186 against 279). Where
// the case has nothing to choose (another solver; no particles; one-way
// coupling for the deposit) stencil ldg, sampling software, deposit sorted,
// sort_every 0. The one place these are chosen: the config loader calls it
// (its report: RunOptions::case_choices), and so does every maker of a
// CUDA backend or its memory plan from a Config (cuda_memory_need,
// make_cuda_backend), so a Config built in code gets the choices a config
// file would. Returns what it chose by the case and why, for the run's
// report ("" when nothing); the explicit values stay.
constexpr int64_t kManyParticles = int64_t(1) << 20;
constexpr int64_t kTemporalCells = int64_t(8192) * 8192;
std::string resolve_strategies(Config& c);
// `c` with its strategies resolved.
Config resolved_strategies(Config c);

// Which backends a strategy option selects code of.
enum class StrategyScope {
  run,    // chosen before any backend code (the backend, the block shape, the pressure solver)
  every,  // every backend: reported by Backend::strategies()
  cuda,   // the CUDA backend only: reported by its strategies()
};

// One run-time strategy option, described once for the CLI, the config
// overrides, Backend::strategies(), the benchmark matrix and the GPU tests.
struct StrategyOption {
  std::string_view name;   // word of strategies() and benchmark column
  std::string_view key;    // config key
  std::string_view flag;   // command-line flag
  std::string_view help;
  std::vector<std::string_view> choices;  // the enum's names; empty: an integer
  StrategyScope scope;
  bool bench_axis;  // an axis of the benchmark matrix
  std::string (*value)(const Config&);
};

// In the order of the benchmark variant names.
const std::vector<StrategyOption>& strategy_options();

// "layout=soa stencil=ldg ...": the options of `scope` (every, or every and cuda).
std::string describe_strategies(const Config& c, StrategyScope scope);

}  // namespace sim
