#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the CPU code with AddressSanitizer + UndefinedBehaviorSanitizer into
# build-sanitize/ (-DSIM_CUDA=OFF -DSIM_SANITIZE=ON) and runs the CPU test
# suite under it; the sim executable the CLI tests start is the sanitized
# one too. Any report fails the run (-fno-sanitize-recover=all, abort_on_error).
#   scripts/sanitize.sh [DOCTEST OPTIONS]     e.g. -tc='cli:*'
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
if [[ ! -f build-sanitize/CMakeCache.txt ]]; then
  cmake -B build-sanitize "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIM_CUDA=OFF -DSIM_SANITIZE=ON
fi
cmake --build build-sanitize -j"$(nproc)" --target sim sim_tests
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The ParaView data case is skipped by default anyway; it needs pvpython, not a sanitizer.
# The Schafer-Turek cases are physics over paths other tests cover (obstacles, inflow):
# 70 s a run, many minutes under the sanitizers.
build-sanitize/sim_tests --test-case-exclude='io: ParaView*,schafer-turek*' "$@"
