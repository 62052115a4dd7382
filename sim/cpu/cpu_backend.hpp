// SPDX-License-Identifier: MIT
// The CPU reference backend (OpenMP): every GPU variant is checked against it.
#pragma once
#include <memory>

#include "sim/model/backend.hpp"

namespace sim {

class RankSplit;

// `ranks`: this process's rank of a run split into slabs of rows
// (sim/ranks/rank_split.hpp), or null (or one rank) for a run of one
// process: the backend then holds OneRank. A split
// backend holds the whole grid, computes the rows its rank owns, stores
// only the particles whose positions its rank owns (a compacted store in
// slot order, sim/ranks/split_particles.hpp) and makes every reduction,
// download and pressure solve collective.
std::unique_ptr<Backend> make_cpu_backend(const Config& cfg, const Grid& grid,
                                          std::shared_ptr<const RankSplit> ranks = nullptr);

}  // namespace sim
