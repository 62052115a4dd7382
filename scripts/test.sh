#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what is missing (ParaView included: one test opens the XDMF
# output with it), builds sim and runs the whole test suite. GPU tests
# report themselves skipped when there is no CUDA device. Then the
# sanitizer suite (scripts/sanitize.sh) and 60 s of fuzzing (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --paraview
# The tests and MPI on, and CUDA for sm_80 and sm_90 wherever nvcc is,
# whatever a first run (scripts/run-box.sh, which needs none of them)
# configured build/ with.
cuda=()
if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  cuda=(-DSIM_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=80;90")
fi
scripts/build.sh -DSIM_TESTS=ON -DSIM_MPI=ON "${cuda[@]}"
(cd build && ctest --output-on-failure)
# The CPU suite again under ASan + UBSan, then a minute of fuzzing the
# config front end: about 12 minutes more on a 2-core machine (sanitizer
# build 4 min, its suite 4.5 min, fuzzer build 1.5-3 min, fuzzing 1 min).
scripts/sanitize.sh
scripts/fuzz.sh 60
