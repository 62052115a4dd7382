// SPDX-License-Identifier: MIT
// The GPU deposit strategies of the two-way coupling (gpu.deposit), one type
// each, and DepositTable, the one place that picks the type from the config.
// couple_particles (cuda/particle_kernels.cu) runs passes 1 to 3 of the
// coupled step through the entry points every type has, in this order on
// one object (which keeps what prepare found for the passes after it):
//   prepare(c)       before pass 1: what the passes share (bounds, keys)
//   mass(c)          pass 1: the particle mass onto M
//   drag(c)          pass 2: the implicit drag onto B and A
//   update_faces(c)  pass 3: the fluid faces from A and B, which are zeroed
// A new strategy: its kernels in a header of their own (as
// cuda/deposit_gather.cuh), a type below, a row of DepositTable; its
// buffers in CouplingArgs (cuda/kernels.hpp) and cuda/memory_plan.cpp.
#pragma once
#include <stdexcept>
#include <string>

#include "cuda/check.hpp"
#include "cuda/deposit_gather.cuh"
#include "cuda/deposit_kernels.cuh"
#include "cuda/kernels.hpp"
#include "cuda/particle_launch.cuh"
#include "sim/model/grid.hpp"

namespace sim::cuda {
namespace {

// What every pass of a strategy launches with.
template <class View, class KP>
struct CoupleLaunch {
  const Exec& e;
  KP kp;
  View view;
  const CouplingArgs& a;
  real* u;  // the fluid faces pass 3 updates
  real* v;
  unsigned blocks;  // over the slots, kParticleBlock threads each
  int64_t slots;
  dim3 block;           // the face kernels' block
  dim3 grid;            // over the points of [0, nx] x [0, ny]
  int row0, face_end;   // this rank's face rows (every row on one rank)
  dim3 face_grid;       // over those rows
};

// Pass 3 with A and B read as floats (kFixed false) or from their integers.
template <bool kFixed, class View, class KP>
void update_coupled_faces(const CoupleLaunch<View, KP>& c) {
  coupled_faces_kernel<kFixed><<<c.face_grid, c.block, 0, c.e.stream>>>(c.kp, c.a.f, c.a.fixed, c.slots, c.a.open, c.u,
                                                                         c.v, c.row0, c.face_end);
  SIM_CUDA_CHECK_LAUNCH("coupled_faces_kernel");
}

// The strategies that deposit floats: nothing before pass 1, and pass 3
// reads A and B as they are.
struct FloatDeposit {
  template <class View, class KP>
  void prepare(const CoupleLaunch<View, KP>&) {}
  template <class View, class KP>
  void update_faces(const CoupleLaunch<View, KP>& c) {
    update_coupled_faces<false>(c);
  }
};

// Passes 1 and 2 of the strategies that scatter each particle's share onto
// the faces with atomics (DepositMode atomic: floats; fixed: integers),
// each pass followed by the backend's hook (over ranks: the deposits' fold).
template <DepositMode kMode>
struct ScatterPasses {
  template <class View, class KP>
  void mass_pass(const CoupleLaunch<View, KP>& c) {
    mass_deposit_kernel<View, KP, kMode>
        <<<c.blocks, kParticleBlock, 0, c.e.stream>>>(c.kp, c.view, c.a.f, c.a.pairs, c.a.fixed, c.a.capacity);
    SIM_CUDA_CHECK_LAUNCH("mass_deposit_kernel");
    if (c.a.after_mass) c.a.after_mass();
  }
  template <class View, class KP>
  void drag(const CoupleLaunch<View, KP>& c) {
    drag_deposit_kernel<View, KP, kMode>
        <<<c.blocks, kParticleBlock, 0, c.e.stream>>>(c.kp, c.view, c.a.f, c.a.pairs, c.a.fixed, c.a.capacity);
    SIM_CUDA_CHECK_LAUNCH("drag_deposit_kernel");
    if (c.a.after_drag) c.a.after_drag();
  }
};

// deposit=atomic: float atomics onto the faces (the sums depend on their order).
struct AtomicDeposit : FloatDeposit, ScatterPasses<DepositMode::atomic> {
  template <class View, class KP>
  void mass(const CoupleLaunch<View, KP>& c) {
    mass_pass(c);
  }
};

// deposit=fixed (FixedBuffers): integer atomics at a scale from the bounds
// prepare finds; M back to floats after pass 1, A and B in pass 3.
struct FixedDeposit : ScatterPasses<DepositMode::fixed> {
  template <class View, class KP>
  void prepare(const CoupleLaunch<View, KP>& c) {
    SIM_CUDA_CHECK(cudaMemsetAsync(c.a.fixed.bounds, 0, 2 * sizeof(unsigned int), c.e.stream));
    const unsigned bound_blocks = static_cast<unsigned>((c.slots + kBoundsBlock - 1) / kBoundsBlock);
    fixed_bounds_kernel<<<bound_blocks, kBoundsBlock, 0, c.e.stream>>>(c.kp, c.view, c.a.f.u, c.a.f.v,
                                                                        c.a.fixed.bounds);
    SIM_CUDA_CHECK_LAUNCH("fixed_bounds_kernel");
    if (c.a.after_bounds) c.a.after_bounds();
  }
  template <class View, class KP>
  void mass(const CoupleLaunch<View, KP>& c) {
    mass_pass(c);
    const int faces = static_cast<int>(Grid::pitch_for(c.e.nx) * Grid::rows_for(c.e.ny));
    fixed_mass_kernel<<<(faces + 255) / 256 < 1024 ? (faces + 255) / 256 : 1024, 256, 0, c.e.stream>>>(
        c.kp, c.a.fixed, c.slots, c.a.f.mu, c.a.f.mv);
    SIM_CUDA_CHECK_LAUNCH("fixed_mass_kernel");
  }
  template <class View, class KP>
  void update_faces(const CoupleLaunch<View, KP>& c) {
    update_coupled_faces<true>(c);
  }
};

// deposit=sorted (DepositBuffers, cuda/deposit.cu): pairs per slot, sorted
// once after pass 1 (the keys are the same in every pass), summed by key.
struct SortedDeposit : FloatDeposit {
  SortedPairs sorted{};
  template <class View, class KP>
  void mass(const CoupleLaunch<View, KP>& c) {
    mass_deposit_kernel<View, KP, DepositMode::sorted>
        <<<c.blocks, kParticleBlock, 0, c.e.stream>>>(c.kp, c.view, c.a.f, c.a.pairs, c.a.fixed, c.a.capacity);
    SIM_CUDA_CHECK_LAUNCH("mass_deposit_kernel");
    // one sort of the pass-1 keys serves the mass, B and A
    sorted = sort_deposit_pairs(c.e.stream, c.a.pairs);
    deposit_sorted(c.e.stream, c.a.pairs, sorted, c.a.pairs.values, c.a.f.mu, c.a.f.mv);
  }
  template <class View, class KP>
  void drag(const CoupleLaunch<View, KP>& c) {
    drag_deposit_kernel<View, KP, DepositMode::sorted>
        <<<c.blocks, kParticleBlock, 0, c.e.stream>>>(c.kp, c.view, c.a.f, c.a.pairs, c.a.fixed, c.a.capacity);
    SIM_CUDA_CHECK_LAUNCH("drag_deposit_kernel");
    const CouplingFields& f = c.a.f;
    deposit_sorted2(c.e.stream, c.a.pairs, sorted, c.a.pairs.values, c.a.pairs.values_b, f.bu, f.bv, f.au, f.av);
  }
};

// deposit=gather (GatherBuffers, cuda/deposit_gather.cuh): the particles
// sorted by stencil node in prepare, then every face sums its own.
struct GatherDeposit : FloatDeposit {
  const uint32_t* keys = nullptr;   // sorted
  const uint32_t* slots = nullptr;  // storage index, in the keys' order
  int n = 0;
  template <class View, class KP>
  void prepare(const CoupleLaunch<View, KP>& c) {
    const GatherBuffers& b = c.a.gather;
    n = static_cast<int>(c.view.size());
    SIM_CUDA_CHECK(cudaMemsetAsync(b.nodes, 0, static_cast<size_t>(b.node_count) * sizeof(int2), c.e.stream));
    gather_key_kernel<<<c.blocks, kParticleBlock, 0, c.e.stream>>>(c.kp, c.view, b, c.a.capacity);
    SIM_CUDA_CHECK_LAUNCH("gather_key_kernel");
    // one sort of the keys serves the mass, B and A (the particles do not move in between)
    const bool alt = radix_sort_pairs(c.e.stream, b.keys, b.keys_alt, b.slots, b.slots_alt, n, b.end_bit,
                                      b.workspace, b.workspace_bytes);
    keys = alt ? b.keys_alt : b.keys;
    slots = alt ? b.slots_alt : b.slots;
  }
  template <class View, class KP>
  void mass(const CoupleLaunch<View, KP>& c) {
    const GatherBuffers& b = c.a.gather;
    gather_mass_kernel<<<c.blocks, kParticleBlock, 0, c.e.stream>>>(c.kp, c.view, b, keys, slots, n);
    SIM_CUDA_CHECK_LAUNCH("gather_mass_kernel");
    face_gather_kernel<<<c.grid, c.block, 0, c.e.stream>>>(c.kp, b, keys, GatherMass{b.mass},
                                                           GatherOut<1>{{c.a.f.mu}, {c.a.f.mv}});
    SIM_CUDA_CHECK_LAUNCH("face_gather_kernel (mass)");
  }
  template <class View, class KP>
  void drag(const CoupleLaunch<View, KP>& c) {
    const GatherBuffers& b = c.a.gather;
    const CouplingFields& f = c.a.f;
    gather_drag_kernel<<<c.blocks, kParticleBlock, 0, c.e.stream>>>(c.kp, c.view, b, keys, slots, n, f.mu, f.mv,
                                                                    f.u, f.v);
    SIM_CUDA_CHECK_LAUNCH("gather_drag_kernel");
    face_gather_kernel<<<c.grid, c.block, 0, c.e.stream>>>(c.kp, b, keys, GatherDrag{b.qu, b.qv},
                                                           GatherOut<2>{{f.bu, f.au}, {f.bv, f.av}});
    SIM_CUDA_CHECK_LAUNCH("face_gather_kernel (drag)");
  }
};

// One row of DepositTable: a gpu.deposit value and the type that runs it.
template <Deposit kValue, class Strategy>
struct DepositRow {
  static constexpr Deposit value = kValue;
  using type = Strategy;
};

template <class... Rows>
struct DepositRows {
  // body(strategy), a new object of the row of `d`.
  template <class Body>
  static void with(Deposit d, Body&& body) {
    const bool found = ((d == Rows::value && (body(typename Rows::type{}), true)) || ...);
    if (!found) throw std::logic_error("gpu.deposit = \"" + std::string(to_string(d)) + "\": no GPU deposit strategy");
  }
};

using DepositTable = DepositRows<DepositRow<Deposit::atomic, AtomicDeposit>,  //
                                 DepositRow<Deposit::fixed, FixedDeposit>,    //
                                 DepositRow<Deposit::sorted, SortedDeposit>,  //
                                 DepositRow<Deposit::gather, GatherDeposit>>;

}  // namespace
}  // namespace sim::cuda
