#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mpirun -np N sim against one rank, through the real binary and its files:
#   split_run.sh SIM CONFIG STEPS DELTA [sim options...]
# runs CONFIG for STEPS steps on 1, 2 and 3 ranks (3 on 2 cores:
# oversubscribed) and compares every dataset of the final snapshots with
# h5diff: bit for bit when DELTA is 0, else to DELTA. Then a restart: 2 ranks
# to STEPS/2, 3 ranks on from that snapshot to STEPS, against the one-rank
# run again. A failing run fails the test. SPLIT_RANKS (default "2 3")
# names other rank counts to compare with one rank; SPLIT_SNAPSHOTS, when
# set, the start of the report's "snapshots:" line the split runs must print;
# SPLIT_PRESSURE_DELTA, when set, the delta of /grid/phi and /grid/pressure
# (a solve to a relative residual leaves the pressure's smooth modes less
# exact than the velocity it projects); SPLIT_DERIVED_DELTA, that of
# /grid/divergence and /grid/vorticity (differences of the velocity over a
# cell: its delta over h); SPLIT_FORCES, when set, the relative difference
# allowed in the report's obstacle forces, relative to each force's larger
# component (summed over ranks in rank order).
set -euo pipefail
sim=$1 config=$2 steps=$3 delta=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1

run() {
  local np=$1
  shift
  if [[ $np == 1 ]]; then
    "$sim" "$@" "$config" > "$work/report.txt"
  else
    mpirun -np "$np" --oversubscribe "$sim" "$@" "$config" > "$work/report.txt"
    # How the snapshots were written: SPLIT_SNAPSHOTS names the way this
    # build must take (all ranks together with parallel HDF5, else gathered).
    if [[ -n ${SPLIT_SNAPSHOTS:-} ]] && ! grep -q "^  snapshots: $SPLIT_SNAPSHOTS" "$work/report.txt"; then
      echo "split_run: $np ranks did not report snapshots '$SPLIT_SNAPSHOTS':"
      grep snapshots "$work/report.txt" || echo "(no snapshots line)"
      exit 1
    fi
  fi
}

snap() { printf '%s/snap_%06d.h5' "$1" "$2"; }

datasets=()  # every dataset of the one-rank snapshot (io/snapshot_fields.hpp lists them)
failed=0
compare() {  # one-rank file, other file, what
  for d in "${datasets[@]}"; do
    local opts=(-q) dd=$delta
    [[ -n ${SPLIT_PRESSURE_DELTA:-} && ($d == /grid/phi || $d == /grid/pressure) ]] && dd=$SPLIT_PRESSURE_DELTA
    [[ -n ${SPLIT_DERIVED_DELTA:-} && ($d == /grid/divergence || $d == /grid/vorticity) ]] && dd=$SPLIT_DERIVED_DELTA
    [[ $dd != 0 && $d != /particles/id ]] && opts+=(-d "$dd")
    if ! h5diff "${opts[@]}" "$1" "$2" "$d" "$d"; then
      echo "split_run: $3: $d differs from one rank's (h5diff -d $dd):"
      h5diff -d "$dd" "$1" "$2" "$d" "$d" | tail -n 4 || true
      failed=1
    fi
  done
  # The state's attributes (io/snapshot_writer.cpp's header), the same.
  for a in step time dt next_id removed recycled capacity; do
    local one other
    one=$(h5dump -a "/$a" "$1" | grep '(0)')
    other=$(h5dump -a "/$a" "$2" | grep '(0)')
    if [[ $one != "$other" ]]; then
      echo "split_run: $3: attribute $a is${other#*:} against one rank's${one#*:}"
      failed=1
    fi
  done
}

# The obstacle force lines of two reports, number by number, to SPLIT_FORCES.
forces() { grep '^obstacle ' "$1" | sed 's/.*last step (\([^)]*\)).*/\1/' | tr -d ','; }
compare_forces() {  # one-rank report, other report, what
  [[ -z ${SPLIT_FORCES:-} ]] && return 0
  if [[ -z $(forces "$1") ]]; then
    echo "split_run: $3: the one-rank report has no obstacle force"
    failed=1
    return
  fi
  # each obstacle's force (x, y) to SPLIT_FORCES of its larger component
  if ! paste <(forces "$1") <(forces "$2") | awk -v tol="$SPLIT_FORCES" '
      { n = NF / 2; s = 1e-300; for (i = 1; i <= n; ++i) { a = $i < 0 ? -$i : $i; if (a > s) s = a }
        for (i = 1; i <= n; ++i) { d = $i - $(i + n); if (d < 0) d = -d; if (d > tol * s) bad = 1 } }
      END { exit bad }'; then
    echo "split_run: $3: obstacle forces differ from one rank's by more than $SPLIT_FORCES:"
    paste <(forces "$1") <(forces "$2")
    failed=1
  fi
}

half=$((steps / 2))
run 1 --steps "$steps" --output "$work/np1" "$@"
cp "$work/report.txt" "$work/report1.txt"
# (h5diff of the file with itself lists them: the GPU machine has h5diff alone)
mapfile -t datasets < <(h5diff -v "$(snap "$work/np1" "$steps")" "$(snap "$work/np1" "$steps")" |
                          sed -n 's/^dataset: <\([^>]*\)> and .*/\1/p')
if [[ ${#datasets[@]} == 0 ]]; then
  echo "split_run: no datasets in $(snap "$work/np1" "$steps")"
  exit 1
fi
for np in ${SPLIT_RANKS:-2 3}; do
  run "$np" --steps "$steps" --output "$work/np$np" "$@"
  compare "$(snap "$work/np1" "$steps")" "$(snap "$work/np$np" "$steps")" "$np ranks"
  compare_forces "$work/report1.txt" "$work/report.txt" "$np ranks"
done
run 2 --steps "$half" --output "$work/restart" "$@"
run 3 --steps "$steps" --output "$work/restart" --restart "$(snap "$work/restart" "$half")" "$@"
compare "$(snap "$work/np1" "$steps")" "$(snap "$work/restart" "$steps")" "2 ranks to step $half, then 3"
if [[ $failed == 0 ]]; then
  echo "split_run: $(basename "$config") $*: 1 rank, ${SPLIT_RANKS:-2 3} ranks and the restart agree (delta $delta)"
fi
exit "$failed"
