// SPDX-License-Identifier: MIT
// The reference backend: plain loops over the shared physics, OpenMP over
// rows and particles. Every reduction is summed per row and then over rows
// in order, and every face receives its particle deposits in particle order,
// so results do not depend on the number of threads.
#include "sim/cpu/cpu_backend_impl.hpp"

#include <cmath>

#include "sim/model/advection.hpp"
#include "sim/model/halo.hpp"
#include "sim/model/viscous.hpp"
#include "sim/ranks/split_particles.hpp"

namespace sim {


void CpuBackend::upload(const SimState& s) {
  copy_rows(u_, s.u, rows_);
  copy_rows(v_, s.v, rows_);
  copy_rows(phi_, s.phi, rows_);
  copy_rows(open_, s.open, rows_);
  clearance_ = advection_clearance_field(cfg_, g_, s.open);
  links_ = boundary_links(cfg_, g_, k_, s.open, row_begin(), face_end());
  bsums_ = BoundarySums{};
  for (auto* f : {&uh_, &us_}) copy_rows(*f, u_, rows_);
  for (auto* f : {&vh_, &vs_}) copy_rows(*f, v_, rows_);
  capacity_ = cfg_.particle_capacity();  // s.particles: its slots, or a rank's own records
  parts_ = HostParticles{};
  aos_.clear();
  if (cfg_.layout == Layout::aos) compact_owned(*ranks_, s.particles, aos_);
  else compact_owned(*ranks_, s.particles, parts_);
  counters_ = ranks_->root() ? s.counters : ParticleCounters{};
  nonfinite_ = 0;
  for (auto* f : {&mu_, &mv_, &au_, &av_, &bu_, &bv_}) std::fill(f->begin(), f->end(), real(0));
}

void CpuBackend::download(SimState& s) {
  download_own(s);
  ranks_->gather_state(s, capacity_);
}

// The rank's own copy of the state, nothing gathered: alone the particles
// in their slots; over ranks the live records of the rank's store (what it
// sends to rank 0 or writes of a snapshot, without `capacity` slots on
// every rank).
void CpuBackend::download_own(SimState& s) {
  s.u.assign(u_.begin(), u_.end());
  s.v.assign(v_.begin(), v_.end());
  s.phi.assign(phi_.begin(), phi_.end());
  s.open.assign(open_.begin(), open_.end());
  if (!ranks_->alone()) {
    if (cfg_.layout == Layout::aos) from_aos(aos_, s.particles);
    else s.particles = parts_;
  } else if (cfg_.layout == Layout::aos) {
    to_slots(aos_, capacity_, s.particles);
  } else {
    to_slots(parts_, capacity_, s.particles);
  }
  s.counters = counters_;
}

double CpuBackend::max_velocity_rate() {
  const int nx = g_.nx;
  return reduce_rows<Max>(row_begin(), face_end(), [&](int j) {
    double m = 0;
    for (int i = 0; i <= nx; ++i) {
      m = max_nan(m, face_rate(u_.data(), v_.data(), i, j, at(k_, i, j), k_));  // a NaN face must reach next_dt
    }
    return m;
  });
}

void CpuBackend::copy_velocity(VelocityField from, VelocityField to) {
  const auto [uf, vf] = velocity(from);
  const auto [ut, vt] = velocity(to);
  const auto [first, last] = near_rows();
  std::copy(uf + first, uf + last, ut + first);
  std::copy(vf + first, vf + last, vt + first);
}

void CpuBackend::combine_velocity(VelocityField out, real alpha, VelocityField x, real beta) {
  const auto [uo, vo] = velocity(out);
  const auto [ux, vx] = velocity(x);
  const auto [first, last] = near_rows();
#pragma omp parallel for schedule(static)
  for (size_t c = first; c < last; ++c) {
    uo[c] = alpha * uo[c] + beta * ux[c];
    vo[c] = alpha * vo[c] + beta * vx[c];
  }
}

void CpuBackend::rk_stage(VelocityField in, VelocityField base, VelocityField out, real a, real b, real cl,
                          real cv) {
  const bool quick = k_.advection == static_cast<int>(AdvectionScheme::quick);
  auto none = [](int, int, int) { return AdvectionReach{}; };  // central: the reach is not read
  if (!quick) stage_loop(in, base, out, a, b, cl, cv, none, none);
  else if (k_.has_solids)
    stage_loop(in, base, out, a, b, cl, cv, [this, f = clearance_.data()](int i, int j, int c) { return reach_u(i, j, c, f, k_); },
               [this, f = clearance_.data()](int i, int j, int c) { return reach_v(i, j, c, f, k_); });
  else
    stage_loop(in, base, out, a, b, cl, cv, [this](int i, int j, int c) { return reach_u(i, j, c, AllClear{}, k_); },
               [this](int i, int j, int c) { return reach_v(i, j, c, AllClear{}, k_); });
}

double CpuBackend::compute_rhs() {
  const real inv_dt = real(1) / k_.dt;
  const double s2 = reduce_rows<Sum>(row_begin(), cell_end(), [&](int j) {
    double acc = 0;
    for (int i = 0; i < g_.nx; ++i) {
      const int c = at(k_, i, j);
      const real r = open_[c] != 0 ? divergence_point(u_[c], u_[c + 1], v_[c], v_[c + k_.pitch], k_) * inv_dt : real(0);
      rhs_[c] = r;
      acc += static_cast<double>(r) * r;
    }
    return acc;
  });
  return std::sqrt(s2);
}

void CpuBackend::fill_pressure_halo() {
  real* p = phi_.data();
  const Constants k = k_;
  const int j0 = row_begin(), j1 = cell_end();
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int j = j0; j < j1; ++j) halo_pressure_x(p, j, k);
#pragma omp for schedule(static)
    for (int i = -1; i <= k.nx; ++i) halo_pressure_y(p, i, k);
  }
  ranks_->exchange_halo(p, Stagger::cell);
}

// The sweeps stream: one parallel region per sweep, the grid rows in
// static blocks (the blocks the arrays were first touched by), each row's
// x halo right after the row and the y halo after the barrier. Without
// obstacles every neighbour is open and the inner loop reads no mask:
// jacobi_point / sor_point with the open weights 1, the same arithmetic
// per point as with the mask.
void CpuBackend::jacobi_sweep() {
  const real* __restrict p = phi_.data();
  real* __restrict q = phi2_.data();
  const real* __restrict rhs = rhs_.data();
  const Constants k = k_;  // a local copy: no store to q can alias it
  const bool solids = k.has_solids != 0;
  const int j0 = row_begin(), j1 = cell_end();
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int j = j0; j < j1; ++j) {
      const int c0 = at(k, 0, j);
      if (!solids) jacobi_row_open(p + c0, q + c0, rhs + c0, k);
      else
        for (int c = c0; c < c0 + k.nx; ++c) {
          const Nb o = neighbours_open(c);
          q[c] = o.self ? jacobi_point(p[c - 1], p[c + 1], p[c - k.pitch], p[c + k.pitch], rhs[c], o.w, o.e, o.s, o.n, k)
                        : real(0);
        }
      halo_pressure_x(q, j, k);
    }
#pragma omp for schedule(static)
    for (int i = -1; i <= k.nx; ++i) halo_pressure_y(q, i, k);
  }
  ranks_->exchange_halo(q, Stagger::cell);
  phi_.swap(phi2_);
}

void CpuBackend::sor_sweep(int color) {
  real* __restrict p = phi_.data();
  const real* __restrict rhs = rhs_.data();
  const Constants k = k_;
  const bool solids = k.has_solids != 0;
  const int j0 = row_begin(), j1 = cell_end();
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int j = j0; j < j1; ++j) {
      const int c0 = at(k, 0, j);
      const int first = (j + color) & 1;
      if (!solids) sor_row_open(p + c0, rhs + c0, first, k);
      else
        for (int c = c0 + first; c < c0 + k.nx; c += 2) {
          const Nb o = neighbours_open(c);
          p[c] = o.self ? sor_point(p[c], p[c - 1], p[c + 1], p[c - k.pitch], p[c + k.pitch], rhs[c], o.w, o.e, o.s, o.n, k)
                        : real(0);
        }
      halo_pressure_x(p, j, k);
    }
#pragma omp for schedule(static)
    for (int i = -1; i <= k.nx; ++i) halo_pressure_y(p, i, k);
  }
  ranks_->exchange_halo(p, Stagger::cell);
}

double CpuBackend::residual_norm() {
  const real* p = phi_.data();
  return std::sqrt(reduce_rows<Sum>(row_begin(), cell_end(), [&](int j) {
    double acc = 0;
    for (int i = 0; i < g_.nx; ++i) {
      const int c = at(k_, i, j);
      const Nb o = neighbours_open(c);
      if (!o.self) continue;
      const double r = residual_point(p[c], p[c - 1], p[c + 1], p[c - k_.pitch], p[c + k_.pitch], rhs_[c], o.w, o.e, o.s, o.n, k_);
      acc += r * r;
    }
    return acc;
  }));
}

// u = u** - dt grad p: from the float64 pressure of the multigrid and
// transform solves when they run, else from phi.
void CpuBackend::project() {
  if (poisson_.active()) project_from(poisson_.x().data());
  else project_from(phi_.data());
}

// Transform solve (sim/cpu/cpu_fft.hpp) into the same float64 x; split
// over ranks, each rank transforms its share of the row and column
// blocks (the same bits as one rank) and ends with its rows of the
// solution and the halo rows next to them.
TransformOps& CpuBackend::transform_setup(const PoissonHierarchy& h) {
  poisson_.setup_operator(h, open_.data());
  poisson_.bind(rhs_.data(), phi_.data());
  fft_ = std::make_unique<CpuFftPoisson>(h);
  fft_->split(ranks_);
  return transform_;
}

template <class T>
void CpuBackend::project_from(const T* p) {
  const int j0 = row_begin(), j1 = face_end();
#pragma omp parallel for schedule(static)
  for (int j = j0; j < j1; ++j)
    for (int i = 0; i <= g_.nx; ++i) {
      const int c = at(k_, i, j);
      if (active_u(i, j, k_)) u_[c] = solid_u_at(c) ? real(0) : project_point(u_[c], p[c - 1], p[c], k_.inv_dx, k_);
      if (active_v(i, j, k_)) v_[c] = solid_v_at(c) ? real(0) : project_point(v_[c], p[c - k_.pitch], p[c], k_.inv_dy, k_);
    }
  fill_halo(u_.data(), v_.data());
}

// One stage over every face: reach_of_u/v give a face's advection reach.
template <class ReachU, class ReachV>
void CpuBackend::stage_loop(VelocityField in, VelocityField base, VelocityField out, real a, real b, real cl, real cv,
                            ReachU reach_of_u, ReachV reach_of_v) {
  const auto [ui, vi] = velocity(in);
  const auto [ub, vb] = velocity(base);
  const auto [uo, vo] = velocity(out);
  const int P = k_.pitch;
  const bool solids = k_.has_solids != 0;
  const real* open = open_.data();
  const int j0 = row_begin(), j1 = face_end();
#pragma omp parallel for schedule(static)
  for (int j = j0; j < j1; ++j)
    for (int i = 0; i <= g_.nx; ++i) {
      const int c = at(k_, i, j);
      const FaceNeighbours n{ui, vi, c, i, j, k_};
      if (active_u(i, j, k_))
        uo[c] = solid_u_at(c) ? real(0)
                              : stage_point(ub[c], ui[c],
                                            momentum_u(n, reach_of_u(i, j, c), solids && solid_u(open, c - P),
                                                       solids && solid_u(open, c + P), k_),
                                            a, b, cl, cv, k_);
      if (active_v(i, j, k_))
        vo[c] = solid_v_at(c) ? real(0)
                              : stage_point(vb[c], vi[c],
                                            momentum_v(n, reach_of_v(i, j, c), solids && solid_v(open, c - 1, P),
                                                       solids && solid_v(open, c + 1, P), k_),
                                            a, b, cl, cv, k_);
    }
  fill_halo(uo, vo);
}

// One pass over the active faces of the rows this rank computes, with the
// residual b - A x_k of each (x_k the newest iterate, halo filled).
template <class Point>
double CpuBackend::helmholtz_pass(VelocityField f, real g, Point point) {
  const auto [ub, vb] = velocity(f);
  const real* xu = hu_[newest_].data();
  const real* xv = hv_[newest_].data();
  const int P = k_.pitch;
  const bool solids = k_.has_solids != 0;
  const real* open = open_.data();
  return reduce_rows<Sum>(row_begin(), face_end(), [&](int j) {
    double acc = 0;
    for (int i = 0; i <= g_.nx; ++i) {
      const int c = at(k_, i, j);
      const FaceNeighbours n{xu, xv, c, i, j, k_};
      if (active_u(i, j, k_) && !solid_u_at(c)) {
        const real r = helmholtz_residual_u(n, ub[c], g, solids && solid_u(open, c - P), solids && solid_u(open, c + P), k_);
        point(c, 0, ub[c], r);
        acc += static_cast<double>(r) * r;
      }
      if (active_v(i, j, k_) && !solid_v_at(c)) {
        const real r = helmholtz_residual_v(n, vb[c], g, solids && solid_v(open, c - 1, P), solids && solid_v(open, c + 1, P), k_);
        point(c, 1, vb[c], r);
        acc += static_cast<double>(r) * r;
      }
    }
    return acc;
  });
}

Backend::HelmholtzNorms CpuBackend::helmholtz_start(VelocityField f, real g) {
  for (int s = 0; s < 2; ++s) {
    if (hu_[s].size() != u_.size()) {
      first_touch(hu_[s], rows_);
      first_touch(hv_[s], rows_);
    }
    copy_rows(hu_[s], of_field(f, u_, uh_, us_, u0_), rows_);
    copy_rows(hv_[s], of_field(f, v_, vh_, vs_, v0_), rows_);
  }
  newest_ = 0;
  HelmholtzNorms n;
  n.r2 = helmholtz_pass(f, g, [](int, int, real, real) {});
  const auto [ub, vb] = velocity(f);
  n.b2 = reduce_rows<Sum>(row_begin(), face_end(), [&](int j) {
    double acc = 0;
    for (int i = 0; i <= g_.nx; ++i) {
      const int c = at(k_, i, j);
      if (active_u(i, j, k_) && !solid_u_at(c)) acc += static_cast<double>(ub[c]) * ub[c];
      if (active_v(i, j, k_) && !solid_v_at(c)) acc += static_cast<double>(vb[c]) * vb[c];
    }
    return acc;
  });
  return n;
}

// x_{k+1} into the older iterate, which then becomes the newest.
void CpuBackend::chebyshev_iteration(VelocityField f, real g, const ChebyshevWeights& w) {
  real* const xu = hu_[newest_].data();
  real* const xv = hv_[newest_].data();
  real* const pu = hu_[1 - newest_].data();
  real* const pv = hv_[1 - newest_].data();
  helmholtz_pass(f, g, [&](int c, int q, real, real r) {
    if (q == 0) pu[c] = chebyshev_point(xu[c], pu[c], r, w);
    else pv[c] = chebyshev_point(xv[c], pv[c], r, w);
  });
  newest_ = 1 - newest_;
  fill_halo(hu_[newest_].data(), hv_[newest_].data());
}

bool CpuBackend::viscous_transform() const {
  if (viscous_transform_ < 0) viscous_transform_ = viscous_takes_transform(cfg_, k_, false) ? 1 : 0;
  return viscous_transform_ == 1;
}

// The newest iterate corrected by the transform solve of its residual.
void CpuBackend::helmholtz_correct(VelocityField f, real g) {
  if (!viscous_fft_) {
    viscous_fft_ = std::make_unique<CpuFftHelmholtz>(k_);
    viscous_fft_->split(ranks_);
  }
  const auto [ub, vb] = velocity(f);
  viscous_fft_->correct(0, ub, hu_[newest_].data(), g);
  viscous_fft_->correct(1, vb, hv_[newest_].data(), g);
  fill_halo(hu_[newest_].data(), hv_[newest_].data());
}

double CpuBackend::helmholtz_finish(VelocityField f, real g) {
  const double r2 = helmholtz_pass(f, g, [](int, int, real, real) {});
  copy_rows(of_field(f, u_, uh_, us_, u0_), hu_[newest_], rows_);
  copy_rows(of_field(f, v_, vh_, vs_, v0_), hv_[newest_], rows_);
  return r2;
}

// Split over ranks: the domain sides' rules, then the neighbours' rows
// (the y-side rules write only rows other ranks own or the exchange
// overwrites, apart from the bottom and top ranks' own sides).
void CpuBackend::fill_halo(real* u, real* v) {
  const Constants k = k_;
  const int j0 = row_begin(), j1 = face_end();
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int j = j0; j < j1; ++j) halo_velocity_x(u, v, j, k);
#pragma omp for schedule(static)
    for (int i = -1; i <= k.nx + 1; ++i) halo_velocity_y(u, v, i, k);
  }
  ranks_->exchange_halo(u, Stagger::u_face);
  ranks_->exchange_halo(v, Stagger::v_face);
  if (cfg_.advection == AdvectionScheme::quick) {
    ranks_->exchange_wide(u);
    ranks_->exchange_wide(v);
  }
}

// One row of the sweeps without obstacles, from the row's cell 0 (p, q
// and rhs point at it): branch-free, vectorised.
void CpuBackend::jacobi_row_open(const real* __restrict p, real* __restrict q, const real* __restrict rhs,
                            const Constants& k) {
  const int P = k.pitch, nx = k.nx;
#pragma omp simd
  for (int i = 0; i < nx; ++i)
    q[i] = jacobi_point(p[i - 1], p[i + 1], p[i - P], p[i + P], rhs[i], real(1), real(1), real(1), real(1), k);
}

// SOR: a block of the row is computed contiguously into t (both colours:
// vectorised, the other colour's values unused), then the cells of the
// colour are stored. The colour's cells read only cells of the other
// colour, which no thread writes during the sweep, so each stored value is
// exactly the one sor_point gives in place.
void CpuBackend::sor_row_open(real* p, const real* __restrict rhs, int first, const Constants& k) {
  constexpr int kBlock = 512;  // even: a block starts on an even i
  alignas(64) real t[kBlock];
  const int P = k.pitch, nx = k.nx;
  for (int i0 = 0; i0 < nx; i0 += kBlock) {
    const int n = std::min(kBlock, nx - i0);
    const real* q = p + i0;
    const real* r = rhs + i0;
#pragma omp simd
    for (int i = 0; i < n; ++i)
      t[i] = sor_point(q[i], q[i - 1], q[i + 1], q[i - P], q[i + P], r[i], real(1), real(1), real(1), real(1), k);
    for (int i = first; i < n; i += 2) p[i0 + i] = t[i];
  }
}

std::unique_ptr<Backend> make_cpu_backend(const Config& cfg, const Grid& grid, std::shared_ptr<const RankSplit> ranks) {
  ranks = rank_split_or_one(std::move(ranks), grid.ny, cfg.bottom.kind == BoundaryKind::periodic);
  return std::make_unique<CpuBackend>(cfg, grid, std::move(ranks));
}

}  // namespace sim
