// The rows of each multigrid level a rank of a slab-split run updates, and
// the rows it copies in from other ranks, planned once for both backends
// (sim/cpu/cpu_poisson.cpp, cuda/cuda_poisson.cpp).
//
// Level 0 is the slabs; a coarser level's rows go to the rank that owns the
// first child row, until a level has fewer than kGatherRowsPerRank rows a
// rank: that level and the coarser ones are all rank 0's (a few thousand
// cells, where a sweep over ranks would be mostly messages). Each rank then
// copies in its halo rows (wrapped on a periodic y), the parent rows of its
// fine rows (the prolongation's), and the children of its coarse rows that
// others own (the restriction's).
#pragma once
#include <vector>

#include "sim/parallel/slab_rows.hpp"

namespace sim {

constexpr int kGatherRowsPerRank = 4;

struct LevelRows {
  std::vector<int> first;  // each rank's first row, and past the last one's
  int lo = 0, hi = 0;      // the rows this rank updates
  // Rows each rank copies in (SlabRows::copy_rows): its halo rows; the
  // residual rows its coarse rows' children need (below: on the finer level
  // of the two); this level's rows its finer rows need (parents).
  std::vector<std::vector<SlabRows::RowCopy>> halo, below, parents;
};

// `level_ny`: the rows of each level, finest first. Without `ranks`
// (one process): every level's rows [0, ny) and no copies.
std::vector<LevelRows> split_levels(const SlabRows* ranks, const std::vector<int>& level_ny);

}  // namespace sim
