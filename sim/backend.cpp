#include "sim/backend.hpp"

#include <stdexcept>

namespace sim {

const char* phase_name(Phase p) {
  static const char* names[] = {"momentum", "pressure", "project", "particles", "output"};
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

std::unique_ptr<PendingState> Backend::begin_download(SimState header) {
  download(header);
  return ready_state(std::move(header));
}

namespace {
[[noreturn]] void not_asynchronous(const char* what) {
  throw std::logic_error(std::string("backend: ") + what + " of asynchronous stepping on a backend without it");
}
}  // namespace

void PressureOps::compute_rhs_on_device(int) { not_asynchronous("compute_rhs_on_device"); }
void PressureOps::poisson_residual_on_device(int) { not_asynchronous("poisson_residual_on_device"); }
void PressureOps::pcg_start_on_device(int, double, int) { not_asynchronous("pcg_start_on_device"); }
void PressureOps::pcg_step_on_device(int, double, int) { not_asynchronous("pcg_step_on_device"); }
void PressureOps::repeat_on_device(const std::function<void()>&) { not_asynchronous("repeat_on_device"); }
void Backend::segment(int, const std::function<void()>& ops) { ops(); }
void Backend::start_device_clock(const DeviceClock&, const DtRule&) { not_asynchronous("start_device_clock"); }
void Backend::choose_dt_on_device() { not_asynchronous("choose_dt_on_device"); }
void Backend::scale_dt_on_device(real) { not_asynchronous("scale_dt_on_device"); }
void Backend::step_particles_on_device() { not_asynchronous("step_particles_on_device"); }
void Backend::close_record() { not_asynchronous("close_record"); }
bool Backend::take_record(StepRecord&, bool) { return false; }

}  // namespace sim
