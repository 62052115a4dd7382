#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what is missing, builds sim, and runs the falling-cloud case:
#   sim --layout=soa --steps 1000 config/box.toml
# Extra arguments go to sim (e.g. --backend cpu, --output out/box).
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what sim needs, and only the sim target: the tests, GPU tests,
# fuzzers and ParaView belong to scripts/test.sh.
scripts/install-deps.sh --run
# A first build compiles the CUDA backend only where it can run: for the
# GPU of this machine alone, and not at all without one (sim would run on
# the CPU anyway). An existing build/ keeps its configuration.
args=()
if [[ ! -f build/CMakeCache.txt ]]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    args=(-DCMAKE_CUDA_ARCHITECTURES=native)
  else
    args=(-DSIM_CUDA=OFF)
  fi
fi
scripts/build.sh "${args[@]}" -- sim
# --overwrite: running the demo again replaces its previous output.
exec build/sim --layout=soa --steps 1000 --overwrite "$@" config/box.toml
