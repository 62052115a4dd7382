#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GPU ranks that fail end every rank with one line and a non-zero status,
# the snapshots written before kept: the box blown up by 100 g (the
# watchdog's line, the same words as one GPU's; the step and the face may
# differ, since one GPU and the ranks round their reductions differently),
# and a snapshot that cannot be put in place (a directory holds its name).
#   gpu_split_failure.sh SIM CONFIG_DIR
# Skipped (exit 77) without a GPU; the ranks share it when there is one.
set -euo pipefail
sim=$1 configs=$2
if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L > /dev/null 2>&1; then
  echo "gpu_split_failure: no GPU: not run"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
failed=0
expect() {  # what, expected status, status, stderr, the start every error line must have
  local lines
  lines=$(grep -c "^sim: error: " "$4" || true)
  if [[ $3 != "$2" || $lines != 1 ]] || ! grep -q "^sim: error: $5" "$4"; then
    echo "gpu_split_failure: $1: status $3 (expected $2), $lines error lines (expected one: 'sim: error: $5...'):"
    grep -v '^ *$' "$4" | head -n 20
    failed=1
  fi
}
blowup=(--quiet --backend cuda --pressure-solver multigrid --set gravity.y=-981 --set particles.density=8000
        --set time.dt=1e-3 --set run.snapshot_every=5 --set run.steps=200)
status=0
"$sim" "${blowup[@]}" --output "$work/one" "$configs/box.toml" 2> "$work/one.err" || status=$?
expect "blow-up, one GPU" 1 "$status" "$work/one.err" "non-finite value at step "
status=0
mpirun -np 3 --oversubscribe "$sim" "${blowup[@]}" --output "$work/three" "$configs/box.toml" > /dev/null \
  2> "$work/three.err" || status=$?
expect "blow-up, 3 ranks" 1 "$status" "$work/three.err" "non-finite value at step "
if [[ ! -f $work/three/snap_000005.h5 ]]; then echo "gpu_split_failure: blow-up: no snapshot kept"; failed=1; fi
small=(--quiet --backend cuda --snapshot-every 2 --set domain.nx=32 --set domain.ny=32
       --set "particles.regions[0].count=200")
mpirun -np 3 --oversubscribe "$sim" "${small[@]}" --steps 4 --output "$work/write" "$configs/box.toml"
mkdir "$work/write/snap_000006.h5"
status=0
mpirun -np 3 --oversubscribe "$sim" "${small[@]}" --steps 8 --output "$work/write" \
  --restart "$work/write/snap_000004.h5" "$configs/box.toml" > /dev/null 2> "$work/three.err" || status=$?
expect "write error" 1 "$status" "$work/three.err" ""
if ! grep -q 'snap_000004.h5' "$work/write/sim.xdmf" || compgen -G "$work/write/*.tmp" > /dev/null; then
  echo "gpu_split_failure: write error: the index lost snap_000004.h5 or a temporary was left"
  failed=1
fi
[[ $failed == 0 ]] && echo "gpu_split_failure: blow-up and write error over 3 GPU ranks: one line each, status 1, snapshots kept"
exit $failed
