// SPDX-License-Identifier: MIT
// The reference backend's diagnostics and boundary sums: each rank's rows
// and particles, added over ranks in rank order through the rank split.
#include "sim/cpu/cpu_backend_impl.hpp"

#include <cmath>

namespace sim {


void CpuBackend::boundary_flux(VelocityField in, int part, real w_explicit, real w_viscous) {
  if (links_.links.empty()) return;
  const auto [u, v] = velocity(in);
  const real* clear = clearance_.empty() ? nullptr : clearance_.data();
  sum_links(part, [&](const BoundaryLink& l, int c) {
    return link_flux(l, c, u, v, open_.data(), clear, w_explicit, w_viscous, k_);
  });
}

void CpuBackend::boundary_pressure(int part, real w) {
  if (links_.links.empty()) return;
  const double weight = w;
  if (poisson_.active()) {
    const double* p = poisson_.x().data();
    sum_links(part, [&](const BoundaryLink& l, int c) { return weight * link_pressure(p, c, l.q, l.side, k_); });
  } else {
    const real* p = phi_.data();
    sum_links(part, [&](const BoundaryLink& l, int c) { return weight * link_pressure(p, c, l.q, l.side, k_); });
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
  // each rank's sums, added in rank order
  for (double* x : {&d.fluid_momentum[0], &d.fluid_momentum[1], &d.kinetic_energy, &d.particle_momentum[0],
                    &d.particle_momentum[1], &d.particle_mean_v[0], &d.particle_mean_v[1]})
    *x = ranks_->sum(*x);
  d.max_speed = ranks_->max(d.max_speed);
  d.alive = ranks_->sum(d.alive);
  d.counters.removed = ranks_->sum(d.counters.removed);
  d.counters.recycled = ranks_->sum(d.counters.recycled);
  if (d.alive > 0) {
    d.particle_mean_v[0] /= d.alive;
    d.particle_mean_v[1] /= d.alive;
  }
  if (measures_boundaries(cfg_))  // each rank's rates, added in rank order
    set_boundary_diagnostics(bsums_, static_cast<int>(cfg_.obstacles.size()), d,
                             [&](double x) { return ranks_->sum(x); });
  return d;
}

}  // namespace sim
