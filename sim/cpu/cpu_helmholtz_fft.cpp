// SPDX-License-Identifier: MIT
#include "sim/cpu/cpu_helmholtz_fft.hpp"

#include <fftw3.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace sim {

namespace {
constexpr int kBlock = 16;  // rows or columns per plan execution (as sim/cpu/cpu_fft.cpp)

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
// full and last blocks, rows then columns, forward and inverse.
struct CpuFftHelmholtz::Component {
  HelmholtzComponent h;
  int nx = 0, ny = 0, wp = 0;
  double* work = nullptr;
  fftw_plan row[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}};  // [inverse][last block]
  fftw_plan col[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}};
  std::vector<double> lx, ly;
  double scale = 1;

  explicit Component(const HelmholtzComponent& hc) : h(hc), nx(hc.x.unknowns), ny(hc.y.unknowns) {
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

  void rows(int inv) {
    const int blocks = (ny + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < blocks; ++b) {
      double* at = work + static_cast<size_t>(b) * kBlock * wp;
      const bool last = ny > kBlock && b == blocks - 1 && ny % kBlock != 0;
      fftw_execute_r2r(row[inv][last ? 1 : 0], at, at);
    }
  }
  void cols(int inv) {
    const int blocks = (nx + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < blocks; ++b) {
      double* at = work + static_cast<size_t>(b) * kBlock;
      const bool last = nx > kBlock && b == blocks - 1 && nx % kBlock != 0;
      fftw_execute_r2r(col[inv][last ? 1 : 0], at, at);
    }
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
}

// The work rows of every rank's grid rows [first_row, end_row) to every
// other rank; r0, r1: this component's unknown rows are grid rows
// [r0, r1) (work row j is grid row r0 + j).
void CpuFftHelmholtz::gather_rows(Component& m, int r0, int r1) {
  const SlabRows& sr = *ranks_;
  const int me = sr.rank(), n = sr.ranks();
  auto rows_of = [&](int q, int& a, int& b) {
    a = std::max(sr.first_row(q), r0) - r0;
    b = std::min(sr.end_row(q), r1) - r0;
    return a < b;
  };
  std::vector<SendBuffer> sends;
  std::vector<RecvBuffer> recvs;
  int a = 0, b = 0;
  const bool mine = rows_of(me, a, b);
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    if (mine)
      sends.push_back({q, 9, m.work + static_cast<size_t>(a) * m.wp, static_cast<size_t>(b - a) * m.wp * sizeof(double)});
    int qa = 0, qb = 0;
    if (rows_of(q, qa, qb))
      recvs.push_back({q, 9, m.work + static_cast<size_t>(qa) * m.wp, static_cast<size_t>(qb - qa) * m.wp * sizeof(double)});
  }
  sr.timed([&] { sr.comm().exchange(sends, recvs); });
}

void CpuFftHelmholtz::correct(int q, const real* b, real* x, double g) {
  Component& m = *c_[q];
  if (!m.work) return;
  const int nx = m.nx, ny = m.ny, wp = m.wp, P = pitch_;
  const int i0 = m.h.x.first, j0 = m.h.y.first;
  const double cx = m.h.x.c, cy = m.h.y.c;
  // This rank's unknown rows (all of them on one rank).
  const int ja = ranks_ ? std::max(ranks_->first_row(ranks_->rank()) - j0, 0) : 0;
  const int jb = ranks_ ? std::min(ranks_->end_row(ranks_->rank()) - j0, ny) : ny;
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
  if (ranks_) gather_rows(m, j0, j0 + ny);
  m.rows(0);
  m.cols(0);
#pragma omp parallel for schedule(static)
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i)
      m.work[static_cast<size_t>(j) * wp + i] *=
          m.scale / (1.0 - g * (m.lx[static_cast<size_t>(i)] + m.ly[static_cast<size_t>(j)]));
  m.cols(1);
  m.rows(1);
#pragma omp parallel for schedule(static)
  for (int j = ja; j < jb; ++j)
    for (int i = 0; i < nx; ++i) {
      const int c = (i0 + i + 1) + (j0 + j + 1) * P;
      x[c] = static_cast<real>(static_cast<double>(x[c]) + m.work[static_cast<size_t>(j) * wp + i]);
    }
}

}  // namespace sim
