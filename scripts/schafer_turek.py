#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Schafer & Turek (1996) coefficients of runs of config/schafer_turek_2d*.toml.

Reads each run's diagnostics.csv (one row a step, run.diagnostics_every = 1: the
obstacle's force drag_0, lift_0 per unit depth, docs/OUTPUT.md) and prints one
table row per run:

  C_D = 2 F_x / (rho U^2 D), C_L = 2 F_y / (rho U^2 D), St = D f / U,

U the inflow's mean speed (0.2 m/s in 2D-1, 1 m/s in 2D-2), D = 0.1 m, rho = 1.
2D-1 (steady): the last step's C_D and C_L, and how much C_D moved over the last
tenth of the run (the distance from steady); a last step shortened to land on the end
time is left out. 2D-2 (periodic): from the first
upward zero crossing of C_L after --from to the last one (linear between steps),
f = whole periods / their time; max C_D and max C_L over those periods.

usage: schafer_turek.py [--from T] CASE:NY:DIR ...   (CASE 1 or 2)
"""
import csv
import sys

D, RHO = 0.1, 1.0
U = {1: 0.2, 2: 1.0}
REF1 = {"cd": 5.5795, "cl": 0.0106}
REF2 = {"cd_max": (3.22, 3.24), "cl_max": (0.99, 1.01), "st": (0.295, 0.305)}


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    rows = [r for r in rows if int(r["step"]) > 0]
    if not rows:
        raise SystemExit(f"{path}: no steps")
    if "drag_0" not in rows[0]:
        raise SystemExit(f"{path}: no drag_0 column (a run without an obstacle?)")
    # The last step is cut short to land on the end time; the force of a step whose dt differs
    # from the one before carries a transient of the incremental pressure (C_D 0.1% low at
    # 0.41/328), so a shortened last step is left out.
    if len(rows) >= 2 and float(rows[-1]["dt"]) < 0.99 * float(rows[-2]["dt"]):
        rows = rows[:-1]
    return [float(r["time"]) for r in rows], [float(r["drag_0"]) for r in rows], [float(r["lift_0"]) for r in rows]


def off(value, lo, hi):
    """Relative distance outside [lo, hi], 0 inside."""
    if value < lo:
        return (value - lo) / lo
    if value > hi:
        return (value - hi) / hi
    return 0.0


def case1(t, fx, fy):
    k = 2 / (RHO * U[1] ** 2 * D)
    cd, cl = [k * x for x in fx], [k * y for y in fy]
    tail = [c for tt, c in zip(t, cd) if tt >= 0.9 * t[-1]]
    return {"cd": cd[-1], "cl": cl[-1], "drift": max(tail) - min(tail), "t": t[-1]}


def case2(t, fx, fy, t_from):
    k = 2 / (RHO * U[2] ** 2 * D)
    cd, cl = [k * x for x in fx], [k * y for y in fy]
    up = [t[i - 1] + (t[i] - t[i - 1]) * (-cl[i - 1]) / (cl[i] - cl[i - 1])
          for i in range(1, len(t)) if t[i - 1] >= t_from and cl[i - 1] < 0 <= cl[i]]
    if len(up) < 3:
        return {"t": t[-1], "periods": max(len(up) - 1, 0)}
    periods = len(up) - 1
    span = [i for i in range(len(t)) if up[0] <= t[i] <= up[-1]]
    lengths = [b - a for a, b in zip(up, up[1:])]
    return {"st": D * periods / (up[-1] - up[0]) / U[2], "cd_max": max(cd[i] for i in span),
            "cl_max": max(cl[i] for i in span), "periods": periods,
            "spread": (max(lengths) - min(lengths)) / (sum(lengths) / periods), "t": t[-1]}


def main(argv):
    t_from = 5.0
    if len(argv) >= 2 and argv[0] == "--from":
        t_from, argv = float(argv[1]), argv[2:]
    if not argv:
        raise SystemExit(__doc__)
    out1, out2 = [], []
    for spec in argv:
        which, ny, path = spec.split(":", 2)
        which, ny = int(which), int(ny)
        h = 0.41 / ny
        t, fx, fy = read(path + "/diagnostics.csv")
        if which == 1:
            r = case1(t, fx, fy)
            out1.append(f"{ny:>5} {h:9.6f} {r['t']:6.2f} {r['cd']:9.4f} {100 * (r['cd'] / REF1['cd'] - 1):+7.2f}% "
                        f"{r['cl']:8.4f} {r['cl'] - REF1['cl']:+8.4f} {r['drift']:9.2e}")
        else:
            r = case2(t, fx, fy, t_from)
            if "st" not in r:
                out2.append(f"{ny:>5} {h:9.6f} {r['t']:6.2f}   fewer than 2 periods of shedding after t = {t_from}")
                continue
            out2.append(f"{ny:>5} {h:9.6f} {r['t']:6.2f} {r['st']:7.4f} {100 * off(r['st'], *REF2['st']):+6.2f}% "
                        f"{r['cd_max']:8.4f} {100 * off(r['cd_max'], *REF2['cd_max']):+6.2f}% "
                        f"{r['cl_max']:8.4f} {100 * off(r['cl_max'], *REF2['cl_max']):+6.2f}% "
                        f"{r['periods']:>4} {100 * r['spread']:6.2f}%")
    if out1:
        print("2D-1 (Re 20, steady): reference C_D 5.5795, C_L 0.0106")
        print("   ny         h  t_end       C_D   error      C_L    error  C_D drift (last 10%)")
        print("\n".join(out1))
    if out2:
        if out1:
            print()
        print(f"2D-2 (Re 100, periodic, from t = {t_from}): reference St 0.295-0.305, max C_D 3.22-3.24, "
              "max C_L 0.99-1.01 (errors: outside the range)")
        print("   ny         h  t_end      St  error   max C_D  error   max C_L  error  per. period spread")
        print("\n".join(out2))


if __name__ == "__main__":
    main(sys.argv[1:])
