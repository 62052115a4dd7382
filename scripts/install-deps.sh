#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages sim needs, only those missing. Idempotent.
#   scripts/install-deps.sh --run       only what building and running `sim` needs
#   scripts/install-deps.sh             also the tests' (doctest, MPI, Python, clang for fuzzing, dpkg-dev)
#   scripts/install-deps.sh --paraview  also ParaView (for the XDMF test and examples)
set -euo pipefail

packages=(cmake ninja-build g++ libomp-dev libhdf5-dev libcli11-dev libtomlplusplus-dev libfftw3-dev)
if [[ "${1:-}" != "--run" ]]; then
  packages+=(libhdf5-openmpi-dev hdf5-tools doctest-dev python3 python3-numpy python3-h5py python3-matplotlib
             dpkg-dev                    # dpkg-shlibdeps: the .deb's dependencies (CPack, the install test)
             clang-14 libclang-rt-14-dev  # clang + libFuzzer runtime: scripts/fuzz.sh
             libopenmpi-dev openmpi-bin)  # MPI: sim_ranks and the mpirun tests
fi
if [[ "${1:-}" == "--paraview" ]]; then
  packages+=(paraview python3-paraview xvfb)
fi
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
echo "install-deps: done"
