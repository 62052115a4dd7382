// SPDX-License-Identifier: MIT
// The CUDA backend's particle step and its two-way coupling with the fluid
// (sim/model/particle_physics.hpp, launched through cuda/kernels.hpp), and
// over ranks the deposits folded onto their owners and the particles that
// left the slab sent to theirs (DeviceRows, RankSplit).
#include "cuda/cuda_backend_impl.hpp"

namespace sim::cuda {

// The coupled step (sim/model/particle_physics.hpp): with two-way coupling the
// fluid first takes the step's implicit drag (couple_particles: passes 1
// to 3) and its halo is filled; then every particle moves against the
// updated fluid, with coefficients from the same deposited mass.
void CudaBackend::step_particles(uint64_t first_id, int64_t count) {
  if (plan_.capacity == 0) return;
  sort_if_due();
  move_particles();
  inject_particles(exec_, store_.current(), first_id, count, cfg_.seed, inj_, counters_.data(), ranks_->root());
  migrate(first_id, count);
}

// Over ranks, after the particle step: the particles another rank's slab
// now holds go there (sort_out_particles, send_to_owners), into their
// slots; injected particles stay on their owner only. Alone: nothing moves.
void CudaBackend::migrate(uint64_t first_id, int64_t count) {
  if (!rows_->split()) return;
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
  const std::vector<Particle> in = ranks_->send_to_owners(out);
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
void CudaBackend::prepare_step_on_device() {
  make_viscous_fft();
  if (plan_.capacity > 0) sort_if_due();
}

void CudaBackend::step_particles_on_device() {
  if (plan_.capacity == 0) return;
  move_particles();
  if (cfg_.inject.rate > 0) inject_particles(exec_, store_.current(), step_state(), cfg_.seed, inj_, counters_.data());
}

void CudaBackend::sort_if_due() {
  if (plan_.sorts && particle_steps_ % cfg_.sort_every == 0) sort_by_cell();
  ++particle_steps_;
}

// Passes 1 to 3 of the coupled step, then stage = the free fluid
// (Backend::couple_fluid; no host decision in here).
void CudaBackend::couple_fluid() {
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
    fold_deposits(c);
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
void CudaBackend::move_particles() {
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
  // one scale for every rank's integers (a host round trip: ranks step on the host)
  rows_->max_over_ranks(took_bound_.data(), 1);
  deposit_reaction(exec_, im, slots);
  // what was taken near a slab's side belongs to the neighbour's faces
  rows_->fold(took_u_.data(), Stagger::u_face);
  rows_->fold(took_v_.data(), Stagger::v_face);
  pay_reaction(exec_, im, open_.data(), slots);
  rows_->sum_over_ranks(impulse_gained_.data(), 2);  // what no rank's faces could pay
  give_back_reaction(exec_, im, open_.data(), fluid_faces_[0], fluid_faces_[1]);
}

// Over ranks, the hooks of the coupled step (CouplingArgs): the fixed
// deposit's bounds made the largest over ranks (every rank then scales
// alike), each deposit added onto the faces' owners (integer sums in the
// fixed deposit: the same bits as one rank), and the mass copied back to
// the ranks whose particles read it.
// Alone the hooks are not set: nothing to fold.
void CudaBackend::fold_deposits(CouplingArgs& c) {
  if (!rows_->split()) return;
  if (plan_.fixed_deposit) {
    c.after_bounds = [this] { rows_->max_over_ranks(fixed_bounds_.data(), 2); };
    fold_hooks(c, fixed_mu_, fixed_mv_, fixed_bu_, fixed_au_, fixed_bv_, fixed_av_);
    return;
  }
  fold_hooks(c, mu_, mv_, bu_, au_, bv_, av_);
}

// The mass folded and copied back, the drag folded (u faces: bu, au; v faces: bv, av).
template <class T>
void CudaBackend::fold_hooks(CouplingArgs& c, DeviceBuffer<T>& mu, DeviceBuffer<T>& mv, DeviceBuffer<T>& bu,
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

// Stable sort of the slots by cell (dead slots last), applied to every field.
void CudaBackend::sort_by_cell() {
  const int n = static_cast<int>(plan_.capacity);
  particle_cell_keys(exec_, store_.current(), sort_keys_.data(), sort_slots_.data());
  const bool alt = radix_sort_pairs(exec_.stream, sort_keys_.data(), sort_keys_alt_.data(), sort_slots_.data(),
                                    sort_slots_alt_.data(), n, plan_.cell_key_bits, sort_ws_.data(), sort_ws_.bytes());
  gather_particles(exec_.stream, store_.current(), store_.spare(), alt ? sort_slots_alt_.data() : sort_slots_.data());
  store_.swap();
  permuted_ = true;
  if (rows_->split()) {  // where each slot went, for the particles that arrive from other ranks
    if (where_.size() == 0) where_.allocate(static_cast<size_t>(plan_.capacity), "slot positions");
    slot_positions(exec_, store_.current(), where_.data());
  }
}

}  // namespace sim::cuda
