// The backend a config asks for.
#pragma once
#include <memory>
#include <string>

#include "sim/backend.hpp"

namespace sim {

// cpu, cuda, or auto (cuda when a device is present). Throws
// std::runtime_error with a one-line reason; `notice`, if given, receives a
// line to show the user when auto falls back to the CPU.
std::unique_ptr<Backend> make_backend(const Config& cfg, const Grid& grid, std::string* notice);

// Whether make_backend picks the CUDA backend for this config.
bool resolves_to_cuda(const Config& cfg);

// Throws make_backend's one-line error for --backend cuda in a build without
// CUDA, before anything is made.
void require_backend_built(const Config& cfg);

}  // namespace sim
