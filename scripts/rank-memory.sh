#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Memory per rank of the weak case (scripts/weak-case.sh) over N CPU ranks:
#   scripts/rank-memory.sh DIR [NX [COUNT [RANKS]]]
# (defaults 4096, 16777216 particles, "1 2 4 8"). Each rank's peak resident
# memory (VmHWM through /usr/bin/time) for STEPS steps (default 3) and the
# run's final snapshot, above the same ranks' peak on a 64^2 case with 1000
# particles (the runtime, MPI, plans: the per-process baseline), against
# one rank's figure over N: the issue's target is within 15% of it (plus the
# halo rows). Rank 0 also gathers the snapshot, so it is shown apart from
# the largest of the other ranks. Table in DIR/memory.txt, raw figures in
# DIR/raw.txt. SIM: the binary (default build/sim); ranks run one OpenMP
# thread each beyond one rank. RESTART=1: each run (the baseline's too)
# restarts from the snapshot one rank wrote after one step of its case.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?output directory}
nx=${2:-4096}
count=${3:-16777216}
ranks=${4:-1 2 4 8}
sim=${SIM:-build/sim}
steps=${STEPS:-3}
mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

restart=${RESTART:-0}
# peak RSS in kB of every rank of `np` ranks running `config`, one per line
peaks() {  # np config
  local np=$1 cfg=$2 from=() last=$steps
  if [[ $restart == 1 ]]; then
    from=(--restart "$cfg.snap/snap_000001.h5")
    last=$((steps + 1))
  fi
  rm -f "$work"/rss.*
  local threads=$(( np > 1 ? 1 : $(nproc) ))
  OMP_NUM_THREADS=$threads mpirun -np "$np" --oversubscribe bash -c \
    '/usr/bin/time -f %M -o "'"$work"'/rss.${OMPI_COMM_WORLD_RANK:-0}" "$@"' sim \
    "$sim" --quiet --backend cpu --overwrite --steps "$last" --set run.snapshot_initial=false "${from[@]}" "$cfg" \
    > /dev/null
  for ((r = 0; r < np; ++r)); do tail -n 1 "$work/rss.$r"; done
}
# RESTART=1: the snapshot of one step of `config` by one rank, in config.snap/
snapshot_of() {  # config
  [[ $restart == 1 ]] || return 0
  "$sim" --quiet --backend cpu --overwrite --steps 1 --set run.snapshot_initial=false --output "$1.snap" "$1" > /dev/null
}

scripts/weak-case.sh "$nx" "$nx" 1 "$count" "$work/out" > "$work/case.toml"
scripts/weak-case.sh 64 64 1 1000 "$work/base" > "$work/base.toml"
snapshot_of "$work/case.toml"
snapshot_of "$work/base.toml"
{
  echo "# $(date -u +%F) $(uname -n), $(nproc) cores; $sim ($("$sim" --version | head -n 1))"
  echo "# case ${nx}^2, $count two-way particles over the whole height; $steps steps and the final snapshot" \
    "$([[ $restart == 1 ]] && echo "after a restart from step 1")"
} > "$dir/raw.txt"
one=""
{
  printf '%5s %14s %14s %14s %14s %12s %8s\n' ranks "base MiB" "rank 0 MiB" "others MiB" "above (max)" "one/N MiB" ratio
  for np in $ranks; do
    mapfile -t base < <(peaks "$np" "$work/base.toml")
    mapfile -t case < <(peaks "$np" "$work/case.toml")
    echo "ranks $np base ${base[*]} case ${case[*]}" >> "$dir/raw.txt"
    b=$(printf '%s\n' "${base[@]}" | sort -n | tail -n 1)
    c0=${case[0]}
    others=0
    for ((r = 1; r < np; ++r)); do ((case[r] > others)) && others=${case[r]}; done
    most=$(( c0 > others ? c0 : others ))
    above=$(( most - b ))
    [[ -z $one ]] && one=$above
    awk -v np="$np" -v b="$b" -v c0="$c0" -v o="$others" -v a="$above" -v one="$one" 'BEGIN {
      printf "%5d %14.1f %14.1f %14s %14.1f %12.1f %8.2f\n", np, b / 1024, c0 / 1024,
        (np > 1 ? sprintf("%.1f", o / 1024) : "-"), a / 1024, one / np / 1024, a / (one / np) }'
  done
} | tee "$dir/memory.txt"
