#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shipped small cases on the GPU against the CPU backend's default on the
# same machine: `sim --backend cuda --steps N CONFIG` ROUNDS times (steps/s as
# sim reports it, median and spread) and `sim --backend cpu` once, for box,
# channel, cavity and taylor_green. With two executables the GPU runs of
# both are interleaved, round by round, to tell a change from noise.
#
#   scripts/small-grids.sh DIR SIM [OTHER_SIM] [ROUNDS=3]
#   e.g. on the device: scripts/small-grids.sh $OUT/small .gpu/sim .gpu/sim_old
# Prints one line per config and build; the raw outputs go to DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1 sim=$2 other=${3:-} rounds=${4:-3}
mkdir -p "$dir"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
declare -A gpu_steps=([box]=3000 [channel]=1000 [cavity]=4000 [taylor_green]=4000)
declare -A cpu_steps=([box]=300 [channel]=200 [cavity]=1000 [taylor_green]=1000)
rate() { awk '/steps\/s$/ {print $(NF-1)}' "$1" | tail -1; }
summary() {  # median (min-max) of a column of numbers
  sort -g | awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                                   printf "%.1f (%.1f-%.1f)", m, v[1], v[NR]}'
}
builds=(new)
[[ -n $other ]] && builds=(new old)
exe_of() { [[ $1 == new ]] && echo "$sim" || echo "$other"; }
for c in box channel cavity taylor_green; do
  for r in $(seq 1 "$rounds"); do
    for b in "${builds[@]}"; do
      "$(exe_of "$b")" --backend cuda --steps "${gpu_steps[$c]}" --snapshot-every 0 --overwrite \
        --output "$scratch/$c" "config/$c.toml" > "$dir/${c}_gpu_${b}_$r.txt" 2>&1
    done
  done
  "$sim" --backend cpu --steps "${cpu_steps[$c]}" --snapshot-every 0 --overwrite --output "$scratch/$c" \
    "config/$c.toml" > "$dir/${c}_cpu.txt" 2>&1
  cpu=$(rate "$dir/${c}_cpu.txt")
  for b in "${builds[@]}"; do
    g=$(for f in "$dir"/${c}_gpu_${b}_*.txt; do rate "$f"; done | summary)
    med=${g%% *}
    printf '%-13s %-3s gpu %-26s cpu %8s steps/s  gpu/cpu %5.1fx\n' "$c" "$b" "$g" "$cpu" \
      "$(awk -v a="$med" -v b="$cpu" 'BEGIN { print a / b }')" | tee -a "$dir/summary.txt"
  done
done
