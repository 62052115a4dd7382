#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every shipped config runs as a user runs it: `sim --steps N CONFIG`, with
# nothing else changed but the output directory (a scratch one) and the
# backend asked for; exit status 0 and the summary's steps line, or this
# script fails naming the config. N = 2, and 1 for the 4096^2 cases (16.7M
# particles: about 30 s a step on two cores).
#
#   tests/shipped_configs.sh SIM [BACKEND]     (BACKEND: cpu (default) or cuda)
set -euo pipefail
sim=$1 backend=${2:-cpu}
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for cfg in "$here"/config/*.toml; do
  name=$(basename "$cfg" .toml)
  steps=2
  [[ $name == bench_large* ]] && steps=1
  log=$scratch/$name.txt
  if "$sim" --backend "$backend" --steps "$steps" --output "$scratch/run-$name" "$cfg" >"$log" 2>&1 &&
    grep -qE "^$steps steps, simulated time" "$log"; then
    echo "$name: ok ($(grep -E "^$steps steps" "$log"))"
  else
    echo "$name: FAILED (sim --backend $backend --steps $steps $cfg):"
    cat "$log"
    status=1
  fi
  rm -rf "$scratch/run-$name"
done
exit $status
