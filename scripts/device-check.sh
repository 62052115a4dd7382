#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs on the GPU machine, from the repository root, after scripts/gpu-run.sh
# filled .gpu/ here: the GPU test suite, the same suite shrunk under
# compute-sanitizer (memcheck, racecheck, initcheck), and two CUDA runs.
# Logs go to $OUT (or ./device-out).
# Usage: scripts/device-check.sh [tests|sanitize|racecheck|runs|main|numerics|pressure|splits|before_after|small]...
# splits: the GPU-rank runs of CMakeLists.txt (gpu_split_*), ranks sharing this GPU.
# before_after: scripts/bench-before-after.sh .gpu/sim_old .gpu/sim (a build of the
# previous version copied to .gpu/sim_old), ROUNDS (default 5) rounds.
# small: the shipped small cases (scripts/small-grids.sh), the transform solves
# by cuFFT and by the dense bases (gpu.dense_transform_cells), and .gpu/sim_old
# where it exists; then the kernels of one step of box and taylor_green with
# the dense bases (scripts/profile-step.sh).
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
    main)
      # the README's main job, both layouts, and the shipped cases' steps/s
      for layout in soa aos; do
        LD_LIBRARY_PATH=$L timeout 120 .gpu/sim --layout=$layout --steps 1000 --overwrite --output /tmp/sim_main_$layout \
          config/box.toml > "$OUT/main_$layout.txt" 2>&1
        echo "main job $layout rc=$?" | tee -a "$OUT/main_$layout.txt"
        grep -E "steps/s|strategies|pressure:|particles:" "$OUT/main_$layout.txt"
      done ;;
    numerics)
      # every advection scheme on the GPU at 1024^2 and 4096^2: the cavity at
      # Re = 1000 (200 steps) and the channel at Re = 10,000 (its own size)
      for n in 1024 4096; do
        for adv in central quick; do
          LD_LIBRARY_PATH=$L timeout 150 .gpu/sim --backend cuda --steps 200 --snapshot-every 0 --overwrite \
            --output /tmp/sim_cav_${n}_$adv --set domain.nx=$n --set domain.ny=$n --set fluid.viscosity=1e-3 \
            --set "fluid.advection=\"$adv\"" config/cavity.toml > "$OUT/cavity_${n}_$adv.txt" 2>&1
          echo "cavity ${n}^2 Re 1000 $adv rc=$?" | tee -a "$OUT/cavity_${n}_$adv.txt"
          grep -E "steps/s|pressure:|fluid:" "$OUT/cavity_${n}_$adv.txt"
        done
      done
      for adv in central quick; do
        LD_LIBRARY_PATH=$L timeout 150 .gpu/sim --backend cuda --steps 2000 --snapshot-every 0 --overwrite \
          --output /tmp/sim_chan_$adv --set fluid.viscosity=3e-5 --set "fluid.advection=\"$adv\"" \
          config/channel.toml > "$OUT/channel_re1e4_$adv.txt" 2>&1
        echo "channel Re 10,000 $adv rc=$?" | tee -a "$OUT/channel_re1e4_$adv.txt"
        grep -E "steps/s|pressure:|fluid:" "$OUT/channel_re1e4_$adv.txt"
      done
      # one momentum stage per stencil and scheme (the micro rows)
      LD_LIBRARY_PATH=$L timeout 200 .gpu/sim bench config/box.toml --micro --micro-sizes 4096,16384 \
        --micro-particles 1 --pressure-solver jacobi --csv "$OUT/micro_momentum.csv" > "$OUT/micro_momentum.txt" 2>&1
      echo "micro rc=$?"; grep -E "momentum|copy" "$OUT/micro_momentum.txt" | head -30 ;;
    splits)
      # the gpu_split_* tests of CMakeLists.txt, with the same arguments and environment
      run_split() {  # NAME ENV... -- ARGS...
        local name=$1 envs=()
        shift
        while [[ $1 != -- ]]; do envs+=("$1"); shift; done
        shift
        env "${envs[@]}" PATH="$PWD/.gpu/bin:$PATH" LD_LIBRARY_PATH=$L timeout 300 \
          tests/mpi/gpu_split_run.sh "$PWD/.gpu/sim" "$@" > "$OUT/$name.txt" 2>&1
        echo "$name rc=$?" | tee -a "$OUT/$name.txt"
        tail -1 "$OUT/$name.txt" | cut -c1-200
      }
      run_split gpu_split_cavity -- config/cavity.toml 20 1e-5 2e-2
      run_split gpu_split_taylor_green -- config/taylor_green.toml 20 1e-5 2e-2
      run_split gpu_split_channel_quick SPLIT_FORCES=1e-4 -- config/channel.toml 20 1e-5 1e-3 --advection quick
      run_split gpu_split_taylor_green_quick -- config/taylor_green.toml 20 1e-5 2e-2 --advection quick
      run_split gpu_split_box -- config/box.toml 20 1e-7 0.5
      run_split gpu_split_channel_shared_levels -- config/channel.toml 20 1e-5 1e-3 --set pressure.replicated_cells=0
      run_split gpu_split_box_aos_atomic_texture -- config/box.toml 20 1e-5 0.5 --layout aos --deposit atomic \
        --sampling texture
      run_split gpu_split_channel_packed_sorted SPLIT_FORCES=1e-4 -- config/channel.toml 20 1e-5 1e-3 \
        --sampling packed --sort-every 3
      run_split gpu_split_box_gathered "SPLIT_SNAPSHOTS=gathered onto rank 0" -- config/box.toml 10 1e-7 0.5 \
        --set output.collective=false
      PATH="$PWD/.gpu/bin:$PATH" LD_LIBRARY_PATH=$L timeout 200 tests/mpi/gpu_split_failure.sh "$PWD/.gpu/sim" \
        "$PWD/config" > "$OUT/gpu_split_failure.txt" 2>&1
      echo "gpu_split_failure rc=$?" | tee -a "$OUT/gpu_split_failure.txt" ;;
    before_after)
      LD_LIBRARY_PATH=$L timeout 560 scripts/bench-before-after.sh .gpu/sim_old .gpu/sim "$OUT/before_after" \
        "${ROUNDS:-5}" ;;
    small)
      variants=('cufft=.gpu/sim' 'dense=.gpu/sim --set gpu.dense_transform_cells=65536')
      [[ -x .gpu/sim_old ]] && variants=('old=.gpu/sim_old' "${variants[@]}")
      LD_LIBRARY_PATH=$L timeout 300 scripts/small-grids.sh "$OUT/small" "${ROUNDS:-3}" "${variants[@]}"
      for c in box taylor_green; do
        LD_LIBRARY_PATH=$L timeout 90 scripts/profile-step.sh "config/$c.toml" "$OUT/profile_$c" 3 \
          --set gpu.dense_transform_cells=65536 > "$OUT/profile_$c.txt" 2>&1
        echo "profile $c rc=$?"; head -5 "$OUT/profile_$c.txt"
      done ;;
    pressure)
      # iterations and steps/s of each solver against the grid size (cavity, channel)
      SIZES=${SIZES:-"128 256 512 1024 2048 4096"} LIMIT_S=${LIMIT_S:-60} LD_LIBRARY_PATH=$L \
        timeout 540 scripts/bench-pressure.sh .gpu/sim cuda "$OUT/pressure_cuda.csv" ;;
  esac
done
