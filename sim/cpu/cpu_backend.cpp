// The reference backend: plain loops over the shared physics, OpenMP over
// rows and particles. Every reduction is summed per row and then over rows
// in order, and every face receives its particle deposits in particle order,
// so results do not depend on the number of threads.
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <sstream>
#include <utility>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/cpu/cpu_fft.hpp"
#include "sim/cpu/cpu_memory.hpp"
#include "sim/cpu/cpu_poisson.hpp"
#include "sim/model/faces.hpp"
#include "sim/model/advection.hpp"
#include "sim/model/boundary_flux.hpp"
#include "sim/model/fluid_physics.hpp"
#include "sim/model/halo.hpp"
#include "sim/model/injection.hpp"
#include "sim/ranks/slab_rows.hpp"
#include "sim/ranks/split_particles.hpp"
#include "sim/model/particle_physics.hpp"

namespace sim {
namespace {

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
  CpuBackend(const Config& cfg, const Grid& g, std::shared_ptr<const SlabRows> ranks)
      : cfg_(cfg), g_(g), rows_{g.ny, g.rows, static_cast<size_t>(g.pitch)}, ranks_(std::move(ranks)) {
    // placed by the threads that sweep them (sim/cpu/cpu_memory.hpp)
    for (auto* f : {&u_, &v_, &uh_, &vh_, &us_, &vs_, &phi_, &phi2_, &rhs_, &open_}) first_touch(*f, rows_);
    row_sum_.assign(static_cast<size_t>(g.ny) + 3, 0.0);
    if (cfg.two_way)
      for (auto* f : {&mu_, &mv_, &au_, &av_, &bu_, &bv_}) first_touch(*f, rows_);
    inj_ = make_injection(cfg.inject);
    if (ranks_) poisson_.split(ranks_, cfg.replicated_cells);
  }

  std::string name() const override {
    std::ostringstream s;
    s << "cpu (" << omp_get_max_threads() << " OpenMP threads";
    if (ranks_) s << " per rank, " << ranks_->ranks() << " MPI ranks in slabs of rows";
    s << ")";
    return s.str();
  }
  std::string strategies() const override {
    return describe_strategies(cfg_, StrategyScope::every);
  }

  void upload(const SimState& s) override {
    copy_rows(u_, s.u, rows_);
    copy_rows(v_, s.v, rows_);
    copy_rows(phi_, s.phi, rows_);
    copy_rows(open_, s.open, rows_);
    clearance_ = advection_clearance_field(cfg_, g_, s.open);
    links_ = boundary_links(cfg_, g_, k_, s.open, row_begin(), face_end());
    bsums_ = BoundarySums{};
    for (auto* f : {&uh_, &us_}) copy_rows(*f, u_, rows_);
    for (auto* f : {&vh_, &vs_}) copy_rows(*f, v_, rows_);
    parts_ = s.particles;
    if (ranks_) keep_owned(*ranks_, parts_.view());
    aos_ = to_aos(parts_);
    counters_ = root() ? s.counters : ParticleCounters{};
    nonfinite_ = 0;
    for (auto* f : {&mu_, &mv_, &au_, &av_, &bu_, &bv_}) std::fill(f->begin(), f->end(), real(0));
  }
  void download(SimState& s) override {
    if (ranks_) {
      for (auto* f : {&u_, &v_, &phi_}) ranks_->gather(f->data());
    }
    copy_out(s);
    if (ranks_) gather_particles(*ranks_, s);
  }
  void download_part(SimState& s, int& j0, int& j1) override {
    if (!ranks_) return Backend::download_part(s, j0, j1);
    copy_out(s);
    j0 = ranks_->j0();
    j1 = ranks_->j1();
  }
  // The rank's own copy of the state, nothing gathered.
  void copy_out(SimState& s) const {
    s.u.assign(u_.begin(), u_.end());
    s.v.assign(v_.begin(), v_.end());
    s.phi.assign(phi_.begin(), phi_.end());
    s.open.assign(open_.begin(), open_.end());
    if (cfg_.layout == Layout::aos) from_aos(aos_, s.particles);
    else s.particles = parts_;
    s.counters = counters_;
  }
  void set_constants(const Constants& c) override { k_ = c; }

  double max_velocity_rate() override {
    const int nx = g_.nx;
    return reduce_rows<Max>(row_begin(), face_end(), [&](int j) {
      double m = 0;
      for (int i = 0; i <= nx; ++i) {
        m = max_nan(m, face_rate(u_.data(), v_.data(), i, j, at(k_, i, j), k_));  // a NaN face must reach next_dt
      }
      return m;
    });
  }

  using Backend::fill_velocity_halo;
  void fill_velocity_halo(VelocityField f) override {
    const auto [u, v] = velocity(f);
    fill_halo(u, v);
  }

  void step_particles(uint64_t first_id, int64_t count) override {
    if (cfg_.layout == Layout::aos)
      particles_impl(ParticlesAoSView{aos_.data(), static_cast<int64_t>(aos_.size())}, first_id, count);
    else
      particles_impl(parts_.view(), first_id, count);
  }

  void couple_fluid() override {
    if (cfg_.layout == Layout::aos)
      deposit_and_couple(ParticlesAoSView{aos_.data(), static_cast<int64_t>(aos_.size())});
    else
      deposit_and_couple(parts_.view());
  }

  void copy_velocity(VelocityField from, VelocityField to) override {
    const auto [uf, vf] = velocity(from);
    const auto [ut, vt] = velocity(to);
    const auto [first, last] = near_rows();
    std::copy(uf + first, uf + last, ut + first);
    std::copy(vf + first, vf + last, vt + first);
  }

  void rk_stage(VelocityField in, VelocityField base, VelocityField out, real a, real b, real cl) override {
    const bool quick = k_.advection == static_cast<int>(AdvectionScheme::quick);
    auto none = [](int, int, int) { return AdvectionReach{}; };  // central: the reach is not read
    if (!quick) stage_loop(in, base, out, a, b, cl, none, none);
    else if (k_.has_solids)
      stage_loop(in, base, out, a, b, cl, [this, f = clearance_.data()](int i, int j, int c) { return reach_u(i, j, c, f, k_); },
                 [this, f = clearance_.data()](int i, int j, int c) { return reach_v(i, j, c, f, k_); });
    else
      stage_loop(in, base, out, a, b, cl, [this](int i, int j, int c) { return reach_u(i, j, c, AllClear{}, k_); },
                 [this](int i, int j, int c) { return reach_v(i, j, c, AllClear{}, k_); });
  }

  double compute_rhs() override {
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

  void fill_pressure_halo() override {
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
    if (ranks_) ranks_->exchange_halo(p, Stagger::cell);
  }

  // The sweeps stream: one parallel region per sweep, the grid rows in
  // static blocks (the blocks the arrays were first touched by), each row's
  // x halo right after the row and the y halo after the barrier. Without
  // obstacles every neighbour is open and the inner loop reads no mask:
  // jacobi_point / sor_point with the open weights 1, the same arithmetic
  // per point as with the mask.
  void jacobi_sweep() override {
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
    if (ranks_) ranks_->exchange_halo(q, Stagger::cell);
    phi_.swap(phi2_);
  }

  void sor_sweep(int color) override {
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
    if (ranks_) ranks_->exchange_halo(p, Stagger::cell);
  }

  double residual_norm() override {
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

  // Multigrid-preconditioned CG (sim/cpu/cpu_poisson.hpp; split over
  // ranks there, each rank its rows of every level).
  MultigridOps& multigrid_setup(const PoissonHierarchy& h) override {
    poisson_.setup(h, open_.data());
    poisson_.bind(rhs_.data(), phi_.data());
    return poisson_;
  }
  MultigridOps* multigrid() override { return poisson_.active() ? &poisson_ : nullptr; }

  // u = u** - dt grad p: from the float64 pressure of the multigrid and
  // transform solves when they run, else from phi.
  void project() override {
    if (poisson_.active()) project_from(poisson_.x().data());
    else project_from(phi_.data());
  }

  void boundary_flux(VelocityField in, int stage) override {
    if (links_.links.empty()) return;
    const auto [u, v] = velocity(in);
    const real* clear = clearance_.empty() ? nullptr : clearance_.data();
    sum_links(stage == 0 ? kPartFlux0 : kPartFlux1, [&](const BoundaryLink& l, int c) {
      return link_flux(l, c, u, v, open_.data(), clear, k_);
    });
  }
  void boundary_pressure(int stage) override {
    if (links_.links.empty()) return;
    const int part = stage == 0 ? kPartPressure0 : kPartPressure1;
    if (poisson_.active()) {
      const double* p = poisson_.x().data();
      sum_links(part, [&](const BoundaryLink& l, int c) { return link_pressure(p, c, l.q, l.side, k_); });
    } else {
      const real* p = phi_.data();
      sum_links(part, [&](const BoundaryLink& l, int c) { return link_pressure(p, c, l.q, l.side, k_); });
    }
  }

  // Transform solve (sim/cpu/cpu_fft.hpp) into the same float64 x; split
  // over ranks, each rank transforms its share of the row and column
  // blocks (the same bits as one rank) and ends with its rows of the
  // solution and the halo rows next to them.
  TransformOps& transform_setup(const PoissonHierarchy& h) override {
    poisson_.setup_operator(h, open_.data());
    poisson_.bind(rhs_.data(), phi_.data());
    fft_ = std::make_unique<CpuFftPoisson>(h);
    if (ranks_) fft_->split(ranks_);
    return transform_;
  }

  Diagnostics diagnostics() override;
  int64_t nonfinite_particles() override { return ranks_ ? ranks_->sum(nonfinite_) : nonfinite_; }
  double comm_ms() override { return ranks_ ? ranks_->comm_ms() : 0.0; }
  int64_t comm_calls() override { return ranks_ ? ranks_->comm_calls() : 0; }
  PhaseTimer& timer() override { return timer_; }

 private:
  // Rows this rank computes: cells [row_begin, cell_end), faces
  // [row_begin, face_end) (sim/ranks/slab_rows.hpp); all of them alone.
  int row_begin() const { return ranks_ ? ranks_->j0() : 0; }
  int cell_end() const { return ranks_ ? ranks_->j1() : g_.ny; }
  int face_end() const { return ranks_ ? ranks_->face_end() : g_.ny + 1; }
  bool root() const { return !ranks_ || ranks_->rank() == 0; }
  // Storage range of the rows this rank's stages and deposits touch: its
  // face rows and two either side; all of them alone, or with a periodic y
  // (quick's rows two out and the deposits wrap to the far side).
  std::pair<size_t, size_t> near_rows() const {
    if (!ranks_ || ranks_->periodic_y()) return {0, g_.size()};
    const int lo = std::max(-1, ranks_->j0() - 2), hi = std::min(g_.ny + 2, ranks_->face_end() + 2);
    return {static_cast<size_t>(lo + 1) * g_.pitch, static_cast<size_t>(hi + 1) * g_.pitch};
  }
  template <class View>
  void migrate(View p);

  template <class T>
  void project_from(const T* p) {
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

  struct Sum {
    static constexpr bool kMax = false;
    static double op(double a, double b) { return a + b; }
  };
  struct Max {  // NaN-propagating
    static constexpr bool kMax = true;
    static double op(double a, double b) { return max_nan(a, b); }
  };
  struct Nb { real self, w, e, s, n; };

  // One stage over every face: reach_of_u/v give a face's advection reach.
  template <class ReachU, class ReachV>
  void stage_loop(VelocityField in, VelocityField base, VelocityField out, real a, real b, real cl, ReachU reach_of_u,
                  ReachV reach_of_v) {
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
                                              a, b, cl, k_);
        if (active_v(i, j, k_))
          vo[c] = solid_v_at(c) ? real(0)
                                : stage_point(vb[c], vi[c],
                                              momentum_v(n, reach_of_v(i, j, c), solids && solid_v(open, c - 1, P),
                                                         solids && solid_v(open, c + 1, P), k_),
                                              a, b, cl, k_);
      }
    fill_halo(uo, vo);
  }

  // Rows [j0, j1) reduced per row in parallel, then over rows in order
  // (split over ranks: over all ranks' rows in order, the same bits).
  template <class Op, class RowFn>
  double reduce_rows(int j0, int j1, RowFn row) {
    const int n = j1 - j0;
    if (static_cast<int>(row_sum_.size()) < n) row_sum_.resize(n);
#pragma omp parallel for schedule(static)
    for (int r = 0; r < n; ++r) row_sum_[r] = row(j0 + r);
    if (ranks_) {
      const std::vector<double> rows(row_sum_.begin(), row_sum_.begin() + n);
      return Op::kMax ? ranks_->max_rows(rows) : ranks_->sum_rows(rows);
    }
    double acc = 0;
    for (int r = 0; r < n; ++r) acc = Op::op(acc, row_sum_[r]);
    return acc;
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

  // Split over ranks: the domain sides' rules, then the neighbours' rows
  // (the y-side rules write only rows other ranks own or the exchange
  // overwrites, apart from the bottom and top ranks' own sides).
  void fill_halo(real* u, real* v) {
    const Constants k = k_;
    const int j0 = row_begin(), j1 = face_end();
#pragma omp parallel
    {
#pragma omp for schedule(static)
      for (int j = j0; j < j1; ++j) halo_velocity_x(u, v, j, k);
#pragma omp for schedule(static)
      for (int i = -1; i <= k.nx + 1; ++i) halo_velocity_y(u, v, i, k);
    }
    if (ranks_) {
      ranks_->exchange_halo(u, Stagger::u_face);
      ranks_->exchange_halo(v, Stagger::v_face);
      if (cfg_.advection == AdvectionScheme::quick) {
        ranks_->copy_rows(u, g_.pitch, ranks_->wide_plan());
        ranks_->copy_rows(v, g_.pitch, ranks_->wide_plan());
      }
    }
  }

  // One row of the sweeps without obstacles, from the row's cell 0 (p, q
  // and rhs point at it): branch-free, vectorised.
  static void jacobi_row_open(const real* __restrict p, real* __restrict q, const real* __restrict rhs,
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
  static void sor_row_open(real* p, const real* __restrict rhs, int first, const Constants& k) {
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

  std::pair<real*, real*> velocity(VelocityField f) {
    return {of_field(f, u_, uh_, us_).data(), of_field(f, v_, vh_, vs_).data()};
  }

  template <class View>
  void particles_impl(View p, uint64_t first_id, int64_t count);
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
  HostParticles parts_;
  std::vector<Particle> aos_;
  ParticleCounters counters_;
  int64_t nonfinite_ = 0;  // see Backend::nonfinite_particles
  SteadyPhaseTimer timer_;
  CpuPoisson poisson_;                  // levels and the float64 pressure x
  std::unique_ptr<CpuFftPoisson> fft_;  // plans of the transform solve
  std::shared_ptr<const SlabRows> ranks_;  // null: one process
};

template <class View>
void CpuBackend::particles_impl(View p, uint64_t first_id, int64_t count) {
  const int64_t n = p.size();
  // two-way: couple_fluid has run passes 1 to 3 (the free fluid in stage);
  // current is the projected first stage, saved what was projected
  const bool two_way = k_.two_way != 0 && n > 0;
  const real* mu = two_way ? mu_.data() : nullptr;
  const real* mv = two_way ? mv_.data() : nullptr;
  int64_t removed = 0, nonfinite = 0;
  // nonfinite rides on the loop's existing reduction: a few compares per
  // particle next to its exp and sampling, so the watchdog costs nothing here.
#pragma omp parallel for schedule(static) reduction(+ : removed, nonfinite)
  for (int64_t i = 0; i < n; ++i) {
    if (!p.alive(i)) continue;
    ParticleMotion s{p.x(i), p.y(i), p.vx(i), p.vy(i)};
    const real d = p.d(i);
    // two-way: the coefficients of pass 2 (the same function of the same M,
    // as the GPU recomputes them); a particle lost to the watchdog, which
    // skipped pass 2, takes them here
    CouplingCoeffs cx, cy;
    if (two_way && deposit_row_[static_cast<size_t>(i)] != kNoDeposit) {
      cx = coeffs_[static_cast<size_t>(2 * i)];
      cy = coeffs_[static_cast<size_t>(2 * i + 1)];
    } else {
      particle_coeffs(mu, mv, two_way, s.x, s.y, d, k_, cx, cy);
    }
    real ufx, ufy;
    ParticleUpdate up;
    if (two_way) {
      sample_velocity(us_.data(), vs_.data(), s.x, s.y, k_, ufx, ufy);
      real dux, duy;
      sample_impulse(u_.data(), v_.data(), uh_.data(), vh_.data(), us_.data(), vs_.data(), s.x, s.y, k_, dux, duy);
      real took_x, took_y;
      up = update_coupled_particle(s, d, ufx, ufy, dux, duy, cx, cy, k_, took_x, took_y);
      // what it took, to be given back around where it took it (give_back_reaction)
      const real m = particle_mass(d, k_);
      const real tx = m * took_x, ty = m * took_y;
      real* r = &deposit_[static_cast<size_t>(4 * i)];
      r[0] = s.x;
      r[1] = s.y;
      r[2] = tx;
      r[3] = ty;
      const bool pays = finite_motion({s.x, s.y, tx, ty}) && (tx != real(0) || ty != real(0));
      deposit_row_[static_cast<size_t>(i)] = pays ? deposit_row_of(s.x, s.y) : kNoDeposit;
    } else {
      sample_velocity(u_.data(), v_.data(), s.x, s.y, k_, ufx, ufy);
      up = update_particle(s, d, ufx, ufy, cx, cy, k_);
    }
    if (!finite_motion(s) || !finite_motion(up.s)) ++nonfinite;
    if (store_update(p, i, up)) ++removed;
  }
  if (two_way) give_back_reaction(n);
  counters_.removed += removed;
  nonfinite_ += nonfinite;
  for (int64_t q = 0; q < count && n > 0; ++q) {
    const uint64_t id = first_id + static_cast<uint64_t>(q);
    const int64_t slot = static_cast<int64_t>(id % static_cast<uint64_t>(n));
    if (p.alive(slot)) ++counters_.recycled;
    const Particle fresh = injected_particle(cfg_.seed, id, inj_);
    p.store(slot, fresh);
    // split: the slot is dead on every rank but the one owning the position
    if (ranks_ && ranks_->owner_of_point(fresh.x, fresh.y) != ranks_->rank()) p.alive(slot) = 0;
  }
  if (ranks_) migrate(p);
}

// After a particle step: every particle whose position another rank owns
// goes there, into the same slot (ids and slots are those of one rank).
// A particle may cross any number of slabs in a step. Arrivals are stored
// by ascending source rank; a non-finite position stays for the watchdog.
template <class View>
void CpuBackend::migrate(View p) {
  const int me = ranks_->rank();
  std::vector<Particle> leaving;
  for (int64_t i = 0; i < p.size(); ++i) {
    if (!p.alive(i)) continue;
    const int owner = ranks_->owner_of_point(p.x(i), p.y(i));
    if (owner < 0 || owner == me) continue;
    leaving.push_back(p.load(i));
    p.alive(i) = 0;
  }
  const uint64_t capacity = static_cast<uint64_t>(p.size());
  for (const Particle& q : send_to_owners(*ranks_, leaving)) p.store(static_cast<int64_t>(q.id % capacity), q);
}

// Passes 1 to 3 of the coupled step (sim/model/particle_physics.hpp): the
// particle mass onto M, each particle's implicit drag onto A and B (its
// loading sampled from M), then every fluid face's implicit update and the
// halo. Each deposit is gathered per particle in parallel and added in
// particle order by deposit_records.
template <class View>
void CpuBackend::deposit_and_couple(View p) {
  const int64_t n = p.size();
  if (n == 0) {  // the free fluid is the fluid
    copy_velocity(VelocityField::current, VelocityField::stage);
    return;
  }
  const auto [first, last] = near_rows();
  std::fill(mu_.begin() + static_cast<std::ptrdiff_t>(first), mu_.begin() + static_cast<std::ptrdiff_t>(last), real(0));
  std::fill(mv_.begin() + static_cast<std::ptrdiff_t>(first), mv_.begin() + static_cast<std::ptrdiff_t>(last), real(0));
  deposit_.resize(static_cast<size_t>(6 * n));
  deposit_row_.resize(static_cast<size_t>(n));
  coeffs_.resize(static_cast<size_t>(2 * n));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    int& row = deposit_row_[static_cast<size_t>(i)];
    if (!p.alive(i) || !finite_motion({p.x(i), p.y(i), p.vx(i), p.vy(i)})) {
      row = kNoDeposit;  // a particle already lost to the watchdog leaves the fluid as it is
      continue;
    }
    const real x = p.x(i), y = p.y(i), m = particle_mass(p.d(i), k_);
    real* r = &deposit_[static_cast<size_t>(4 * i)];
    r[0] = x;
    r[1] = y;
    r[2] = m;
    r[3] = m;
    row = deposit_row_of(x, y);
  }
  deposit_records<1>(n, {mu_.data()}, {mv_.data()});
  if (ranks_) {  // the mass near a slab's side belongs to the neighbour's faces, and is read back
    ranks_->fold(mu_.data(), Stagger::u_face);
    ranks_->fold(mv_.data(), Stagger::v_face);
    ranks_->refresh(mu_.data(), Stagger::u_face);
    ranks_->refresh(mv_.data(), Stagger::v_face);
  }

  const real* mu = mu_.data();
  const real* mv = mv_.data();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    int& row = deposit_row_[static_cast<size_t>(i)];
    if (row == kNoDeposit) continue;
    const real x = p.x(i), y = p.y(i), d = p.d(i);
    CouplingCoeffs& cx = coeffs_[static_cast<size_t>(2 * i)];
    CouplingCoeffs& cy = coeffs_[static_cast<size_t>(2 * i + 1)];
    particle_coeffs(mu, mv, true, x, y, d, k_, cx, cy);
    real ufx, ufy;
    sample_velocity(u_.data(), v_.data(), x, y, k_, ufx, ufy);
    const CouplingDeposit q = coupling_deposit(particle_mass(d, k_), p.vx(i) - ufx, p.vy(i) - ufy, cx, cy, k_);
    real* r = &deposit_[static_cast<size_t>(6 * i)];
    r[0] = x;
    r[1] = y;
    r[2] = q.bu;
    r[3] = q.au;
    r[4] = q.bv;
    r[5] = q.av;
    if (q.bu == real(0) && q.au == real(0) && q.bv == real(0) && q.av == real(0)) row = kNoDepositKeepCoeffs;
  }
  deposit_records<2>(n, {bu_.data(), au_.data()}, {bv_.data(), av_.data()});
  if (ranks_)
    for (auto* f : {&bu_, &au_}) ranks_->fold(f->data(), Stagger::u_face);
  if (ranks_)
    for (auto* f : {&bv_, &av_}) ranks_->fold(f->data(), Stagger::v_face);
  update_coupled_faces();
}

// After the particles took their share of the first projection's impulse
// (deposit_: per particle where it was and the momentum it took), the fluid
// gives it back where it was taken (reaction_share, sim/model/particle_physics.hpp),
// into the stage-2 base (stage, weighted 1/2 there: so twice): deposited
// onto A (zero between steps), each face pays its share, and what no face
// could pay (beyond a face's own impulse, or on a held face) is spread
// evenly over the fluid faces (reaction_velocity). A is zeroed again.
void CpuBackend::give_back_reaction(int64_t n) {
  const int j0 = row_begin(), j1 = face_end();
  if (fluid_faces_[0] < 0) {
    int64_t f[2] = {0, 0};
    for (int j = j0; j < j1; ++j)
      for (int i = 0; i <= g_.nx; ++i) {
        const int c = at(k_, i, j);
        f[0] += active_u(i, j, k_) && !solid_u_at(c);
        f[1] += active_v(i, j, k_) && !solid_v_at(c);
      }
    for (int q = 0; q < 2; ++q) fluid_faces_[q] = ranks_ ? ranks_->sum(f[q]) : f[q];
  }
  deposit_records<1>(n, {au_.data()}, {av_.data()});
  if (ranks_) {
    ranks_->fold(au_.data(), Stagger::u_face);
    ranks_->fold(av_.data(), Stagger::v_face);
  }
  // per row, summed in row order: the same figures for any thread count
  reaction_rows_.assign(static_cast<size_t>(2 * (j1 - j0)), 0.0);
#pragma omp parallel for schedule(static)
  for (int j = j0; j < j1; ++j) {
    double left_x = 0, left_y = 0;
    for (int i = 0; i <= g_.nx; ++i) {
      const int c = at(k_, i, j);
      const bool fu = active_u(i, j, k_) && !solid_u_at(c), fv = active_v(i, j, k_) && !solid_v_at(c);
      const real pu = fu ? reaction_share(au_[c], u_[c] - uh_[c], k_) : real(0);
      const real pv = fv ? reaction_share(av_[c], v_[c] - vh_[c], k_) : real(0);
      us_[c] -= real(2) * pu / k_.cell_mass;
      vs_[c] -= real(2) * pv / k_.cell_mass;
      left_x += static_cast<double>(au_[c]) - static_cast<double>(pu);
      left_y += static_cast<double>(av_[c]) - static_cast<double>(pv);
    }
    reaction_rows_[static_cast<size_t>(2 * (j - j0))] = left_x;
    reaction_rows_[static_cast<size_t>(2 * (j - j0) + 1)] = left_y;
  }
  // A is zero everywhere between steps (the halo rows too, which may hold a fold's leftovers)
  std::fill(au_.begin(), au_.end(), real(0));
  std::fill(av_.begin(), av_.end(), real(0));
  double left_x = 0, left_y = 0;
  for (int j = j0; j < j1; ++j) {
    left_x += reaction_rows_[static_cast<size_t>(2 * (j - j0))];
    left_y += reaction_rows_[static_cast<size_t>(2 * (j - j0) + 1)];
  }
  if (ranks_) {
    left_x = ranks_->sum(left_x);
    left_y = ranks_->sum(left_y);
  }
  const real du = real(2) * reaction_velocity(left_x, fluid_faces_[0], k_);
  const real dv = real(2) * reaction_velocity(left_y, fluid_faces_[1], k_);
#pragma omp parallel for schedule(static)
  for (int j = j0; j < j1; ++j)
    for (int i = 0; i <= g_.nx; ++i) {
      const int c = at(k_, i, j);
      if (active_u(i, j, k_) && !solid_u_at(c)) us_[c] += du;
      if (active_v(i, j, k_) && !solid_v_at(c)) vs_[c] += dv;
    }
}

// Adds every particle's record of deposit_ (x, y, kQ values for u, kQ for
// v) onto the faces around (x, y), value times face weight, onto to_u[q]
// and to_v[q]. The storage rows are dealt to the threads in blocks of
// kDepositRows, round robin (particles often fill only part of the
// domain); each thread goes through all particles in order and adds only
// what lands in its rows. So every face gets its contributions in particle
// order, exactly as one thread going through the particles would add them,
// and no two threads write the same face.
template <int kQ>
void CpuBackend::deposit_records(int64_t n, const std::array<real*, kQ>& to_u, const std::array<real*, kQ>& to_v) {
  constexpr int kDepositRows = 16;
  constexpr int kStride = 2 + 2 * kQ;
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), threads = omp_get_num_threads();
    const int P = g_.pitch;
    auto owns_row = [&](int row) { return threads == 1 || (row / kDepositRows) % threads == t; };
    auto owns_face = [&](int f) { return f >= 0 && (threads == 1 || owns_row(f / P)); };
    for (int64_t i = 0; i < n; ++i) {
      const int row = deposit_row_[static_cast<size_t>(i)];
      if (row == kNoDeposit || row == kNoDepositKeepCoeffs) continue;
      if (row != kAnyRow && !owns_row(row) && !owns_row(row + 1) && !owns_row(row + 2)) continue;
      const real* r = &deposit_[static_cast<size_t>(kStride * i)];
      for_each_deposit_face(r[0], r[1], k_, [&](int, int fu, real wu, int fv, real wv) {
        if (owns_face(fu))
          for (int q = 0; q < kQ; ++q) to_u[q][fu] += wu * r[2 + q];
        if (owns_face(fv))
          for (int q = 0; q < kQ; ++q) to_v[q][fv] += wv * r[2 + kQ + q];
      });
    }
  }
}

// Pass 3: every active fluid face takes the implicit drag of the particles
// around it (solid faces stay 0). Then stage = current, the free fluid the
// particles sample, where a held boundary face takes its free value (B
// keeps it meanwhile) instead of the side's. A and B are zeroed.
void CpuBackend::update_coupled_faces() {
  const int j0 = row_begin(), j1 = face_end();
  const real half = face_fluid_mass(true, k_);
#pragma omp parallel for schedule(static)
  for (int j = j0; j < j1; ++j)
    for (int i = 0; i <= g_.nx; ++i) {
      const int c = at(k_, i, j);
      const bool hu = j < g_.ny && held_face_u(i, k_), hv = i < g_.nx && held_face_v(j, k_);
      if (active_u(i, j, k_) && !solid_u_at(c)) u_[c] = coupled_face_velocity(u_[c], au_[c], bu_[c], k_.cell_mass);
      if (active_v(i, j, k_) && !solid_v_at(c)) v_[c] = coupled_face_velocity(v_[c], av_[c], bv_[c], k_.cell_mass);
      bu_[c] = hu ? coupled_face_velocity(u_[c], au_[c], bu_[c], half) : real(0);
      bv_[c] = hv ? coupled_face_velocity(v_[c], av_[c], bv_[c], half) : real(0);
      au_[c] = av_[c] = real(0);
    }
  fill_halo(u_.data(), v_.data());
  copy_velocity(VelocityField::current, VelocityField::stage);
  for (int j = j0; j < j1; ++j) {
    for (int i : {0, g_.nx}) {
      const int c = at(k_, i, j);
      if (j < g_.ny && held_face_u(i, k_)) us_[c] = bu_[c];
      bu_[c] = real(0);
    }
    if (held_face_v(j, k_))
      for (int i = 0; i < g_.nx; ++i) {
        const int c = at(k_, i, j);
        vs_[c] = bv_[c];
        bv_[c] = real(0);
      }
  }
}

Diagnostics CpuBackend::diagnostics() {
  Diagnostics d;
  const int P = k_.pitch;
  d.max_div = reduce_rows<Max>(row_begin(), cell_end(), [&](int j) {
    double m = 0;
    for (int i = 0; i < g_.nx; ++i) {
      const int c = at(k_, i, j);
      if (open_[c] != 0) m = max_nan(m, std::abs(static_cast<double>(divergence_point(u_[c], u_[c + 1], v_[c], v_[c + P], k_))));
    }
    return m;
  });
  FaceSums f{{0, 0}, 0, 0};
  for (int j = row_begin(); j < face_end(); ++j)
    for (int i = 0; i <= g_.nx; ++i) add_face_point(f, i, j, at(k_, i, j), u_.data(), v_.data(), k_);
  d.fluid_momentum[0] = f.momentum[0];
  d.fluid_momentum[1] = f.momentum[1];
  d.kinetic_energy = f.kinetic_energy;
  d.max_speed = f.max_speed;
  auto particles = [&](auto p) {
    for (int64_t i = 0; i < p.size(); ++i) {
      if (!p.alive(i)) continue;
      const double m = particle_mass(p.d(i), k_);
      d.particle_momentum[0] += m * p.vx(i);
      d.particle_momentum[1] += m * p.vy(i);
      d.particle_mean_v[0] += p.vx(i);
      d.particle_mean_v[1] += p.vy(i);
      ++d.alive;
    }
  };
  if (cfg_.layout == Layout::aos) particles(ParticlesAoSView{aos_.data(), static_cast<int64_t>(aos_.size())});
  else particles(parts_.view());
  d.counters = counters_;
  if (ranks_) {  // each rank's sums, added in rank order
    for (double* x : {&d.fluid_momentum[0], &d.fluid_momentum[1], &d.kinetic_energy, &d.particle_momentum[0],
                      &d.particle_momentum[1], &d.particle_mean_v[0], &d.particle_mean_v[1]})
      *x = ranks_->sum(*x);
    d.max_speed = ranks_->max(d.max_speed);
    d.alive = ranks_->sum(d.alive);
    d.counters.removed = ranks_->sum(d.counters.removed);
    d.counters.recycled = ranks_->sum(d.counters.recycled);
  }
  if (d.alive > 0) {
    d.particle_mean_v[0] /= d.alive;
    d.particle_mean_v[1] /= d.alive;
  }
  if (measures_boundaries(cfg_))  // each rank's rates, added in rank order
    set_boundary_diagnostics(bsums_, static_cast<int>(cfg_.obstacles.size()), d,
                             [&](double x) { return ranks_ ? ranks_->sum(x) : x; });
  return d;
}

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const Config& cfg, const Grid& grid, std::shared_ptr<const SlabRows> ranks) {
  if (ranks && ranks->ranks() == 1) ranks = nullptr;
  return std::make_unique<CpuBackend>(cfg, grid, std::move(ranks));
}

}  // namespace sim
