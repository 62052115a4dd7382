// SPDX-License-Identifier: MIT
#include "sim/cpu/fft_blocks.hpp"

#include <algorithm>
#include <cstdint>

namespace sim {

FftBlocks FftBlocks::make(const std::vector<int>& first, const std::vector<int>& end, int me, int nx, int ny) {
  FftBlocks s;
  const int n = static_cast<int>(first.size());
  const int rows = (ny + kFftBlock - 1) / kFftBlock, cols = (nx + kFftBlock - 1) / kFftBlock;
  for (int h = 0; h < n; ++h) {
    // The blocks whose first row lies in h's rows.
    const int a = (first[static_cast<size_t>(h)] + kFftBlock - 1) / kFftBlock;
    const int b = h == n - 1 ? rows : (end[static_cast<size_t>(h)] + kFftBlock - 1) / kFftBlock;
    s.rb0.push_back(a);
    s.rb1.push_back(std::max(a, b));
    s.h0.push_back(std::min(a * kFftBlock, ny));
    s.h1.push_back(std::min(std::max(a, b) * kFftBlock, ny));
    const int ca = static_cast<int>(static_cast<int64_t>(cols) * h / n);
    const int cb = static_cast<int>(static_cast<int64_t>(cols) * (h + 1) / n);
    s.cb0.push_back(ca);
    s.cb1.push_back(cb);
    s.c0.push_back(std::min(ca * kFftBlock, nx));
    s.c1.push_back(std::min(cb * kFftBlock, nx));
  }
  const auto m = static_cast<size_t>(me);
  for (int q = 0; q < n; ++q) {
    const auto p = static_cast<size_t>(q);
    int o0 = std::max(first[m], s.h0[p]), o1 = std::min(end[m], s.h1[p]);
    if (o0 < o1) s.rows_out.push_back({q, o0, o1, 0, nx});
    o0 = std::max(first[p], s.h0[m]);
    o1 = std::min(end[p], s.h1[m]);
    if (o0 < o1) s.rows_in.push_back({q, o0, o1, 0, nx});
    s.to_cols.push_back({q, s.h0[m], s.h1[m], s.c0[p], s.c1[p]});
    s.from_rows.push_back({q, s.h0[p], s.h1[p], s.c0[m], s.c1[m]});
  }
  return s;
}

void move_pieces(const SlabRows& ranks, double* work, int wp, const std::vector<FftPiece>& out,
                 const std::vector<FftPiece>& in) {
  const int me = ranks.rank();
  std::vector<std::vector<double>> sent, got;
  std::vector<SendBuffer> sends;
  std::vector<RecvBuffer> recvs;
  sent.reserve(out.size());
  got.reserve(in.size());
  for (const FftPiece& p : out) {
    if (p.peer == me || p.size() == 0) continue;
    std::vector<double>& b = sent.emplace_back();
    b.reserve(p.size());
    for (int r = p.r0; r < p.r1; ++r)
      b.insert(b.end(), work + static_cast<size_t>(r) * wp + p.c0, work + static_cast<size_t>(r) * wp + p.c1);
    sends.push_back({p.peer, 7, b.data(), b.size() * sizeof(double)});
  }
  for (const FftPiece& p : in) {
    if (p.peer == me || p.size() == 0) continue;
    std::vector<double>& b = got.emplace_back(p.size());
    recvs.push_back({p.peer, 7, b.data(), b.size() * sizeof(double)});
  }
  ranks.timed([&] { ranks.comm().exchange(sends, recvs); });
  size_t k = 0;
  for (const FftPiece& p : in) {
    if (p.peer == me || p.size() == 0) continue;
    const double* b = got[k++].data();
    const size_t w = static_cast<size_t>(p.c1 - p.c0);
    for (int r = p.r0; r < p.r1; ++r, b += w) std::copy(b, b + w, work + static_cast<size_t>(r) * wp + p.c0);
  }
}

}  // namespace sim
