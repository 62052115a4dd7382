// SPDX-License-Identifier: MIT
// The CUDA backend's class (cuda/cuda_backend.hpp), its members defined by
// concern: the state, the fluid and the pressure solves in
// cuda_backend.cpp, the particle step, its coupling and the particles'
// migration between ranks in cuda_particles.cpp, the stepping without host
// round trips in cuda_device_stepping.cpp.
//
// The rank split (sim/ranks/rank_split.hpp) gives the rows every launch
// covers (Exec::row0 ..), its reductions add each rank's scalars, and the
// device rows (cuda/device_rows.hpp) move the halo and deposit rows; over
// one GPU both are the identity and nothing moves.
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda/cuda_fft.hpp"
#include "cuda/cuda_helmholtz_fft.hpp"
#include "cuda/device.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/graph.hpp"
#include "cuda/kernels.hpp"
#include "cuda/memory_plan.hpp"
#include "cuda/particle_store.hpp"
#include "cuda/snapshot_staging.hpp"
#include "cuda/timer.hpp"
#include "cuda/velocity_textures.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/cuda_poisson.hpp"
#include "cuda/device_rows.hpp"
#include "sim/model/faces.hpp"
#include "sim/model/advection.hpp"
#include "sim/model/injection.hpp"
#include "sim/ranks/split_particles.hpp"
#include "sim/ranks/rank_split.hpp"

namespace sim::cuda {

class CudaBackend final : public Backend, public DeviceStepping {
 public:
  CudaBackend(const Config& cfg, const Grid& g, const DeviceInfo& dev, const StencilOpts& so, const MemoryPlan& plan,
              std::shared_ptr<const RankSplit> ranks, bool shared_gpu);

  std::string name() const override {
    return "cuda: " + describe(dev_) + ranks_->describe() + rows_->describe();
  }
  std::string transform_refusal() const override { return cuda::transform_refusal(rows_->split()); }
  const RankSplit& ranks() const override { return *ranks_; }

  std::string strategies() const override {
    return describe_strategies(cfg_, StrategyScope::cuda) + " block=" + std::to_string(so_.block_x) + "x" +
           std::to_string(so_.block_y);
  }

  void upload(const SimState& s) override;
  void download(SimState& s) override;
  void download_own(SimState& s) override;
  std::unique_ptr<PendingState> begin_download(SimState header) override;
  void set_constants(const Constants& c) override;
  double max_velocity_rate() override;

  using Backend::fill_velocity_halo;
  void fill_velocity_halo(VelocityField f) override {
    const auto [u, v] = velocity(f);
    velocity_halo(u, v);
  }
  void velocity_halo(real* u, real* v);
  void step_particles(uint64_t first_id, int64_t count) override;
  void migrate(uint64_t first_id, int64_t count);
  void prepare_step_on_device() override;
  void step_particles_on_device() override;
  void sort_if_due();
  void couple_fluid() override;
  void move_particles();
  void copy_velocity(VelocityField from, VelocityField to) override;
  void combine_velocity(VelocityField out, real alpha, VelocityField x, real beta) override;
  void rk_stage(VelocityField in, VelocityField base, VelocityField out, real a, real b, real cl,
                real cv) override;
  HelmholtzNorms helmholtz_start(VelocityField f, real g) override;
  void chebyshev_iteration(VelocityField f, real g, const ChebyshevWeights& w) override;
  double helmholtz_finish(VelocityField f, real g) override;
  bool viscous_transform() const override;
  void helmholtz_correct(VelocityField f, real g) override;
  double compute_rhs() override;
  int64_t nonfinite_particles() override { return nonfinite_; }
  int64_t particle_records() const override { return store_.capacity(); }

  void compute_rhs_on_device(int solve) override;
  void poisson_residual_on_device(int solve) override;

  void fill_pressure_halo() override { cuda::fill_pressure_halo(exec_, phi_.data()); }

  void jacobi_sweep() override;
  void jacobi_sweeps(int n) override;
  void sor_sweep(int color) override;
  double residual_norm() override;
  void project() override;
  void project_stored() override;
  void boundary_flux(VelocityField in, int part, real w_explicit, real w_viscous) override;
  void boundary_pressure(int part, real w) override;
  double* link_part(int part) { return link_sums_.data() + static_cast<size_t>(part) * kBoundaryOwners * 2; }

  TransformOps& transform_setup(const PoissonHierarchy& h) override;
  Diagnostics diagnostics() override;
  MultigridOps& multigrid_setup(const PoissonHierarchy& h) override;
  MultigridOps* multigrid() override { return poisson_.get(); }

  void pcg_start_on_device(int solve, double tolerance, int max_iterations) override;
  void pcg_step_on_device(int solve, double tolerance, int max_iterations) override;
  void repeat_on_device(const std::function<void()>& body) override;
  void viscous_solve_on_device(VelocityField f, real gamma, int solve, double tolerance) override;

  PhaseTimer& timer() override { return timer_; }
  void synchronize() override { stream_.synchronize(); }

  // ---- stepping without host round trips ----
  // Over ranks every scalar comes back to the host (the reductions add
  // every rank's through MPI): the host step.
  DeviceStepping* device_stepping() override { return rows_->split() ? nullptr : this; }

  void start_device_clock(const DeviceClock& clock, const DtRule& rule) override;
  void choose_dt_on_device() override;
  void scale_dt_on_device(real factor) override;
  void close_record() override;
  bool take_record(StepRecord& r, bool wait) override;

  int records_in_flight() const override { return static_cast<int>(head_ - tail_); }

  void segment(int key, const std::function<void()>& ops) override;

 private:
  CudaPoisson& mg() {
    if (!poisson_) throw std::logic_error("cuda: a multigrid primitive before poisson_setup");
    return *poisson_;
  }
  std::pair<real*, real*> velocity(VelocityField f) {
    return {of_field(f, u_, uh_, us_, u0_).data(), of_field(f, v_, vh_, vs_, v0_).data()};
  }

  ReduceScratch scratch() { return {&reduce_ws_, scalars_.data(), host_scalars_.data()}; }

  DeviceStepState* step_state() { return step_state_.data(); }
  // Solve `solve`'s entry of an array field of the device record (kStepSolves
  // or kViscousSolves elements).
  template <class T>
  T* solve_field(size_t offset, int solve) {
    return record_field<T>(offset + static_cast<size_t>(solve) * sizeof(T));
  }
  // A field of the device record, by byte offset into StepRecord.
  template <class T>
  T* record_field(size_t offset) {
    char* rec = reinterpret_cast<char*>(step_state()) + offsetof(DeviceStepState, rec);
    return reinterpret_cast<T*>(rec + offset);
  }

  void allocate_particle_buffers(const MemoryPlan& plan, size_t n);
  // A while node in the segment being recorded: load(h, false) sets its
  // condition before it, body() is recorded into it, then load(h, true).
  void repeat_while(const std::function<void(cudaGraphConditionalHandle, bool)>& load,
                    const std::function<void()>& body);
  // The implicit viscous solve: its work fields (allocated on first use),
  // the passes' fields for b = `f`, the sums of a pass's partials.
  void allocate_viscous_work();
  void make_viscous_fft();  // the transform viscous solve's plans, outside any recording
  HelmholtzFields helmholtz_fields(VelocityField f);
  double* viscous_partials(int which) {
    return viscous_partials_.data() + static_cast<size_t>(which) * viscous_partials_.size() / 2;
  }
  void fold_deposits(CouplingArgs& c);
  template <class T>
  void fold_hooks(CouplingArgs& c, DeviceBuffer<T>& mu, DeviceBuffer<T>& mv, DeviceBuffer<T>& bu,
                  DeviceBuffer<T>& au, DeviceBuffer<T>& bv, DeviceBuffer<T>& av);

  void copy(DeviceBuffer<real>& dst, const DeviceBuffer<real>& src);
  ParticleCounters read_counters();
  void sort_by_cell();

  Config cfg_;
  Grid g_;
  DeviceInfo dev_;
  StencilOpts so_;
  MemoryPlan plan_;
  Stream stream_;
  Stream body_stream_;  // records the body of a loop on the device (repeat_on_device)
  Exec exec_;
  EventTimer timer_;
  Constants k_{};
  InjectionC inj_{};
  DeviceBuffer<Constants> k_dev_;
  DeviceBuffer<real> u_, v_, uh_, vh_, us_, vs_, phi_, phi2_, rhs_, open_;
  DeviceBuffer<real> u0_, v0_;  // VelocityField::start (two-way runs)
  DeviceBuffer<real> clearance_;  // MemoryPlan::advection_clearance
  // The implicit viscous solve (sim/model/viscous.hpp): the iterates x_k in
  // [newest_], x_{k-1} in the other, u and v each (MemoryPlan::viscous_work);
  // the passes' partial sums (r^2, then b^2) and the device solve's scalars.
  DeviceBuffer<real> hu_[2], hv_[2];
  int newest_ = 0;
  std::unique_ptr<cuda::CudaFftHelmholtz> viscous_fft_;  // the transform viscous solve (viscous_transform())
  mutable int viscous_transform_ = -1;                    // viscous_transform(), once known
  DeviceBuffer<double> viscous_partials_;
  DeviceBuffer<ViscousDeviceState> viscous_state_;
  // The boundary links of this rank's rows and the step's parts of
  // their sums (sim/model/boundary_flux.hpp; MemoryPlan::reductions)
  BoundaryLinks link_host_;
  DeviceBuffer<BoundaryLink> links_;
  DeviceBuffer<int> link_first_;
  DeviceBuffer<double> link_sums_;
  DeviceBuffer<double> partials_, scalars_;
  PinnedBuffer<double> host_scalars_{8};
  DeviceBuffer<unsigned char> reduce_ws_, sort_ws_, deposit_ws_;
  DeviceBuffer<unsigned long long> counters_;
  ParticleStore store_;
  DeviceBuffer<uint32_t> sort_keys_, sort_keys_alt_, sort_slots_, sort_slots_alt_;
  DeviceBuffer<real> mu_, mv_, au_, av_, bu_, bv_;  // two-way coupling: M, A, B per face (CouplingFields)
  DeviceBuffer<uint32_t> pair_keys_, pair_keys_alt_, unique_keys_, pair_perm_, pair_perm_alt_;
  DeviceBuffer<real> pair_values_, pair_values_b_, pair_gathered_, pair_sums_;
  DeviceBuffer<unsigned long long> fixed_mu_, fixed_mv_, fixed_bu_, fixed_bv_, fixed_au_, fixed_av_;  // deposit=fixed
  DeviceBuffer<unsigned int> fixed_bounds_;
  DeviceBuffer<int> run_count_;
  DeviceBuffer<uint32_t> gather_keys_, gather_keys_alt_, gather_slots_, gather_slots_alt_;  // deposit=gather
  DeviceBuffer<float2> gather_wu_, gather_wv_, gather_qu_, gather_qv_;
  DeviceBuffer<real> gather_mass_;
  DeviceBuffer<int2> gather_nodes_;
  VelocityTextures textures_, stage_textures_;  // sampling=texture: current, and stage (two-way)
  // two-way: the particles' share of the projection (ImpulseFields): per
  // slot what each took and their bound, per face the same deposited
  // (integers, zero between steps), the pay pass's partials and their sum
  DeviceBuffer<float4> took_;
  DeviceBuffer<unsigned int> took_bound_;
  DeviceBuffer<unsigned long long> took_u_, took_v_;
  DeviceBuffer<double> impulse_partials_, impulse_gained_;
  int64_t fluid_faces_[2] = {0, 0};                        // active faces not touching a solid, u and v
  DeviceBuffer<float4> u4_, v4_;  // sampling=packed
  std::unique_ptr<CudaPoisson> poisson_;  // after poisson_setup
  std::optional<SnapshotStaging> staging_;  // made at the first snapshot; a pending one keeps its own slot alive
  std::unique_ptr<CudaFftPoisson> fft_;  // after transform_setup: project() uses x_
  // The transform solve bound to this backend's arrays (TransformOps).
  struct Transform final : TransformOps {
    CudaBackend* b;
    explicit Transform(CudaBackend* backend) : b(backend) {}
    void fft_solve() override { b->fft_->solve(b->rhs_.data(), b->x_.data(), b->phi_.data()); }
    double poisson_residual_norm() override {
      return b->fft_->residual_norm(b->rhs_.data(), b->x_.data(), b->open_.data());
    }
  } transform_{this};
  DeviceBuffer<double> x_;               // float64 pressure of the transform solve
  // stepping on the device: the step's clock and record, the host ring
  // the records come back into, and the recorded segments
  static constexpr int kRing = 32;
  DtRule rule_{};
  DeviceBuffer<DeviceStepState> step_state_;
  PinnedBuffer<StepRecord> ring_;
  std::vector<Event> ring_events_;
  int64_t head_ = 0, tail_ = 0;
  bool graphs_ = false;
  bool recording_ = false;
  struct Recorded {
    GraphExec graph;
    std::vector<EventTimer::Node> timer_nodes;
  };
  std::map<std::pair<int, int>, Recorded> graphs_by_key_;
  std::shared_ptr<const RankSplit> ranks_;  // never null (OneRank alone)
  std::unique_ptr<DeviceRows> rows_;        // the rows' transport (nothing moves over one GPU)
  DeviceBuffer<Particle> leaving_, arrivals_;     // over ranks: the particle migration
  DeviceBuffer<unsigned int> leaving_count_;
  bool permuted_ = false;  // slots out of canonical order since the last upload
  DeviceBuffer<uint32_t> where_;  // over ranks, once sorted: each slot's position (slot_positions)
  int64_t particle_steps_ = 0;
  int64_t nonfinite_ = 0;  // kNonFinite as of the last compute_rhs
};

}  // namespace sim::cuda
