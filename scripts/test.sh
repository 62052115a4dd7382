#!/usr/bin/env bash
# Installs what is missing (ParaView included: one test opens the XDMF
# output with it), builds sim and runs the whole test suite. GPU tests
# report themselves skipped when there is no CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --paraview
scripts/build.sh
cd build && ctest --output-on-failure
