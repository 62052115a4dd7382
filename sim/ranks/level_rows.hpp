// SPDX-License-Identifier: MIT
// The rows of each multigrid level a rank of a slab-split run updates, and
// the rows it copies in from other ranks, planned once for both backends
// (sim/cpu/cpu_poisson.cpp, cuda/cuda_poisson.cpp).
//
// Level 0 is the slabs. A coarser level is shared out by the rows' first
// children: a rank's share is the coarse rows whose first child row it
// owns. From the first level with at most `replicated_cells` cells, or with
// fewer than kGatherRowsPerRank rows a rank, every level is replicated:
// each rank holds and updates all of its rows (the same arithmetic on the
// same values on every rank, so the same bits as one rank), and no row of
// it moves again. A sweep of such a level over ranks would be mostly
// messages; replicated, the V-cycle below it costs no message at all.
// The restriction into the first replicated level is still shared: each
// rank restricts its share, then copies in the others' (`gather`).
//
// Each rank copies in, on a level shared out: its halo rows (wrapped on a
// periodic y) and the parent rows of its fine rows (the prolongation's);
// on the level above a shared-out or first replicated level: the children
// of its share that others own (the restriction's residual rows).
#pragma once
#include <cstdint>
#include <vector>

#include "sim/ranks/slab_rows.hpp"

namespace sim {

constexpr int kGatherRowsPerRank = 4;

struct LevelRows {
  std::vector<int> first;   // each rank's share's first row, and past the last one's
  bool replicated = false;  // every rank updates every row
  bool shared = false;      // over several ranks, shared out (not replicated): rows move
  int lo = 0, hi = 0;       // the rows this rank smooths and prolongs into: its share, or all
  int f_lo = 0, f_hi = 0;   // the rows whose right-hand side it restricts: its share, or all
                            // below the first replicated level
  // Rows each rank copies in (SlabRows::copy_rows): its halo rows; the
  // residual rows its share's children need (below: on the finer level of
  // the two); this level's rows its finer rows need (parents); on the first
  // replicated level, the right-hand side rows of the other ranks' shares
  // (gather).
  std::vector<std::vector<SlabRows::RowCopy>> halo, below, parents, gather;
};

// `level_nx`, `level_ny`: the cells of each level, finest first. Without
// `ranks` (one process): every level's rows [0, ny) and no copies.
std::vector<LevelRows> split_levels(const SlabRows* ranks, const std::vector<int>& level_nx,
                                    const std::vector<int>& level_ny, int64_t replicated_cells);

}  // namespace sim
