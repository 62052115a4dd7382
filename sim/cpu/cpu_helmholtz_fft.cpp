// SPDX-License-Identifier: MIT
#include "sim/cpu/cpu_helmholtz_fft.hpp"

#include <fftw3.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "sim/cpu/fft_blocks.hpp"

namespace sim {

namespace {
constexpr int kBlock = kFftBlock;

std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

fftw_r2r_kind kind_of(HelmholtzAxis a, bool inverse) {
  switch (a) {
    case HelmholtzAxis::periodic: return inverse ? FFTW_HC2R : FFTW_R2HC;
    case HelmholtzAxis::dct2: return inverse ? FFTW_REDFT01 : FFTW_REDFT10;
    case HelmholtzAxis::dst2: return inverse ? FFTW_RODFT01 : FFTW_RODFT10;
    case HelmholtzAxis::dst1: break;
  }
  return FFTW_RODFT00;
}
}  // namespace

// One component: the work array (ny rows of wp doubles) and the plans of
// full and last blocks, rows then columns, forward and inverse; over ranks
// each rank's work rows and its blocks.
struct CpuFftHelmholtz::Component {
  HelmholtzComponent h;
  int nx = 0, ny = 0, wp = 0;
  double* work = nullptr;
  fftw_plan row[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}};  // [inverse][last block]
  fftw_plan col[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}};
  std::vector<double> lx, ly;
  double scale = 1;
  int ja = 0, jb = 0;  // this rank's work rows (all of them on one rank)
  FftBlocks blocks;   // over ranks

  explicit Component(const HelmholtzComponent& hc)
      : h(hc), nx(hc.x.unknowns), ny(hc.y.unknowns), jb(hc.y.unknowns) {
    wp = (nx + 7) / 8 * 8;
    if (nx <= 0 || ny <= 0) return;
    work = static_cast<double*>(fftw_malloc(sizeof(double) * static_cast<size_t>(wp) * ny));
    if (!work) throw std::runtime_error("fftw_malloc: out of memory for the viscous transform work array");
    for (int m = 0; m < nx; ++m) lx.push_back(helmholtz_eigenvalue(h.x, m));
    for (int m = 0; m < ny; ++m) ly.push_back(helmholtz_eigenvalue(h.y, m));
    scale = 1.0 / (helmholtz_round_trip(h.x) * helmholtz_round_trip(h.y));
    std::lock_guard<std::mutex> lock(planner_mutex());
    for (int inv = 0; inv < 2; ++inv) {
      const fftw_r2r_kind kx = kind_of(h.x.kind, inv != 0), ky = kind_of(h.y.kind, inv != 0);
      const int full_rows = std::min(kBlock, ny), last_rows = ny % kBlock;
      row[inv][0] = fftw_plan_many_r2r(1, &nx, full_rows, work, nullptr, 1, wp, work, nullptr, 1, wp, &kx, FFTW_ESTIMATE);
      if (last_rows && ny > kBlock) {
        double* at = work + static_cast<size_t>(ny - last_rows) * wp;
        row[inv][1] = fftw_plan_many_r2r(1, &nx, last_rows, at, nullptr, 1, wp, at, nullptr, 1, wp, &kx, FFTW_ESTIMATE);
      }
      const int full_cols = std::min(kBlock, nx), last_cols = nx % kBlock;
      col[inv][0] = fftw_plan_many_r2r(1, &ny, full_cols, work, nullptr, wp, 1, work, nullptr, wp, 1, &ky, FFTW_ESTIMATE);
      if (last_cols && nx > kBlock) {
        double* at = work + (nx - last_cols);
        col[inv][1] = fftw_plan_many_r2r(1, &ny, last_cols, at, nullptr, wp, 1, at, nullptr, wp, 1, &ky, FFTW_ESTIMATE);
      }
      if (!row[inv][0] || !col[inv][0]) throw std::runtime_error("FFTW could not plan the viscous transform solve");
    }
  }
  ~Component() {
    {
      std::lock_guard<std::mutex> lock(planner_mutex());
      for (auto* set : {&row, &col})
        for (auto& d : *set)
          for (fftw_plan& p : d)
            if (p) fftw_destroy_plan(p);
    }
    if (work) fftw_free(work);
  }

  int row_blocks() const { return (ny + kBlock - 1) / kBlock; }
  int col_blocks() const { return (nx + kBlock - 1) / kBlock; }
  void rows(int inv, int b0, int b1) {
    const int blocks = row_blocks();
#pragma omp parallel for schedule(static)
    for (int b = b0; b < b1; ++b) {
      double* at = work + static_cast<size_t>(b) * kBlock * wp;
      const bool last = ny > kBlock && b == blocks - 1 && ny % kBlock != 0;
      fftw_execute_r2r(row[inv][last ? 1 : 0], at, at);
    }
  }
  void cols(int inv, int b0, int b1) {
    const int blocks = col_blocks();
#pragma omp parallel for schedule(static)
    for (int b = b0; b < b1; ++b) {
      double* at = work + static_cast<size_t>(b) * kBlock;
      const bool last = nx > kBlock && b == blocks - 1 && nx % kBlock != 0;
      fftw_execute_r2r(col[inv][last ? 1 : 0], at, at);
    }
  }
  // x^ = r^ / (1 - g (lambda_x + lambda_y)) in columns [c0, c1).
  void divide(double g, int c0, int c1) {
#pragma omp parallel for schedule(static)
    for (int j = 0; j < ny; ++j)
      for (int i = c0; i < c1; ++i)
        work[static_cast<size_t>(j) * wp + i] *=
            scale / (1.0 - g * (lx[static_cast<size_t>(i)] + ly[static_cast<size_t>(j)]));
  }
};

CpuFftHelmholtz::CpuFftHelmholtz(const Constants& k) : pitch_(k.pitch) {
  for (int q = 0; q < 2; ++q) c_[q] = std::make_unique<Component>(helmholtz_component(k, q));
}

CpuFftHelmholtz::~CpuFftHelmholtz() = default;

void CpuFftHelmholtz::split(std::shared_ptr<const RankSplit> split) {
  const SlabRows* s = split ? split->slabs() : nullptr;
  if (!s || s->ranks() == 1) return;
  owner_ = std::move(split);
  ranks_ = s;
  // Component q's work row j is grid row j0 + j: each rank's grid rows cut
  // to the component's unknown rows.
  for (auto& c : c_) {
    Component& m = *c;
    const int j0 = m.h.y.first;
    std::vector<int> first, end;
    for (int h = 0; h < s->ranks(); ++h) {
      first.push_back(std::clamp(s->first_row(h) - j0, 0, m.ny));
      end.push_back(std::clamp(s->end_row(h) - j0, 0, m.ny));
    }
    m.ja = first[static_cast<size_t>(s->rank())];
    m.jb = end[static_cast<size_t>(s->rank())];
    m.blocks = FftBlocks::make(first, end, s->rank(), m.nx, m.ny);
  }
}

// The 2-D transform, the division and back: on one rank every block; over
// ranks this rank's rows and columns of blocks, between all-to-all
// exchanges (sim/cpu/fft_blocks.hpp), its own rows back at the end.
void CpuFftHelmholtz::solve(Component& m, double g) {
  if (!ranks_) {
    m.rows(0, 0, m.row_blocks());
    m.cols(0, 0, m.col_blocks());
    m.divide(g, 0, m.nx);
    m.cols(1, 0, m.col_blocks());
    m.rows(1, 0, m.row_blocks());
    return;
  }
  const SlabRows& sr = *ranks_;
  const int me = sr.rank();
  const FftBlocks& b = m.blocks;
  move_pieces(sr, m.work, m.wp, b.rows_out, b.rows_in);
  m.rows(0, b.rb0[me], b.rb1[me]);
  move_pieces(sr, m.work, m.wp, b.to_cols, b.from_rows);
  m.cols(0, b.cb0[me], b.cb1[me]);
  m.divide(g, b.c0[me], b.c1[me]);
  m.cols(1, b.cb0[me], b.cb1[me]);
  move_pieces(sr, m.work, m.wp, b.from_rows, b.to_cols);
  m.rows(1, b.rb0[me], b.rb1[me]);
  move_pieces(sr, m.work, m.wp, b.rows_in, b.rows_out);
}

void CpuFftHelmholtz::correct(int q, const real* b, real* x, double g) {
  Component& m = *c_[q];
  if (!m.work) return;
  const int nx = m.nx, wp = m.wp, P = pitch_;
  const int i0 = m.h.x.first, j0 = m.h.y.first;
  const double cx = m.h.x.c, cy = m.h.y.c;
  const int ja = m.ja, jb = m.jb;  // this rank's unknown rows
  // r = b - A x in float64 from the float32 values (the halo holds the
  // boundary values), so the correction carries no rounding of r.
#pragma omp parallel for schedule(static)
  for (int j = ja; j < jb; ++j)
    for (int i = 0; i < nx; ++i) {
      const int c = (i0 + i + 1) + (j0 + j + 1) * P;
      const double xc = x[c];
      const double lap = (static_cast<double>(x[c - 1]) - 2.0 * xc + x[c + 1]) * cx +
                         (static_cast<double>(x[c - P]) - 2.0 * xc + x[c + P]) * cy;
      m.work[static_cast<size_t>(j) * wp + i] = static_cast<double>(b[c]) - (xc - g * lap);
    }
  solve(m, g);
#pragma omp parallel for schedule(static)
  for (int j = ja; j < jb; ++j)
    for (int i = 0; i < nx; ++i) {
      const int c = (i0 + i + 1) + (j0 + j + 1) * P;
      x[c] = static_cast<real>(static_cast<double>(x[c]) + m.work[static_cast<size_t>(j) * wp + i]);
    }
}

}  // namespace sim
