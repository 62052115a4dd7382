#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/simread.py (and quicklook.py through it) on small runs with and
# without particles, checked by tests/simread_check.py. Exit 77 (skipped)
# without a python3 that has h5py and numpy.
#
#   tests/simread_check.sh SIM
set -euo pipefail
sim=$1
here=$(cd "$(dirname "$0")/.." && pwd)
# python3 on the PATH first, then the system one (Debian's python3-h5py
# installs there, which a pyenv or venv python3 does not see).
py=
for c in python3 /usr/bin/python3; do
  if "$c" -c 'import h5py, numpy' >/dev/null 2>&1; then py=$c; break; fi
done
[[ -n $py ]] || { echo "simread_check: SKIPPED: no python3 with h5py and numpy"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
small=(--backend cpu --snapshot-every 2 --set domain.nx=32 --set domain.ny=24)
"$sim" "${small[@]}" --steps 6 --output "$work/box" --set 'particles.regions[0].count=500' \
  "$here/config/box.toml" >/dev/null
"$sim" "${small[@]}" --steps 5 --output "$work/tg" --set output.compress=true "$here/config/taylor_green.toml" >/dev/null
# A restart into its own directory: sim.xdmf lists steps 0, 2 and 4, the old
# snap_000006.h5 stays on disk.
cp -r "$work/box" "$work/restarted"
"$sim" "${small[@]}" --steps 4 --output "$work/restarted" --set 'particles.regions[0].count=500' \
  --restart "$work/restarted/snap_000002.h5" "$here/config/box.toml" >/dev/null
cp -r "$work/tg" "$work/files"
rm "$work/files/sim.xdmf"
"$py" "$here/tests/simread_check.py" "$work" "$here"
