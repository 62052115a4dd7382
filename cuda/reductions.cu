// Reductions to host scalars with CUB (deterministic run to run, in
// double): the block partial sums of the pressure kernels, the CFL rate,
// and the diagnostics. Each result comes back through pinned memory and is
// the only synchronisation of its call.
#include <cstring>

#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "cuda/constants.cuh"
#include "cuda/kernels.hpp"
#include "sim/faces.hpp"
#include "sim/fluid_physics.hpp"
#include "sim/halo.hpp"
#include "sim/particle_physics.hpp"

namespace sim::cuda {
namespace {

struct MaxOp {
  // NaN-propagating, so a blown-up face reaches next_dt (sim/types.hpp)
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

double max_velocity_rate(const Exec& e, const ReduceScratch& r, const real* u, const real* v) {
  const int n = (e.nx + 1) * (e.ny + 1);
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    const RateAt<decltype(kp)> rate{kp, u, v};
    run_cub(r, [&](void* w, size_t& bytes) {
      return cub::DeviceReduce::TransformReduce(w, bytes, thrust::counting_iterator<int>(0), r.d_out, n, MaxOp{}, rate,
                                                0.0, e.stream);
    });
  });
  return read_back<double>(e, r);
}

FluidSums fluid_sums(const Exec& e, const ReduceScratch& r, const real* u, const real* v, const real* open) {
  FluidSums out{};
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    const int faces = (e.nx + 1) * (e.ny + 1), cells = e.nx * e.ny;
    const FaceSumsAt<decltype(kp)> at_face{kp, u, v};
    FaceSums* d_faces = reinterpret_cast<FaceSums*>(r.d_out);
    run_cub(r, [&](void* w, size_t& bytes) {
      return cub::DeviceReduce::TransformReduce(w, bytes, thrust::counting_iterator<int>(0), d_faces, faces,
                                                FaceSumOp{}, at_face, FaceSums{{0, 0}, 0, 0}, e.stream);
    });
    const FaceSums fs = read_back<FaceSums>(e, r);
    const DivAt<decltype(kp)> div{kp, u, v, open};
    run_cub(r, [&](void* w, size_t& bytes) {
      return cub::DeviceReduce::TransformReduce(w, bytes, thrust::counting_iterator<int>(0), r.d_out, cells, MaxOp{},
                                                div, 0.0, e.stream);
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
