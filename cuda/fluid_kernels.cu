// SPDX-License-Identifier: MIT
// Fluid stencils on the MAC faces: the momentum stage of the time step
// (advection, diffusion, body force), the pressure-gradient projection, the
// velocity halo, and the passes of the implicit viscous solve. Each stencil
// of the step is written once over a memory-access policy (cuda/access.cuh)
// and calls the same physics functions as CpuBackend, in the same order per
// face (the viscous passes read plainly, through FaceNeighbours, as the CPU).
#include <algorithm>

#include "cuda/access.cuh"
#include "sim/model/faces.hpp"
#include "sim/model/fluid_physics.hpp"
#include "sim/model/halo.hpp"
#include "sim/model/viscous.hpp"

namespace sim::cuda {
namespace {

// Without obstacles no mask is read.
template <class A, bool kSolids>
__device__ __forceinline__ bool solid_u_at(typename A::In open, int c) {
  if constexpr (!kSolids) return false;
  else return solid_u(Loaded<A>{open}, c);
}
template <class A, bool kSolids>
__device__ __forceinline__ bool solid_v_at(typename A::In open, int c, int pitch) {
  if constexpr (!kSolids) return false;
  else return solid_v(Loaded<A>{open}, c, pitch);
}

enum { kU = 0, kV = 1 };

// The advection reach of a u (v) face: none for the central scheme (R = 1,
// which reads no reach), else from the clearance field with obstacles.
template <class A, bool kSolids, int R>
__device__ __forceinline__ AdvectionReach stage_reach_u(int i, int j, int c, typename A::In clear, const Constants& k) {
  if constexpr (R < 2) return AdvectionReach{};
  else if constexpr (kSolids) return reach_u(i, j, c, Loaded<A>{clear}, k);
  else return reach_u(i, j, c, AllClear{}, k);
}
template <class A, bool kSolids, int R>
__device__ __forceinline__ AdvectionReach stage_reach_v(int i, int j, int c, typename A::In clear, const Constants& k) {
  if constexpr (R < 2) return AdvectionReach{};
  else if constexpr (kSolids) return reach_v(i, j, c, Loaded<A>{clear}, k);
  else return reach_v(i, j, c, AllClear{}, k);
}

// out = a base + b in + dt (c (A + f)(in) + cv nu lap(in)) (stage_point,
// momentum_u / momentum_v of sim/model/fluid_physics.hpp); fields 0 = u_in,
// 1 = v_in; base read only when a != 0. R: the neighbourhood's radius, 2 for fluid.advection = quick.
template <class A, class KP, bool kSolids, int R>
__global__ void stage_kernel(KP kp, Region r, typename A::In ui, typename A::In vi, typename A::In ub,
                             typename A::In vb, typename A::In open, typename A::In clear, typename A::Out uo,
                             typename A::Out vo, real a, real b, real cl, real cv) {
  const Constants& k = kp.get();
  const Point pt = thread_point(r);
  const int c = at(k, pt.i, pt.j);
  const typename A::In f[2] = {ui, vi};
  const Neighbourhood<A, 2, R> n(f, pt, c, r, k);
  if (!pt.valid) return;
  const int P = k.pitch;
  if (active_u(pt.i, pt.j, k))
    uo[c] = solid_u_at<A, kSolids>(open, c)
                ? real(0)
                : stage_point(a != real(0) ? A::load(ub, c) : real(0), n(kU, 0, 0),
                              momentum_u(n, stage_reach_u<A, kSolids, R>(pt.i, pt.j, c, clear, k),
                                         solid_u_at<A, kSolids>(open, c - P), solid_u_at<A, kSolids>(open, c + P), k),
                              a, b, cl, cv, k);
  if (active_v(pt.i, pt.j, k))
    vo[c] = solid_v_at<A, kSolids>(open, c, P)
                ? real(0)
                : stage_point(a != real(0) ? A::load(vb, c) : real(0), n(kV, 0, 0),
                              momentum_v(n, stage_reach_v<A, kSolids, R>(pt.i, pt.j, c, clear, k),
                                         solid_v_at<A, kSolids>(open, c - 1, P),
                                         solid_v_at<A, kSolids>(open, c + 1, P), k),
                              a, b, cl, cv, k);
}

// u = u** - dt dphi/dx across the face, v likewise in y; field 0 = phi.
template <class A, class KP, bool kSolids>
__global__ void project_kernel(KP kp, Region r, typename A::In phi, typename A::In open, typename A::Out u,
                               typename A::Out v) {
  const Constants& k = kp.get();
  const Point pt = thread_point(r);
  const int c = at(k, pt.i, pt.j);
  const typename A::In f[1] = {phi};
  const Neighbourhood<A, 1> n(f, c, r, k);
  if (!pt.valid) return;
  if (active_u(pt.i, pt.j, k))
    u[c] = solid_u_at<A, kSolids>(open, c) ? real(0) : project_point(u[c], n.at(0, -1, 0), n.at(0, 0, 0), k.inv_dx, k);
  if (active_v(pt.i, pt.j, k))
    v[c] = solid_v_at<A, kSolids>(open, c, k.pitch) ? real(0)
                                                  : project_point(v[c], n.at(0, 0, -1), n.at(0, 0, 0), k.inv_dy, k);
}

// x sides row by row (j in [0, ny]), then y sides column by column
// (i in [-1, nx + 1]): two launches, as corners take the y-side values.
template <class KP>
__global__ void velocity_halo_x_kernel(KP kp, real* u, real* v) {
  const Constants& k = kp.get();
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j <= k.ny) halo_velocity_x(u, v, j, k);
}
template <class KP>
__global__ void velocity_halo_y_kernel(KP kp, real* u, real* v) {
  const Constants& k = kp.get();
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) - 1;
  if (i <= k.nx + 1) halo_velocity_y(u, v, i, k);
}

// Both at once in one block, for grids whose rows and columns fit it: the
// x sides of every row, a barrier, then the y sides (the order of the two
// launches above, so the corners take the y-side values): one launch
// instead of two where the step is launch-bound.
template <class KP>
__global__ void velocity_halo_kernel(KP kp, real* u, real* v) {
  const Constants& k = kp.get();
  for (int j = static_cast<int>(threadIdx.x); j <= k.ny; j += static_cast<int>(blockDim.x)) halo_velocity_x(u, v, j, k);
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x) - 1; i <= k.nx + 1; i += static_cast<int>(blockDim.x))
    halo_velocity_y(u, v, i, k);
}

// ---- the implicit viscous solve (sim/model/viscous.hpp) ----

// A pass's g, newest iterate and weights, from the device state where it
// has one; false: an iteration past the plan, nothing to do.
__device__ __forceinline__ bool resolve_pass(HelmholtzPass& p) {
  if (p.st == nullptr) return true;
  const ViscousDeviceState& st = *p.st;
  p.g = st.g;
  if (p.iterate) {
    const int it = st.it + p.offset;
    if (it >= st.plan.iterations) return false;
    p.newest = it & 1;
    p.w = chebyshev_weights(st.plan, it);
  } else if (p.newest < 0) {
    p.newest = st.plan.iterations & 1;
  }
  return true;
}

// One pass of the solve over the active faces not on a solid: the
// residual b - A x of each at x[newest] (FaceNeighbours: plain loads, the
// CPU's neighbourhood), the new iterate where p.iterate, the block sums of
// r^2 and b^2 where asked.
template <class KP>
__global__ void helmholtz_kernel(KP kp, Region r, HelmholtzFields f, HelmholtzPass p, double* r_partials,
                                 double* b_partials) {
  const Constants& k = kp.get();
  if (!resolve_pass(p)) return;  // the same for every thread of the launch
  const Point pt = thread_point(r);
  double acc = 0, bacc = 0;
  if (pt.valid) {
    const int c = at(k, pt.i, pt.j);
    const int P = k.pitch;
    const bool solids = k.has_solids != 0;
    const real* xu = f.xu[p.newest];
    const real* xv = f.xv[p.newest];
    real* const ou = f.xu[1 - p.newest];
    real* const ov = f.xv[1 - p.newest];
    const FaceNeighbours n{xu, xv, c, pt.i, pt.j, k};
    if (active_u(pt.i, pt.j, k) && !(solids && solid_u(f.open, c))) {
      const real b = f.bu[c];
      const real res =
          helmholtz_residual_u(n, b, p.g, solids && solid_u(f.open, c - P), solids && solid_u(f.open, c + P), k);
      if (p.iterate) ou[c] = chebyshev_point(xu[c], ou[c], res, p.w);
      acc += static_cast<double>(res) * res;
      bacc += static_cast<double>(b) * b;
    }
    if (active_v(pt.i, pt.j, k) && !(solids && solid_v(f.open, c, P))) {
      const real b = f.bv[c];
      const real res = helmholtz_residual_v(n, b, p.g, solids && solid_v(f.open, c - 1, P),
                                            solids && solid_v(f.open, c + 1, P), k);
      if (p.iterate) ov[c] = chebyshev_point(xv[c], ov[c], res, p.w);
      acc += static_cast<double>(res) * res;
      bacc += static_cast<double>(b) * b;
    }
  }
  const bool first = threadIdx.x == 0 && threadIdx.y == 0;
  if (r_partials != nullptr) {
    const double s = block_sum(acc);
    if (first) r_partials[block_index()] = s;
  }
  if (b_partials != nullptr) {
    __syncthreads();
    const double s = block_sum(bacc);
    if (first) b_partials[block_index()] = s;
  }
}

// out = alpha out + beta x over the elements [0, n).
__global__ void combine_kernel(real* uo, real* vo, const real* __restrict__ ux, const real* __restrict__ vx, real alpha,
                               real beta, size_t n) {
  for (size_t e = blockIdx.x * size_t(blockDim.x) + threadIdx.x; e < n; e += size_t(gridDim.x) * blockDim.x) {
    uo[e] = alpha * uo[e] + beta * ux[e];
    vo[e] = alpha * vo[e] + beta * vx[e];
  }
}

__global__ void copy_newest_kernel(HelmholtzFields f, const ViscousDeviceState* __restrict__ st, real* u, real* v,
                                   size_t n) {
  const int newest = st->plan.iterations & 1;
  const real* xu = f.xu[newest];
  const real* xv = f.xv[newest];
  for (size_t e = blockIdx.x * size_t(blockDim.x) + threadIdx.x; e < n; e += size_t(gridDim.x) * blockDim.x) {
    u[e] = xu[e];
    v[e] = xv[e];
  }
}

// g as solve_viscous forms it on the host: (gamma dt) nu in float.
__global__ void viscous_begin_kernel(ViscousDeviceState* st, real gamma, const Constants* __restrict__ k) {
  st->g = gamma * k->dt * k->nu;
  st->it = 0;
  st->plan = ChebyshevPlan{};
  st->b2 = 0;
  st->r2 = 0;
}

__global__ void viscous_plan_kernel(ViscousDeviceState* st, double tolerance, const Constants* __restrict__ k) {
  st->plan = viscous_plan(st->g, st->b2, st->r2, tolerance, *k);
  st->b2 = viscous_scale(st->b2, st->r2);  // what the record's relative residual is measured against
}

// The transform solve's plan: one correction, the residual measured
// against viscous_scale as the iterations' is.
__global__ void viscous_transform_plan_kernel(ViscousDeviceState* st) {
  st->plan = ChebyshevPlan{};
  st->plan.iterations = 1;
  st->b2 = viscous_scale(st->b2, st->r2);
}

__global__ void viscous_condition_kernel(cudaGraphConditionalHandle h, ViscousDeviceState* st, int advance) {
  st->it += advance;
  cudaGraphSetConditional(h, st->it < st->plan.iterations ? 1u : 0u);
}

__global__ void viscous_record_kernel(const ViscousDeviceState* st, int64_t* rec_iterations, double* rec_relative) {
  *rec_iterations = st->plan.iterations;
  *rec_relative = st->g > real(0) && st->b2 > 0 ? sqrt(st->r2 / st->b2) : 0.0;
}

constexpr int kLineBlock = 128;
constexpr int kOneBlockLines = 1024;

}  // namespace

void upload_fluid_constants(const Constants& c, cudaStream_t s) { upload_unit_constants(c, s); }
void copy_fluid_dt(const Constants* k_dev, cudaStream_t s) { copy_unit_dt(k_dev, s); }

void momentum_stage(const Exec& e, const StencilOpts& o, const real* ui, const real* vi, const real* ub,
                    const real* vb, const real* open, const real* clearance, real* uo, real* vo, real a, real b,
                    real cl, real cv) {
  const Region r = face_region(e);
  with_stencil(e, o, [&](auto acc, auto kp, auto solids) {
    using A = decltype(acc);
    auto launch = [&](auto radius) {
      constexpr int R = decltype(radius)::value;
      stage_kernel<A, decltype(kp), decltype(solids)::value, R>
          <<<grid_dim(r, o), block_dim(o), tile_bytes<A>(2, o, R), e.stream>>>(kp, r, ui, vi, ub, vb, open, clearance,
                                                                                uo, vo, a, b, cl, cv);
    };
    // the scheme picks the instantiation, as with_stencil the access policy
    if (o.stage_radius() == 2) launch(std::integral_constant<int, 2>{});
    else launch(std::integral_constant<int, 1>{});
    SIM_CUDA_CHECK_LAUNCH("stage_kernel");
  });
}

void project(const Exec& e, const StencilOpts& o, const real* phi, const real* open, real* u, real* v) {
  const Region r = face_region(e);
  with_stencil(e, o, [&](auto a, auto kp, auto solids) {
    using A = decltype(a);
    project_kernel<A, decltype(kp), decltype(solids)::value>
        <<<grid_dim(r, o), block_dim(o), tile_bytes<A>(1, o), e.stream>>>(kp, r, phi, open, u, v);
    SIM_CUDA_CHECK_LAUNCH("project_kernel");
  });
}

void fill_velocity_halo(const Exec& e, real* u, real* v) {
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    const int rows = e.ny + 1, cols = e.nx + 3;
    if (rows <= kOneBlockLines && cols <= kOneBlockLines) {
      const int lines = rows > cols ? rows : cols;
      velocity_halo_kernel<<<1, (lines + 31) / 32 * 32, 0, e.stream>>>(kp, u, v);
      SIM_CUDA_CHECK_LAUNCH("velocity_halo_kernel");
      return;
    }
    velocity_halo_x_kernel<<<(rows + kLineBlock - 1) / kLineBlock, kLineBlock, 0, e.stream>>>(kp, u, v);
    SIM_CUDA_CHECK_LAUNCH("velocity_halo_x_kernel");
    velocity_halo_y_kernel<<<(cols + kLineBlock - 1) / kLineBlock, kLineBlock, 0, e.stream>>>(kp, u, v);
    SIM_CUDA_CHECK_LAUNCH("velocity_halo_y_kernel");
  });
}

int helmholtz_blocks(const Exec& e, const StencilOpts& o) {
  const dim3 g = grid_dim(face_region(e), o);
  return static_cast<int>(g.x * g.y);
}

void helmholtz_pass(const Exec& e, const StencilOpts& o, const HelmholtzFields& f, const HelmholtzPass& p,
                    double* r_partials, double* b_partials) {
  const Region r = face_region(e);
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    helmholtz_kernel<<<grid_dim(r, o), block_dim(o), 0, e.stream>>>(kp, r, f, p, r_partials, b_partials);
    SIM_CUDA_CHECK_LAUNCH("helmholtz_kernel");
  });
}

void combine_velocity(cudaStream_t s, real* uo, real* vo, const real* ux, const real* vx, real alpha, real beta,
                      size_t n) {
  if (n == 0) return;
  const int blocks = static_cast<int>(std::min<size_t>((n + 255) / 256, 4096));
  combine_kernel<<<blocks, 256, 0, s>>>(uo, vo, ux, vx, alpha, beta, n);
  SIM_CUDA_CHECK_LAUNCH("combine_kernel");
}

void copy_newest_iterate(cudaStream_t s, const HelmholtzFields& f, const ViscousDeviceState* st, real* u, real* v,
                         size_t n) {
  const size_t blocks = std::min<size_t>((n + 255) / 256, 4096);
  copy_newest_kernel<<<static_cast<unsigned>(blocks), 256, 0, s>>>(f, st, u, v, n);
  SIM_CUDA_CHECK_LAUNCH("copy_newest_kernel");
}

void viscous_begin(cudaStream_t s, ViscousDeviceState* st, real gamma, const Constants* k_dev) {
  viscous_begin_kernel<<<1, 1, 0, s>>>(st, gamma, k_dev);
  SIM_CUDA_CHECK_LAUNCH("viscous_begin_kernel");
}

void viscous_plan(cudaStream_t s, ViscousDeviceState* st, double tolerance, const Constants* k_dev) {
  viscous_plan_kernel<<<1, 1, 0, s>>>(st, tolerance, k_dev);
  SIM_CUDA_CHECK_LAUNCH("viscous_plan_kernel");
}

void viscous_transform_plan(cudaStream_t s, ViscousDeviceState* st) {
  viscous_transform_plan_kernel<<<1, 1, 0, s>>>(st);
  SIM_CUDA_CHECK_LAUNCH("viscous_transform_plan_kernel");
}

void viscous_condition(cudaStream_t s, cudaGraphConditionalHandle h, ViscousDeviceState* st, int advance) {
  viscous_condition_kernel<<<1, 1, 0, s>>>(h, st, advance);
  SIM_CUDA_CHECK_LAUNCH("viscous_condition_kernel");
}

void viscous_record(cudaStream_t s, const ViscousDeviceState* st, int64_t* rec_iterations, double* rec_relative) {
  viscous_record_kernel<<<1, 1, 0, s>>>(st, rec_iterations, rec_relative);
  SIM_CUDA_CHECK_LAUNCH("viscous_record_kernel");
}

}  // namespace sim::cuda
