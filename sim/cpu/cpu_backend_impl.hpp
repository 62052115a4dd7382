// SPDX-License-Identifier: MIT
// The reference backend's class (sim/cpu/cpu_backend.hpp), its members
// defined by concern: the fluid and the pressure sweeps in cpu_backend.cpp,
// the particles and their coupling in cpu_coupling.cpp, the diagnostics and
// the boundary sums in cpu_diagnostics.cpp.
//
// Over ranks every loop runs over the rows the rank split gives
// (sim/ranks/rank_split.hpp), and every exchange and reduction goes through
// it unconditionally: alone, those are the identity.
#pragma once
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/cpu/cpu_fft.hpp"
#include "sim/cpu/cpu_helmholtz_fft.hpp"
#include "sim/cpu/cpu_memory.hpp"
#include "sim/cpu/cpu_poisson.hpp"
#include "sim/model/boundary_flux.hpp"
#include "sim/model/faces.hpp"
#include "sim/model/fluid_physics.hpp"
#include "sim/model/injection.hpp"
#include "sim/model/coupling_physics.hpp"
#include "sim/ranks/rank_split.hpp"

namespace sim {


class SteadyPhaseTimer final : public PhaseTimer {
 public:
  void begin(Phase p) override { start_[static_cast<int>(p)] = Clock::now(); }
  void end(Phase p) override {
    const int i = static_cast<int>(p);
    total_[i] += std::chrono::duration<double, std::milli>(Clock::now() - start_[i]).count();
  }
  std::array<double, kPhaseCount> totals_ms() override { return total_; }
  void reset() override { total_.fill(0); }

 private:
  using Clock = std::chrono::steady_clock;
  std::array<Clock::time_point, kPhaseCount> start_{};
  std::array<double, kPhaseCount> total_{};
};

class CpuBackend final : public Backend {
 public:
  CpuBackend(const Config& cfg, const Grid& g, std::shared_ptr<const RankSplit> ranks)
      : cfg_(cfg), g_(g), rows_{g.ny, g.rows, static_cast<size_t>(g.pitch)}, ranks_(std::move(ranks)) {
    // placed by the threads that sweep them (sim/cpu/cpu_memory.hpp)
    for (auto* f : {&u_, &v_, &uh_, &vh_, &us_, &vs_, &phi_, &phi2_, &rhs_, &open_}) first_touch(*f, rows_);
    row_sum_.assign(static_cast<size_t>(g.ny) + 3, 0.0);
    if (cfg.two_way)
      for (auto* f : {&mu_, &mv_, &au_, &av_, &bu_, &bv_}) first_touch(*f, rows_);
    if (cfg.coupled())
      for (auto* f : {&u0_, &v0_}) first_touch(*f, rows_);
    inj_ = make_injection(cfg);
    poisson_.split(ranks_, cfg.replicated_cells);
  }

  std::string name() const override {
    std::ostringstream s;
    s << "cpu (" << omp_get_max_threads() << " OpenMP threads" << ranks_->describe() << ")";
    return s.str();
  }
  std::string strategies() const override {
    return describe_strategies(cfg_, StrategyScope::every);
  }

  void upload(const SimState& s) override;
  void download(SimState& s) override;
  void download_own(SimState& s) override;
  void set_constants(const Constants& c) override { k_ = c; }

  double max_velocity_rate() override;

  using Backend::fill_velocity_halo;
  void fill_velocity_halo(VelocityField f) override {
    const auto [u, v] = velocity(f);
    fill_halo(u, v);
  }

  void step_particles(uint64_t first_id, int64_t count) override;
  void couple_fluid() override;
  void copy_velocity(VelocityField from, VelocityField to) override;
  void combine_velocity(VelocityField out, real alpha, VelocityField x, real beta) override;
  void rk_stage(VelocityField in, VelocityField base, VelocityField out, real a, real b, real cl,
                real cv) override;
  HelmholtzNorms helmholtz_start(VelocityField f, real g) override;
  void chebyshev_iteration(VelocityField f, real g, const ChebyshevWeights& w) override;
  double helmholtz_finish(VelocityField f, real g) override;
  bool viscous_transform() const override;
  void helmholtz_correct(VelocityField f, real g) override;
  double compute_rhs() override;
  void fill_pressure_halo() override;
  void jacobi_sweep() override;
  void sor_sweep(int color) override;
  double residual_norm() override;

  // Multigrid-preconditioned CG (sim/cpu/cpu_poisson.hpp; split over
  // ranks there, each rank its rows of every level).
  MultigridOps& multigrid_setup(const PoissonHierarchy& h) override {
    poisson_.setup(h, open_.data());
    poisson_.bind(rhs_.data(), phi_.data());
    return poisson_;
  }
  MultigridOps* multigrid() override { return poisson_.active() ? &poisson_ : nullptr; }

  void project() override;
  void project_stored() override { project_from(phi_.data()); }
  void boundary_flux(VelocityField in, int part, real w_explicit, real w_viscous) override;
  void boundary_pressure(int part, real w) override;
  TransformOps& transform_setup(const PoissonHierarchy& h) override;
  Diagnostics diagnostics() override;
  int64_t nonfinite_particles() override { return ranks_->sum(nonfinite_); }
  int64_t particle_records() const override {
    return static_cast<int64_t>(cfg_.layout == Layout::aos ? aos_.size() : parts_.size());
  }
  const RankSplit& ranks() const override { return *ranks_; }
  PhaseTimer& timer() override { return timer_; }

 private:
  // Rows this rank computes (sim/ranks/rank_split.hpp): cells
  // [row_begin, cell_end), faces [row_begin, face_end).
  int row_begin() const { return ranks_->j0(); }
  int cell_end() const { return ranks_->j1(); }
  int face_end() const { return ranks_->face_end(); }
  // Storage range of the rows this rank's stages and deposits touch.
  std::pair<size_t, size_t> near_rows() const { return ranks_->near_rows(g_); }

  template <class T>
  void project_from(const T* p);

  struct Sum {
    static constexpr bool kMax = false;
  };
  struct Max {  // NaN-propagating
    static constexpr bool kMax = true;
  };
  struct Nb { real self, w, e, s, n; };

  template <class ReachU, class ReachV>
  void stage_loop(VelocityField in, VelocityField base, VelocityField out, real a, real b, real cl, real cv,
                  ReachU reach_of_u, ReachV reach_of_v);

  // The implicit viscous solve's iterates (allocated on first use): x_k in
  // hx_[newest_], x_{k-1} in the other. `Point(c, i, j, q, b, r)` gets each
  // active face's b and residual b - A x_k; returns the sum of r^2.
  HostArray<real> hu_[2], hv_[2];
  int newest_ = 0;
  template <class Point>
  double helmholtz_pass(VelocityField f, real g, Point point);

  // Rows [j0, j1) reduced per row in parallel, then over rows in order
  // (split over ranks: over all ranks' rows in order, the same bits).
  template <class Op, class RowFn>
  double reduce_rows(int j0, int j1, RowFn row) {
    const int n = j1 - j0;
    if (static_cast<int>(row_sum_.size()) < n) row_sum_.resize(n);
#pragma omp parallel for schedule(static)
    for (int r = 0; r < n; ++r) row_sum_[r] = row(j0 + r);
    return Op::kMax ? ranks_->max_rows(row_sum_.data(), n) : ranks_->sum_rows(row_sum_.data(), n);
  }

  // Part `part` of the step's boundary sums: rho dx dy times `value(link, c)`
  // summed per owner and component, links in order.
  template <class Value>
  void sum_links(int part, Value value) {
    const double scale = static_cast<double>(k_.rho_f) * k_.dx * k_.dy;
    for (int o = 0; o < kBoundaryOwners; ++o) {
      double sum[2] = {0, 0};
      for (int e = links_.first[o]; e < links_.first[o + 1]; ++e) {
        const BoundaryLink& l = links_.links[e];
        sum[l.q] += value(l, at(k_, l.i, l.j));
      }
      bsums_.part[part][o][0] = scale * sum[0];
      bsums_.part[part][o][1] = scale * sum[1];
    }
  }

  bool solid_u_at(int c) const { return k_.has_solids && solid_u(open_.data(), c); }
  bool solid_v_at(int c) const { return k_.has_solids && solid_v(open_.data(), c, k_.pitch); }
  Nb neighbours_open(int c) const {
    if (!k_.has_solids) return {1, 1, 1, 1, 1};
    return {open_[c], open_[c - 1], open_[c + 1], open_[c - k_.pitch], open_[c + k_.pitch]};
  }

  void fill_halo(real* u, real* v);

  static void jacobi_row_open(const real* __restrict p, real* __restrict q, const real* __restrict rhs,
                              const Constants& k);
  static void sor_row_open(real* p, const real* __restrict rhs, int first, const Constants& k);

  std::pair<real*, real*> velocity(VelocityField f) {
    return {of_field(f, u_, uh_, us_, u0_).data(), of_field(f, v_, vh_, vs_, v0_).data()};
  }

  // What a particle step leaves for settle (split_particles.hpp): the
  // particles fresh and arrived, and whether the store has dead records.
  struct Arrivals {
    std::vector<Particle> incoming;
    bool dead = false;
  };
  template <class View>
  Arrivals particles_impl(View p, uint64_t first_id, int64_t count);
  template <class View>
  bool inject(View p, uint64_t first_id, int64_t count, std::vector<Particle>& fresh);
  template <class View>
  void deposit_and_couple(View p);
  void give_back_reaction(int64_t n);
  // The first storage row of the faces a deposit at (x, y) touches (3 rows
  // at most), or kAnyRow where a deposit near y = 0 or ly lands on the far rows.
  int deposit_row_of(real x, real y) const {
    if (is_periodic(k_, kBottom)) return kAnyRow;
    return std::min(stencil_u(x, y, k_).j, stencil_v(x, y, k_).j) + 1;
  }
  int64_t fluid_faces_[2] = {-1, -1};  // active faces not touching a solid, u and v (all ranks)
  template <int kQ>
  void deposit_records(int64_t n, const std::array<real*, kQ>& to_u, const std::array<real*, kQ>& to_v);
  void update_coupled_faces();

  Config cfg_;
  Grid g_;
  Constants k_{};
  InjectionC inj_{};
  RowBlocks rows_;  // the static row partition of the grid arrays (first touch)
  HostArray<real> u_, v_, uh_, vh_, us_, vs_, phi_, phi2_, rhs_, open_;
  HostArray<real> u0_, v0_;  // VelocityField::start (two-way runs)
  std::vector<real> clearance_;  // fluid.advection = quick with obstacles: advection_clearance per point
  // The transform solve bound to this backend's arrays; its residual is
  // level 0's operator of poisson_ (split over ranks as the solve is).
  struct Transform final : TransformOps {
    CpuBackend* b;
    explicit Transform(CpuBackend* backend) : b(backend) {}
    void fft_solve() override { b->fft_->solve(b->rhs_.data(), b->poisson_.x().data(), b->phi_.data()); }
    double poisson_residual_norm() override { return b->poisson_.poisson_residual_norm(); }
  } transform_{this};
  BoundaryLinks links_;          // this rank's links (sim/model/boundary_flux.hpp)
  BoundarySums bsums_;           // the last step's parts
  // Two-way coupling, per face (sim/model/particle_physics.hpp): deposited
  // particle mass M, and the implicit drag's A and B; A and B are zero
  // between steps.
  HostArray<real> mu_, mv_, au_, av_, bu_, bv_;
  std::vector<double> row_sum_;
  std::vector<double> reaction_rows_;  // give_back_reaction: per row, what its faces could not pay
  std::vector<real> deposit_;          // per particle: x, y, then kQ values for the u faces and kQ for the v faces
  std::vector<CouplingCoeffs> coeffs_;  // per particle: x and y coefficients of pass 2, for pass 4
  std::vector<int> deposit_row_;       // first storage row its deposit touches, or:
  static constexpr int kNoDeposit = -2;  // nothing to deposit (dead, or lost to the watchdog)
  static constexpr int kNoDepositKeepCoeffs = -3;  // pass 2: nothing to deposit, coefficients in coeffs_
  static constexpr int kAnyRow = -1;     // periodic in y: the rows may wrap
  // The particles this rank holds, live and in slot order (a compacted
  // store, sim/ranks/split_particles.hpp), in the run's layout; the other
  // layout's store stays empty. `capacity_`: the run's slots (all ranks).
  HostParticles parts_;
  std::vector<Particle> aos_;
  int64_t capacity_ = 0;
  ParticleCounters counters_;
  int64_t nonfinite_ = 0;  // see Backend::nonfinite_particles
  SteadyPhaseTimer timer_;
  CpuPoisson poisson_;                  // levels and the float64 pressure x
  std::unique_ptr<CpuFftPoisson> fft_;  // plans of the transform solve
  std::unique_ptr<CpuFftHelmholtz> viscous_fft_;  // plans of the transform viscous solve, made at its first use
  mutable int viscous_transform_ = -1;            // viscous_transform(), once known
  std::shared_ptr<const RankSplit> ranks_;  // never null (OneRank alone)
};

}  // namespace sim
