#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The per-kernel table of an `ncu --csv` run with the metrics
gpu__time_duration.sum, dram__bytes_read.sum and dram__bytes_write.sum:
per kernel name (template arguments dropped), launches, total time, DRAM
bytes, GB/s and that as a share of the copy bandwidth, share of the step's
time and bytes; sorted by time. Used by scripts/profile-step.sh."""
import argparse
import csv
import re
import sys
from collections import defaultdict

UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
         "nsecond": 1e-9, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0}


def short(name):
    name = re.sub(r"\(.*", "", name)          # arguments
    depth, out = 0, []
    for ch in name:                          # template arguments
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    s = "".join(out).strip()
    s = re.sub(r"^(void|auto)\s+", "", s)
    return s.split("::")[-1] or name[:60]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--copy-gbs", type=float, default=4250.0)
    a = ap.parse_args()
    text = open(a.csv, errors="replace").read()
    lines = text[text.find('"ID"'):].splitlines() if '"ID"' in text else []
    rows = csv.DictReader(lines)
    per = defaultdict(lambda: {"n": set(), "t": 0.0, "r": 0.0, "w": 0.0})
    for r in rows:
        v = r.get("Metric Value", "").replace(",", "")
        try:
            x = float(v) * UNITS.get(r.get("Metric Unit", ""), 1.0)
        except ValueError:
            continue
        k = per[short(r["Kernel Name"])]
        k["n"].add(r["ID"])
        m = r["Metric Name"]
        if m == "gpu__time_duration.sum":
            k["t"] += x
        elif m == "dram__bytes_read.sum":
            k["r"] += x
        elif m == "dram__bytes_write.sum":
            k["w"] += x
    if not per:
        sys.exit("no kernels in " + a.csv)
    T = sum(k["t"] for k in per.values())
    B = sum(k["r"] + k["w"] for k in per.values())
    print(f"{'kernel':44s} {'n':>4s} {'ms':>8s} {'%time':>6s} {'MB':>9s} {'%bytes':>6s} {'GB/s':>7s} {'%copy':>6s}")
    for name, k in sorted(per.items(), key=lambda kv: -kv[1]["t"]):
        b = k["r"] + k["w"]
        gbs = b / k["t"] / 1e9 if k["t"] > 0 else 0.0
        print(f"{name[:44]:44s} {len(k['n']):4d} {k['t']*1e3:8.3f} {100*k['t']/T:6.1f} {b/1e6:9.1f} "
              f"{100*b/B if B else 0:6.1f} {gbs:7.0f} {100*gbs/a.copy_gbs:6.1f}")
    print(f"{'total':44s} {sum(len(k['n']) for k in per.values()):4d} {T*1e3:8.3f} {100.0:6.1f} {B/1e6:9.1f} "
          f"{100.0:6.1f} {B/T/1e9:7.0f} {100*B/T/1e9/a.copy_gbs:6.1f}")


if __name__ == "__main__":
    main()
