// SPDX-License-Identifier: MIT
#include "sim/app/version.hpp"

#include <sim_commit.hpp>  // generated at build time (cmake/commit.cmake), in the build tree

namespace sim {

std::string version_line() { return std::string("sim ") + SIM_VERSION + " (commit " + SIM_COMMIT + ")"; }

}  // namespace sim
