#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures and builds into build/ (CUDA when nvcc is found, MPI when an
# MPI library is, the tests when doctest is).
#   scripts/build.sh [CMAKE_ARGS...] [-- TARGETS...]
# CMAKE_ARGS (e.g. -DSIM_TESTS=ON) configure build/ again, over its cache;
# TARGETS: what to build (default: everything).
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
args=() targets=()
while [[ $# -gt 0 ]]; do
  if [[ $1 == -- ]]; then
    shift
    targets=("$@")
    break
  fi
  args+=("$1")
  shift
done
if [[ ! -f build/CMakeCache.txt ]]; then
  cmake -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${args[@]}"
elif [[ ${#args[@]} -gt 0 ]]; then
  cmake -B build "${args[@]}"
fi
if [[ ${#targets[@]} -gt 0 ]]; then
  cmake --build build -j"$(nproc)" --target "${targets[@]}"
else
  cmake --build build -j"$(nproc)"
fi
