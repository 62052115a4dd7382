#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds sim for an H200 (sm_90) into build-gpum/ and packs the executables
# with their non-system shared libraries into .gpu/ (both ignored by git), to
# be copied with the working tree to a GPU machine that has no build tools,
# then prints the command to run there. That machine has the same CUDA 13
# runtime and driver 580 but not CLI11/doctest/toml++, and a newer glibc (2.39 vs 2.36 here),
# so everything but glibc's own libraries (libc, libm, the loader, and
# libresolv, libdl, libpthread, librt, which must match the device's libc)
# travels, except the C++ runtime (the device's is newer, and its Open MPI
# needs it), Open MPI and NCCL: the build has MPI and NCCL (GPU ranks,
# `mpirun -np N sim`), and runs there against that machine's Open MPI 4.1
# (libmpi's ABI is stable across 4.1.x, and its plugins must match the
# mpirun that starts them) and its NCCL 2 (/usr/lib/x86_64-linux-gnu). h5diff
# and h5dump travel too (tests/mpi/split_run.sh compares snapshots and their
# attributes with them).
#
# Extra arguments go to the cmake configure step, e.g.
#   scripts/gpu-run.sh -DCMAKE_CUDA_FLAGS=-fmad=false   (no FMA contraction; stays in the cache)
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -B build-gpum -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSIM_CUDA=ON -DSIM_MPI=ON "$@"
cmake --build build-gpum -j2 --target sim sim_gpu_tests sim_mpi_tests

rm -rf .gpu
mkdir -p .gpu/lib
mkdir -p .gpu/bin
cp /usr/bin/h5diff /usr/bin/h5dump .gpu/bin/
for exe in build-gpum/sim build-gpum/sim_gpu_tests build-gpum/sim_mpi_tests /usr/bin/h5diff /usr/bin/h5dump; do
  [[ $exe == build-gpum/* ]] && cp "$exe" .gpu/
  for lib in $(ldd "$exe" | awk '/=>/ {print $3}'); do
    case "$lib" in
      */libc.so*|*/libm.so*|*/ld-linux*|*/libresolv.so*|*/libdl.so*|*/libpthread.so*|*/librt.so*) ;;
      */libmpi*|*/libopen-pal*|*/libopen-rte*|*/libpmix*|*/libhwloc*|*/libevent*|*/libudev*) ;;
      # the device's are newer (its libmpi_cxx needs its own libstdc++)
      */libstdc++*|*/libgcc_s*|*/libz.so*) ;;
      # cuFFT (286 MB) and NCCL (218 MB) exceed the 64 MiB that travels; the device has both
      */libcufft.so*|*/libnccl.so*) ;;
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
