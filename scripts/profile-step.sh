#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The per-kernel table of one GPU step from Nsight Compute: each kernel's
# time, the bytes it moved through device memory (DRAM reads + writes) and
# those bytes over its time as a share of the device-to-device copy.
#
#   scripts/profile-step.sh CONFIG OUTDIR [STEPS] [extra sim arguments...]
#
# Runs `sim --backend cuda --steps STEPS+1 CONFIG` under ncu on the host path
# (gpu.graphs = false: the same kernels as the recorded step, launched one by
# one so that ncu sees each) and profiles one step's worth of consecutive
# launches after the first STEPS - 1 steps. A run of N steps makes
# I + N S + E launches (setup, S a step, E at the end), counted cheaply for
# N = STEPS - 1 and STEPS: S is their difference, and the S launches after the
# first I + (STEPS - 1) S + E of a run of STEPS + 1 steps hold each launch of
# a step once (the end of one step and the start of the next; E < S). Steps
# that differ (a sort every gpu.sort_every steps) are not seen: pick STEPS so. ncu runs with --clock-control none (the card's clocks
# as they are). Writes OUTDIR/ncu.csv (raw) and OUTDIR/kernels.txt (the
# table, by kernel name, sorted by time), and prints the table.
# Needs the prebuilt .gpu/sim and .gpu/lib/ of scripts/gpu-run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
config=$1 out=$2 steps=${3:-3}
shift $(( $# >= 3 ? 3 : $# ))
mkdir -p "$out"
L=$PWD/.gpu/lib:/usr/local/cuda/lib64
run() { LD_LIBRARY_PATH=$L .gpu/sim --backend cuda --quiet --set gpu.graphs=false --set run.snapshot_every=0 \
          --output "$(mktemp -d)/run" "$@" "$config"; }
# launches per run of N steps: ncu with no metrics counts them cheaply
count() {
  ncu --clock-control none --metrics gpu__time_duration.sum --csv \
      -- env LD_LIBRARY_PATH=$L .gpu/sim --backend cuda --quiet --set gpu.graphs=false --set run.snapshot_every=0 \
      --output "$(mktemp -d)/run" --steps "$1" "${@:2}" "$config" 2>>"$out/count.err" | grep -c '"gpu__time_duration.sum"' || true
}
a=$(count $((steps - 1)) "$@")
b=$(count "$steps" "$@")
[[ $a -gt 0 && $b -gt $a ]] || { echo "counting launches failed ($a, $b)"; tail -5 "$out/count.err"; exit 1; }
echo "launches: $a for $((steps - 1)) steps, $b for $steps: profiling $((b - a)) from launch $a of $((steps + 1)) steps"
ncu --clock-control none --csv --print-units base --launch-skip "$a" --launch-count $((b - a)) \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    -- env LD_LIBRARY_PATH=$L .gpu/sim --backend cuda --quiet --set gpu.graphs=false --set run.snapshot_every=0 \
    --output "$(mktemp -d)/run" --steps $((steps + 1)) "$@" "$config" > "$out/ncu.csv" 2> "$out/ncu.err" || {
  tail -5 "$out/ncu.err"; exit 1; }
python3 scripts/ncu-table.py "$out/ncu.csv" --copy-gbs "${SIM_COPY_GBS:-4250}" | tee "$out/kernels.txt"
