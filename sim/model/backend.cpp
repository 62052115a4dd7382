// SPDX-License-Identifier: MIT
#include "sim/model/backend.hpp"

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

}  // namespace sim
