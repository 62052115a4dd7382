// SPDX-License-Identifier: MIT
#include "sim/model/strategies.hpp"

#include <string>

#include "sim/model/config.hpp"

namespace sim {

#define SIM_ENUM_TABLE(E, ...)                                              \
  template <>                                                              \
  const std::vector<std::pair<E, std::string_view>>& enum_names<E>() {     \
    static const std::vector<std::pair<E, std::string_view>> table{__VA_ARGS__}; \
    return table;                                                          \
  }

SIM_ENUM_TABLE(Layout, {Layout::aos, "aos"}, {Layout::soa, "soa"})
SIM_ENUM_TABLE(BackendKind, {BackendKind::auto_, "auto"}, {BackendKind::cpu, "cpu"}, {BackendKind::cuda, "cuda"})
SIM_ENUM_TABLE(Stencil, {Stencil::auto_, "auto"}, {Stencil::naive, "naive"}, {Stencil::ldg, "ldg"},
               {Stencil::shared, "shared"}, {Stencil::vector, "vector"}, {Stencil::temporal, "temporal"})
SIM_ENUM_TABLE(ConstantsIn, {ConstantsIn::constant, "constant"}, {ConstantsIn::global, "global"})
SIM_ENUM_TABLE(Sampling, {Sampling::auto_, "auto"}, {Sampling::software, "software"}, {Sampling::texture, "texture"},
               {Sampling::packed, "packed"})
SIM_ENUM_TABLE(Deposit, {Deposit::auto_, "auto"}, {Deposit::atomic, "atomic"}, {Deposit::sorted, "sorted"},
               {Deposit::gather, "gather"}, {Deposit::fixed, "fixed"})
SIM_ENUM_TABLE(PressureSolverKind, {PressureSolverKind::auto_, "auto"}, {PressureSolverKind::jacobi, "jacobi"},
               {PressureSolverKind::sor, "sor"}, {PressureSolverKind::multigrid, "multigrid"},
               {PressureSolverKind::fft, "fft"})
SIM_ENUM_TABLE(BoundaryKind, {BoundaryKind::wall, "wall"}, {BoundaryKind::free_slip, "free_slip"},
               {BoundaryKind::periodic, "periodic"}, {BoundaryKind::inflow, "inflow"},
               {BoundaryKind::outflow, "outflow"})
SIM_ENUM_TABLE(InflowProfile, {InflowProfile::uniform, "uniform"}, {InflowProfile::parabolic, "parabolic"})
SIM_ENUM_TABLE(InitialFlow, {InitialFlow::rest, "rest"}, {InitialFlow::uniform, "uniform"},
               {InitialFlow::taylor_green, "taylor_green"})
SIM_ENUM_TABLE(ObstacleShape, {ObstacleShape::circle, "circle"}, {ObstacleShape::rectangle, "rectangle"})
SIM_ENUM_TABLE(AdvectionScheme, {AdvectionScheme::central, "central"}, {AdvectionScheme::quick, "quick"})
SIM_ENUM_TABLE(ViscousScheme, {ViscousScheme::implicit, "implicit"}, {ViscousScheme::explicit_, "explicit"})
SIM_ENUM_TABLE(ViscousSolver, {ViscousSolver::auto_, "auto"}, {ViscousSolver::transform, "transform"},
               {ViscousSolver::chebyshev, "chebyshev"})
SIM_ENUM_TABLE(RankTransport, {RankTransport::auto_, "auto"}, {RankTransport::nccl, "nccl"}, {RankTransport::host, "host"})

#undef SIM_ENUM_TABLE

namespace {

template <class E>
std::vector<std::string_view> names_of() {
  std::vector<std::string_view> out;
  for (const auto& [v, name] : enum_names<E>()) out.push_back(name);
  return out;
}

}  // namespace

const std::vector<StrategyOption>& strategy_options() {
  using S = StrategyScope;
  static const std::vector<StrategyOption> table{
      {"layout", "run.layout", "--layout", "Particle layout", names_of<Layout>(), S::every, true,
       [](const Config& c) { return std::string(to_string(c.layout)); }},
      {"stencil", "gpu.stencil", "--stencil", "GPU stencil kernels", names_of<Stencil>(), S::cuda, true,
       [](const Config& c) { return std::string(to_string(c.stencil)); }},
      {"constants", "gpu.constants", "--constants", "Where GPU kernels read the run constants",
       names_of<ConstantsIn>(), S::cuda, true, [](const Config& c) { return std::string(to_string(c.constants)); }},
      {"sampling", "gpu.sampling", "--sampling", "GPU velocity sampling", names_of<Sampling>(), S::cuda, true,
       [](const Config& c) { return std::string(to_string(c.sampling)); }},
      {"deposit", "gpu.deposit", "--deposit", "GPU two-way force deposit", names_of<Deposit>(), S::cuda, true,
       [](const Config& c) { return std::string(to_string(c.deposit)); }},
      {"pressure_solver", "pressure.solver", "--pressure-solver", "Pressure solver", names_of<PressureSolverKind>(),
       S::run, true, [](const Config& c) { return std::string(to_string(c.solver)); }},
      // physics, not memory: the matrix holds the config's scheme unless --advection lists some
      {"advection", "fluid.advection", "--advection", "Momentum advection scheme", names_of<AdvectionScheme>(), S::run,
       true, [](const Config& c) { return std::string(to_string(c.advection)); }},
      {"sort_every", "gpu.sort_every", "--sort-every", "Sort particles by cell every K steps, 0 never", {}, S::cuda,
       false, [](const Config& c) { return std::to_string(c.sort_every); }},
      {"backend", "run.backend", "--backend", "Backend", names_of<BackendKind>(), S::run, false,
       [](const Config& c) { return std::string(to_string(c.backend)); }},
      {"block_x", "gpu.block_x", "--block-x", "GPU block width, 0 the stencil's default", {}, S::run, false,
       [](const Config& c) { return std::to_string(c.block_x); }},
      {"block_y", "gpu.block_y", "--block-y", "GPU block height, 0 the stencil's default", {}, S::run, false,
       [](const Config& c) { return std::to_string(c.block_y); }},
  };
  return table;
}

std::string resolve_strategies(Config& c) {
  const int64_t particles = c.regions.empty() && c.inject.rate <= 0 ? 0 : c.particle_capacity();
  const bool many = particles >= kManyParticles;
  std::string chose;
  auto note = [&](const char* key, std::string_view value) {
    if (!chose.empty()) chose += ' ';
    chose += std::string(key) + "=" + std::string(value);
  };
  if (c.stencil == Stencil::auto_) {
    if (c.solver == PressureSolverKind::jacobi) {
      const int64_t cells = static_cast<int64_t>(c.nx) * c.ny;
      c.stencil = cells >= kTemporalCells ? Stencil::temporal : Stencil::vector;
      note("stencil", to_string(c.stencil));
    } else {
      c.stencil = Stencil::ldg;
    }
  }
  if (c.sampling == Sampling::auto_) {
    c.sampling = many ? Sampling::packed : Sampling::software;
    if (particles > 0) note("sampling", to_string(c.sampling));
  }
  if (c.deposit == Deposit::auto_) {
    c.deposit = particles > 0 && c.two_way ? Deposit::fixed : Deposit::sorted;
    if (particles > 0 && c.two_way) note("deposit", to_string(c.deposit));
  }
  if (c.sort_every == kAutoSortEvery) {
    c.sort_every = many ? 10 : 0;
    if (particles > 0) note("sort_every", std::to_string(c.sort_every));
  }
  if (chose.empty()) return {};
  return chose + " (" + std::to_string(particles) + " particle slots, " +
                   (many ? "at least " : "fewer than ") + std::to_string(kManyParticles) + "; " +
                   (c.solver == PressureSolverKind::jacobi ? "jacobi solver" : "solver " + std::string(to_string(c.solver))) +
                   ")";
}

Config resolved_strategies(Config c) {
  resolve_strategies(c);
  return c;
}

std::string describe_strategies(const Config& c, StrategyScope scope) {
  std::string out;
  for (const StrategyOption& o : strategy_options()) {
    if (o.scope == StrategyScope::run || (o.scope == StrategyScope::cuda && scope != StrategyScope::cuda)) continue;
    if (!out.empty()) out += ' ';
    out += std::string(o.name) + "=" + o.value(c);
  }
  return out;
}

}  // namespace sim
