// SPDX-License-Identifier: MIT
// Reductions to host scalars with CUB (deterministic run to run, in
// double): the block partial sums of the pressure kernels, the CFL rate,
// and the diagnostics. Each result comes back through pinned memory and is
// the only synchronisation of its call.
#include <cstring>

#include <math_constants.h>

#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "cuda/constants.cuh"
#include "cuda/kernels.hpp"
#include "sim/model/faces.hpp"
#include "sim/model/fluid_physics.hpp"
#include "sim/model/halo.hpp"
#include "sim/model/coupling_physics.hpp"

namespace sim::cuda {
namespace {

struct MaxOp {
  // NaN-propagating, so a blown-up face reaches next_dt (sim/model/types.hpp)
  __host__ __device__ double operator()(double a, double b) const { return max_nan(a, b); }
};

// Ask CUB for its temporary storage, grow the workspace if needed, run.
template <class Call>
void run_cub(const ReduceScratch& r, Call call) {
  size_t need = 0;
  SIM_CUDA_CHECK(call(nullptr, need));
  r.workspace->reserve(need, "CUB reduction workspace");
  size_t have = r.workspace->bytes();
  SIM_CUDA_CHECK(call(r.workspace->data(), have));
}

template <class T>
T read_back(const Exec& e, const ReduceScratch& r) {
  static_assert(sizeof(T) <= 8 * sizeof(double), "ReduceScratch holds 8 doubles");
  SIM_CUDA_CHECK(cudaMemcpyAsync(r.h_out, r.d_out, sizeof(T), cudaMemcpyDeviceToHost, e.stream));
  SIM_CUDA_CHECK(cudaStreamSynchronize(e.stream));
  T out;
  std::memcpy(&out, r.h_out, sizeof(T));
  return out;
}

// |u|/dx + |v|/dy at face (i, j) = (idx % (nx + 1), idx / (nx + 1)), as the
// CPU: each product in float, the sum in double.
template <class KP>
struct RateAt {
  KP kp;
  const real* u;
  const real* v;
  __device__ double operator()(int idx) const {
    const Constants& k = kp.get();
    const int i = idx % (k.nx + 1), j = idx / (k.nx + 1);
    return face_rate(u, v, i, j, at(k, i, j), k);
  }
};

struct FaceSumOp {
  __host__ __device__ FaceSums operator()(const FaceSums& a, const FaceSums& b) const {
    return {{a.momentum[0] + b.momentum[0], a.momentum[1] + b.momentum[1]},
            a.kinetic_energy + b.kinetic_energy,
            a.max_speed > b.max_speed ? a.max_speed : b.max_speed};
  }
};
// The owned faces of face point idx.
template <class KP>
struct FaceSumsAt {
  KP kp;
  const real* u;
  const real* v;
  __device__ FaceSums operator()(int idx) const {
    const Constants& k = kp.get();
    const int i = idx % (k.nx + 1), j = idx / (k.nx + 1);
    FaceSums s{{0, 0}, 0, 0};
    add_face_point(s, i, j, at(k, i, j), u, v, k);
    return s;
  }
};

// |div u| of fluid cell idx = i + j nx.
template <class KP>
struct DivAt {
  KP kp;
  const real* u;
  const real* v;
  const real* open;
  __device__ double operator()(int idx) const {
    const Constants& k = kp.get();
    const int c = at(k, idx % k.nx, idx / k.nx);
    if (open[c] == real(0)) return 0.0;
    return fabs(static_cast<double>(divergence_point(u[c], u[c + 1], v[c], v[c + k.pitch], k)));
  }
};

struct ParticleSumsOp {
  __host__ __device__ ParticleSums operator()(const ParticleSums& a, const ParticleSums& b) const {
    return {{a.momentum[0] + b.momentum[0], a.momentum[1] + b.momentum[1]},
            {a.velocity[0] + b.velocity[0], a.velocity[1] + b.velocity[1]},
            a.alive + b.alive};
  }
};
template <class KP, class View>
struct ParticleSumsAt {
  KP kp;
  View p;
  __device__ ParticleSums operator()(int64_t s) const {
    if (!p.alive(s)) return {{0, 0}, {0, 0}, 0};
    const double m = particle_mass(p.d(s), kp.get());
    return {{m * p.vx(s), m * p.vy(s)}, {double(p.vx(s)), double(p.vy(s))}, 1.0};
  }
};

}  // namespace

void upload_reduction_constants(const Constants& c, cudaStream_t s) { upload_unit_constants(c, s); }

// The units whose kernels read dt (the reductions' do not).
void copy_dt_to_constants(const Constants* k_dev, cudaStream_t s) {
  copy_fluid_dt(k_dev, s);
  copy_pressure_dt(k_dev, s);
  copy_particle_dt(k_dev, s);
}

namespace {

// Simulation::next_dt and injection_count: the same choose_dt and
// injected_between (sim/model/stability.hpp), in double with no contraction (the
// build passes -fmad=false), so the device clock stays bitwise the host's.
__global__ void choose_dt_kernel(DtRule rule, DeviceStepState* __restrict__ st, Constants* __restrict__ k) {
  const double field_rate = rule.fixed_dt > 0 ? 0.0 : st->rate;
  DeviceClock& clock = st->clock;
  const DtChoice choice = choose_dt(rule, field_rate, clock.time);
  const double dt = choice.dt;
  const int64_t viscous = choice.viscous ? 1 : 0;
  const double t0 = clock.time, t1 = t0 + dt;
  int64_t count = 0;
  const int64_t overflow = injected_between(rule.inject_rate, t0, t1, count) ? 0 : 1;
  st->inject_first = clock.next_id;
  st->inject_count = count;
  clock.next_id += static_cast<uint64_t>(count);
  // The end time itself after the last step (Simulation::step: time_ alike).
  // The host never queues a step from the end (Simulation::end_in_reach).
  clock.time = clock_after(rule, t0, dt);
  clock.step += 1;
  StepRecord& r = st->rec;
  r.step = clock.step;
  r.time = clock.time;
  r.dt = dt;
  r.rate = field_rate;
  r.next_id = clock.next_id;
  r.viscous_limited = viscous;
  r.dt_max_limited = choice.capped ? 1 : 0;
  r.inject_overflow = overflow;
  for (int s = 0; s < kStepSolves; ++s) {
    r.rhs2[s] = 0;
    r.residual2[s] = 0;
    r.nonfinite[s] = 0;
    r.iterations[s] = 0;
    r.relative[s] = 0;
  }
  for (int s = 0; s < kViscousSolves; ++s) {
    r.viscous_iterations[s] = 0;
    r.viscous_relative[s] = 0;
  }
  k->dt = static_cast<real>(dt);
}

__global__ void scale_dt_kernel(real factor, const DeviceStepState* __restrict__ st, Constants* __restrict__ k) {
  k->dt = static_cast<real>(static_cast<double>(factor) * st->rec.dt);
}

}  // namespace

void choose_dt_on_device(const Exec& e, const DtRule& rule, DeviceStepState* state, Constants* k_dev) {
  choose_dt_kernel<<<1, 1, 0, e.stream>>>(rule, state, k_dev);
  SIM_CUDA_CHECK_LAUNCH("choose_dt_kernel");
  if (e.constants == ConstantsIn::constant) copy_dt_to_constants(k_dev, e.stream);
}

void scale_dt_on_device(const Exec& e, real factor, const DeviceStepState* state, Constants* k_dev) {
  scale_dt_kernel<<<1, 1, 0, e.stream>>>(factor, state, k_dev);
  SIM_CUDA_CHECK_LAUNCH("scale_dt_kernel");
  // only the solve and the projection run at the scaled dt: the pressure unit's
  // kernels (the float64 projection reads k_dev), until scale_dt_on_device(1)
  // restores the step's dt (not cumulative: factor times the record's dt)
  if (e.constants == ConstantsIn::constant) copy_pressure_dt(k_dev, e.stream);
}

void sum_to_device(const Exec& e, const ReduceScratch& r, const double* values, int n, double* out) {
  run_cub(r, [&](void* w, size_t& bytes) { return cub::DeviceReduce::Sum(w, bytes, values, out, n, e.stream); });
}

double sum_to_host(const Exec& e, const ReduceScratch& r, const double* values, int n) {
  run_cub(r, [&](void* w, size_t& bytes) { return cub::DeviceReduce::Sum(w, bytes, values, r.d_out, n, e.stream); });
  return read_back<double>(e, r);
}

double sum_to_host(const Exec& e, const ReduceScratch& r, const double* values, int n,
                   const unsigned long long* count, unsigned long long& count_out) {
  run_cub(r, [&](void* w, size_t& bytes) { return cub::DeviceReduce::Sum(w, bytes, values, r.d_out, n, e.stream); });
  // Queued before read_back's synchronisation, so both land with one wait.
  unsigned long long* h_count = reinterpret_cast<unsigned long long*>(r.h_out + 1);
  SIM_CUDA_CHECK(cudaMemcpyAsync(h_count, count, sizeof *count, cudaMemcpyDeviceToHost, e.stream));
  const double sum = read_back<double>(e, r);
  count_out = *h_count;
  return sum;
}

namespace {
void rate_to(const Exec& e, const ReduceScratch& r, const real* u, const real* v, double* out) {
  // the face rows this rank updates (every row on one rank)
  const int first = e.row0 * (e.nx + 1), n = (e.face_row_end() - e.row0) * (e.nx + 1);
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    const RateAt<decltype(kp)> rate{kp, u, v};
    run_cub(r, [&](void* w, size_t& bytes) {
      return cub::DeviceReduce::TransformReduce(w, bytes, thrust::counting_iterator<int>(first), out, n, MaxOp{}, rate,
                                                0.0, e.stream);
    });
  });
}
}  // namespace

double max_velocity_rate(const Exec& e, const ReduceScratch& r, const real* u, const real* v) {
  rate_to(e, r, u, v, r.d_out);
  return read_back<double>(e, r);
}

void velocity_rate_on_device(const Exec& e, const ReduceScratch& r, const real* u, const real* v,
                             DeviceStepState* state) {
  rate_to(e, r, u, v, &state->rate);
}

FluidSums fluid_sums(const Exec& e, const ReduceScratch& r, const real* u, const real* v, const real* open) {
  FluidSums out{};
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    // the rows this rank updates (every row on one rank)
    const int faces = (e.face_row_end() - e.row0) * (e.nx + 1), cells = (e.cell_row_end() - e.row0) * e.nx;
    const int first_face = e.row0 * (e.nx + 1), first_cell = e.row0 * e.nx;
    const FaceSumsAt<decltype(kp)> at_face{kp, u, v};
    FaceSums* d_faces = reinterpret_cast<FaceSums*>(r.d_out);
    run_cub(r, [&](void* w, size_t& bytes) {
      return cub::DeviceReduce::TransformReduce(w, bytes, thrust::counting_iterator<int>(first_face), d_faces, faces,
                                                FaceSumOp{}, at_face, FaceSums{{0, 0}, 0, 0}, e.stream);
    });
    const FaceSums fs = read_back<FaceSums>(e, r);
    const DivAt<decltype(kp)> div{kp, u, v, open};
    run_cub(r, [&](void* w, size_t& bytes) {
      return cub::DeviceReduce::TransformReduce(w, bytes, thrust::counting_iterator<int>(first_cell), r.d_out, cells,
                                                MaxOp{}, div, 0.0, e.stream);
    });
    out.momentum[0] = fs.momentum[0];
    out.momentum[1] = fs.momentum[1];
    out.kinetic_energy = fs.kinetic_energy;
    out.max_speed = fs.max_speed;
    out.max_div = read_back<double>(e, r);
  });
  return out;
}

ParticleSums particle_sums(const Exec& e, const ReduceScratch& r, const DeviceParticles& p) {
  const int64_t n = p.size();
  if (n == 0) return ParticleSums{{0, 0}, {0, 0}, 0};
  ParticleSums* d_sums = reinterpret_cast<ParticleSums*>(r.d_out);
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    auto reduce = [&](auto view) {
      const ParticleSumsAt<decltype(kp), decltype(view)> at_slot{kp, view};
      run_cub(r, [&](void* w, size_t& bytes) {
        return cub::DeviceReduce::TransformReduce(w, bytes, thrust::counting_iterator<int64_t>(0), d_sums, n,
                                                  ParticleSumsOp{}, at_slot, ParticleSums{{0, 0}, {0, 0}, 0},
                                                  e.stream);
      });
    };
    if (p.layout == Layout::aos) reduce(p.aos);
    else reduce(p.soa);
  });
  return read_back<ParticleSums>(e, r);
}

}  // namespace sim::cuda
