// SPDX-License-Identifier: MIT
// The step's momentum exchange with the domain sides and the obstacles
// (sim/model/boundary_flux.hpp): one block per owner sums its links in a fixed
// order (deterministic), from the stage's velocity or the solve's pressure, each
// link's value weighted by its share of the step (sim/model/time_scheme.hpp).
#include "cuda/block_sum.cuh"
#include "cuda/check.hpp"
#include "cuda/kernels.hpp"
#include "sim/model/boundary_flux.hpp"

namespace sim::cuda {
namespace {

constexpr int kLinkBlock = 256;

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
                                 const real* v, const real* open, const real* clear, real w_explicit,
                                 real w_viscous, double* out) {
  const Constants& k = *kp;
  sum_owner(k, links, first, out, [&](const BoundaryLink& l, int c) {
    return link_flux(l, c, u, v, open, clear, w_explicit, w_viscous, k);
  });
}

template <class T>
__global__ void link_pressure_kernel(const Constants* kp, const BoundaryLink* links, const int* first, const T* p,
                                     real w, double* out) {
  const Constants& k = *kp;
  const double weight = w;
  sum_owner(k, links, first, out,
            [&](const BoundaryLink& l, int c) { return weight * link_pressure(p, c, l.q, l.side, k); });
}

}  // namespace

void boundary_link_flux(cudaStream_t s, const Constants* k_dev, const BoundaryLink* links, const int* first,
                        const real* u, const real* v, const real* open, const real* clear, real w_explicit,
                        real w_viscous, double* out) {
  link_flux_kernel<<<kBoundaryOwners, kLinkBlock, 0, s>>>(k_dev, links, first, u, v, open, clear, w_explicit,
                                                          w_viscous, out);
  SIM_CUDA_CHECK_LAUNCH("link_flux_kernel");
}

void boundary_link_pressure(cudaStream_t s, const Constants* k_dev, const BoundaryLink* links, const int* first,
                            const real* p, real w, double* out) {
  link_pressure_kernel<<<kBoundaryOwners, kLinkBlock, 0, s>>>(k_dev, links, first, p, w, out);
  SIM_CUDA_CHECK_LAUNCH("link_pressure_kernel");
}

void boundary_link_pressure(cudaStream_t s, const Constants* k_dev, const BoundaryLink* links, const int* first,
                            const double* p, real w, double* out) {
  link_pressure_kernel<<<kBoundaryOwners, kLinkBlock, 0, s>>>(k_dev, links, first, p, w, out);
  SIM_CUDA_CHECK_LAUNCH("link_pressure_kernel");
}

}  // namespace sim::cuda
