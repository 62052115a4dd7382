#include "sim/strategies.hpp"

namespace sim {

#define SIM_ENUM_TABLE(E, ...)                                              \
  template <>                                                              \
  const std::vector<std::pair<E, std::string_view>>& enum_names<E>() {     \
    static const std::vector<std::pair<E, std::string_view>> table{__VA_ARGS__}; \
    return table;                                                          \
  }

SIM_ENUM_TABLE(Layout, {Layout::aos, "aos"}, {Layout::soa, "soa"})
SIM_ENUM_TABLE(BackendKind, {BackendKind::auto_, "auto"}, {BackendKind::cpu, "cpu"}, {BackendKind::cuda, "cuda"})
SIM_ENUM_TABLE(Stencil, {Stencil::naive, "naive"}, {Stencil::ldg, "ldg"}, {Stencil::shared, "shared"},
               {Stencil::vector, "vector"})
SIM_ENUM_TABLE(ConstantsIn, {ConstantsIn::constant, "constant"}, {ConstantsIn::global, "global"})
SIM_ENUM_TABLE(Sampling, {Sampling::software, "software"}, {Sampling::texture, "texture"}, {Sampling::packed, "packed"})
SIM_ENUM_TABLE(Deposit, {Deposit::atomic, "atomic"}, {Deposit::sorted, "sorted"})
SIM_ENUM_TABLE(PressureSolverKind, {PressureSolverKind::auto_, "auto"}, {PressureSolverKind::jacobi, "jacobi"},
               {PressureSolverKind::sor, "sor"}, {PressureSolverKind::multigrid, "multigrid"},
               {PressureSolverKind::fft, "fft"})
SIM_ENUM_TABLE(BoundaryKind, {BoundaryKind::wall, "wall"}, {BoundaryKind::free_slip, "free_slip"},
               {BoundaryKind::periodic, "periodic"}, {BoundaryKind::inflow, "inflow"},
               {BoundaryKind::outflow, "outflow"})
SIM_ENUM_TABLE(InitialFlow, {InitialFlow::rest, "rest"}, {InitialFlow::uniform, "uniform"},
               {InitialFlow::taylor_green, "taylor_green"})
SIM_ENUM_TABLE(ObstacleShape, {ObstacleShape::circle, "circle"}, {ObstacleShape::rectangle, "rectangle"})

#undef SIM_ENUM_TABLE
}  // namespace sim
