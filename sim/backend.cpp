#include "sim/backend.hpp"

#include <stdexcept>
#include <string>

namespace sim {

namespace {
[[noreturn]] void missing(const char* what) {
  throw std::logic_error(std::string("this backend does not implement ") + what);
}
}  // namespace

void PressureOps::poisson_setup(const PoissonHierarchy&) { missing("poisson_setup"); }
double PressureOps::pcg_start() { missing("pcg_start"); }
void PressureOps::mg_load_residual() { missing("mg_load_residual"); }
void PressureOps::mg_smooth(int, int) { missing("mg_smooth"); }
void PressureOps::mg_restrict(int) { missing("mg_restrict"); }
void PressureOps::mg_prolong(int) { missing("mg_prolong"); }
double PressureOps::pcg_dot_rz() { missing("pcg_dot_rz"); }
void PressureOps::pcg_direction(double) { missing("pcg_direction"); }
double PressureOps::pcg_apply() { missing("pcg_apply"); }
double PressureOps::pcg_update(double) { missing("pcg_update"); }
double PressureOps::poisson_residual_norm() { missing("poisson_residual_norm"); }
void PressureOps::pcg_finish() { missing("pcg_finish"); }
void PressureOps::fft_setup(const PoissonHierarchy&) { missing("fft_setup"); }
void PressureOps::fft_solve() { missing("fft_solve"); }

const char* phase_name(Phase p) {
  static const char* names[] = {"advect", "diffuse", "pressure", "project", "particles", "output"};
  return names[static_cast<int>(p)];
}

namespace {
class ReadyState final : public PendingState {
 public:
  explicit ReadyState(SimState s) : s_(std::move(s)) {}
  SimState take() override { return std::move(s_); }

 private:
  SimState s_;
};
}  // namespace

std::unique_ptr<PendingState> ready_state(SimState s) { return std::make_unique<ReadyState>(std::move(s)); }

void Backend::advect() {
  advect_stage(VelocityField::current, VelocityField::midpoint, real(0.5));
  fill_velocity_halo(VelocityField::midpoint);
  advect_stage(VelocityField::midpoint, VelocityField::provisional, real(1));
  fill_velocity_halo(VelocityField::provisional);
}

std::unique_ptr<PendingState> Backend::begin_download(SimState header) {
  download(header);
  return ready_state(std::move(header));
}

}  // namespace sim
