#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Grid convergence of the Schafer & Turek (1996) cylinder benchmarks 2D-1
# (Re 20, steady) and 2D-2 (Re 100, periodic shedding): each case of
# config/schafer_turek_2d*.toml on grids of NY cells across the channel
# (h = 0.41 / NY, nx = 2.2 / h), a row of diagnostics.csv every step, and the
# table of C_D, C_L, St, max C_D, max C_L and their errors against the
# benchmark (scripts/schafer_turek.py). Runs, logs and the table stay under
# bench/schafer-turek/ (a grid whose run is complete is not run again; delete
# its directory to redo it). docs/VALIDATION.md has the table and what it shows.
#
#   scripts/schafer-turek.sh SIM [BACKEND [NY ...]]
#   e.g. scripts/schafer-turek.sh build/sim cpu 41 82 164
#        scripts/schafer-turek.sh build-cuda/sim cuda 41 82 164 328
#
# BACKEND: cpu (default) or cuda; NY: default 41 82 164. Environment: CASES
# (default "1 2"), T1 and T2 the end times (default 10 s and 12 s), FROM the
# time the shedding is measured from (default 6 s: the wake has settled into
# its period by then on these grids).
set -euo pipefail
sim=$(realpath "$1")
backend=${2:-cpu}
shift $(( $# >= 2 ? 2 : 1 ))
grids=("$@")
[[ ${#grids[@]} -gt 0 ]] || grids=(41 82 164)
cd "$(dirname "$0")/.."
out=bench/schafer-turek
mkdir -p "$out"
specs=()
for c in ${CASES:-1 2}; do
  t_end=$([[ $c == 1 ]] && echo "${T1:-10}" || echo "${T2:-12}")
  for ny in "${grids[@]}"; do
    nx=$(awk -v n="$ny" 'BEGIN { printf "%d", n * 2.2 / 0.41 + 0.5 }')
    dir=$out/2d$c-ny$ny-$backend
    if [[ ! -f $dir/done ]] || [[ $(cat "$dir/done") != "$t_end" ]]; then
      rm -rf "$dir"
      echo "2D-$c: $nx x $ny cells, to t = $t_end s on $backend ..." >&2
      start=$(date +%s)
      "$sim" config/schafer_turek_2d$c.toml --backend "$backend" --output "$dir" --end-time "$t_end" \
        --set domain.nx="$nx" --set domain.ny="$ny" --set run.diagnostics_every=1 --progress-every 60 \
        >"$out/2d$c-ny$ny-$backend.log" 2>&1 || { tail -5 "$out/2d$c-ny$ny-$backend.log"; exit 1; }
      echo "  $(( $(date +%s) - start )) s" >&2
      echo "$t_end" >"$dir/done"
    fi
    specs+=("$c:$ny:$dir")
  done
done
python3 scripts/schafer_turek.py --from "${FROM:-6}" "${specs[@]}" | tee "$out/table-$backend.txt"
