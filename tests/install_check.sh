#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `cmake --install BUILD --prefix P` gives a sim that runs from P alone:
# P/bin/sim --version, and P/bin/sim P/share/sim/config/box.toml (two steps,
# on the CPU, from a scratch directory); the configs, examples and
# documentation where the install rules put them; then CPack's .tar.gz
# and .deb (the .deb's dependencies from dpkg-shlibdeps).
#
#   tests/install_check.sh BUILD
set -euo pipefail
build=$(realpath "$1")
prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
"$prefix/bin/sim" --version | grep -E '^sim [0-9]+\.[0-9]+\.[0-9]+ \(commit [^)]+\)$'
for f in share/sim/config/box.toml share/sim/config/channel.toml share/doc/sim/LICENSE share/doc/sim/README.md \
         share/doc/sim/CHANGELOG.md share/doc/sim/CONFIG.md; do
  [[ -f $prefix/$f ]] || { echo "install_check: $f not installed"; exit 1; }
done
[[ -n $(ls "$prefix/share/sim/examples") ]] || { echo "install_check: no examples installed"; exit 1; }
cd "$work"
"$prefix/bin/sim" --backend cpu --steps 2 "$prefix/share/sim/config/box.toml" > run.txt 2>&1 || { cat run.txt; exit 1; }
grep -E '^2 steps, simulated time' run.txt
cpack --config "$build/CPackConfig.cmake" -B "$work/pkg" >cpack.txt 2>&1 || { cat cpack.txt; exit 1; }
for kind in tar.gz deb; do
  ls "$work"/pkg/sim*."$kind" || { echo "install_check: no .$kind"; cat cpack.txt; exit 1; }
done
dpkg-deb -f "$work"/pkg/sim*.deb Package Version Depends
echo "install_check: ok ($prefix)"
