#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A run over 3 ranks that fails ends every rank with one line, the line one
# rank prints, and a non-zero status; the snapshots written before stay.
#   split_failure.sh SIM CONFIG_DIR
set -euo pipefail
sim=$1 configs=$2
work=$(mktemp -d)
trap 'umount "$work/full" 2> /dev/null || true; rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
failed=0
expect() {  # what, expected status, one-rank stderr file, split stderr file, status
  local lines
  lines=$(grep -c "^sim: error: " "$4" || true)
  if [[ $5 != "$2" || $lines != 1 ]] || ! grep -qxF "$(grep '^sim: error: ' "$3")" "$4"; then
    echo "split_failure: $1: status $5 (expected $2), $lines error lines; one rank said:"
    cat "$3"
    echo "3 ranks said:"
    grep -v '^ *$' "$4" | head -n 20
    failed=1
  fi
}
# The box blown up by 100 g (tests/watchdog_test.cpp): the watchdog's line
# (multigrid: what auto takes over several ranks).
blowup=(--quiet --pressure-solver multigrid --set gravity.y=-981 --set particles.density=8000 --set time.dt=1e-3
        --set run.snapshot_every=5 --set run.steps=200)
status=0
"$sim" "${blowup[@]}" --output "$work/one" "$configs/box.toml" 2> "$work/one.err" || true
mpirun -np 3 --oversubscribe "$sim" "${blowup[@]}" --output "$work/three" "$configs/box.toml" > /dev/null \
  2> "$work/three.err" || status=$?
expect "blow-up" 1 "$work/one.err" "$work/three.err" "$status"
if [[ ! -f $work/three/snap_000005.h5 ]]; then echo "split_failure: blow-up: no snapshot kept"; failed=1; fi
# A config error: every rank reads the config, rank 0 alone says so.
status=0
"$sim" --quiet --set run.bogus=1 "$configs/cavity.toml" 2> "$work/one.err" || true
mpirun -np 3 --oversubscribe "$sim" --quiet --set run.bogus=1 "$configs/cavity.toml" > /dev/null 2> "$work/three.err" ||
  status=$?
expect "config error" 2 "$work/one.err" "$work/three.err" "$status"
# A snapshot that cannot be put in place (a directory holds its name): the
# one-rank line once, status 1, the snapshots before it and the index kept,
# no temporary left. With parallel HDF5 every rank has written its part of
# the file and rank 0 alone fails to rename it.
small=(--snapshot-every 2 --set domain.nx=32 --set domain.ny=32 --set "particles.regions[0].count=200")
mpirun -np 3 --oversubscribe "$sim" --quiet "${small[@]}" --steps 4 --output "$work/write" "$configs/box.toml"
mkdir "$work/write/snap_000006.h5"
status=0
"$sim" --quiet "${small[@]}" --steps 8 --output "$work/write" --restart "$work/write/snap_000004.h5" \
  "$configs/box.toml" 2> "$work/one.err" || true
mpirun -np 3 --oversubscribe "$sim" --quiet "${small[@]}" --steps 8 --output "$work/write" \
  --restart "$work/write/snap_000004.h5" "$configs/box.toml" > /dev/null 2> "$work/three.err" || status=$?
expect "write error" 1 "$work/one.err" "$work/three.err" "$status"
if ! grep -q 'snap_000004.h5' "$work/write/sim.xdmf" || compgen -G "$work/write/*.tmp" > /dev/null; then
  echo "split_failure: write error: the index lost snap_000004.h5 or a temporary was left"
  failed=1
fi
# A full disk (a 200 KiB tmpfs, where this machine lets the test mount one):
# the one-rank wording once, status 1, the snapshots that fitted kept and
# no temporary left, instead of ranks waiting for each other in HDF5.
if mkdir -p "$work/full" && mount -t tmpfs -o size=200k tmpfs "$work/full" 2> /dev/null; then
  status=0
  mpirun -np 3 --oversubscribe "$sim" --quiet "${small[@]}" --steps 40 --set run.snapshot_initial=false \
    --output "$work/full/o" "$configs/box.toml" \
    > /dev/null 2> "$work/full.err" || status=$?
  lines=$(grep -c "^sim: error: no space left on device writing $work/full/o/snap_" "$work/full.err" || true)
  if [[ $status != 1 || $lines != 1 || ! -f $work/full/o/snap_000002.h5 ]] || compgen -G "$work/full/o/*.tmp" > /dev/null; then
    echo "split_failure: full disk: status $status, $lines lines; said:"
    cat "$work/full.err"
    ls -la "$work/full/o"
    failed=1
  fi
  umount "$work/full"
else
  echo "split_failure: full disk: not run (no tmpfs can be mounted here)"
fi
# A grid too large for this host: the memory check counts every rank on it.
status=0
mpirun -np 2 --oversubscribe "$sim" --quiet --set domain.nx=40000 --set domain.ny=40000 --output "$work/big" \
  "$configs/cavity.toml" > /dev/null 2> "$work/big.err" || status=$?
if [[ $status != 1 ]] || ! grep -q "^sim: error: .* of host memory .*(2 ranks on this host, each holding the whole grid)$" \
  "$work/big.err"; then
  echo "split_failure: memory check: status $status, said:"
  cat "$work/big.err"
  failed=1
fi
[[ $failed == 0 ]] && echo "split_failure: one line and the right status from 3 ranks"
exit "$failed"
