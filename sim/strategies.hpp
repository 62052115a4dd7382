// Every run-time switch is a small enum that parses from and prints to the
// same strings the CLI, the config, the report and the benchmark use.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sim {

enum class Layout { aos, soa };
enum class BackendKind { auto_, cpu, cuda };
// naive: plain loads; ldg: const __restrict__ + __ldg; shared: tile + halo in
// shared memory; vector: the Jacobi sweep with 16-byte loads and rows kept in
// registers (other stencils as ldg).
enum class Stencil { naive, ldg, shared, vector };
enum class ConstantsIn { constant, global };
enum class Sampling { software, texture, packed };
enum class Deposit { atomic, sorted };
enum class PressureSolverKind { auto_, jacobi, sor, multigrid, fft };
enum class BoundaryKind { wall, free_slip, periodic, inflow, outflow };
enum class InitialFlow { rest, uniform, taylor_green };
enum class ObstacleShape { circle, rectangle };

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

// "a|b|c", for help texts and error messages.
template <class E>
std::string enum_choices() {
  std::string out;
  for (const auto& [v, name] : enum_names<E>()) {
    if (!out.empty()) out += '|';
    out += name;
  }
  return out;
}

}  // namespace sim
