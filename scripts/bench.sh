#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The benchmarks of docs/PERFORMANCE.md in one call on the GPU machine:
# the micro suite, the strategy matrix on config/box.toml and on
# config/bench_large.toml, and the PyTorch sweep, in that order.
#
#   scripts/bench.sh [OUTDIR]        (default $OUT, else out/bench)
#
# Needs the prebuilt .gpu/sim and .gpu/lib/ of scripts/gpu-run.sh (only our
# binary gets LD_LIBRARY_PATH: exported, it breaks the device's python3).
# Writes five files into OUTDIR: bench.log (everything printed), micro.csv,
# box.csv, large.csv, and bench.json (the three JSON reports and the PyTorch
# one, merged). Each stage has its own time limit, and `sim bench
# --max-seconds` stops starting variants early enough to write its results:
# the whole script stays under about 9 minutes even when a stage runs long
# (on the H200: micro about 110 s, box 32 s, large about 160 s, torch 28 s).
# Afterwards, here: python3 examples/plot_bench.py OUTDIR/bench.json --out docs/images
#
# SIM_BENCH_DRY=1 checks the script itself on a machine without a GPU: the
# CPU backend on tiny sizes, PyTorch on the CPU, a sim from build/ if there
# is no .gpu/sim. Its numbers mean nothing.
set -uo pipefail
cd "$(dirname "$0")/.."

out=${1:-${OUT:-out/bench}}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lib="$PWD/.gpu/lib"

exe=.gpu/sim
backend=(--backend cuda)
tiny=()
torch_args=(--sizes 8192,16384)
if [[ ${SIM_BENCH_DRY:-0} == 1 ]]; then
  [[ -x $exe ]] || exe=${SIM_EXE:-build/sim}
  backend=(--backend cpu)
  tiny=(--set domain.nx=32 --set domain.ny=32 --set 'particles.regions[0].count=1000' --micro-sizes 32,64
        --micro-particles 4K --copy-mib 16)
  torch_args=(--sizes 64,128 --device cpu --repeats 5 --trials 3 --warmup 1 --copy-mib 16)
fi
if [[ ! -x $exe ]]; then
  echo "scripts/bench.sh: $exe not found; build it with scripts/gpu-run.sh first" >&2
  exit 1
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

sim=(env "LD_LIBRARY_PATH=$lib" "$exe" bench "${backend[@]}")

{
  echo "scripts/bench.sh on $(hostname), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv || true

  stage micro 160 "${sim[@]}" config/box.toml --micro --max-seconds 130 "${tiny[@]}" \
    --csv "$out/micro.csv" --json "$tmp/micro.json"
  stage box 60 "${sim[@]}" config/box.toml --steps 30 --warmup 5 --max-seconds 45 "${tiny[@]}" \
    --csv "$out/box.csv" --json "$tmp/box.json"
  stage large 210 "${sim[@]}" config/bench_large.toml --steps 20 --warmup 5 --max-seconds 190 "${tiny[@]}" \
    --csv "$out/large.csv" --json "$tmp/large.json"
  stage torch 140 python3 bench/torch_sweep.py "${torch_args[@]}" --json "$tmp/torch.json"

  echo
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv || true
  python3 - "$tmp" "$out/bench.json" <<'PY'
import json, os, sys
tmp, dest = sys.argv[1], sys.argv[2]
merged = {}
for name in ("micro", "box", "large", "torch"):
    path = os.path.join(tmp, name + ".json")
    try:
        with open(path) as f:
            merged[name] = json.load(f)
    except (OSError, ValueError) as e:
        merged[name] = {"error": f"no results: {e}"}
with open(dest, "w") as f:
    json.dump(merged, f, indent=1)
print("merged:", ", ".join(f"{k} ({len(v.get('rows', []))} rows)" for k, v in merged.items()), "->", dest)
PY
} 2>&1 | tee "$out/bench.log"
