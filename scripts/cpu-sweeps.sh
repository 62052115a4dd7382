#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CPU backend's sweeps and threads on this host, in one go: the micro
# sweeps (Jacobi, SOR) at 2048^2 with 1, 4, 8, 16 threads and the default
# (all processors), each beside the host copy bandwidth measured in the same
# run (sim bench --micro: the host_copy rows, the ceiling of the CPU rows'
# %copy); then every shipped config (config/*.toml) with the default
# threads (sim/app/backend_factory.cpp: cpu_threads_for) against one thread.
# Writes micro_<threads>.csv, configs.txt and the summary table sweeps.txt
# into OUTDIR.
#
#   scripts/cpu-sweeps.sh OUTDIR [SIM]
#
# SIM defaults to .gpu/sim (scripts/gpu-run.sh; its libraries from .gpu/lib)
# and else build-cpu/sim. Run from the repository root. SIZE (2048), THREADS
# ("1 4 8 16 default") and CONFIGS (config/*.toml) narrow a run. The large
# configs run 2 steps with no stop on unconverged solves (bench_large's
# budget is fixed below its tolerance); every config run is cut at 150 s.
# About 5 minutes on 16 cores.
set -uo pipefail
OUT=${1:?usage: scripts/cpu-sweeps.sh OUTDIR [SIM]}
mkdir -p "$OUT"
SIM=${2:-}
LIBS=${LD_LIBRARY_PATH:-}
if [ -z "$SIM" ]; then
  if [ -x .gpu/sim ]; then SIM=.gpu/sim; LIBS=$PWD/.gpu/lib:/usr/local/cuda/lib64; else SIM=build-cpu/sim; fi
fi
SIZE=${SIZE:-2048}
THREADS=${THREADS:-"1 4 8 16 default"}
sim() { env -u OMP_WAIT_POLICY LD_LIBRARY_PATH="$LIBS" "$@"; }
with_threads() {  # with_threads T CMD...: T OpenMP threads, or the default
  local t=$1; shift
  if [ "$t" = default ]; then sim env -u OMP_NUM_THREADS "$@"; else sim env OMP_NUM_THREADS="$t" "$@"; fi
}

T=$OUT/sweeps.txt
{
  echo "host: $(nproc) processors; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
  echo "sim: $SIM; $(date -u +%FT%TZ)"
  echo
  printf '%-8s %-13s %-8s %12s %10s %8s %14s %14s\n' threads benchmark variant ms/op GB/s %copy copy_GB/s loop_copy_GB/s
} | tee "$T"
for t in $THREADS; do
  [ "$t" != default ] && [ "$t" -gt "$(nproc)" ] && echo "threads=$t: more than the $(nproc) processors (oversubscribed)" | tee -a "$T"
  csv=$OUT/micro_$t.csv
  with_threads "$t" "$SIM" bench config/box.toml --micro --backend cpu --micro-sizes "$SIZE" \
    --pressure-solver jacobi,sor --micro-particles 1000 --advection central --quiet --csv "$csv" > "$OUT/micro_$t.txt" 2>&1 ||
    echo "threads=$t: sim bench failed (rc $?; see micro_$t.txt)" | tee -a "$T"
  [ -f "$csv" ] || continue
  awk -F, -v t="$t" '
    NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
    $col["benchmark"] == "host_copy" && $col["variant"] == "memcpy" { copy = $col["gbps"] }
    $col["benchmark"] == "host_copy" && $col["variant"] == "loop" { loop = $col["gbps"] }
    $col["benchmark"] ~ /^(jacobi|sor)_sweep$/ { n++; b[n] = $col["benchmark"]; v[n] = $col["variant"]; ms[n] = $col["ms_per_op"]; g[n] = $col["gbps"]; p[n] = $col["copy_pct"] }
    END { for (k = 1; k <= n; ++k) printf "%-8s %-13s %-8s %12.4f %10.2f %8.1f %14.2f %14.2f\n", t, b[k], v[k], ms[k], g[k], p[k], copy, loop }
  ' "$csv" | tee -a "$T"
done

# The shipped configs: the default threads against one (both with the passive wait policy sim sets).
C=$OUT/configs.txt
echo | tee -a "$T"
printf '%-18s %-8s %s\n' config threads "result" | tee "$C" | tee -a "$T"
for f in ${CONFIGS:-config/*.toml}; do
  c=$(basename "$f" .toml)
  extra=()
  case $c in
    bench_large*) steps=2; extra=(--set pressure.max_failures=1000000) ;;  # one thread: about a minute
    channel) steps=40 ;;
    *) steps=300 ;;
  esac
  for t in default 1; do
    r=$(with_threads "$t" timeout 150 "$SIM" --backend cpu --steps $steps --snapshot-every 0 --overwrite "${extra[@]}" --output "/tmp/cpu_sweeps_$c" "$f" 2>&1 |
      grep -E "steps/s|backend:" | tr -s ' \n' ' ')
    printf '%-18s %-8s %s\n' "$c" "$t" "${r:-failed or timed out}" | tee -a "$C" | tee -a "$T"
  done
  rm -rf "/tmp/cpu_sweeps_$c"
done
