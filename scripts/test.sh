#!/usr/bin/env bash
# Builds sim and runs the whole test suite (GPU tests report themselves
# skipped without a device).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh "$@"
scripts/build.sh
cd build && ctest --output-on-failure
