// The CPU reference backend (OpenMP): every GPU variant is checked against it.
#pragma once
#include <memory>

#include "sim/backend.hpp"

namespace sim {

std::unique_ptr<Backend> make_cpu_backend(const Config& cfg, const Grid& grid);

}  // namespace sim
