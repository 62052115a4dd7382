#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GPU ranks: the weak and strong scaling of #15's targets, through the
# ranks suite of `sim bench` (mpirun -np N sim bench CONFIG runs the case on
# 1, 2, 4, ... N ranks, one GPU each, and reports each count's ms per step,
# communication and efficiency against one rank).
#   scripts/gpu-ranks-bench.sh N DIR
# weak:   per GPU 4096^2 cells and 16M two-way particles (N GPUs: 4096 x 4096N
#         cells over N times the height, N x 16M particles spread over it);
#         efficiency = ms/step on 1 GPU / ms/step of N GPUs on N times the case
# strong: 8192^2 cells and 64M particles on 1 .. N GPUs (the suite's own
#         efficiency column)
# Multigrid to 1e-6, two-way coupling (deposit fixed), adaptive dt.
# Then, on the weak case of N GPUs, the settings that trade messages for
# work, each against the default (variants.txt): every multigrid level shared
# out (pressure.replicated_cells = 0), levels of up to 2^22 cells replicated,
# and the halo copies in line instead of beside the interior rows
# (gpu.overlap = false). VARIANTS=0 skips them.
# Tables, CSVs and a summary (scaling.txt) go to DIR. SIM: the sim built with
# CUDA, MPI and NCCL (default .gpu/sim, scripts/gpu-run.sh); STEPS (default
# 10) timed steps after 2 warm-up steps. Meant for a machine with N GPUs:
# where ranks share a GPU their rows travel through host memory and the
# figures say nothing about scaling.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?GPUs}
[[ $n -ge 2 ]] || { echo "gpu-ranks-bench.sh: 2 GPUs or more" >&2; exit 2; }
dir=${2:?output directory}
mkdir -p "$dir"
sim=${SIM:-.gpu/sim}
steps=${STEPS:-10}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  echo "# $(date -u +%F) $(uname -n); $sim; $n GPUs asked for"
  nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader || true
  nvidia-smi topo -m 2> /dev/null | head -n $((n + 1)) || true
} > "$dir/machine.txt"

# The case (scripts/weak-case.sh): nx x ny cells over 1 x k metres, `count`
# two-way particles spread over the whole height (each slab holds its share).
config() {  # file nx ny k count
  scripts/weak-case.sh "$2" "$3" "$4" "$5" "$work/out" > "$1"
}

bench() {  # name ranks config
  mpirun -np "$2" "$sim" bench --quiet --steps "$steps" --warmup 2 --csv "$dir/$1.csv" "$3" | tee "$dir/$1.txt"
}
# ms per step of the row for `ranks` ranks in a CSV of the suite
ms_of() { awk -F, -v r="$2" 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next } $c["ranks"] == r { print $c["total_ms"] }' "$1"; }

# The suite runs every count from 1 up (under mpirun -np 1, sim bench is the
# strategy matrix instead): the one-GPU row of the 4096^2 case comes from
# its own run over n ranks (which also gives its strong scaling).
config "$work/weak1.toml" 4096 4096 1 16777216
bench weak_1gpu "$n" "$work/weak1.toml"
config "$work/weak$n.toml" 4096 $((4096 * n)) "$n" $((16777216 * n))
bench "weak_${n}gpu" "$n" "$work/weak$n.toml"
config "$work/strong.toml" 8192 8192 1 67108864
bench strong "$n" "$work/strong.toml"

t1=$(ms_of "$dir/weak_1gpu.csv" 1)
tn=$(ms_of "$dir/weak_${n}gpu.csv" "$n")
s1=$(ms_of "$dir/strong.csv" 1)
sn=$(ms_of "$dir/strong.csv" "$n")
{
  echo "weak scaling (4096^2 cells and 16M particles per GPU): 1 GPU $t1 ms/step, $n GPUs $tn ms/step," \
       "efficiency $(awk -v a="$t1" -v b="$tn" 'BEGIN { printf "%.3f", a / b }') (target >= 0.90)"
  echo "strong scaling (8192^2 cells, 64M particles): 1 GPU $s1 ms/step, $n GPUs $sn ms/step," \
       "efficiency $(awk -v a="$s1" -v b="$sn" -v n="$n" 'BEGIN { printf "%.3f", a / (n * b) }') (target >= 0.85)"
} | tee "$dir/scaling.txt"

[[ ${VARIANTS:-1} == 0 ]] && exit 0
variant() {  # name, then the config settings of the run
  local name=$1 sets=()
  shift
  for s in "$@"; do sets+=(--set "$s"); done
  mpirun -np "$n" "$sim" bench --quiet --steps "$steps" --warmup 2 "${sets[@]}" \
    --csv "$dir/variant_$name.csv" "$work/weak$n.toml" > "$dir/variant_$name.txt"
  echo "$name: $n GPUs $(ms_of "$dir/variant_$name.csv" "$n") ms/step (default $tn)"
}
{
  variant every_level_shared pressure.replicated_cells=0
  variant replicated_4M pressure.replicated_cells=4194304
  variant copies_in_line gpu.overlap=false
} | tee "$dir/variants.txt"
