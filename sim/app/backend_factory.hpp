// SPDX-License-Identifier: MIT
// The backend a config asks for.
#pragma once
#include <memory>
#include <string>

#include "sim/model/backend.hpp"
#include "sim/model/state.hpp"

namespace sim {

// cpu, cuda, or auto (cuda when a device is present). Throws
// std::runtime_error with a one-line reason; `notice`, if given, receives a
// line to show the user when auto falls back to the CPU.
std::unique_ptr<Backend> make_backend(const Config& cfg, const Grid& grid, std::string* notice);

// Whether make_backend picks the CUDA backend for this config.
bool resolves_to_cuda(const Config& cfg);

class RankSplit;
// A rank of a run split into slabs (sim/ranks/rank_split.hpp): GPU ranks
// when the config resolves to CUDA and this sim can exchange device rows
// (NCCL), else the CPU backend. Collective over the ranks.
std::unique_ptr<Backend> make_split_backend(const Config& cfg, const Grid& grid, std::shared_ptr<const RankSplit> slabs);
bool split_runs_on_cuda(const Config& cfg);

// Threads of the CPU backend that fit the work: one per kCpuWorkPerThread
// cells, a particle counting as half a cell, at least 1 and at most
// `processors`. Every parallel region of a step costs a fork and a barrier
// of a few microseconds; on a small grid they cost more than the work they
// share (config/box.toml, 96^2 and 20,000 particles: 300 steps in 0.83 s on
// one thread of a 2-core machine, 1.05 s on two).
constexpr double kCpuWorkPerThread = 32768;
int cpu_threads_for(const Config& cfg, const SimState& s, int processors);
// omp_set_num_threads(cpu_threads_for(...)) unless OMP_NUM_THREADS is set.
// Results do not depend on the thread count (sim/cpu/cpu_backend.cpp).
// `ranks` processes of one run share the machine: each takes its share of
// the work and of the processors.
void fit_cpu_threads(const Config& cfg, const SimState& s, int ranks = 1);

// Throws make_backend's one-line error for --backend cuda in a build without
// CUDA, before anything is made.
void require_backend_built(const Config& cfg);

}  // namespace sim
