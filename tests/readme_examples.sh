#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every `sh` example of README.md that runs the built sim, as written and in
# order, in a scratch directory that holds this checkout's config/ and
# examples/ and the built binary as build/sim: each must exit 0 (and the
# mpirun one where Open MPI is installed; without it, it is reported
# skipped). The setup scripts (scripts/run-box.sh, scripts/test.sh) and the
# usage line `build/sim [OPTIONS] CONFIG` are not run: CI runs the one, and
# these tests are the other.
#
#   tests/readme_examples.sh SOURCE_DIR SIM_BINARY [mpi|no-mpi]
# (no-mpi: sim was built without MPI, so the mpirun example is skipped.)
set -euo pipefail
src=$1 sim=$2 mpi=${3:-mpi}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/build"
ln -s "$src/config" "$work/config"
ln -s "$src/examples" "$work/examples"
ln -s "$(readlink -f "$sim")" "$work/build/sim"
mapfile -t lines < <(awk '/^```sh/{f=1;next}/^```/{f=0}f' "$src/README.md")
ran=0 skipped=0
for line in "${lines[@]}"; do
  cmd=${line%%#*}
  cmd=${cmd%"${cmd##*[![:space:]]}"}
  case "$cmd" in
    ""|scripts/*|*"[OPTIONS]"*) continue ;;
    mpirun\ *)
      if [[ $mpi != mpi ]] || ! command -v mpirun > /dev/null; then
        echo "SKIPPED (sim without MPI, or no mpirun): $cmd"
        skipped=$((skipped + 1))
        continue
      fi ;;
    build/sim\ *) ;;
    *) echo "readme_examples: an example this test does not know how to run: $cmd" >&2; exit 1 ;;
  esac
  echo "== $cmd"
  # Open MPI refuses root without these (CI runs as root) and one rank per core without oversubscription.
  if ! (cd "$work" && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
        bash -c "$cmd" > "$work/log" 2>&1); then
    tail -5 "$work/log" >&2
    echo "readme_examples: FAILED: $cmd" >&2
    exit 1
  fi
  tail -1 "$work/log"
  ran=$((ran + 1))
done
[[ $ran -ge 2 ]] || { echo "readme_examples: found only $ran examples to run in README.md" >&2; exit 1; }
echo "readme_examples: $ran README examples ran, $skipped skipped"
