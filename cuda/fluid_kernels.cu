// Fluid stencils on the MAC faces: the momentum stage of the time step
// (advection, diffusion, body force), the pressure-gradient projection, and
// the velocity halo. Each kernel is written once over a memory-access policy
// (cuda/access.cuh) and calls the same physics functions as CpuBackend, in
// the same order per face.
#include "cuda/access.cuh"
#include "sim/model/faces.hpp"
#include "sim/model/fluid_physics.hpp"
#include "sim/model/halo.hpp"

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

// out = a base + b in + c dt L(in) (stage_point, momentum_u / momentum_v of
// sim/model/fluid_physics.hpp); fields 0 = u_in, 1 = v_in; base read only when
// a != 0. R: the neighbourhood's radius, 2 for fluid.advection = quick.
template <class A, class KP, bool kSolids, int R>
__global__ void stage_kernel(KP kp, Region r, typename A::In ui, typename A::In vi, typename A::In ub,
                             typename A::In vb, typename A::In open, typename A::In clear, typename A::Out uo,
                             typename A::Out vo, real a, real b, real cl) {
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
                              a, b, cl, k);
  if (active_v(pt.i, pt.j, k))
    vo[c] = solid_v_at<A, kSolids>(open, c, P)
                ? real(0)
                : stage_point(a != real(0) ? A::load(vb, c) : real(0), n(kV, 0, 0),
                              momentum_v(n, stage_reach_v<A, kSolids, R>(pt.i, pt.j, c, clear, k),
                                         solid_v_at<A, kSolids>(open, c - 1, P),
                                         solid_v_at<A, kSolids>(open, c + 1, P), k),
                              a, b, cl, k);
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

constexpr int kLineBlock = 128;
constexpr int kOneBlockLines = 1024;

}  // namespace

void upload_fluid_constants(const Constants& c, cudaStream_t s) { upload_unit_constants(c, s); }
void copy_fluid_dt(const Constants* k_dev, cudaStream_t s) { copy_unit_dt(k_dev, s); }

void momentum_stage(const Exec& e, const StencilOpts& o, const real* ui, const real* vi, const real* ub,
                    const real* vb, const real* open, const real* clearance, real* uo, real* vo, real a, real b,
                    real cl) {
  const Region r = face_region(e);
  with_stencil(e, o, [&](auto acc, auto kp, auto solids) {
    using A = decltype(acc);
    auto launch = [&](auto radius) {
      constexpr int R = decltype(radius)::value;
      stage_kernel<A, decltype(kp), decltype(solids)::value, R>
          <<<grid_dim(r, o), block_dim(o), tile_bytes<A>(2, o, R), e.stream>>>(kp, r, ui, vi, ub, vb, open, clearance,
                                                                                uo, vo, a, b, cl);
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

}  // namespace sim::cuda
