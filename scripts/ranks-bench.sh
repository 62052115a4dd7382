#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ranks suite of `sim bench` (mpirun -np N sim bench CONFIG: the case on
# 1, 2, 4, ... N ranks, each rank's communication and work time, the
# scaling efficiency) on four large cases, and the cost of writing
# snapshots from N ranks at 4096^2 against one rank. Tables and CSVs go to
# DIR. Time it on an idle machine: ranks share its cores.
#   scripts/ranks-bench.sh N DIR
# CASES: a subset of "cavity2048 box1024 channel2048 taylor2048 output" (default all).
# SIM: the sim built with MPI (default build/sim); MPIRUN_FLAGS: extra
# mpirun options (e.g. --bind-to core on an idle host).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?ranks}
dir=${2:?output directory}
mkdir -p "$dir"
sim=${SIM:-build/sim}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2086
mpi() { mpirun -np "$1" --oversubscribe ${MPIRUN_FLAGS:-} "${@:2}"; }
{
  echo "# $(date -u +%F) $(uname -n), $(nproc --all) processors, up to $n ranks of 1 OpenMP thread; $sim"
  lscpu | grep -E '^(Model name|Socket|NUMA node\(s\)|L3)' || true
} > "$dir/machine.txt"

bench() {  # name, steps, sim options...
  local name=$1 steps=$2
  shift 2
  mpi "$n" "$sim" bench --quiet --steps "$steps" --warmup 2 --csv "$dir/$name.csv" "$@" | tee "$dir/$name.txt"
}
cases=${CASES:-cavity2048 box1024 channel2048 taylor2048 output}
on() { [[ " $cases " == *" $1 "* ]]; }
on cavity2048 && bench cavity2048 10 --set domain.nx=2048 --set domain.ny=2048 --set pressure.solver=multigrid \
  config/cavity.toml
on box1024 && bench box1024 10 --set domain.nx=1024 --set domain.ny=1024 config/box.toml
on channel2048 && bench channel2048 10 --set domain.nx=2048 --set domain.ny=512 config/channel.toml
# The transform solve split over the ranks, and multigrid on the same case.
on taylor2048 && bench taylor2048_fft 10 --set domain.nx=2048 --set domain.ny=2048 --set pressure.solver=fft \
  config/taylor_green.toml
on taylor2048 && bench taylor2048_multigrid 10 --set domain.nx=2048 --set domain.ny=2048 \
  --set pressure.solver=multigrid config/taylor_green.toml

# Snapshots at 4096^2 (about 600 MB each): one rank writes on its writer
# thread (partly hidden behind the steps); N ranks write their rows
# together, then (output.collective = false) gather onto rank 0, which
# writes on its thread. The summaries' output phase and hidden time.
on output || exit 0
out=(--steps 4 --snapshot-every 2 --set domain.nx=4096 --set domain.ny=4096 config/cavity.toml)
"$sim" --output "$work/one" "${out[@]}" > "$dir/output4096_1rank.txt"
mpi "$n" "$sim" --output "$work/many" "${out[@]}" > "$dir/output4096_${n}ranks.txt"
mpi "$n" "$sim" --output "$work/gathered" --set output.collective=false "${out[@]}" \
  > "$dir/output4096_${n}ranks_gathered.txt"
for f in "$dir"/output4096_*.txt; do
  echo "== $f"
  grep -E '^  (output|total) |hidden|snapshots:|steps, simulated' "$f"
done | tee "$dir/output4096_summary.txt"
