#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Snapshot writing against the disk, in one call on the GPU machine:
# `dd conv=fsync` of a file the size of the snapshot in the output directory
# (the disk's write bandwidth, page cache and fsync included), then
#   sim --backend cuda --steps STEPS --snapshot-every EVERY CONFIG
# with the snapshots uncompressed and at each output.compress level given,
# each run's summary line "snapshots: ..." (bytes, rate to disk, writer
# thread's time by part) and the output phase and hidden time printed.
#
#   scripts/snapshot-speed.sh CONFIG OUTDIR [STEPS] [EVERY] [LEVELS...]
#
# Needs the prebuilt .gpu/sim and .gpu/lib/ of scripts/gpu-run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
config=$1 out=$2 steps=${3:-50} every=${4:-25}
shift $(( $# >= 4 ? 4 : $# ))
levels=("$@")
mkdir -p "$out"
L=$PWD/.gpu/lib:/usr/local/cuda/lib64
work=$(mktemp -d "${TMPDIR:-/tmp}/snapspeed.XXXXXX")
trap 'rm -rf "$work"' EXIT
run() {  # label, then extra sim arguments
  local label=$1
  shift
  rm -rf "$work/run"
  LD_LIBRARY_PATH=$L .gpu/sim --backend cuda --steps "$steps" --snapshot-every "$every" --output "$work/run" "$@" \
    "$config" > "$out/$label.txt" 2>&1
  echo "== $label: $(grep -E '^  output ' "$out/$label.txt" | awk '{print $2 " ms output phase"}'), $(du -sb "$work/run" | cut -f1) bytes"
  grep -E 'snapshots:|hidden' "$out/$label.txt" || true
}
run plain
bytes=$(grep -oE 'snapshots: [0-9]+, [0-9.]+ MB' "$out/plain.txt" | awk '{print $3}')
count=$(grep -oE 'snapshots: [0-9]+' "$out/plain.txt" | awk '{print $2}')
mb=$(python3 -c "print(max(1, round($bytes / $count)))")
echo "== dd conv=fsync of $mb MB in the same file system:"
dd if=/dev/zero of="$work/dd" bs=1M count="$mb" conv=fsync 2>&1 | tail -1
rm -f "$work/dd"
for lv in "${levels[@]}"; do run "compress$lv" --set output.compress=true --set "output.compression_level=$lv"; done
