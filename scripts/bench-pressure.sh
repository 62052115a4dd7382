#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Iterations per step and steps per second of the pressure solvers against
# the grid size, as a user runs them: the lid-driven cavity (walls + lid)
# and the channel (obstacle, inflow, outflow) through the `sim` binary.
#
#   scripts/bench-pressure.sh [SIM] [BACKEND] [OUTFILE]
#     SIM      the sim executable (default build/sim)
#     BACKEND  cpu or cuda (default cpu)
#     OUTFILE  CSV to write (default bench/pressure_<backend>.csv)
# Environment: SIZES (cavity sides, default "128 256 512 1024"), SOLVERS
# (default "sor multigrid fft"), STEPS (default 20), TOL (default 1e-6),
# SOR_TOL (default 1e-4: float32 SOR cannot reach 1e-6 past 256^2),
# LIMIT_S (seconds per run, default 300), SOR_MAX (largest side SOR and
# Jacobi run at, default 1024: beyond it they take minutes per step).
set -uo pipefail
cd "$(dirname "$0")/.."
SIM=${1:-build/sim}
BACKEND=${2:-cpu}
CSV=${3:-bench/pressure_${BACKEND}.csv}
SIZES=${SIZES:-"128 256 512 1024"}
SOLVERS=${SOLVERS:-"sor multigrid fft"}
STEPS=${STEPS:-20}
TOL=${TOL:-1e-6}
SOR_TOL=${SOR_TOL:-1e-4}
LIMIT_S=${LIMIT_S:-300}
SOR_MAX=${SOR_MAX:-1024}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "case,nx,ny,backend,solver,tolerance,steps,iterations_per_step,final_residual,steps_per_s,pressure_ms_per_step,status" > "$CSV"
run_case() {  # name config nx ny solver
  local name=$1 cfg=$2 nx=$3 ny=$4 solver=$5 tol=$TOL
  [[ $solver == sor || $solver == jacobi ]] && tol=$SOR_TOL
  local log="$out/$name-$nx-$solver.txt"
  timeout "$LIMIT_S" "$SIM" --backend "$BACKEND" --steps "$STEPS" --snapshot-every 0 --output "$out/run" --overwrite \
    --set domain.nx="$nx" --set domain.ny="$ny" --set pressure.solver="$solver" \
    --set pressure.tolerance="$tol" --set pressure.max_iterations=100000 --set pressure.max_failures=1000000 \
    "$cfg" > "$log" 2>&1
  local rc=$?
  local its res sps pms
  its=$(sed -n 's/^pressure: \([0-9.]*\) iterations\/step.*/\1/p' "$log")
  res=$(sed -n 's/.*final relative residual \([0-9.e+-]*\).*/\1/p' "$log")
  sps=$(sed -n 's/.*wall [0-9.]* s, \([0-9.]*\) steps\/s.*/\1/p' "$log")
  pms=$(awk '$1 == "pressure" && NF == 4 {print $3}' "$log")
  local status=ok
  [[ $rc -eq 124 ]] && status=timeout
  [[ $rc -ne 0 && $rc -ne 124 ]] && status="exit $rc: $(tail -1 "$log" | tr ',' ';' | cut -c1-80)"
  echo "$name,$nx,$ny,$BACKEND,$solver,$tol,$STEPS,${its:-},${res:-},${sps:-},${pms:-},$status" | tee -a "$CSV"
}
for n in $SIZES; do
  for s in $SOLVERS; do
    [[ ($s == sor || $s == jacobi) && $n -gt $SOR_MAX ]] && continue
    run_case cavity config/cavity.toml "$n" "$n" "$s"
  done
done
# The channel as shipped (256 x 64) and at 4x per side (1024 x 256) (fft does not apply: obstacle, outflow).
for f in 1 4; do
  for s in $SOLVERS; do
    [[ $s == fft ]] && continue
    run_case channel config/channel.toml $((256 * f)) $((64 * f)) "$s"
  done
done
