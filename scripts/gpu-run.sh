#!/usr/bin/env bash
# Builds sim for an H200 (sm_90) into build-gpu/ and packs the executables
# with their non-system shared libraries into .gpu/ (both ignored by git), to
# be copied with the working tree to a GPU machine that has no build tools,
# then prints the command to run there. That machine has the same CUDA 13
# runtime and driver 580 but not CLI11/doctest/toml++, and a newer glibc (2.39 vs 2.36 here),
# so everything but glibc's own libraries (libc, libm, the loader, and
# libresolv, libdl, libpthread, librt, which must match the device's libc)
# travels. MPI is left out (-DSIM_MPI=OFF): the GPU machine's Open MPI (4.1.6)
# is not the build's (4.1.4), and runs over several ranks use the CPU backend
# (scripts/ranks-pack.sh packs that build for the GPU machine's host).
#
# Extra arguments go to the cmake configure step, e.g.
#   scripts/gpu-run.sh -DCMAKE_CUDA_FLAGS=-fmad=false   (no FMA contraction; stays in the cache)
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSIM_CUDA=ON -DSIM_MPI=OFF "$@"
cmake --build build-gpu -j2

rm -rf .gpu
mkdir -p .gpu/lib
for exe in sim sim_tests sim_gpu_tests; do
  cp build-gpu/"$exe" .gpu/
  for lib in $(ldd build-gpu/"$exe" | awk '/=>/ {print $3}'); do
    case "$lib" in
      */libc.so*|*/libm.so*|*/ld-linux*|*/libresolv.so*|*/libdl.so*|*/libpthread.so*|*/librt.so*) ;;
      # cuFFT (286 MB) exceeds the 64 MiB that travels; the device's CUDA 13 toolkit has it
      */libcufft.so*) ;;
      *) cp -L "$lib" .gpu/lib/ ;;
    esac
  done
done
du -sh .gpu

# LD_LIBRARY_PATH only for our binaries (exported, it breaks the device's python3).
cat <<'CMD'

On the GPU machine, from the repository root (with .gpu/ copied beside it):

L=$PWD/.gpu/lib:/usr/local/cuda/lib64; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; LD_LIBRARY_PATH=$L .gpu/sim_gpu_tests --duration=true 2>&1 | tee $OUT/gpu_tests.txt; echo "sim_gpu_tests rc=${PIPESTATUS[0]}"; for c in box channel; do LD_LIBRARY_PATH=$L .gpu/sim --backend cuda --steps 200 --output /tmp/sim_$c config/$c.toml 2>&1 | tee $OUT/sim_$c.txt; done

CMD
