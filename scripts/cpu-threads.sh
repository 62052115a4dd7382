#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CPU backend on the shipped configs: its default thread count (sim/app/backend_factory.cpp)
# against fixed thread counts (OMP_NUM_THREADS; the same passive wait policy). Run from the repository
# root after scripts/gpu-run.sh (uses .gpu/); logs go to $OUT (default device-out).
set -uo pipefail
OUT=${OUT:-device-out}; mkdir -p "$OUT"
L=$PWD/.gpu/lib:/usr/local/cuda/lib64
nproc
for c in box cavity channel taylor_green; do
  steps=300; [ $c = channel ] && steps=40
  for t in default 1 2 4 16; do
    if [ $t = default ]; then
      r=$(env -u OMP_NUM_THREADS -u OMP_WAIT_POLICY LD_LIBRARY_PATH=$L .gpu/sim --backend cpu --steps $steps --snapshot-every 0 --overwrite --output /tmp/t_$c config/$c.toml 2>&1 | grep -E "steps/s|backend:" | tr '\n' ' ')
    else
      r=$(env -u OMP_WAIT_POLICY OMP_NUM_THREADS=$t LD_LIBRARY_PATH=$L .gpu/sim --backend cpu --steps $steps --snapshot-every 0 --overwrite --output /tmp/t_$c config/$c.toml 2>&1 | grep -E "steps/s|backend:" | tr '\n' ' ')
    fi
    echo "$c threads=$t: $r" | tee -a $OUT/cpu_threads.txt
  done
done
