// SPDX-License-Identifier: MIT
// A 2-D transform of a work array (ny rows of wp doubles) split over slabs
// of rows (sim/ranks/slab_rows.hpp), as the pressure's and the viscous
// step's transform solves do it (sim/cpu/cpu_fft.hpp,
// sim/cpu/cpu_helmholtz_fft.hpp): the x transforms run in blocks of
// kFftBlock rows, each on the rank that holds the block's first row; the
// work array is then transposed by all-to-all exchanges into blocks of
// kFftBlock columns shared out evenly for the y transforms, and back. The
// blocks sit where one rank's would, and each runs through the same plan, so
// the result is one rank's bit for bit.
#pragma once
#include <vector>

#include "sim/ranks/slab_rows.hpp"

namespace sim {

// Rows (for the x transforms) and columns (for the y transforms) per plan
// execution: enough to amortise a call, few enough to spread over threads.
constexpr int kFftBlock = 16;

// A rectangle of the work array, rows [r0, r1) x columns [c0, c1), to or
// from one rank.
struct FftPiece {
  int peer, r0, r1, c0, c1;
  size_t size() const { return static_cast<size_t>(r1 > r0 ? r1 - r0 : 0) * static_cast<size_t>(c1 > c0 ? c1 - c0 : 0); }
};

// Who transforms what: rank h the row blocks [rb0[h], rb1[h]) (work rows
// [h0[h], h1[h])) and the column blocks [cb0[h], cb1[h]) (columns [c0[h],
// c1[h])); and the pieces rank `me` moves, made once for the run.
struct FftBlocks {
  std::vector<int> rb0, rb1, h0, h1, cb0, cb1, c0, c1;
  // Its own rows to the ranks holding them in row blocks (`rows_out`), and
  // the rows of others it holds (`rows_in`); swapped, the way back.
  std::vector<FftPiece> rows_out, rows_in;
  // Its row blocks' pieces to the column blocks (`to_cols`) and what it
  // receives (`from_rows`); swapped, the way back.
  std::vector<FftPiece> to_cols, from_rows;
  // `first[h]`, `end[h]`: rank h's work rows, in rank order, together
  // [0, ny); `me`: this rank.
  static FftBlocks make(const std::vector<int>& first, const std::vector<int>& end, int me, int nx, int ny);
};

// Sends the `out` pieces of `work` and overwrites it with the `in` ones,
// in one exchange (pieces to or from the rank itself are skipped).
void move_pieces(const SlabRows& ranks, double* work, int wp, const std::vector<FftPiece>& out,
                 const std::vector<FftPiece>& in);

}  // namespace sim
