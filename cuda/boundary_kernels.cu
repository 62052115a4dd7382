// The step's momentum exchange with the domain sides and the obstacles
// (sim/boundary_flux.hpp): one block per owner sums its links in a fixed
// order (deterministic), from the stage's velocity or the solve's pressure.
#include "cuda/block_sum.cuh"
#include "cuda/check.hpp"
#include "cuda/kernels.hpp"
#include "sim/boundary_flux.hpp"

namespace sim::cuda {
namespace {

constexpr int kLinkBlock = 256;

// Velocity component q at offset (di, dj) from a face, as the CPU backend's
// FaceNeighbours reads it (two cells out through wide_offset).
struct GlobalNeighbours {
  static constexpr int kRadius = 2;
  const real* u;
  const real* v;
  int c, i, j;
  const Constants& k;
  __device__ real operator()(int q, int di, int dj) const {
    if (di < -1 || di > 1) di = wide_offset(i, di, k.nx, is_periodic(k, kLeft), k.pitch - 2);
    if (dj < -1 || dj > 1) dj = wide_offset(j, dj, k.ny, is_periodic(k, kBottom), k.rows - 2);
    return (q == 0 ? u : v)[c + di + dj * k.pitch];
  }
};

// Block o: rho dx dy times the sum of value(link, c) over owner o's links,
// x (u links) and y (v links), into out[o].
template <class Value>
__device__ void sum_owner(const Constants& k, const BoundaryLink* links, const int* first, double* out, Value value) {
  const int o = blockIdx.x;
  double s[2] = {0, 0};
  for (int e = first[o] + threadIdx.x; e < first[o + 1]; e += blockDim.x) {
    const BoundaryLink l = links[e];
    s[l.q] += value(l, at(k, l.i, l.j));
  }
  const double scale = static_cast<double>(k.rho_f) * k.dx * k.dy;
  const double x = block_sum(s[0]);
  __syncthreads();
  const double y = block_sum(s[1]);
  if (threadIdx.x == 0) {
    out[2 * o] = scale * x;
    out[2 * o + 1] = scale * y;
  }
}

__global__ void link_flux_kernel(const Constants* kp, const BoundaryLink* links, const int* first, const real* u,
                                 const real* v, const real* open, const real* clear, double* out) {
  const Constants& k = *kp;
  const bool quick = k.advection == static_cast<int>(AdvectionScheme::quick);
  const bool solids = k.has_solids != 0;
  const int P = k.pitch;
  sum_owner(k, links, first, out, [&](const BoundaryLink& l, int c) {
    const GlobalNeighbours n{u, v, c, l.i, l.j, k};
    AdvectionReach r{};
    if (quick)
      r = l.q == 0 ? (clear ? reach_u(l.i, l.j, c, clear, k) : reach_u(l.i, l.j, c, AllClear{}, k))
                   : (clear ? reach_v(l.i, l.j, c, clear, k) : reach_v(l.i, l.j, c, AllClear{}, k));
    const bool lo = solids && (l.q == 0 ? solid_u(open, c - P) : solid_v(open, c - 1, P));
    const bool hi = solids && (l.q == 0 ? solid_u(open, c + P) : solid_v(open, c + 1, P));
    return static_cast<double>(link_tendency(n, r, l.q, l.side, lo, hi, k));
  });
}

template <class T>
__global__ void link_pressure_kernel(const Constants* kp, const BoundaryLink* links, const int* first, const T* p,
                                     double* out) {
  const Constants& k = *kp;
  sum_owner(k, links, first, out,
            [&](const BoundaryLink& l, int c) { return link_pressure(p, c, l.q, l.side, k); });
}

}  // namespace

void boundary_link_flux(cudaStream_t s, const Constants* k_dev, const BoundaryLink* links, const int* first,
                        const real* u, const real* v, const real* open, const real* clear, double* out) {
  link_flux_kernel<<<kBoundaryOwners, kLinkBlock, 0, s>>>(k_dev, links, first, u, v, open, clear, out);
  SIM_CUDA_CHECK_LAUNCH("link_flux_kernel");
}

void boundary_link_pressure(cudaStream_t s, const Constants* k_dev, const BoundaryLink* links, const int* first,
                            const real* p, double* out) {
  link_pressure_kernel<<<kBoundaryOwners, kLinkBlock, 0, s>>>(k_dev, links, first, p, out);
  SIM_CUDA_CHECK_LAUNCH("link_pressure_kernel");
}

void boundary_link_pressure(cudaStream_t s, const Constants* k_dev, const BoundaryLink* links, const int* first,
                            const double* p, double* out) {
  link_pressure_kernel<<<kBoundaryOwners, kLinkBlock, 0, s>>>(k_dev, links, first, p, out);
  SIM_CUDA_CHECK_LAUNCH("link_pressure_kernel");
}

}  // namespace sim::cuda
