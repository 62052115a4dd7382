#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Packs the CPU build with MPI (build-cpu/: cmake -S . -B build-cpu -G Ninja
# -DCMAKE_BUILD_TYPE=Release -DSIM_CUDA=OFF) into .cpu/ (ignored by git), to be
# copied with the working tree to a machine that has Open MPI 4.1 but not
# the build's other libraries (the H200 host: Ubuntu 24.04, Open MPI 4.1.6),
# for runs over many CPU ranks there. Open MPI's own libraries, and the C and
# C++ runtimes they were built with, are the target's: libmpi's ABI is
# stable across 4.1.x, and its plugins must match the mpirun that starts them.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build-cpu -j2 --target sim sim_mpi_tests
rm -rf .cpu
mkdir -p .cpu/lib
for exe in sim sim_mpi_tests; do
  cp build-cpu/"$exe" .cpu/
  for lib in $(ldd build-cpu/"$exe" | awk '/=>/ {print $3}'); do
    case "$lib" in
      */libc.so*|*/libm.so*|*/ld-linux*|*/libresolv.so*|*/libdl.so*|*/libpthread.so*|*/librt.so*) ;;
      */libmpi*|*/libopen-pal*|*/libopen-rte*|*/libpmix*|*/libhwloc*|*/libevent*|*/libudev*) ;;
      */libstdc++*|*/libgcc_s*|*/libz.so*) ;;
      *) cp -L "$lib" .cpu/lib/ ;;
    esac
  done
done
du -sh .cpu
cat <<'CMD'

On the target, from the repository root with .cpu/ beside it:

export LD_LIBRARY_PATH=$PWD/.cpu/lib OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SIM=.cpu/sim scripts/cpu-ranks.sh 16

CMD
