#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sim against its peers on the config/bench_large.toml step, in one call on
# the GPU machine: `sim bench` on a few strategy variants (jacobi: 50 sweeps
# a solve; fft: config/bench_large_solve.toml), then the PyTorch (eager,
# torch.compile) and JAX (jit) versions of the same step
# (bench/peers/README.md), each in its own process with its own time limit,
# so one failure leaves the others' results.
#
#   scripts/bench-peers.sh OUT_DIR [N] [P]      (defaults 4096 16777216)
#
# Writes OUT_DIR/peers.json and OUT_DIR/peers.txt (variant, ms/step,
# steps/s, GB/s by sim's byte model, ratio to the fastest sim row), and
# the parts: sim_jacobi.json, sim_fft.json, torch.json, jax.json,
# check_*.npz, peers.log.
#
# sim: .gpu/sim of scripts/gpu-run.sh (or SIM_EXE), with LD_LIBRARY_PATH
# for it alone (exported, it breaks the device's python3); skipped with a
# note if absent. JAX runs with XLA_PYTHON_CLIENT_PREALLOCATE=false.
# On the H200 expect about 6-8 minutes (limits: sim 100 s, torch 280 s, jax 190 s).
#
# PEERS_DRY=1 tries the script on a machine without a GPU: tiny sizes,
# PyTorch and JAX on the CPU, sim's CPU backend. Its numbers mean nothing.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 ]]; then
  echo "usage: scripts/bench-peers.sh OUT_DIR [N] [P]" >&2
  exit 2
fi
out=$1
n=${2:-4096}
p=${3:-16777216}
mkdir -p "$out"

exe=${SIM_EXE:-.gpu/sim}
backend=cuda
peer_args=(--n "$n" --particles "$p")
sim_size=()
lim_sim=100 lim_torch=280 lim_jax=190
if [[ ${PEERS_DRY:-0} == 1 ]]; then
  backend=cpu
  peer_args+=(--device cpu --steps 2 --trials 2 --warmup 1 --copy-mib 16 --check-n 32 --check-particles 200)
  lim_sim=60 lim_torch=120 lim_jax=120
fi
if [[ $n != 4096 || $p != 16777216 ]]; then
  sim_size=(--set "domain.nx=$n" --set "domain.ny=$n" --set "domain.lz=$(python3 -c "print(1.0 / $n)")"
            --set "particles.regions[0].count=$p")
fi

# stage NAME SECONDS COMMAND...: run with a time limit, report the exit status and duration.
stage() {
  local name=$1 limit=$2
  shift 2
  echo
  echo "=== $name (limit ${limit} s): $*"
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@"
  echo "=== $name: exit $? after $((SECONDS - t0)) s"
}

{
  echo "scripts/bench-peers.sh on $(hostname), $(date -u +%Y-%m-%dT%H:%M:%SZ), N=$n P=$p"
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>/dev/null || true

  if [[ -x $exe ]]; then
    lib="$PWD/.gpu/lib:/usr/local/cuda/lib64"
    sim=(env "LD_LIBRARY_PATH=$lib" "$exe" bench --backend "$backend" --layout soa --constants constant
         --advection central --steps 20 --warmup 5 "${sim_size[@]}")
    # the defaults chosen by the case first (temporal, packed, gather, sort every 10), then atomic
    stage sim_jacobi $((lim_sim * 6 / 10)) "${sim[@]}" config/bench_large.toml --pressure-solver jacobi \
      --stencil temporal,vector --sampling packed --deposit gather,atomic --max-seconds $((lim_sim * 4 / 10)) \
      --json "$out/sim_jacobi.json"
    stage sim_fft $((lim_sim * 4 / 10)) "${sim[@]}" config/bench_large_solve.toml --pressure-solver fft \
      --stencil ldg --sampling packed --deposit gather,atomic --max-seconds $((lim_sim * 2 / 10)) \
      --json "$out/sim_fft.json"
  else
    echo "scripts/bench-peers.sh: $exe not found (scripts/gpu-run.sh builds it): no sim rows" >&2
  fi

  stage torch "$lim_torch" python3 bench/peers/step_torch.py "${peer_args[@]}" --max-seconds $((lim_torch - 40)) \
    --json "$out/torch.json" --check-npz "$out/check_torch.npz"
  stage jax "$lim_jax" env XLA_PYTHON_CLIENT_PREALLOCATE=false python3 bench/peers/step_jax.py "${peer_args[@]}" \
    --max-seconds $((lim_jax - 40)) --json "$out/jax.json" --check-npz "$out/check_jax.npz"

  echo
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>/dev/null || true
  python3 bench/peers/merge.py "$out" "$n" "$p"
} 2>&1 | tee "$out/peers.log"
