// The CUDA backend: owns the state in device memory and runs each phase
// through the launchers of cuda/kernels.hpp on one stream. The step loop
// reads back only the scalars that decide dt and convergence.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda/cuda_fft.hpp"
#include "cuda/device.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/graph.hpp"
#include "cuda/kernels.hpp"
#include "cuda/memory_plan.hpp"
#include "cuda/particle_store.hpp"
#include "cuda/snapshot_staging.hpp"
#include "cuda/timer.hpp"
#include "cuda/velocity_textures.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/cuda_poisson.hpp"
#include "cuda/device_rows.hpp"
#include "sim/model/faces.hpp"
#include "sim/model/advection.hpp"
#include "sim/model/injection.hpp"
#include "sim/ranks/split_particles.hpp"

namespace sim {
namespace cuda {
namespace {

class CudaBackend final : public Backend, public DeviceStepping {
 public:
  // ranks: this process's rank of a run split into slabs of rows, or null
  // (one process); shared_gpu: some ranks of the run share a GPU.
  CudaBackend(const Config& cfg, const Grid& g, const DeviceInfo& dev, const StencilOpts& so, const MemoryPlan& plan,
              std::shared_ptr<const SlabRows> ranks, bool shared_gpu)
      : cfg_(cfg), g_(g), dev_(dev), so_(so), plan_(plan), timer_(stream_.get()), store_(cfg.layout, plan.capacity, plan.sorts),
        ranks_(std::move(ranks)) {
    exec_.stream = stream_.get();
    exec_.constants = cfg.constants;
    exec_.nx = g.nx;
    exec_.ny = g.ny;
    exec_.pitch = g.pitch;
    if (ranks_) {
      exec_.row0 = ranks_->j0();
      exec_.row_end = ranks_->j1();
      exec_.face_end = ranks_->face_end();
      rows_ = std::make_unique<DeviceRows>(ranks_, exec_.stream, shared_gpu, cfg.transport, cfg.overlap);
      shared_gpu_ = shared_gpu;
    }
    const size_t n = g.size();
    for (DeviceBuffer<real>* f : {&u_, &v_, &uh_, &vh_, &us_, &vs_, &phi_, &phi2_, &rhs_, &open_})
      f->allocate(n, "grid fields");
    if (plan.advection_clearance) clearance_.allocate(n, "advection clearance");
    k_dev_.allocate(1, "constants");
    exec_.k_dev = k_dev_.data();
    partials_.allocate(static_cast<size_t>(cell_blocks(exec_, so_)), "block partial sums");
    scalars_.allocate(8, "reduction results");
    reduce_ws_.allocate(1 << 16, "CUB reduction workspace");
    counters_.allocate(kCounterCount, "particle counters");
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
    if (cfg.sampling == Sampling::texture) {
      textures_ = VelocityTextures(u_.data(), v_.data(), g, dev_);
      if (plan.couples) stage_textures_ = VelocityTextures(us_.data(), vs_.data(), g, dev_);
    }
    if (cfg.sampling == Sampling::packed && plan.capacity > 0)
      for (DeviceBuffer<float4>* f : {&u4_, &v4_}) f->allocate(n, "packed velocity");
    inj_ = make_injection(cfg.inject);
    for (DeviceBuffer<real>* f : {&phi2_, &rhs_}) f->zero(exec_.stream);
    counters_.zero(exec_.stream);
    stream_.synchronize();
  }

  std::string name() const override {
    std::string s = "cuda: " + describe(dev_);
    if (ranks_)
      s += " per rank, " + std::to_string(ranks_->ranks()) + " MPI ranks in slabs of rows, " +
           (rows_->through_host() ? "rows through host memory and MPI" : "rows through NCCL") +
           (shared_gpu_ ? " (ranks share a GPU)" : "");
    return s;
  }
  std::string transform_refusal() const override { return cuda::transform_refusal(ranks_ != nullptr); }
  double comm_ms() override { return ranks_ ? ranks_->comm_ms() + rows_->comm_ms() : 0.0; }
  int64_t comm_calls() override { return ranks_ ? ranks_->comm_calls() + rows_->comm_calls() : 0; }

  std::string strategies() const override {
    return describe_strategies(cfg_, StrategyScope::cuda) + " block=" + std::to_string(so_.block_x) + "x" +
           std::to_string(so_.block_y);
  }

  void upload(const SimState& s) override {
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
    if (ranks_) {  // each slot alive on the rank that owns its particle only
      HostParticles mine = s.particles;
      keep_owned(*ranks_, mine.view());
      store_.upload(mine, st);
    } else {
      store_.upload(s.particles, st);
    }
    const bool root = !ranks_ || ranks_->rank() == 0;  // the counters are summed over ranks
    const unsigned long long c[kCounterCount] = {root ? static_cast<unsigned long long>(s.counters.removed) : 0ull,
                                                 root ? static_cast<unsigned long long>(s.counters.recycled) : 0ull};
    counters_.upload(c, kCounterCount, st);
    permuted_ = false;
    particle_steps_ = 0;
    nonfinite_ = 0;
    stream_.synchronize();
  }

  // Over ranks rank 0 gets the whole state (SlabRows::gather, gather_particles).
  void download(SimState& s) override {
    download_own(s);
    if (!ranks_) return;
    for (std::vector<real>* f : {&s.u, &s.v, &s.phi}) ranks_->gather(f->data());
    gather_particles(*ranks_, s);
  }
  void download_part(SimState& s, int& j0, int& j1) override {
    if (!ranks_) return Backend::download_part(s, j0, j1);
    download_own(s);
    j0 = ranks_->j0();
    j1 = ranks_->j1();
  }
  // This rank's copy of the state, nothing gathered.
  void download_own(SimState& s) {
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

  std::unique_ptr<PendingState> begin_download(SimState header) override {
    if (ranks_) return Backend::begin_download(std::move(header));  // gathered now, collectively
    if (!staging_) staging_.emplace(g_, cfg_.layout, plan_.capacity, dev_.ordinal);
    const SnapshotSources src{&u_, &v_, &phi_, &open_, &counters_, &store_, permuted_};
    if (std::unique_ptr<PendingState> p = staging_->begin(header, src, exec_.stream)) return p;
    download(header);  // no memory for staging: the synchronous path
    return ready_state(std::move(header));
  }

  // The device copy always (the float64 projection and the device clock
  // read it); the __constant__ blocks too when the kernels read those.
  void set_constants(const Constants& c) override {
    k_ = c;
    k_dev_.upload(&k_, 1, exec_.stream);
    if (cfg_.constants == ConstantsIn::constant) {
      upload_fluid_constants(c, exec_.stream);
      upload_pressure_constants(c, exec_.stream);
      upload_particle_constants(c, exec_.stream);
      upload_reduction_constants(c, exec_.stream);
    }
  }

  double max_velocity_rate() override {
    const double r = cuda::max_velocity_rate(exec_, scratch(), u_.data(), v_.data());
    return ranks_ ? ranks_->max(r) : r;
  }

  using Backend::fill_velocity_halo;
  void fill_velocity_halo(VelocityField f) override {
    const auto [u, v] = velocity(f);
    velocity_halo(u, v);
  }
  // The boundary fill, then over ranks the halo rows from the neighbours.
  void velocity_halo(real* u, real* v) {
    cuda::fill_velocity_halo(exec_, u, v);
    if (!rows_) return;
    rows_->together([&] {  // one exchange
      rows_->exchange_halo(u, Stagger::u_face);
      rows_->exchange_halo(v, Stagger::v_face);
    });
    if (cfg_.advection == AdvectionScheme::quick)  // the rows two out: after the halo rows they may come from
      rows_->together([&] {
        rows_->copy_rows(u, g_.pitch, ranks_->wide_plan());
        rows_->copy_rows(v, g_.pitch, ranks_->wide_plan());
      });
  }

  // The coupled step (sim/model/particle_physics.hpp): with two-way coupling the
  // fluid first takes the step's implicit drag (couple_particles: passes 1
  // to 3) and its halo is filled; then every particle moves against the
  // updated fluid, with coefficients from the same deposited mass.
  void step_particles(uint64_t first_id, int64_t count) override {
    if (plan_.capacity == 0) return;
    sort_if_due();
    move_particles();
    inject_particles(exec_, store_.current(), first_id, count, cfg_.seed, inj_, counters_.data(),
                     !ranks_ || ranks_->rank() == 0);
    if (ranks_) migrate(first_id, count);
  }

  // Over ranks, after the particle step: the particles another rank's slab
  // now holds go there (sort_out_particles, send_to_owners), into their
  // slots; injected particles stay on their owner only.
  void migrate(uint64_t first_id, int64_t count) {
    const cudaStream_t st = exec_.stream;
    if (leaving_.size() == 0) {
      leaving_.allocate(static_cast<size_t>(plan_.capacity), "particles leaving the slab");
      leaving_count_.allocate(1, "particles leaving the slab");
    }
    const SlabRowsC b{cfg_.ly, g_.ny, ranks_->j0(), ranks_->j1(), ranks_->periodic_y() ? 1 : 0};
    sort_out_particles(exec_, store_.current(), b, first_id, count, leaving_.data(), leaving_count_.data());
    unsigned int n = 0;
    leaving_count_.download(&n, 1, st);
    stream_.synchronize();
    std::vector<Particle> out(n);
    if (n > 0) leaving_.download(out.data(), n, st);
    stream_.synchronize();
    const std::vector<Particle> in = send_to_owners(*ranks_, out);
    if (in.empty()) return;
    arrivals_.reserve(in.size(), "particles arriving in the slab");
    arrivals_.upload(in.data(), in.size(), st);
    // a sorted store keeps its order: each arrival goes where its slot is
    store_arrivals(exec_, store_.current(), arrivals_.data(), static_cast<int>(in.size()),
                   permuted_ ? where_.data() : nullptr);
    stream_.synchronize();  // before `in` goes
  }

  // The same, the injection drawn on the device; the sort by cell comes
  // before (prepare_step_on_device, never recorded: it swaps the particle
  // banks), and what is recorded is recorded once per bank.
  void prepare_step_on_device() override {
    if (plan_.capacity > 0) sort_if_due();
  }

  void step_particles_on_device() override {
    if (plan_.capacity == 0) return;
    move_particles();
    if (cfg_.inject.rate > 0) inject_particles(exec_, store_.current(), step_state(), cfg_.seed, inj_, counters_.data());
  }

  void sort_if_due() {
    if (plan_.sorts && particle_steps_ % cfg_.sort_every == 0) sort_by_cell();
    ++particle_steps_;
  }

  // Passes 1 to 3 of the coupled step, then stage = the free fluid
  // (Backend::couple_fluid; no host decision in here).
  void couple_fluid() override {
    const bool two_way = k_.two_way != 0 && plan_.couples;
    if (two_way) {
      if (!plan_.fixed_deposit) {  // the fixed deposit assigns M
        mu_.zero(exec_.stream);
        mv_.zero(exec_.stream);
      }
      CouplingArgs c;
      c.f = {mu_.data(), mv_.data(), au_.data(), av_.data(), bu_.data(), bv_.data(), u_.data(), v_.data()};
      c.deposit = cfg_.deposit;
      if (plan_.sorted_deposit)
        c.pairs = DepositBuffers{pair_keys_.data(),     pair_keys_alt_.data(), unique_keys_.data(),
                                 pair_perm_.data(),     pair_perm_alt_.data(), pair_values_.data(),
                                 pair_values_b_.data(), pair_gathered_.data(), pair_sums_.data(),
                                 run_count_.data(),     plan_.deposit_sentinel, deposit_ws_.data(),
                                 deposit_ws_.bytes(),   static_cast<int>(plan_.pairs), plan_.deposit_key_bits};
      if (plan_.gather_deposit)
        c.gather = GatherBuffers{gather_keys_.data(),   gather_keys_alt_.data(), gather_slots_.data(),
                                 gather_slots_alt_.data(), gather_nodes_.data(), gather_wu_.data(),
                                 gather_wv_.data(),     gather_mass_.data(),     gather_qu_.data(),
                                 gather_qv_.data(),     plan_.gather_sentinel,   static_cast<int>(plan_.gather_nodes),
                                 plan_.gather_key_bits, deposit_ws_.data(),      deposit_ws_.bytes()};
      if (plan_.fixed_deposit)
        c.fixed = FixedBuffers{fixed_mu_.data(), fixed_mv_.data(), fixed_bu_.data(), fixed_bv_.data(),
                               fixed_au_.data(), fixed_av_.data(), fixed_bounds_.data()};
      c.capacity = static_cast<uint32_t>(plan_.capacity);
      c.open = open_.data();
      if (ranks_) fold_deposits(c);
      couple_particles(exec_, store_.current(), c, u_.data(), v_.data());
      velocity_halo(u_.data(), v_.data());
    }
    copy_velocity(VelocityField::current, VelocityField::stage);
    if (two_way)
      held_faces_to_stage(exec_, CouplingFields{mu_.data(), mv_.data(), au_.data(), av_.data(), bu_.data(), bv_.data()},
                          us_.data(), vs_.data());
  }

  // Every particle's step (no host decision in here but over ranks). Two-way:
  // against the free fluid in stage, plus its share of the first projection's
  // impulse, which the fluid then gets back (Backend::couple_fluid).
  void move_particles() {
    if (plan_.capacity == 0) return;
    const bool two_way = k_.two_way != 0 && plan_.couples;
    real* u = two_way ? us_.data() : u_.data();
    real* v = two_way ? vs_.data() : v_.data();
    ParticleStepArgs a;
    a.fluid.sampling = cfg_.sampling;
    a.fluid.u = u;
    a.fluid.v = v;
    a.fluid.tex_u = two_way ? stage_textures_.u() : textures_.u();
    a.fluid.tex_v = two_way ? stage_textures_.v() : textures_.v();
    if (cfg_.sampling == Sampling::packed) {
      pack_velocity(exec_, u, v, u4_.data(), v4_.data(), g_.size());
      a.fluid.u4 = u4_.data();
      a.fluid.v4 = v4_.data();
    }
    a.two_way = two_way;
    a.mu = two_way ? mu_.data() : nullptr;
    a.mv = two_way ? mv_.data() : nullptr;
    a.counters = counters_.data();
    if (!two_way) {
      cuda::step_particles(exec_, store_.current(), a);
      return;
    }
    ImpulseFields im;
    im.u_after = u_.data();
    im.v_after = v_.data();
    im.u_before = uh_.data();
    im.v_before = vh_.data();
    im.u_free = us_.data();
    im.v_free = vs_.data();
    im.took = took_.data();
    im.took_bound = took_bound_.data();
    im.took_u = took_u_.data();
    im.took_v = took_v_.data();
    im.partials = impulse_partials_.data();
    im.gained = impulse_gained_.data();
    const int64_t slots = store_.current().size();
    cuda::step_particles(exec_, store_.current(), a, &im);
    if (ranks_) {  // one scale for every rank's integers (a host round trip: ranks step on the host)
      unsigned int b = 0;
      took_bound_.download(&b, 1, exec_.stream);
      stream_.synchronize();
      b = static_cast<unsigned int>(ranks_->comm().allreduce_max(static_cast<int64_t>(b)));
      took_bound_.upload(&b, 1, exec_.stream);
      stream_.synchronize();
    }
    deposit_reaction(exec_, im, slots);
    if (ranks_) {  // what was taken near a slab's side belongs to the neighbour's faces
      rows_->fold(took_u_.data(), Stagger::u_face);
      rows_->fold(took_v_.data(), Stagger::v_face);
    }
    pay_reaction(exec_, im, open_.data(), slots);
    if (ranks_) {  // what no rank's faces could pay
      double g[2] = {0, 0};
      impulse_gained_.download(g, 2, exec_.stream);
      stream_.synchronize();
      for (double& x : g) x = ranks_->sum(x);
      impulse_gained_.upload(g, 2, exec_.stream);
      stream_.synchronize();
    }
    give_back_reaction(exec_, im, open_.data(), fluid_faces_[0], fluid_faces_[1]);
  }

  void copy_velocity(VelocityField from, VelocityField to) override {
    const auto [uf, vf] = velocity(from);
    const auto [ut, vt] = velocity(to);
    // over ranks the rows a stage reads: the rank's face rows and two either
    // side (with a periodic y quick's rows two out wrap: every row)
    size_t first = 0, count = g_.size();
    if (ranks_ && !ranks_->periodic_y()) {
      const int lo = std::max(-1, ranks_->j0() - 2), hi = std::min(g_.ny + 2, ranks_->face_end() + 2);
      first = static_cast<size_t>(lo + 1) * g_.pitch;
      count = static_cast<size_t>(hi - lo) * g_.pitch;
    }
    const size_t bytes = count * sizeof(real);
    SIM_CUDA_CHECK(cudaMemcpyAsync(ut + first, uf + first, bytes, cudaMemcpyDeviceToDevice, exec_.stream));
    SIM_CUDA_CHECK(cudaMemcpyAsync(vt + first, vf + first, bytes, cudaMemcpyDeviceToDevice, exec_.stream));
  }

  void rk_stage(VelocityField in, VelocityField base, VelocityField out, real a, real b, real cl) override {
    const auto [ui, vi] = velocity(in);
    const auto [ub, vb] = velocity(base);
    const auto [uo, vo] = velocity(out);
    cuda::momentum_stage(exec_, so_, ui, vi, ub, vb, open_.data(), clearance_.data(), uo, vo, a, b, cl);
    velocity_halo(uo, vo);
  }

  // The particle watchdog's counter comes back with the norm (one 8-byte
  // copy more, in the synchronisation the step already waits for).
  double compute_rhs() override {
    cuda::compute_rhs(exec_, so_, u_.data(), v_.data(), open_.data(), rhs_.data(), partials_.data());
    unsigned long long nonfinite = 0;
    const double s2 = sum_to_host(exec_, scratch(), partials_.data(), own_cell_blocks(exec_, so_),
                                  counters_.data() + kNonFinite, nonfinite);
    nonfinite_ = static_cast<int64_t>(nonfinite);
    if (!ranks_) return std::sqrt(s2);
    nonfinite_ = ranks_->sum(nonfinite_);
    return std::sqrt(ranks_->sum(s2));
  }
  int64_t nonfinite_particles() override { return nonfinite_; }

  void compute_rhs_on_device(int solve) override {
    cuda::compute_rhs(exec_, so_, u_.data(), v_.data(), open_.data(), rhs_.data(), partials_.data());
    sum_to_device(exec_, scratch(), partials_.data(), static_cast<int>(partials_.size()),
                  solve_field<double>(offsetof(StepRecord, rhs2), solve));
    SIM_CUDA_CHECK(cudaMemcpyAsync(solve_field<uint64_t>(offsetof(StepRecord, nonfinite), solve),
                                   counters_.data() + kNonFinite, sizeof(uint64_t), cudaMemcpyDeviceToDevice,
                                   exec_.stream));
  }

  void poisson_residual_on_device(int solve) override {
    if (!fft_) throw std::logic_error("cuda: the residual on the device is the transform solve's");
    fft_->residual_sum_to(rhs_.data(), x_.data(), open_.data(), solve_field<double>(offsetof(StepRecord, residual2), solve));
  }

  void fill_pressure_halo() override { cuda::fill_pressure_halo(exec_, phi_.data()); }

  void jacobi_sweep() override {
    cuda::jacobi_sweep(exec_, so_, phi_.data(), rhs_.data(), open_.data(), phi2_.data());
    std::swap(phi_, phi2_);
    cuda::fill_pressure_halo(exec_, phi_.data());
  }

  // stencil=temporal: passes of up to kTemporalSweeps sweeps (the last the
  // remainder), each out of place into phi2_ and swapped like a single
  // sweep. Obstacles or a periodic side: single sweeps (the in-register
  // halo rules reproduce only the wall/inflow/outflow ghosts).
  void jacobi_sweeps(int n) override {
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

  void sor_sweep(int color) override {
    cuda::sor_sweep(exec_, so_, phi_.data(), rhs_.data(), open_.data(), color);
    cuda::fill_pressure_halo(exec_, phi_.data());
  }

  double residual_norm() override {
    cuda::residual(exec_, so_, phi_.data(), rhs_.data(), open_.data(), partials_.data());
    return std::sqrt(sum_to_host(exec_, scratch(), partials_.data(), static_cast<int>(partials_.size())));
  }

  void project() override {
    // the float64 pressure of the multigrid or transform solve, else phi
    if (poisson_ || fft_)
      cuda::project_from_double(exec_.stream, k_dev_.data(), g_.nx, exec_.row0, exec_.face_row_end(),
                                poisson_ ? poisson_->x() : x_.data(), open_.data(), u_.data(), v_.data());
    else
      cuda::project(exec_, so_, phi_.data(), open_.data(), u_.data(), v_.data());
    velocity_halo(u_.data(), v_.data());
  }

  void boundary_flux(VelocityField in, int stage) override {
    if (link_host_.links.empty()) return;
    const auto [u, v] = velocity(in);
    cuda::boundary_link_flux(exec_.stream, k_dev_.data(), links_.data(), link_first_.data(), u, v, open_.data(),
                             plan_.advection_clearance ? clearance_.data() : nullptr,
                             link_part(stage == 0 ? kPartFlux0 : kPartFlux1));
  }
  void boundary_pressure(int stage) override {
    if (link_host_.links.empty()) return;
    double* out = link_part(stage == 0 ? kPartPressure0 : kPartPressure1);
    if (poisson_ || fft_)
      cuda::boundary_link_pressure(exec_.stream, k_dev_.data(), links_.data(), link_first_.data(),
                                   poisson_ ? poisson_->x() : x_.data(), out);
    else
      cuda::boundary_link_pressure(exec_.stream, k_dev_.data(), links_.data(), link_first_.data(), phi_.data(), out);
  }
  double* link_part(int part) { return link_sums_.data() + static_cast<size_t>(part) * kBoundaryOwners * 2; }

  // ---- transform solve (cuda/cuda_fft.hpp) ----
  TransformOps& transform_setup(const PoissonHierarchy& h) override {
    if (ranks_) throw std::logic_error("cuda: " + transform_refusal());
    x_.allocate(g_.size(), "float64 pressure");
    x_.zero(exec_.stream);
    fft_ = std::make_unique<CudaFftPoisson>(h, exec_.stream);
    return transform_;
  }

  Diagnostics diagnostics() override {
    Diagnostics d;
    const FluidSums f = fluid_sums(exec_, scratch(), u_.data(), v_.data(), open_.data());
    d.max_div = f.max_div;
    d.max_speed = f.max_speed;
    d.kinetic_energy = f.kinetic_energy;
    d.fluid_momentum[0] = f.momentum[0];
    d.fluid_momentum[1] = f.momentum[1];
    const ParticleSums p = particle_sums(exec_, scratch(), store_.current());
    d.alive = static_cast<int64_t>(p.alive);
    d.particle_momentum[0] = p.momentum[0];
    d.particle_momentum[1] = p.momentum[1];
    if (d.alive > 0) {
      d.particle_mean_v[0] = p.velocity[0] / d.alive;
      d.particle_mean_v[1] = p.velocity[1] / d.alive;
    }
    d.counters = read_counters();
    if (ranks_) {  // each rank's sums, added in rank order
      for (double* x : {&d.kinetic_energy, &d.fluid_momentum[0], &d.fluid_momentum[1], &d.particle_momentum[0],
                        &d.particle_momentum[1]})
        *x = ranks_->sum(*x);
      d.max_div = ranks_->max(d.max_div);
      d.max_speed = ranks_->max(d.max_speed);
      const double vsum[2] = {ranks_->sum(p.velocity[0]), ranks_->sum(p.velocity[1])};
      d.alive = ranks_->sum(d.alive);
      d.particle_mean_v[0] = d.alive > 0 ? vsum[0] / d.alive : 0.0;
      d.particle_mean_v[1] = d.alive > 0 ? vsum[1] / d.alive : 0.0;
      d.counters.removed = ranks_->sum(d.counters.removed);
      d.counters.recycled = ranks_->sum(d.counters.recycled);
    }
    if (measures_boundaries(cfg_)) {
      BoundarySums all;
      if (!link_host_.links.empty()) {
        link_sums_.download(&all.part[0][0][0], link_sums_.size(), exec_.stream);
        stream_.synchronize();
      }
      // each rank's rates, added in rank order
      set_boundary_diagnostics(all, static_cast<int>(cfg_.obstacles.size()), d,
                               [&](double x) { return ranks_ ? ranks_->sum(x) : x; });
    }
    return d;
  }

  // MGPCG (cuda/cuda_poisson.hpp), bound to this backend's arrays.
  MultigridOps& multigrid_setup(const PoissonHierarchy& h) override {
    poisson_.reset();  // a second setup frees the first hierarchy before allocating
    poisson_ = std::make_unique<CudaPoisson>(h, exec_.stream, cfg_.block_level_cells, cfg_.paired_smoothing_cells,
                                             rows_.get(), cfg_.replicated_cells);
    poisson_->bind(rhs_.data(), open_.data(), phi_.data());
    return *poisson_;
  }
  MultigridOps* multigrid() override { return poisson_.get(); }

  void pcg_start_on_device(int solve, double tolerance, int max_iterations) override {
    mg().start_on_device(rhs_.data(), open_.data(), solve_field<double>(offsetof(StepRecord, rhs2), solve), tolerance,
                         max_iterations, solve_field<int64_t>(offsetof(StepRecord, iterations), solve),
                         solve_field<double>(offsetof(StepRecord, relative), solve));
  }
  void pcg_step_on_device(int solve, double tolerance, int max_iterations) override {
    mg().step_on_device(tolerance, max_iterations, solve_field<int64_t>(offsetof(StepRecord, iterations), solve),
                        solve_field<double>(offsetof(StepRecord, relative), solve));
  }

  // A while node in the segment being recorded: its condition loaded from
  // the loop state now and at the end of every pass; the body recorded from
  // a second stream into the node's graph.
  void repeat_on_device(const std::function<void()>& body) override {
    const cudaStream_t s = exec_.stream;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    cudaGraph_t graph = nullptr;
    SIM_CUDA_CHECK(cudaStreamGetCaptureInfo(s, &status, nullptr, &graph));
    if (status != cudaStreamCaptureStatusActive)
      throw std::logic_error("cuda: repeat_on_device outside a recorded segment");
    cudaGraphConditionalHandle h{};
    SIM_CUDA_CHECK(cudaGraphConditionalHandleCreate(&h, graph, 0, cudaGraphCondAssignDefault));
    mg().load_condition(h);
    const cudaGraphNode_t* deps = nullptr;
    size_t n = 0;
    SIM_CUDA_CHECK(cudaStreamGetCaptureInfo(s, &status, nullptr, &graph, &deps, nullptr, &n));
    cudaGraphNodeParams cp{};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeWhile;
    cp.conditional.size = 1;
    cudaGraphNode_t node = nullptr;
    SIM_CUDA_CHECK(cudaGraphAddNode(&node, graph, deps, nullptr, n, &cp));
    SIM_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(s, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
    cudaGraph_t body_graph = cp.conditional.phGraph_out[0];
    const cudaStream_t b = body_stream_.get();
    SIM_CUDA_CHECK(cudaStreamBeginCaptureToGraph(b, body_graph, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
    exec_.stream = b;
    mg().set_stream(b);
    auto restore = [&] {
      exec_.stream = s;
      mg().set_stream(s);
    };
    try {
      body();
      mg().load_condition(h);
    } catch (...) {
      restore();
      (void)cudaStreamEndCapture(b, &body_graph);
      throw;
    }
    restore();
    SIM_CUDA_CHECK(cudaStreamEndCapture(b, &body_graph));
  }

  PhaseTimer& timer() override { return timer_; }
  void synchronize() override { stream_.synchronize(); }

  // ---- stepping without host round trips ----
  // Over ranks every scalar comes back to the host (the reductions add
  // every rank's through MPI): the host step.
  DeviceStepping* device_stepping() override { return ranks_ ? nullptr : this; }


  void start_device_clock(const DeviceClock& clock, const DtRule& rule) override {
    rule_ = rule;
    if (step_state_.size() == 0) step_state_.allocate(1, "device step state");
    DeviceStepState init{};
    init.clock = clock;
    step_state_.upload(&init, 1, exec_.stream);
    if (ring_.size() == 0) {
      ring_.allocate(kRing, "step records");
      ring_events_.clear();
      for (int k = 0; k < kRing; ++k) ring_events_.emplace_back(cudaEventDisableTiming | cudaEventBlockingSync);
    }
    head_ = tail_ = 0;
    stream_.synchronize();  // before `init` goes
    graphs_ = true;
  }

  void choose_dt_on_device() override {
    if (rule_.fixed_dt <= 0) velocity_rate_on_device(exec_, scratch(), u_.data(), v_.data(), step_state());
    cuda::choose_dt_on_device(exec_, rule_, step_state(), k_dev_.data());
  }

  void scale_dt_on_device(real factor) override {
    cuda::scale_dt_on_device(exec_, factor, step_state(), k_dev_.data());
  }

  void close_record() override {
    if (head_ - tail_ >= kRing) throw std::logic_error("cuda: more step records in flight than the ring holds");
    const int slot = static_cast<int>(head_ % kRing);
    SIM_CUDA_CHECK(cudaMemcpyAsync(ring_.data() + slot, record_field<StepRecord>(0), sizeof(StepRecord),
                                   cudaMemcpyDeviceToHost, exec_.stream));
    ring_events_[slot].record(exec_.stream);
    ++head_;
  }

  bool take_record(StepRecord& r, bool wait) override {
    if (tail_ == head_) return false;
    const int slot = static_cast<int>(tail_ % kRing);
    const cudaEvent_t ev = ring_events_[slot].get();
    if (wait) {
      SIM_CUDA_CHECK(cudaEventSynchronize(ev));
    } else {
      const cudaError_t q = cudaEventQuery(ev);
      if (q == cudaErrorNotReady) return false;
      SIM_CUDA_CHECK(q);
    }
    r = ring_.data()[slot];
    ++tail_;
    return true;
  }

  int records_in_flight() const override { return static_cast<int>(head_ - tail_); }

  // Recorded once per key and particle bank (the sort by cell swaps the
  // banks). A segment inside one being recorded is part of it. The first
  // launch after recording times what the timer logged while recording;
  // each later one points the graph's timer nodes at new pairs.
  void segment(int key, const std::function<void()>& ops) override {
    if (!graphs_ || recording_) {
      ops();
      return;
    }
    const std::pair<int, int> k{key, store_.bank()};
    auto it = graphs_by_key_.find(k);
    if (it == graphs_by_key_.end()) {
      Recorded r;
      recording_ = true;
      try {
        r.graph = GraphExec::record(exec_.stream, ops);
      } catch (...) {
        recording_ = false;
        (void)timer_.take_recorded();
        throw;
      }
      recording_ = false;
      r.timer_nodes = timer_.take_recorded();
      r.graph.launch(exec_.stream);
      graphs_by_key_.emplace(k, std::move(r));
      return;
    }
    timer_.replay(it->second.graph.get(), it->second.timer_nodes);
    it->second.graph.launch(exec_.stream);
  }

 private:
  CudaPoisson& mg() {
    if (!poisson_) throw std::logic_error("cuda: a multigrid primitive before poisson_setup");
    return *poisson_;
  }
  std::pair<real*, real*> velocity(VelocityField f) {
    return {of_field(f, u_, uh_, us_).data(), of_field(f, v_, vh_, vs_).data()};
  }

  ReduceScratch scratch() { return {&reduce_ws_, scalars_.data(), host_scalars_.data()}; }

  DeviceStepState* step_state() { return step_state_.data(); }
  // Solve `solve`'s entry of a two-element field of the device record.
  template <class T>
  T* solve_field(size_t offset, int solve) {
    return record_field<T>(offset + static_cast<size_t>(solve) * sizeof(T));
  }
  // A field of the device record, by byte offset into StepRecord.
  template <class T>
  T* record_field(size_t offset) {
    char* rec = reinterpret_cast<char*>(step_state()) + offsetof(DeviceStepState, rec);
    return reinterpret_cast<T*>(rec + offset);
  }


  // Over ranks, the hooks of the coupled step (CouplingArgs): the fixed
  // deposit's bounds made the largest over ranks (every rank then scales
  // alike), each deposit added onto the faces' owners (integer sums in the
  // fixed deposit: the same bits as one rank), and the mass copied back to
  // the ranks whose particles read it.
  void fold_deposits(CouplingArgs& c) {
    if (plan_.fixed_deposit) {
      c.after_bounds = [this] {
        unsigned int b[2] = {0, 0};
        fixed_bounds_.download(b, 2, exec_.stream);
        stream_.synchronize();
        for (unsigned int& x : b) x = static_cast<unsigned int>(ranks_->comm().allreduce_max(static_cast<int64_t>(x)));
        fixed_bounds_.upload(b, 2, exec_.stream);
        stream_.synchronize();
      };
      fold_hooks(c, fixed_mu_, fixed_mv_, fixed_bu_, fixed_au_, fixed_bv_, fixed_av_);
      return;
    }
    fold_hooks(c, mu_, mv_, bu_, au_, bv_, av_);
  }
  // The mass folded and copied back, the drag folded (u faces: bu, au; v faces: bv, av).
  template <class T>
  void fold_hooks(CouplingArgs& c, DeviceBuffer<T>& mu, DeviceBuffer<T>& mv, DeviceBuffer<T>& bu,
                  DeviceBuffer<T>& au, DeviceBuffer<T>& bv, DeviceBuffer<T>& av) {
    c.after_mass = [this, &mu, &mv] {
      for (auto [f, s] : {std::pair{&mu, Stagger::u_face}, std::pair{&mv, Stagger::v_face}}) {
        rows_->fold(f->data(), s);
        rows_->refresh(f->data(), s);
      }
    };
    c.after_drag = [this, &bu, &au, &bv, &av] {
      for (auto* f : {&bu, &au}) rows_->fold(f->data(), Stagger::u_face);
      for (auto* f : {&bv, &av}) rows_->fold(f->data(), Stagger::v_face);
    };
  }

  void copy(DeviceBuffer<real>& dst, const DeviceBuffer<real>& src) {
    SIM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.bytes(), cudaMemcpyDeviceToDevice, exec_.stream));
  }

  ParticleCounters read_counters() {
    unsigned long long* h = reinterpret_cast<unsigned long long*>(host_scalars_.data());
    counters_.download(h, kCounterCount, exec_.stream);
    stream_.synchronize();
    ParticleCounters c;
    c.removed = static_cast<int64_t>(h[kRemoved]);
    c.recycled = static_cast<int64_t>(h[kRecycled]);
    return c;
  }

  // Stable sort of the slots by cell (dead slots last), applied to every field.
  void sort_by_cell() {
    const int n = static_cast<int>(plan_.capacity);
    particle_cell_keys(exec_, store_.current(), sort_keys_.data(), sort_slots_.data());
    const bool alt = radix_sort_pairs(exec_.stream, sort_keys_.data(), sort_keys_alt_.data(), sort_slots_.data(),
                                      sort_slots_alt_.data(), n, plan_.cell_key_bits, sort_ws_.data(), sort_ws_.bytes());
    gather_particles(exec_.stream, store_.current(), store_.spare(), alt ? sort_slots_alt_.data() : sort_slots_.data());
    store_.swap();
    permuted_ = true;
    if (ranks_) {  // where each slot went, for the particles that arrive from other ranks
      if (where_.size() == 0) where_.allocate(static_cast<size_t>(plan_.capacity), "slot positions");
      slot_positions(exec_, store_.current(), where_.data());
    }
  }

  Config cfg_;
  Grid g_;
  DeviceInfo dev_;
  StencilOpts so_;
  MemoryPlan plan_;
  Stream stream_;
  Stream body_stream_;  // records the body of a loop on the device (repeat_on_device)
  Exec exec_;
  EventTimer timer_;
  Constants k_{};
  InjectionC inj_{};
  DeviceBuffer<Constants> k_dev_;
  DeviceBuffer<real> u_, v_, uh_, vh_, us_, vs_, phi_, phi2_, rhs_, open_;
  DeviceBuffer<real> clearance_;  // MemoryPlan::advection_clearance
  // The boundary links of this rank's rows and the step's four parts of
  // their sums (sim/model/boundary_flux.hpp; MemoryPlan::reductions)
  BoundaryLinks link_host_;
  DeviceBuffer<BoundaryLink> links_;
  DeviceBuffer<int> link_first_;
  DeviceBuffer<double> link_sums_;
  DeviceBuffer<double> partials_, scalars_;
  PinnedBuffer<double> host_scalars_{8};
  DeviceBuffer<unsigned char> reduce_ws_, sort_ws_, deposit_ws_;
  DeviceBuffer<unsigned long long> counters_;
  ParticleStore store_;
  DeviceBuffer<uint32_t> sort_keys_, sort_keys_alt_, sort_slots_, sort_slots_alt_;
  DeviceBuffer<real> mu_, mv_, au_, av_, bu_, bv_;  // two-way coupling: M, A, B per face (CouplingFields)
  DeviceBuffer<uint32_t> pair_keys_, pair_keys_alt_, unique_keys_, pair_perm_, pair_perm_alt_;
  DeviceBuffer<real> pair_values_, pair_values_b_, pair_gathered_, pair_sums_;
  DeviceBuffer<unsigned long long> fixed_mu_, fixed_mv_, fixed_bu_, fixed_bv_, fixed_au_, fixed_av_;  // deposit=fixed
  DeviceBuffer<unsigned int> fixed_bounds_;
  DeviceBuffer<int> run_count_;
  DeviceBuffer<uint32_t> gather_keys_, gather_keys_alt_, gather_slots_, gather_slots_alt_;  // deposit=gather
  DeviceBuffer<float2> gather_wu_, gather_wv_, gather_qu_, gather_qv_;
  DeviceBuffer<real> gather_mass_;
  DeviceBuffer<int2> gather_nodes_;
  VelocityTextures textures_, stage_textures_;  // sampling=texture: current, and stage (two-way)
  // two-way: the particles' share of the projection (ImpulseFields): per
  // slot what each took and their bound, per face the same deposited
  // (integers, zero between steps), the pay pass's partials and their sum
  DeviceBuffer<float4> took_;
  DeviceBuffer<unsigned int> took_bound_;
  DeviceBuffer<unsigned long long> took_u_, took_v_;
  DeviceBuffer<double> impulse_partials_, impulse_gained_;
  int64_t fluid_faces_[2] = {0, 0};                        // active faces not touching a solid, u and v
  DeviceBuffer<float4> u4_, v4_;  // sampling=packed
  std::unique_ptr<CudaPoisson> poisson_;  // after poisson_setup
  std::optional<SnapshotStaging> staging_;  // made at the first snapshot; a pending one keeps its own slot alive
  std::unique_ptr<CudaFftPoisson> fft_;  // after transform_setup: project() uses x_
  // The transform solve bound to this backend's arrays (TransformOps).
  struct Transform final : TransformOps {
    CudaBackend* b;
    explicit Transform(CudaBackend* backend) : b(backend) {}
    void fft_solve() override { b->fft_->solve(b->rhs_.data(), b->x_.data(), b->phi_.data()); }
    double poisson_residual_norm() override {
      return b->fft_->residual_norm(b->rhs_.data(), b->x_.data(), b->open_.data());
    }
  } transform_{this};
  DeviceBuffer<double> x_;               // float64 pressure of the transform solve
  // stepping on the device: the step's clock and record, the host ring
  // the records come back into, and the recorded segments
  static constexpr int kRing = 32;
  DtRule rule_{};
  DeviceBuffer<DeviceStepState> step_state_;
  PinnedBuffer<StepRecord> ring_;
  std::vector<Event> ring_events_;
  int64_t head_ = 0, tail_ = 0;
  bool graphs_ = false;
  bool recording_ = false;
  struct Recorded {
    GraphExec graph;
    std::vector<EventTimer::Node> timer_nodes;
  };
  std::map<std::pair<int, int>, Recorded> graphs_by_key_;
  std::shared_ptr<const SlabRows> ranks_;  // over ranks, else null
  std::unique_ptr<DeviceRows> rows_;       // over ranks: the rows' transport
  bool shared_gpu_ = false;
  DeviceBuffer<Particle> leaving_, arrivals_;     // over ranks: the particle migration
  DeviceBuffer<unsigned int> leaving_count_;
  bool permuted_ = false;  // slots out of canonical order since the last upload
  DeviceBuffer<uint32_t> where_;  // over ranks, once sorted: each slot's position (slot_positions)
  int64_t particle_steps_ = 0;
  int64_t nonfinite_ = 0;  // kNonFinite as of the last compute_rhs
};

}  // namespace
}  // namespace cuda

CudaMemoryNeed cuda_memory_need(const Config& asked, const Grid& grid, bool ranks) {
  const Config cfg = resolved_strategies(asked);  // as make_cuda_backend
  const cuda::DeviceInfo dev = cuda::query_device();
  const cuda::StencilOpts so =
      cuda::make_stencil_opts(cfg.stencil, cfg.block_x, cfg.block_y, !cfg.obstacles.empty());
  const cuda::MemoryPlan plan = cuda::plan_memory(cfg, grid, so, ranks);
  CudaMemoryNeed m;
  m.grid = plan.fields + plan.reductions + plan.multigrid + plan.transform;
  m.particles = plan.particles + plan.sorting + plan.deposit;
  size_t free_b = 0, total_b = 0;
  SIM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  m.free = free_b;
  m.device = cuda::describe(dev);
  SIM_CUDA_CHECK(cudaGetDeviceCount(&m.devices));
  return m;
}

std::unique_ptr<Backend> make_cuda_backend(const Config& asked, const Grid& grid, std::shared_ptr<const SlabRows> ranks) {
  // The strategies a loaded config has resolved already, a Config built in code here.
  const Config cfg = resolved_strategies(asked);
  bool shared_gpu = false;
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
  cuda::require_free_memory(plan.total(), "this case (" + plan.breakdown() + ")", dev);
  if (grid.size() >= static_cast<size_t>(INT_MAX))
    throw std::runtime_error("cuda: a " + std::to_string(grid.nx) + " x " + std::to_string(grid.ny) +
                             " grid exceeds the backend's 32-bit indexing (pitch x rows < 2^31)");
  return std::make_unique<cuda::CudaBackend>(cfg, grid, dev, so, plan, std::move(ranks), shared_gpu);
}

}  // namespace sim
