#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the config fuzz target (tests/fuzz/config_fuzz.cpp) with clang's
# libFuzzer + ASan + UBSan and runs it for SECONDS (default 60) on a corpus
# seeded from config/*.toml. A finding stops the run: the crashing input is
# written to build-fuzz/ and the script exits non-zero.
#   scripts/fuzz.sh [SECONDS]
# Environment: CXX_FUZZ (the clang++ to use).
# Needs clang++ and its runtime (Debian: clang-14, libclang-rt-14-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
CXX_FUZZ=${CXX_FUZZ:-$(command -v clang++-14 || command -v clang++)}
out=build-fuzz
mkdir -p "$out/corpus"
# The shipped configs are the seeds: the fuzzer mutates valid documents
# instead of having to discover TOML and the key names from nothing.
cp config/*.toml "$out/corpus/"
# -DNDEBUG as in the Release build: toml++ 3.3's own debug assertions fire on
# some malformed keys (parser.inl parse_key) that the shipped build reports
# as a parse error; the fuzzer looks for what the shipped code does wrong.
# Only the config front end and what it links against; no HDF5, OpenMP or CUDA.
srcs=(tests/fuzz/config_fuzz.cpp io/config_loader.cpp io/config_schema.cpp io/config_writer.cpp io/config_checks.cpp
      sim/model/strategies.cpp)
exe=$out/config_fuzz
newest=$(ls -t "${srcs[@]}" io/config_*.hpp sim/model/*.hpp scripts/fuzz.sh | head -1)
if [[ ! -x $exe || $newest -nt $exe ]]; then
  echo "fuzz: building $exe"
  "$CXX_FUZZ" -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -fno-omit-frame-pointer -DNDEBUG -I. -DSIM_VERSION='"fuzz"' "${srcs[@]}" -o "$exe"
fi
echo "fuzz: running $exe for ${seconds} s"
"$exe" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$out/" "$out/corpus" 2>&1 | tail -40
exit "${PIPESTATUS[0]}"
