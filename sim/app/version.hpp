// SPDX-License-Identifier: MIT
// What `sim --version` prints: the version (project(VERSION) of
// CMakeLists.txt, its one place) and the commit the build came from
// (`git describe --always --dirty`, "unknown" outside a checkout).
#pragma once
#include <string>

namespace sim {

std::string version_line();  // "sim 0.2.0 (commit 1a2b3c4d5e6f)"

}  // namespace sim
