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
# One X server for both renders: a second xvfb-run right after the first
# can meet the first server's display before it is gone.
render=$(printf 'pvbatch "%s" "%s/%s" -o "%s/%s.png" --size 300 2>&1 | tail -1; ' \
  "$here/examples/render_paraview.py" "$work" tg "$work" tg "$here/examples/render_paraview.py" "$work" box "$work" box)
# A display number of its own (from this shell's pid), and one retry, so a
# server another test just stopped on :99 is not in the way.
made() { [[ -s $work/tg.png && -s $work/box.png ]]; }
xvfb-run -a -n $((100 + $$ % 400)) bash -c "$render" || true
if ! made; then
  sleep 2
  xvfb-run -a -n $((500 + $$ % 400)) bash -c "$render" || true
fi
for run in tg box; do
  [[ -s $work/$run.png ]] || { echo "paraview_example: no image for $run"; exit 1; }
done
echo "paraview_example: ok"
