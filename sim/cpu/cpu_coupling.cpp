// SPDX-License-Identifier: MIT
// The reference backend's particle step and its two-way coupling with the
// fluid (sim/model/particle_physics.hpp): OpenMP over particles, every face
// receiving its deposits in particle order; over ranks the deposits near a
// slab's side folded onto their owners and the particles that left the
// slab sent to theirs (sim/ranks/rank_split.hpp).
#include "sim/cpu/cpu_backend_impl.hpp"

#include "sim/ranks/split_particles.hpp"

namespace sim {

void CpuBackend::step_particles(uint64_t first_id, int64_t count) {
  if (cfg_.layout == Layout::aos) {
    Arrivals a = particles_impl(ParticlesAoSView{aos_.data(), static_cast<int64_t>(aos_.size())}, first_id, count);
    if (a.dead || !a.incoming.empty()) settle(aos_, std::move(a.incoming), capacity_);
  } else {
    Arrivals a = particles_impl(parts_.view(), first_id, count);
    if (a.dead || !a.incoming.empty()) settle(parts_, std::move(a.incoming), capacity_);
  }
}

void CpuBackend::couple_fluid() {
  if (cfg_.layout == Layout::aos)
    deposit_and_couple(ParticlesAoSView{aos_.data(), static_cast<int64_t>(aos_.size())});
  else
    deposit_and_couple(parts_.view());
}


template <class View>
CpuBackend::Arrivals CpuBackend::particles_impl(View p, uint64_t first_id, int64_t count) {
  const int64_t n = p.size();
  // two-way: couple_fluid has run passes 1 to 3 (the free fluid in stage);
  // current is the projected first stage, saved what was projected. A rank
  // holding no particle still takes part in the collective give-back.
  const bool two_way = k_.two_way != 0 && capacity_ > 0;
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
  Arrivals a;
  a.dead = removed > 0;
  if (count > 0 && capacity_ > 0) a.dead |= inject(p, first_id, count, a.incoming);
  // the particles another rank's slab now holds go there (collective)
  const std::vector<Particle> leaving = leaving_particles(*ranks_, p);
  a.dead |= !leaving.empty();
  if (!ranks_->alone()) {
    const std::vector<Particle> arrived = ranks_->send_to_owners(leaving);
    a.incoming.insert(a.incoming.end(), arrived.begin(), arrived.end());
  }
  return a;
}

// Ids first_id .. first_id + count - 1 into their slots (id % capacity),
// as a run of one rank holding every slot does: the particle a slot held
// is recycled (on the rank that holds it), and so is a fresh one that a
// later id of the same step overwrites (on the rank that owns it). The
// fresh particles this rank owns go to `fresh`; returns whether a particle
// of the store was recycled (marked dead).
template <class View>
bool CpuBackend::inject(View p, uint64_t first_id, int64_t count, std::vector<Particle>& fresh) {
  const int64_t over = count > capacity_ ? count - capacity_ : 0;  // overwritten within the step
  for (int64_t q = 0; q < over; ++q) {
    const Particle f = injected_particle(cfg_.seed, first_id + static_cast<uint64_t>(q), inj_);
    if (f.alive && ranks_->owns_point(f.x, f.y)) ++counters_.recycled;
  }
  const uint64_t first = first_id + static_cast<uint64_t>(over);
  const int64_t kept = count - over, s0 = slot_of(first, capacity_);
  bool recycled = false;
  // the slots [s0, s0 + kept), wrapped: the store is in slot order
  const int64_t ranges[2][2] = {{s0, std::min(s0 + kept, capacity_)}, {0, std::max<int64_t>(s0 + kept - capacity_, 0)}};
  for (const auto& r : ranges)
    for (int64_t i = first_at_slot(p, r[0], capacity_); i < p.size() && slot_of(p.id(i), capacity_) < r[1]; ++i)
      if (p.alive(i)) {
        p.alive(i) = 0;
        ++counters_.recycled;
        recycled = true;
      }
  for (int64_t q = 0; q < kept; ++q) {
    const Particle f = injected_particle(cfg_.seed, first + static_cast<uint64_t>(q), inj_);
    if (ranks_->owns_point(f.x, f.y)) fresh.push_back(f);
  }
  return recycled;
}

// Passes 1 to 3 of the coupled step (sim/model/particle_physics.hpp): the
// particle mass onto M, each particle's implicit drag onto A and B (its
// loading sampled from M), then every fluid face's implicit update and the
// halo. Each deposit is gathered per particle in parallel and added in
// particle order by deposit_records.
template <class View>
void CpuBackend::deposit_and_couple(View p) {
  const int64_t n = p.size();
  if (capacity_ == 0) {  // the free fluid is the fluid (a rank holding none still folds with the others)
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
  // the mass near a slab's side belongs to the neighbour's faces, and is read back
  ranks_->fold(mu_.data(), Stagger::u_face);
  ranks_->fold(mv_.data(), Stagger::v_face);
  ranks_->refresh(mu_.data(), Stagger::u_face);
  ranks_->refresh(mv_.data(), Stagger::v_face);

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
  for (auto* f : {&bu_, &au_}) ranks_->fold(f->data(), Stagger::u_face);
  for (auto* f : {&bv_, &av_}) ranks_->fold(f->data(), Stagger::v_face);
  update_coupled_faces();
}

// After the particles took their share of the first projection's impulse
// (deposit_: per particle where it was and the momentum it took), the fluid
// gives it back where it was taken (reaction_share, sim/model/particle_physics.hpp),
// into the base of stages 2 and 3 (stage; kBasePayback, sim/model/time_scheme.hpp): deposited
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
    for (int q = 0; q < 2; ++q) fluid_faces_[q] = ranks_->sum(f[q]);
  }
  deposit_records<1>(n, {au_.data()}, {av_.data()});
  ranks_->fold(au_.data(), Stagger::u_face);
  ranks_->fold(av_.data(), Stagger::v_face);
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
      us_[c] -= kBasePayback * pu / k_.cell_mass;
      vs_[c] -= kBasePayback * pv / k_.cell_mass;
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
  left_x = ranks_->sum(left_x);
  left_y = ranks_->sum(left_y);
  const real du = kBasePayback * reaction_velocity(left_x, fluid_faces_[0], k_);
  const real dv = kBasePayback * reaction_velocity(left_y, fluid_faces_[1], k_);
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

}  // namespace sim
