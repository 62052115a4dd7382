// SPDX-License-Identifier: MIT
// The particle kernels that read the constants, in one translation unit:
// a __constant__ block belongs to one unit (cuda/constants.cuh), and
// set_constants uploads every unit's block at each change of dt. The
// kernels live by concern in the headers below: samplers, the particle
// step, the reaction, and the deposit strategies with their kernels. One
// thread per slot, templated on the particle view (AoS or SoA), the fluid
// sampler, the constants policy and the deposit strategy. The passes of the
// coupled step are CpuBackend::particles_impl's (sim/model/particle_physics.hpp):
// mass deposit, drag deposit, the fluid faces' update, then per particle
// coefficients, sampling, drag, obstacles, walls. The slots' kernels that
// read no constants (injection, migration): cuda/particle_slots.cu.
#include <algorithm>

#include "cuda/check.hpp"
#include "cuda/constants.cuh"
#include "cuda/deposit_strategies.cuh"
#include "cuda/kernels.hpp"
#include "cuda/particle_launch.cuh"
#include "cuda/particle_reaction.cuh"
#include "cuda/particle_samplers.cuh"
#include "cuda/particle_step.cuh"

namespace sim::cuda {
namespace {

template <class View, class KP>
__global__ void cell_key_kernel(KP kp, View p, uint32_t* __restrict__ keys, uint32_t* __restrict__ slots) {
  const Constants& k = kp.get();
  const int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= p.size()) return;
  uint32_t key = static_cast<uint32_t>(k.nx) * static_cast<uint32_t>(k.ny);  // dead slots last
  if (p.alive(s)) {
    const int i = clampi(static_cast<int>(floorf(p.x(s) * k.inv_dx)), 0, k.nx - 1);
    const int j = clampi(static_cast<int>(floorf(p.y(s) * k.inv_dy)), 0, k.ny - 1);
    key = static_cast<uint32_t>(j) * static_cast<uint32_t>(k.nx) + static_cast<uint32_t>(i);
  }
  keys[s] = key;
  slots[s] = static_cast<uint32_t>(s);
}

}  // namespace

void upload_particle_constants(const Constants& c, cudaStream_t s) { upload_unit_constants(c, s); }
void copy_particle_dt(const Constants* k_dev, cudaStream_t s) { copy_unit_dt(k_dev, s); }

void step_particles(const Exec& e, const DeviceParticles& p, const ParticleStepArgs& a, const ImpulseFields* impulse) {
  if (p.size() == 0) return;
  if (impulse) SIM_CUDA_CHECK(cudaMemsetAsync(impulse->took_bound, 0, sizeof(unsigned int), e.stream));
  with_view(p, [&](auto view) {
    with_sampler(a.fluid, [&](auto smp) {
      with_constants(e.constants, e.k_dev, [&](auto kp) {
        if (impulse)
          particle_step_kernel<true><<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(
              kp, view, smp, a.two_way, a.mu, a.mv, a.counters, *impulse);
        else
          particle_step_kernel<false><<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(
              kp, view, smp, a.two_way, a.mu, a.mv, a.counters, ImpulseFields{});
        SIM_CUDA_CHECK_LAUNCH("particle_step_kernel");
      });
    });
  });
}

namespace {
constexpr unsigned kFaceBlockX = 32, kFaceBlockY = 8;
dim3 face_pass_grid(const Exec& e) {
  const int rows = e.face_row_end() - e.row0;
  return dim3((e.nx + 1 + kFaceBlockX - 1) / kFaceBlockX, (rows + kFaceBlockY - 1) / kFaceBlockY);
}
}  // namespace

unsigned face_pass_blocks(const Exec& e) {
  const dim3 g = face_pass_grid(e);
  return g.x * g.y;
}

void deposit_reaction(const Exec& e, const ImpulseFields& f, int64_t slots) {
  if (slots == 0) return;
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    took_deposit_kernel<<<blocks_for(slots), kParticleBlock, 0, e.stream>>>(kp, f, slots);
    SIM_CUDA_CHECK_LAUNCH("took_deposit_kernel");
  });
}

void pay_reaction(const Exec& e, const ImpulseFields& f, const real* open, int64_t slots) {
  const dim3 grid = face_pass_grid(e);
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    reaction_pay_kernel<<<grid, dim3(kFaceBlockX, kFaceBlockY), 0, e.stream>>>(kp, f, open, slots, e.row0,
                                                                              e.face_row_end());
    SIM_CUDA_CHECK_LAUNCH("reaction_pay_kernel");
  });
  const size_t faces = static_cast<size_t>(Grid::pitch_for(e.nx)) * static_cast<size_t>(Grid::rows_for(e.ny));
  SIM_CUDA_CHECK(cudaMemsetAsync(f.took_u, 0, faces * sizeof(unsigned long long), e.stream));
  SIM_CUDA_CHECK(cudaMemsetAsync(f.took_v, 0, faces * sizeof(unsigned long long), e.stream));
  sum_gained_kernel<<<1, 1024, 0, e.stream>>>(f.partials, grid.x * grid.y, f.gained);
  SIM_CUDA_CHECK_LAUNCH("sum_gained_kernel");
}

void give_back_reaction(const Exec& e, const ImpulseFields& f, const real* open, int64_t faces_u, int64_t faces_v) {
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    const dim3 grid = face_pass_grid(e);
    reaction_kernel<<<grid, dim3(kFaceBlockX, kFaceBlockY), 0, e.stream>>>(kp, f.gained, faces_u, faces_v, open,
                                                                          f.u_free, f.v_free, e.row0, e.face_row_end());
    SIM_CUDA_CHECK_LAUNCH("reaction_kernel");
  });
}

void held_faces_to_stage(const Exec& e, const CouplingFields& f, real* us, real* vs) {
  with_constants(e.constants, e.k_dev, [&](auto kp) {
    const int lines = (e.nx > e.ny ? e.nx : e.ny) + 1;
    held_faces_kernel<<<(lines + 127) / 128, 128, 0, e.stream>>>(kp, f, us, vs, e.row0, e.face_row_end());
    SIM_CUDA_CHECK_LAUNCH("held_faces_kernel");
  });
}

// Passes 1 to 3 by the strategy DepositTable (cuda/deposit_strategies.cuh)
// gives gpu.deposit.
void couple_particles(const Exec& e, const DeviceParticles& p, const CouplingArgs& a, real* u, real* v) {
  if (p.size() == 0) return;
  const unsigned blocks = blocks_for(p.size());
  with_view(p, [&](auto view) {
    with_constants(e.constants, e.k_dev, [&](auto kp) {
      DepositTable::with(a.deposit, [&](auto strategy) {
        const dim3 block(32, 8);
        const dim3 grid((e.nx + 1 + block.x - 1) / block.x, (e.ny + 1 + block.y - 1) / block.y);
        const int row0 = e.row0, face_end = e.face_row_end();
        const dim3 face_grid(grid.x, (face_end - row0 + block.y - 1) / block.y);
        const CoupleLaunch<decltype(view), decltype(kp)> c{
            e, kp, view, a, u, v, blocks, static_cast<int64_t>(view.size()), block, grid, row0, face_end, face_grid};
        strategy.prepare(c);
        strategy.mass(c);
        strategy.drag(c);
        strategy.update_faces(c);
      });
    });
  });
}

void particle_cell_keys(const Exec& e, const DeviceParticles& p, uint32_t* keys, uint32_t* slots) {
  if (p.size() == 0) return;
  with_view(p, [&](auto view) {
    with_constants(e.constants, e.k_dev, [&](auto kp) {
      cell_key_kernel<<<blocks_for(view.size()), kParticleBlock, 0, e.stream>>>(kp, view, keys, slots);
      SIM_CUDA_CHECK_LAUNCH("cell_key_kernel");
    });
  });
}

void pack_velocity(const Exec& e, const real* u, const real* v, float4* u4, float4* v4, size_t size) {
  if (size == 0) return;
  // A particle of cell row j reads the packed points of storage rows j and
  // j + 1 (u's stencil may start a row lower): grid rows row0 - 1 .. row_end.
  const bool split = e.row0 > 0 || e.row_end >= 0;
  const int64_t n = static_cast<int64_t>(size);
  const int64_t first = split ? std::max<int64_t>(0, static_cast<int64_t>(e.row0) * e.pitch) : 0;
  const int64_t last = split ? std::min<int64_t>(n, static_cast<int64_t>(e.cell_row_end() + 2) * e.pitch) : n;
  if (last <= first) return;
  pack_velocity_kernel<<<blocks_for(last - first), kParticleBlock, 0, e.stream>>>(u, v, u4, v4, e.pitch, first, last,
                                                                                  n);
  SIM_CUDA_CHECK_LAUNCH("pack_velocity_kernel");
}

void sample_fluid_velocity(const Exec& e, const VelocitySource& fluid, const real* x, const real* y, int n, real* ufx,
                           real* ufy) {
  if (n <= 0) return;
  with_sampler(fluid, [&](auto smp) {
    with_constants(e.constants, e.k_dev, [&](auto kp) {
      sample_kernel<<<blocks_for(n), kParticleBlock, 0, e.stream>>>(kp, smp, x, y, n, ufx, ufy);
      SIM_CUDA_CHECK_LAUNCH("sample_kernel");
    });
  });
}

}  // namespace sim::cuda
