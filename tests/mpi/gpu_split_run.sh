#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GPU ranks against one GPU: tests/mpi/split_run.sh with --backend cuda
#   gpu_split_run.sh SIM CONFIG STEPS DELTA PRESSURE_DELTA [sim options...]
# Skipped (exit 77) without a GPU. Ranks that share the GPU exchange rows
# through host memory and MPI; --set gpu.transport=\"nccl\" makes them use NCCL
# (its socket transport, slow) and gives the same bits (cuda/device_rows.hpp).
# One GPU and the ranks differ in the order of their reductions (the one GPU
# folds block sums over the whole grid, the ranks add theirs), so the
# velocities agree to DELTA, the pressure, whose smooth modes a solve to a
# relative residual of 1e-6 fixes less well, to PRESSURE_DELTA, and the
# divergence and vorticity (differences of the velocity over a cell) to
# 100 DELTA (the configs' cells are at least 1/100 m).
set -euo pipefail
sim=$1 config=$2 steps=$3 delta=$4 pdelta=$5
shift 5
if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L > /dev/null 2>&1; then
  echo "gpu_split_run: no GPU: not run"
  exit 77
fi
export NCCL_NVLS_ENABLE=0
SPLIT_PRESSURE_DELTA=$pdelta SPLIT_DERIVED_DELTA=$(awk -v d="$delta" 'BEGIN { print 100 * d }') exec "$(dirname "$0")/split_run.sh" "$sim" "$config" "$steps" "$delta" --backend cuda "$@"
