#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/render_paraview.py as the README runs it: given a run's output
# directory, on a run with particles (box.toml, small) and one without
# (taylor_green.toml); each must write its PNG. Exit 77 (skipped) without
# pvbatch or xvfb-run.
#
#   tests/paraview_example.sh SIM
set -euo pipefail
sim=$1
here=$(cd "$(dirname "$0")/.." && pwd)
command -v pvbatch >/dev/null 2>&1 && command -v xvfb-run >/dev/null 2>&1 || { echo "no pvbatch or xvfb-run"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$sim" --backend cpu --steps 5 --output "$work/tg" "$here/config/taylor_green.toml" >/dev/null
"$sim" --backend cpu --steps 5 --output "$work/box" --set domain.nx=32 --set domain.ny=32 \
  --set 'particles.regions[0].count=500' "$here/config/box.toml" >/dev/null
for run in tg box; do
  xvfb-run -a pvbatch "$here/examples/render_paraview.py" "$work/$run" -o "$work/$run.png" --size 300 2>&1 | tail -1
  [[ -s $work/$run.png ]] || { echo "paraview_example: no image for $run"; exit 1; }
done
echo "paraview_example: ok"
