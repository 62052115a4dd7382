#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two builds of sim on the same GPU, interleaved, to tell a change from
# run-to-run noise: the main job (`sim --layout=soa --steps 1000
# config/box.toml`, steps/s) and the large solved step
# (config/bench_large_solve.toml, 60 steps, ms/step of the stepping phases:
# momentum + pressure + project + particles, the snapshot excluded), ROUNDS
# times each, OLD then NEW in every round. Prints each run and the median and
# spread of each build; the raw outputs go to DIR.
#
#   scripts/bench-before-after.sh OLD_SIM NEW_SIM DIR [ROUNDS=5]
#   e.g. on the device: scripts/bench-before-after.sh .gpu/sim_old .gpu/sim $OUT/before_after
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 dir=$3 rounds=${4:-5}
mkdir -p "$dir"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

main_rate() { awk '/steps\/s$/ {print $(NF-1)}' "$1" | tail -1; }
step_ms() {  # the stepping phases' ms/step
  awk '$1 ~ /^(momentum|pressure|project|particles)$/ {s += $3} END {printf "%.4f\n", s}' "$1"
}

for r in $(seq 1 "$rounds"); do
  for which in old new; do
    exe=$old
    [[ $which == new ]] && exe=$new
    f=$dir/main_${which}_$r.txt
    "$exe" --backend cuda --layout=soa --steps 1000 --output "$scratch/box_$which" config/box.toml >"$f" 2>&1
    g=$dir/large_solve_${which}_$r.txt
    "$exe" --backend cuda --steps 60 --output "$scratch/large_$which" config/bench_large_solve.toml >"$g" 2>&1
    rm -rf "$scratch"/*
    printf '%-4s round %d: main job %8s steps/s   bench_large_solve %8s ms/step\n' "$which" "$r" \
      "$(main_rate "$f")" "$(step_ms "$g")" | tee -a "$dir/summary.txt"
  done
done

summary() {  # median (min-max) of a column of numbers
  sort -g | awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                                   printf "%.4g (%.4g-%.4g)", m, v[1], v[NR]}'
}
for which in old new; do
  m=$(for f in "$dir"/main_${which}_*.txt; do main_rate "$f"; done | summary)
  l=$(for f in "$dir"/large_solve_${which}_*.txt; do step_ms "$f"; done | summary)
  printf '%s: main job %s steps/s, bench_large_solve %s ms/step (median, min-max of %d)\n' \
    "$which" "$m" "$l" "$rounds" | tee -a "$dir/summary.txt"
done
