#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Signals to mpirun over 2 ranks. SIGUSR1 and SIGUSR2 are forwarded to every
# rank: they stop after the same step, write the snapshot, print one line
# and mpirun exits with the ranks' status, 128 + the signal's number.
# SIGINT and SIGTERM are mpirun's own (Open MPI sends the ranks SIGTERM and
# exits 1 by its rule): the ranks still stop after a step with the snapshot
# and one line. Either way no rank outlives mpirun and no temporary is left.
#   split_signals.sh SIM CONFIG_DIR
set -euo pipefail
sim=$1 configs=$2
work=$(mktemp -d)
trap 'pkill -KILL -f "$work/" 2> /dev/null || true; rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
failed=0
fail() { echo "split_signals: $*"; failed=1; }
for sig in USR1 USR2 TERM INT; do
  out=$work/$sig
  mpirun -np 2 --oversubscribe "$sim" --backend cpu --steps 100000000 --end-time 1e9 --snapshot-every 0 --output "$out" \
    --set domain.nx=32 --set domain.ny=32 --set particles.regions[0].count=200 "$configs/box.toml" \
    > "$work/$sig.log" 2>&1 &
  mp=$!
  # stepping: the lock names rank 0's pid once the output directory is claimed
  for _ in $(seq 100); do [[ -s $out/.sim.lock ]] && break; sleep 0.1; done
  sleep 1
  kill -"$sig" "$mp"
  status=0
  wait "$mp" || status=$?
  survivors=$(pgrep -f -- "--output $out " | wc -l || true)
  want=1
  case $sig in USR1) want=138 ;; USR2) want=140 ;; esac
  name=SIG$sig
  [[ $sig == INT ]] && name=SIGTERM  # mpirun turns Ctrl-C into SIGTERM for the ranks
  lines=$(grep -c "^stopped by $name at step [0-9]*; its snapshot is in $out\$" "$work/$sig.log" || true)
  snaps=$(find "$out" -name 'snap_*.h5' | wc -l)
  tmps=$(find "$out" -name '*.tmp' | wc -l)
  # the initial state's and the stopped step's
  if [[ $status != "$want" || $lines != 1 || $snaps != 2 || $tmps != 0 || $survivors != 0 ]]; then
    fail "SIG$sig: status $status (expected $want), $lines 'stopped by $name' lines, $snaps snapshots," \
      "$tmps temporaries, $survivors ranks alive after mpirun"
    tail -n 20 "$work/$sig.log"
  fi
done
exit $failed
