// SPDX-License-Identifier: MIT
// The CUDA backend: owns the state in device memory and runs each phase
// through the launchers of cuda/kernels.hpp on one stream. The step loop
// reads back only the scalars that decide dt and convergence.
#include "cuda/cuda_backend_impl.hpp"
#include "sim/model/viscous.hpp"

#include "sim/ranks/split_particles.hpp"

namespace sim::cuda {

// ranks: the rank split (OneRank for one process); shared_gpu: some
// ranks of the run share a GPU.
CudaBackend::CudaBackend(const Config& cfg, const Grid& g, const DeviceInfo& dev, const StencilOpts& so,
                         const MemoryPlan& plan, std::shared_ptr<const RankSplit> ranks, bool shared_gpu)
    : cfg_(cfg), g_(g), dev_(dev), so_(so), plan_(plan), timer_(stream_.get()), store_(cfg.layout, plan.capacity, plan.sorts),
      ranks_(std::move(ranks)) {
  exec_.stream = stream_.get();
  exec_.constants = cfg.constants;
  exec_.nx = g.nx;
  exec_.ny = g.ny;
  exec_.pitch = g.pitch;
  if (ranks_->j0() > 0 || ranks_->j1() < g.ny) {  // a slab of the grid (Exec: the whole grid by default)
    exec_.row0 = ranks_->j0();
    exec_.row_end = ranks_->j1();
    exec_.face_end = ranks_->face_end();
  }
  rows_ = std::make_unique<DeviceRows>(ranks_, exec_.stream, shared_gpu, cfg.transport, cfg.overlap);
  const size_t n = g.size();
  for (DeviceBuffer<real>* f : {&u_, &v_, &uh_, &vh_, &us_, &vs_, &phi_, &phi2_, &rhs_, &open_})
    f->allocate(n, "grid fields");
  if (plan.advection_clearance) clearance_.allocate(n, "advection clearance");
  if (cfg.coupled())
    for (DeviceBuffer<real>* f : {&u0_, &v0_}) f->allocate(n, "start velocity (two-way)");
  if (plan.viscous_work) allocate_viscous_work();
  k_dev_.allocate(1, "constants");
  exec_.k_dev = k_dev_.data();
  partials_.allocate(static_cast<size_t>(cell_blocks(exec_, so_)), "block partial sums");
  scalars_.allocate(8, "reduction results");
  reduce_ws_.allocate(1 << 16, "CUB reduction workspace");
  counters_.allocate(kCounterCount, "particle counters");
  allocate_particle_buffers(plan, n);
  if (cfg.sampling == Sampling::texture) {
    textures_ = VelocityTextures(u_.data(), v_.data(), g, dev_);
    if (plan.couples) stage_textures_ = VelocityTextures(us_.data(), vs_.data(), g, dev_);
  }
  if (cfg.sampling == Sampling::packed && plan.capacity > 0)
    for (DeviceBuffer<float4>* f : {&u4_, &v4_}) f->allocate(n, "packed velocity");
  inj_ = make_injection(cfg);
  for (DeviceBuffer<real>* f : {&phi2_, &rhs_}) f->zero(exec_.stream);
  counters_.zero(exec_.stream);
  stream_.synchronize();
}

// The particles' sort, coupling and deposit buffers the plan asks for; the
// coupling fields zeroed (`n`: points of a grid field).
void CudaBackend::allocate_particle_buffers(const MemoryPlan& plan, size_t n) {
  const size_t cap = static_cast<size_t>(plan.capacity);
  if (plan.sorts) {
    for (DeviceBuffer<uint32_t>* b : {&sort_keys_, &sort_keys_alt_, &sort_slots_, &sort_slots_alt_})
      b->allocate(cap, "particle sort keys");
    sort_ws_.allocate(plan.sort_workspace, "particle sort workspace");
  }
  if (plan.couples) {
    for (DeviceBuffer<real>* f : {&mu_, &mv_, &au_, &av_, &bu_, &bv_}) {
      f->allocate(n, "coupling fields");
      f->zero(exec_.stream);
    }
    impulse_partials_.allocate(2 * static_cast<size_t>(face_pass_blocks(exec_)) + 2, "projection impulse sums");
    took_.allocate(static_cast<size_t>(plan.capacity), "particle reaction records");
    took_bound_.allocate(1, "particle reaction records");
    for (DeviceBuffer<unsigned long long>* b : {&took_u_, &took_v_}) {
      b->allocate(n, "particle reaction integers");
      b->zero(exec_.stream);
    }
    impulse_gained_.allocate(2, "projection impulse sums");
  }
  if (plan.sorted_deposit) {
    const size_t pairs = static_cast<size_t>(plan.pairs);
    for (DeviceBuffer<uint32_t>* b : {&pair_keys_, &pair_keys_alt_, &unique_keys_, &pair_perm_, &pair_perm_alt_})
      b->allocate(pairs, "deposit keys");
    for (DeviceBuffer<real>* b : {&pair_values_, &pair_values_b_}) b->allocate(pairs, "deposit values");
    for (DeviceBuffer<real>* b : {&pair_gathered_, &pair_sums_}) b->allocate(2 * pairs, "deposit values");
    run_count_.allocate(1, "deposit run count");
    deposit_ws_.allocate(plan.deposit_workspace, "deposit workspace");
  }
  if (plan.fixed_deposit) {
    for (DeviceBuffer<unsigned long long>* b : {&fixed_mu_, &fixed_mv_, &fixed_bu_, &fixed_bv_, &fixed_au_, &fixed_av_}) {
      b->allocate(n, "deposit integers");
      b->zero(exec_.stream);
    }
    fixed_bounds_.allocate(2, "deposit bounds");
  }
  if (plan.gather_deposit) {
    for (DeviceBuffer<uint32_t>* b : {&gather_keys_, &gather_keys_alt_, &gather_slots_, &gather_slots_alt_})
      b->allocate(cap, "deposit keys");
    for (DeviceBuffer<float2>* b : {&gather_wu_, &gather_wv_, &gather_qu_, &gather_qv_}) b->allocate(cap, "deposit values");
    gather_mass_.allocate(cap, "deposit values");
    gather_nodes_.allocate(static_cast<size_t>(plan.gather_nodes), "deposit node ranges");
    deposit_ws_.allocate(plan.deposit_workspace, "deposit workspace");
  }
}

void CudaBackend::upload(const SimState& s) {
  const cudaStream_t st = exec_.stream;
  u_.upload(s.u.data(), s.u.size(), st);
  v_.upload(s.v.data(), s.v.size(), st);
  phi_.upload(s.phi.data(), s.phi.size(), st);
  open_.upload(s.open.data(), s.open.size(), st);
  // the fluid faces the particles' reaction spreads over (give_back_reaction): all ranks' rows
  fluid_faces_[0] = fluid_faces_[1] = 0;
  for (int j = 0; j <= g_.ny; ++j)
    for (int i = 0; i <= g_.nx; ++i) {
      const int c = at(k_, i, j);
      fluid_faces_[0] += active_u(i, j, k_) && !(k_.has_solids && solid_u(s.open.data(), c));
      fluid_faces_[1] += active_v(i, j, k_) && !(k_.has_solids && solid_v(s.open.data(), c, k_.pitch));
    }
  // the boundary links of this rank's face rows (sim/model/boundary_flux.hpp)
  link_host_ = boundary_links(cfg_, g_, k_, s.open, exec_.row0, exec_.face_row_end());
  if (!link_host_.links.empty()) {
    links_.allocate(link_host_.links.size(), "boundary links");
    links_.upload(link_host_.links.data(), link_host_.links.size(), st);
    link_first_.allocate(link_host_.first.size(), "boundary link offsets");
    link_first_.upload(link_host_.first.data(), link_host_.first.size(), st);
    link_sums_.allocate(kBoundaryParts * kBoundaryOwners * 2, "boundary sums");
    link_sums_.zero(st);
  }
  if (plan_.advection_clearance) {
    const std::vector<real> clear = advection_clearance_field(cfg_, g_, s.open);
    clearance_.upload(clear.data(), clear.size(), st);
    stream_.synchronize();  // before `clear` goes
  }
  for (DeviceBuffer<real>* f : {&uh_, &us_}) copy(*f, u_);
  for (DeviceBuffer<real>* f : {&vh_, &vs_}) copy(*f, v_);
  if (plan_.couples)
    for (DeviceBuffer<real>* f : {&mu_, &mv_, &au_, &av_, &bu_, &bv_}) f->zero(st);
  if (plan_.fixed_deposit)
    for (DeviceBuffer<unsigned long long>* b : {&fixed_mu_, &fixed_mv_, &fixed_bu_, &fixed_bv_, &fixed_au_, &fixed_av_})
      b->zero(st);
  HostParticles kept;  // each slot alive on the rank that owns its particle only
  store_.upload(owned_particles(*ranks_, s.particles, kept), st);
  const bool root = ranks_->root();  // the counters are summed over ranks
  const unsigned long long c[kCounterCount] = {root ? static_cast<unsigned long long>(s.counters.removed) : 0ull,
                                               root ? static_cast<unsigned long long>(s.counters.recycled) : 0ull};
  counters_.upload(c, kCounterCount, st);
  permuted_ = false;
  particle_steps_ = 0;
  nonfinite_ = 0;
  stream_.synchronize();
}

// Over ranks rank 0 gets the whole state (RankSplit::gather_state).
void CudaBackend::download(SimState& s) {
  download_own(s);
  ranks_->gather_state(s, store_.capacity());
}

// This rank's copy of the state, nothing gathered.
void CudaBackend::download_own(SimState& s) {
  const cudaStream_t st = exec_.stream;
  const size_t n = g_.size();
  for (std::vector<real>* f : {&s.u, &s.v, &s.phi, &s.open}) f->resize(n);
  u_.download(s.u.data(), n, st);
  v_.download(s.v.data(), n, st);
  phi_.download(s.phi.data(), n, st);
  open_.download(s.open.data(), n, st);
  store_.download(s.particles, permuted_, st);  // synchronises
  s.counters = read_counters();
}

std::unique_ptr<PendingState> CudaBackend::begin_download(SimState header) {
  if (!ranks_->alone()) return Backend::begin_download(std::move(header));  // gathered now, collectively
  if (!staging_) staging_.emplace(g_, cfg_.layout, plan_.capacity, dev_.ordinal);
  const SnapshotSources src{&u_, &v_, &phi_, &open_, &counters_, &store_, permuted_};
  if (std::unique_ptr<PendingState> p = staging_->begin(header, src, exec_.stream)) return p;
  download(header);  // no memory for staging: the synchronous path
  return ready_state(std::move(header));
}

// The device copy always (the float64 projection and the device clock
// read it); the __constant__ blocks too when the kernels read those.
void CudaBackend::set_constants(const Constants& c) {
  k_ = c;
  k_dev_.upload(&k_, 1, exec_.stream);
  if (cfg_.constants == ConstantsIn::constant) {
    upload_fluid_constants(c, exec_.stream);
    upload_pressure_constants(c, exec_.stream);
    upload_particle_constants(c, exec_.stream);
    upload_reduction_constants(c, exec_.stream);
  }
}

double CudaBackend::max_velocity_rate() {
  return ranks_->max(cuda::max_velocity_rate(exec_, scratch(), u_.data(), v_.data()));
}

// The boundary fill, then over ranks the halo rows from the neighbours.
void CudaBackend::velocity_halo(real* u, real* v) {
  cuda::fill_velocity_halo(exec_, u, v);
  rows_->together([&] {  // one exchange
    rows_->exchange_halo(u, Stagger::u_face);
    rows_->exchange_halo(v, Stagger::v_face);
  });
  if (cfg_.advection == AdvectionScheme::quick)  // the rows two out: after the halo rows they may come from
    rows_->together([&] {
      rows_->exchange_wide(u);
      rows_->exchange_wide(v);
    });
}

void CudaBackend::copy_velocity(VelocityField from, VelocityField to) {
  const auto [uf, vf] = velocity(from);
  const auto [ut, vt] = velocity(to);
  // the rows a stage reads (RankSplit::near_rows)
  const auto [first, last] = ranks_->near_rows(g_);
  const size_t bytes = (last - first) * sizeof(real);
  SIM_CUDA_CHECK(cudaMemcpyAsync(ut + first, uf + first, bytes, cudaMemcpyDeviceToDevice, exec_.stream));
  SIM_CUDA_CHECK(cudaMemcpyAsync(vt + first, vf + first, bytes, cudaMemcpyDeviceToDevice, exec_.stream));
}

void CudaBackend::combine_velocity(VelocityField out, real alpha, VelocityField x, real beta) {
  const auto [uo, vo] = velocity(out);
  const auto [ux, vx] = velocity(x);
  const auto [first, last] = ranks_->near_rows(g_);
  cuda::combine_velocity(exec_.stream, uo + first, vo + first, ux + first, vx + first, alpha, beta, last - first);
}

void CudaBackend::rk_stage(VelocityField in, VelocityField base, VelocityField out, real a, real b, real cl,
                           real cv) {
  const auto [ui, vi] = velocity(in);
  const auto [ub, vb] = velocity(base);
  const auto [uo, vo] = velocity(out);
  cuda::momentum_stage(exec_, so_, ui, vi, ub, vb, open_.data(), clearance_.data(), uo, vo, a, b, cl, cv);
  velocity_halo(uo, vo);
}

// ---- the implicit viscous solve's passes (solve_viscous, sim/model/viscous.hpp) ----

// The iterates, the partial sums of a face pass (r^2, then b^2) and the
// device solve's scalars; with fluid.viscous = implicit at construction
// (MemoryPlan::viscous_work), else at the first solve.
void CudaBackend::allocate_viscous_work() {
  if (hu_[0].size() == g_.size()) return;
  for (int s = 0; s < 2; ++s) {
    hu_[s].allocate(g_.size(), "viscous iterates");
    hv_[s].allocate(g_.size(), "viscous iterates");
  }
  const Exec whole{nullptr, ConstantsIn::constant, nullptr, g_.nx, g_.ny};  // every face row: a rank's bound
  viscous_partials_.allocate(2 * static_cast<size_t>(helmholtz_blocks(whole, so_)), "viscous solve partial sums");
  viscous_state_.allocate(1, "viscous solve state");
}

HelmholtzFields CudaBackend::helmholtz_fields(VelocityField f) {
  const auto [u, v] = velocity(f);
  HelmholtzFields h;
  h.bu = u;
  h.bv = v;
  for (int s = 0; s < 2; ++s) {
    h.xu[s] = hu_[s].data();
    h.xv[s] = hv_[s].data();
  }
  h.open = open_.data();
  return h;
}

// Both iterates = f, every point; ||b||^2 and ||b - A b||^2 summed over
// this rank's face rows, then over the ranks.
Backend::HelmholtzNorms CudaBackend::helmholtz_start(VelocityField f, real g) {
  allocate_viscous_work();
  const auto [u, v] = velocity(f);
  const size_t bytes = g_.size() * sizeof(real);
  for (int s = 0; s < 2; ++s) {
    SIM_CUDA_CHECK(cudaMemcpyAsync(hu_[s].data(), u, bytes, cudaMemcpyDeviceToDevice, exec_.stream));
    SIM_CUDA_CHECK(cudaMemcpyAsync(hv_[s].data(), v, bytes, cudaMemcpyDeviceToDevice, exec_.stream));
  }
  newest_ = 0;
  HelmholtzPass p;
  p.g = g;
  p.newest = newest_;
  cuda::helmholtz_pass(exec_, so_, helmholtz_fields(f), p, viscous_partials(0), viscous_partials(1));
  const int blocks = helmholtz_blocks(exec_, so_);
  HelmholtzNorms n;
  n.r2 = ranks_->sum(sum_to_host(exec_, scratch(), viscous_partials(0), blocks));
  n.b2 = ranks_->sum(sum_to_host(exec_, scratch(), viscous_partials(1), blocks));
  return n;
}

bool CudaBackend::viscous_transform() const {
  if (viscous_transform_ < 0) viscous_transform_ = viscous_takes_transform(cfg_, k_, ranks_->ranks() > 1) ? 1 : 0;
  return viscous_transform_ == 1;
}

void CudaBackend::make_viscous_fft() {
  if (!viscous_fft_ && k_.nu > real(0) && cfg_.implicit_viscosity() && viscous_transform())
    viscous_fft_ = std::make_unique<cuda::CudaFftHelmholtz>(k_, exec_.stream, cfg_.dense_transform_cells);
}

// The newest iterate corrected by the transform solve of its residual,
// its halo filled.
void CudaBackend::helmholtz_correct(VelocityField f, real g) {
  if (!viscous_fft_) viscous_fft_ = std::make_unique<cuda::CudaFftHelmholtz>(k_, exec_.stream, cfg_.dense_transform_cells);
  viscous_fft_->set_stream(exec_.stream);
  const auto [u, v] = velocity(f);
  viscous_fft_->correct(0, u, hu_[newest_].data(), g, nullptr);
  viscous_fft_->correct(1, v, hv_[newest_].data(), g, nullptr);
  velocity_halo(hu_[newest_].data(), hv_[newest_].data());
}

// x_{k+1} into the older iterate, which becomes the newest; its halo
// filled as the velocity's (the exchange with the neighbour ranks included).
void CudaBackend::chebyshev_iteration(VelocityField f, real g, const ChebyshevWeights& w) {
  HelmholtzPass p;
  p.g = g;
  p.newest = newest_;
  p.w = w;
  p.iterate = true;
  cuda::helmholtz_pass(exec_, so_, helmholtz_fields(f), p, nullptr, nullptr);
  newest_ = 1 - newest_;
  velocity_halo(hu_[newest_].data(), hv_[newest_].data());
}

double CudaBackend::helmholtz_finish(VelocityField f, real g) {
  HelmholtzPass p;
  p.g = g;
  p.newest = newest_;
  cuda::helmholtz_pass(exec_, so_, helmholtz_fields(f), p, viscous_partials(0), nullptr);
  const double r2 = ranks_->sum(sum_to_host(exec_, scratch(), viscous_partials(0), helmholtz_blocks(exec_, so_)));
  const auto [u, v] = velocity(f);
  const size_t bytes = g_.size() * sizeof(real);
  SIM_CUDA_CHECK(cudaMemcpyAsync(u, hu_[newest_].data(), bytes, cudaMemcpyDeviceToDevice, exec_.stream));
  SIM_CUDA_CHECK(cudaMemcpyAsync(v, hv_[newest_].data(), bytes, cudaMemcpyDeviceToDevice, exec_.stream));
  return r2;
}

// The particle watchdog's counter comes back with the norm (one 8-byte
// copy more, in the synchronisation the step already waits for).
double CudaBackend::compute_rhs() {
  cuda::compute_rhs(exec_, so_, u_.data(), v_.data(), open_.data(), rhs_.data(), partials_.data());
  unsigned long long nonfinite = 0;
  const double s2 = sum_to_host(exec_, scratch(), partials_.data(), own_cell_blocks(exec_, so_),
                                counters_.data() + kNonFinite, nonfinite);
  nonfinite_ = ranks_->sum(static_cast<int64_t>(nonfinite));
  return std::sqrt(ranks_->sum(s2));
}

void CudaBackend::jacobi_sweep() {
  cuda::jacobi_sweep(exec_, so_, phi_.data(), rhs_.data(), open_.data(), phi2_.data());
  std::swap(phi_, phi2_);
  cuda::fill_pressure_halo(exec_, phi_.data());
}

// stencil=temporal: passes of up to kTemporalSweeps sweeps (the last the
// remainder), each out of place into phi2_ and swapped like a single
// sweep. Obstacles or a periodic side: single sweeps (the in-register
// halo rules reproduce only the wall/inflow/outflow ghosts).
void CudaBackend::jacobi_sweeps(int n) {
  bool passes = so_.variant == Stencil::temporal && !so_.solids;
  for (const BoundarySide* s : {&cfg_.left, &cfg_.right, &cfg_.bottom, &cfg_.top})
    passes = passes && s->kind != BoundaryKind::periodic;
  if (!passes) {
    for (int k = 0; k < n; ++k) jacobi_sweep();
    return;
  }
  for (int left = n; left > 0;) {
    const int s = std::min(left, kTemporalSweeps);
    cuda::jacobi_sweeps_temporal(exec_, phi_.data(), rhs_.data(), phi2_.data(), s);
    std::swap(phi_, phi2_);
    cuda::fill_pressure_halo(exec_, phi_.data());
    left -= s;
  }
}

void CudaBackend::sor_sweep(int color) {
  cuda::sor_sweep(exec_, so_, phi_.data(), rhs_.data(), open_.data(), color);
  cuda::fill_pressure_halo(exec_, phi_.data());
}

double CudaBackend::residual_norm() {
  cuda::residual(exec_, so_, phi_.data(), rhs_.data(), open_.data(), partials_.data());
  return std::sqrt(sum_to_host(exec_, scratch(), partials_.data(), static_cast<int>(partials_.size())));
}

void CudaBackend::project() {
  // the float64 pressure of the multigrid or transform solve, else phi
  if (poisson_ || fft_)
    cuda::project_from_double(exec_.stream, k_dev_.data(), g_.nx, exec_.row0, exec_.face_row_end(),
                              poisson_ ? poisson_->x() : x_.data(), open_.data(), u_.data(), v_.data());
  else
    cuda::project(exec_, so_, phi_.data(), open_.data(), u_.data(), v_.data());
  velocity_halo(u_.data(), v_.data());
}

// Through the constants' global copy: scale_dt_on_device reaches it inside
// a recorded step, where a unit's __constant__ block may hold the step's dt.
void CudaBackend::project_stored() {
  cuda::project_from_float(exec_.stream, k_dev_.data(), g_.nx, exec_.row0, exec_.face_row_end(), phi_.data(),
                           open_.data(), u_.data(), v_.data());
  velocity_halo(u_.data(), v_.data());
}

void CudaBackend::boundary_flux(VelocityField in, int part, real w_explicit, real w_viscous) {
  if (link_host_.links.empty()) return;
  const auto [u, v] = velocity(in);
  cuda::boundary_link_flux(exec_.stream, k_dev_.data(), links_.data(), link_first_.data(), u, v, open_.data(),
                           plan_.advection_clearance ? clearance_.data() : nullptr, w_explicit, w_viscous,
                           link_part(part));
}

void CudaBackend::boundary_pressure(int part, real w) {
  if (link_host_.links.empty()) return;
  double* out = link_part(part);
  if (poisson_ || fft_)
    cuda::boundary_link_pressure(exec_.stream, k_dev_.data(), links_.data(), link_first_.data(),
                                 poisson_ ? poisson_->x() : x_.data(), w, out);
  else
    cuda::boundary_link_pressure(exec_.stream, k_dev_.data(), links_.data(), link_first_.data(), phi_.data(), w,
                                 out);
}

// ---- transform solve (cuda/cuda_fft.hpp) ----
TransformOps& CudaBackend::transform_setup(const PoissonHierarchy& h) {
  if (!transform_refusal().empty()) throw std::logic_error("cuda: " + transform_refusal());
  x_.allocate(g_.size(), "float64 pressure");
  x_.zero(exec_.stream);
  fft_ = std::make_unique<CudaFftPoisson>(h, exec_.stream, cfg_.dense_transform_cells);
  return transform_;
}

Diagnostics CudaBackend::diagnostics() {
  Diagnostics d;
  const FluidSums f = fluid_sums(exec_, scratch(), u_.data(), v_.data(), open_.data());
  d.max_div = f.max_div;
  d.max_speed = f.max_speed;
  d.kinetic_energy = f.kinetic_energy;
  d.fluid_momentum[0] = f.momentum[0];
  d.fluid_momentum[1] = f.momentum[1];
  const ParticleSums p = particle_sums(exec_, scratch(), store_.current());
  d.particle_momentum[0] = p.momentum[0];
  d.particle_momentum[1] = p.momentum[1];
  d.counters = read_counters();
  // each rank's sums, added in rank order
  for (double* x : {&d.kinetic_energy, &d.fluid_momentum[0], &d.fluid_momentum[1], &d.particle_momentum[0],
                    &d.particle_momentum[1]})
    *x = ranks_->sum(*x);
  d.max_div = ranks_->max(d.max_div);
  d.max_speed = ranks_->max(d.max_speed);
  const double vsum[2] = {ranks_->sum(p.velocity[0]), ranks_->sum(p.velocity[1])};
  d.alive = ranks_->sum(static_cast<int64_t>(p.alive));
  d.particle_mean_v[0] = d.alive > 0 ? vsum[0] / d.alive : 0.0;
  d.particle_mean_v[1] = d.alive > 0 ? vsum[1] / d.alive : 0.0;
  d.counters.removed = ranks_->sum(d.counters.removed);
  d.counters.recycled = ranks_->sum(d.counters.recycled);
  if (measures_boundaries(cfg_)) {
    BoundarySums all;
    if (!link_host_.links.empty()) {
      link_sums_.download(&all.part[0][0][0], link_sums_.size(), exec_.stream);
      stream_.synchronize();
    }
    // each rank's rates, added in rank order
    set_boundary_diagnostics(all, static_cast<int>(cfg_.obstacles.size()), d,
                             [&](double x) { return ranks_->sum(x); });
  }
  return d;
}

// MGPCG (cuda/cuda_poisson.hpp), bound to this backend's arrays.
MultigridOps& CudaBackend::multigrid_setup(const PoissonHierarchy& h) {
  poisson_.reset();  // a second setup frees the first hierarchy before allocating
  poisson_ = std::make_unique<CudaPoisson>(h, exec_.stream, cfg_.block_level_cells, cfg_.paired_smoothing_cells,
                                           rows_->split() ? rows_.get() : nullptr, cfg_.replicated_cells);
  poisson_->bind(rhs_.data(), open_.data(), phi_.data());
  return *poisson_;
}

void CudaBackend::copy(DeviceBuffer<real>& dst, const DeviceBuffer<real>& src) {
  SIM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.bytes(), cudaMemcpyDeviceToDevice, exec_.stream));
}

ParticleCounters CudaBackend::read_counters() {
  unsigned long long* h = reinterpret_cast<unsigned long long*>(host_scalars_.data());
  counters_.download(h, kCounterCount, exec_.stream);
  stream_.synchronize();
  ParticleCounters c;
  c.removed = static_cast<int64_t>(h[kRemoved]);
  c.recycled = static_cast<int64_t>(h[kRecycled]);
  return c;
}

}  // namespace sim::cuda

namespace sim {

CudaMemoryNeed cuda_memory_need(const Config& asked, const Grid& grid, bool ranks) {
  const Config cfg = resolved_strategies(asked);  // as make_cuda_backend
  const cuda::DeviceInfo dev = cuda::query_device();
  const cuda::StencilOpts so =
      cuda::make_stencil_opts(cfg.stencil, cfg.block_x, cfg.block_y, !cfg.obstacles.empty(), cfg.advection);
  const cuda::MemoryPlan plan = cuda::plan_memory(cfg, grid, so, ranks);
  CudaMemoryNeed m;
  m.grid = plan.fields + plan.reductions + plan.multigrid + plan.transform + plan.viscous_transform;
  m.particles = plan.particles + plan.sorting + plan.deposit;
  size_t free_b = 0, total_b = 0;
  SIM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  m.free = free_b;
  m.device = cuda::describe(dev);
  SIM_CUDA_CHECK(cudaGetDeviceCount(&m.devices));
  return m;
}

std::unique_ptr<Backend> make_cuda_backend(const Config& asked, const Grid& grid, std::shared_ptr<const RankSplit> split) {
  // The strategies a loaded config has resolved already, a Config built in code here.
  const Config cfg = resolved_strategies(asked);
  bool shared_gpu = false;
  const SlabRows* ranks = split ? split->slabs() : nullptr;
  if (ranks && ranks->ranks() == 1) ranks = nullptr;
  if (ranks) {
    // What a run over GPU ranks does not do, in one line before anything is allocated.
    if (cfg.solver == PressureSolverKind::jacobi || cfg.solver == PressureSolverKind::sor)
      throw std::runtime_error("pressure.solver = \"" + std::string(to_string(cfg.solver)) +
                               "\" does not run over GPU ranks: multigrid (or auto) does");
    if (cfg.two_way && (cfg.deposit == Deposit::sorted || cfg.deposit == Deposit::gather))
      throw std::runtime_error("gpu.deposit = \"" + std::string(to_string(cfg.deposit)) +
                               "\" does not run over GPU ranks: fixed (the default) and atomic do");
    int devices = 0;
    const bool found = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
    if (!found) (void)cudaGetLastError();
    // Agreed before the collectives below, so a rank without one stops them all.
    if (ranks->comm().allreduce_min(static_cast<int64_t>(found)) == 0)
      throw std::runtime_error(found ? "no CUDA device available on another rank of the run"
                                     : "no CUDA device available on rank " + std::to_string(ranks->rank()));
    const cuda::RankDevice rd = cuda::rank_device(ranks->comm(), devices);
    SIM_CUDA_CHECK(cudaSetDevice(rd.ordinal));
    shared_gpu = rd.shared;
  }
  const cuda::DeviceInfo dev = cuda::query_device();
  const cuda::StencilOpts so =
      cuda::make_stencil_opts(cfg.stencil, cfg.block_x, cfg.block_y, !cfg.obstacles.empty(), cfg.advection);
  const cuda::MemoryPlan plan = cuda::plan_memory(cfg, grid, so, ranks != nullptr);
  split = rank_split_or_one(std::move(split), grid.ny, cfg.bottom.kind == BoundaryKind::periodic);
  cuda::require_free_memory(plan.total(), "this case (" + plan.breakdown() + ")", dev);
  if (grid.size() >= static_cast<size_t>(INT_MAX))
    throw std::runtime_error("cuda: a " + std::to_string(grid.nx) + " x " + std::to_string(grid.ny) +
                             " grid exceeds the backend's 32-bit indexing (pitch x rows < 2^31)");
  return std::make_unique<cuda::CudaBackend>(cfg, grid, dev, so, plan, std::move(split), shared_gpu);
}

}  // namespace sim
