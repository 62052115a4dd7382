#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shipped small cases on the GPU against the CPU backend's default on the
# same machine: box, channel, cavity and taylor_green, each variant's
# `--backend cuda --steps N` run ROUNDS times, interleaved round by round (to
# tell a change from noise), steps/s as sim reports it (median and spread),
# and the CPU backend once, with the first variant's executable.
#
#   scripts/small-grids.sh DIR ROUNDS 'LABEL=SIM [sim options...]' ...
#   e.g. on the device:
#     scripts/small-grids.sh $OUT/small 3 'old=.gpu/sim_old' 'cufft=.gpu/sim' \
#       'dense=.gpu/sim --set gpu.dense_transform_cells=65536'
# Prints one line per config and variant; the raw outputs go to DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?output directory} rounds=${2:?rounds}
shift 2
[[ $# -ge 1 ]] || { echo "small-grids.sh: at least one LABEL=SIM variant" >&2; exit 2; }
labels=() cmds=()
for v in "$@"; do
  labels+=("${v%%=*}")
  cmds+=("${v#*=}")
done
mkdir -p "$dir"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
declare -A gpu_steps=([box]=3000 [channel]=1000 [cavity]=4000 [taylor_green]=4000)
declare -A cpu_steps=([box]=300 [channel]=200 [cavity]=1000 [taylor_green]=1000)
rate() { awk '/steps\/s$/ {print $(NF-1)}' "$1" | tail -1; }
summary() {  # median (min-max) of a column of numbers
  sort -g | awk '{v[NR] = $1} END {if (NR == 0) {printf "failed"; exit}
                                   m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                                   printf "%.1f (%.1f-%.1f)", m, v[1], v[NR]}'
}
for c in box channel cavity taylor_green; do
  for r in $(seq 1 "$rounds"); do
    for n in "${!labels[@]}"; do
      read -r -a cmd <<< "${cmds[$n]}"
      "${cmd[@]}" --backend cuda --steps "${gpu_steps[$c]}" --snapshot-every 0 --overwrite \
        --output "$scratch/$c" "config/$c.toml" > "$dir/${c}_gpu_${labels[$n]}_$r.txt" 2>&1 || true
    done
  done
  read -r -a first <<< "${cmds[0]}"
  "${first[0]}" --backend cpu --steps "${cpu_steps[$c]}" --snapshot-every 0 --overwrite --output "$scratch/$c" \
    "config/$c.toml" > "$dir/${c}_cpu.txt" 2>&1 || true
  cpu=$(rate "$dir/${c}_cpu.txt")
  for n in "${!labels[@]}"; do
    g=$(for f in "$dir"/${c}_gpu_${labels[$n]}_*.txt; do rate "$f"; done | summary)
    med=${g%% *}
    printf '%-13s %-8s gpu %-28s cpu %8s steps/s  gpu/cpu %6.1fx\n' "$c" "${labels[$n]}" "$g" "${cpu:-?}" \
      "$(awk -v a="${med:-0}" -v b="${cpu:-0}" 'BEGIN { print (a + 0 > 0 && b > 0) ? a / b : 0 }')" | tee -a "$dir/summary.txt"
  done
done
