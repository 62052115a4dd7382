#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after scripts/gpu-run.sh
# filled .gpu/ here: the GPU test suite, the same suite shrunk under
# compute-sanitizer (memcheck, racecheck, initcheck), and two CUDA runs.
# Logs go to $OUT (or ./device-out).
# Usage: scripts/device-check.sh [tests|sanitize|racecheck|runs|pressure]...
set -uo pipefail
OUT=${OUT:-device-out}
mkdir -p "$OUT"
L=$PWD/.gpu/lib:/usr/local/cuda/lib64
parts=("$@")
[[ ${#parts[@]} -eq 0 ]] && parts=(tests sanitize racecheck runs pressure)
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/device.txt"
for part in "${parts[@]}"; do
  case $part in
    tests)
      LD_LIBRARY_PATH=$L timeout 420 .gpu/sim_gpu_tests --duration=true > "$OUT/gpu_tests.txt" 2>&1
      echo "sim_gpu_tests rc=$?" | tee -a "$OUT/gpu_tests.txt"
      grep -E "MESSAGE|exact|texture|atomic|test cases|assertions|ERROR|rc=" "$OUT/gpu_tests.txt" | head -60 ;;
    sanitize)
      # racecheck has its own part below (one process per case)
      for tool in memcheck initcheck; do
        SIM_GPU_TEST_SMALL=1 LD_LIBRARY_PATH=$L timeout 170 compute-sanitizer --tool $tool --error-exitcode 9 \
          .gpu/sim_gpu_tests > "$OUT/sanitize_$tool.txt" 2>&1
        echo "compute-sanitizer $tool rc=$?" | tee -a "$OUT/sanitize_$tool.txt"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases|Error|error" "$OUT/sanitize_$tool.txt" | head -8
      done ;;
    racecheck)
      # racecheck inspects shared memory only, so the tiled stencil variants;
      # one process per case, so each prints its own RACECHECK SUMMARY
      for tc in box channel; do
        SIM_GPU_TEST_STENCIL=shared SIM_GPU_TEST_SMALL=1 LD_LIBRARY_PATH=$L timeout 330 compute-sanitizer --tool racecheck \
          --error-exitcode 9 .gpu/sim_gpu_tests -tc="*$tc*" > "$OUT/racecheck_$tc.txt" 2>&1
        echo "compute-sanitizer racecheck $tc rc=$?" | tee -a "$OUT/racecheck_$tc.txt"
        grep -E "RACECHECK SUMMARY|ERROR SUMMARY|test cases|Race|Error" "$OUT/racecheck_$tc.txt" | head -8
      done ;;
    runs)
      for c in box channel; do
        LD_LIBRARY_PATH=$L timeout 120 .gpu/sim --backend cuda --steps 1000 --overwrite --output /tmp/sim_$c "config/$c.toml" > "$OUT/sim_$c.txt" 2>&1
        echo "sim $c rc=$?" | tee -a "$OUT/sim_$c.txt"
        tail -22 "$OUT/sim_$c.txt"
      done ;;
    pressure)
      # iterations and steps/s of each solver against the grid size (cavity, channel)
      SIZES=${SIZES:-"128 256 512 1024 2048 4096"} LIMIT_S=${LIMIT_S:-60} LD_LIBRARY_PATH=$L \
        timeout 540 scripts/bench-pressure.sh .gpu/sim cuda "$OUT/pressure_cuda.csv" ;;
  esac
done
