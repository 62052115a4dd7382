#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mpirun -np 3 sim bench: the ranks suite measures the case on 1, 2 and 3
# ranks and writes a row per count. Each count takes the one-rank path
# through the solver (a split run gives one rank's bits), so the pressure
# iterations per step must be one rank's; the efficiency of one rank is 1
# and every other is t(1) / (n t(n)) of the row's own numbers.
#   bench_ranks.sh SIM CONFIG_DIR
set -euo pipefail
sim=$1 configs=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mpirun -np 3 --oversubscribe "$sim" bench --quiet --steps 3 --warmup 1 --csv "$work/ranks.csv" \
  --set domain.nx=48 --set domain.ny=48 "$configs/channel.toml" > "$work/table.txt"
/usr/bin/python3 - "$work/ranks.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ranks = [int(r["ranks"]) for r in rows]
assert ranks == [1, 2, 3], f"rank counts {ranks}"
for r in rows:
    assert r["error"] == "", f"{r['ranks']} ranks: {r['error']}"
it1 = float(rows[0]["iterations_per_step"])
t1 = float(rows[0]["total_ms"])
assert it1 > 0, "no pressure iterations on one rank"
for r in rows:
    n, t = int(r["ranks"]), float(r["total_ms"])
    assert float(r["iterations_per_step"]) == it1, f"{n} ranks: {r['iterations_per_step']} iterations/step, one rank {it1}"
    assert abs(float(r["efficiency"]) - t1 / (n * t)) < 1e-6, f"{n} ranks: efficiency {r['efficiency']}"
    assert (float(r["comm_ms_max"]) > 0) == (n > 1), f"{n} ranks: communication {r['comm_ms_max']} ms"
    assert (float(r["comm_calls"]) > 0) == (n > 1), f"{n} ranks: {r['comm_calls']} communication calls a step"
    assert int(r["rows_max"]) == -(-48 // n), f"{n} ranks: {r['rows_max']} rows at most"
print(f"bench_ranks: 1, 2, 3 ranks, {it1:g} iterations/step on each, efficiency {', '.join(r['efficiency'][:5] for r in rows)}")
PY
grep -q "efficiency" "$work/table.txt" || { echo "bench_ranks: no table"; exit 1; }
