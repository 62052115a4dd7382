#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Strong scaling of a run over CPU ranks (mpirun -np N sim): the same case
# on 1..MAX ranks of one OpenMP thread each, steps/s, the communication
# time per rank from sim's summary, and the efficiency t(1) / (N t(N)).
# For comparison, one rank with N OpenMP threads.
#   scripts/cpu-ranks.sh [MAX_RANKS] [sim options...]
# Default: up to the processor count, cavity at 1024^2 with multigrid, 20 steps.
# Time it on an idle machine: ranks and threads share its cores.
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-$(nproc)}
shift || true
opts=("$@")
if [[ ${#opts[@]} -eq 0 ]]; then
  opts=(--steps 20 --set domain.nx=1024 --set domain.ny=1024 --pressure-solver multigrid config/cavity.toml)
fi
# SIM: the sim to run (default build/sim, else build-cpu/sim); MPIRUN_FLAGS:
# extra mpirun options (e.g. --bind-to core on an idle host).
sim=${SIM:-build/sim}
[[ -x $sim ]] || sim=build-cpu/sim
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "# $(date -u +%F) $(uname -n), $(nproc) processors; $sim ${opts[*]}"
echo "# ranks threads steps/s efficiency  communication ms per rank (min-max)"
t1=""
for ((n = 1; n <= max; n *= 2)); do
  for mode in ranks threads; do
    [[ $n == 1 && $mode == threads ]] && continue
    if [[ $mode == ranks ]]; then
      # shellcheck disable=SC2086
      out=$(OMP_NUM_THREADS=1 mpirun -np "$n" --oversubscribe ${MPIRUN_FLAGS:-} "$sim" --output "$work/o$n" --overwrite \
        "${opts[@]}")
      label="$n 1"
    else
      out=$(OMP_NUM_THREADS=$n "$sim" --output "$work/t$n" --overwrite "${opts[@]}")
      label="1 $n"
    fi
    # steps / wall from the summary line "N steps, simulated time T s, wall W s, R steps/s"
    rate=$(sed -n 's/^\([0-9]*\) steps, simulated time .* wall \([0-9.]*\) s,.*/\1 \2/p' <<< "$out" |
      awk '{ printf "%.3f", $1 / $2 }')
    comm=$(sed -n 's/.*waits included) \([0-9.]*-[0-9.]*\) ms per rank.*/\1/p' <<< "$out")
    [[ -z $t1 ]] && t1=$rate
    eff=$(awk -v r="$rate" -v a="$t1" -v n="$n" 'BEGIN { printf "%.2f", r / (a * n) }')
    echo "$label $rate $eff ${comm:--}"
  done
done
