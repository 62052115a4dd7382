#!/usr/bin/env bash
# Configures and builds sim into build/ (CUDA when nvcc is found).
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
if [[ ! -f build/CMakeCache.txt ]]; then
  cmake -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
fi
cmake --build build -j"$(nproc)"
