#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Merge the reports of one scripts/bench-peers.sh call into peers.json and
a readable peers.txt: sim's rows (its `sim bench` JSON) and the PyTorch and
JAX peers, each with ms/step, steps/s, GB/s by one byte model (common.py's
step_bytes, sim's model for soa/software/atomic: the same bytes for every
row of a solver, so GB/s ratios are speed ratios) and the ratio to the
fastest sim row of the same solver. Compares the torch and jax self-check
steps with each other when both left one.

    python3 bench/peers/merge.py OUT_DIR N P
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"error": f"no results: {common.first_line(e)}"}


def main():
    out, n, p = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    case = common.Case(n, p)
    merged = {"case": case.describe(), "bytes_model": {s: common.step_bytes(case, s) for s in ("jacobi50", "fft")},
              "sim": {}, "peers": {}, "rows": [], "notes": []}
    for name in ("sim_jacobi", "sim_fft"):
        merged["sim"][name] = load(os.path.join(out, name + ".json"))
    for name in ("torch", "jax"):
        merged["peers"][name] = load(os.path.join(out, name + ".json"))

    rows = []
    for name, rep in merged["sim"].items():
        solver = "fft" if name == "sim_fft" else "jacobi50"
        for r in rep.get("rows", []):
            ms = r.get("total_ms")
            if r.get("error") or not ms:
                rows.append({"variant": "sim " + str(r.get("variant")), "solver": solver,
                             "error": r.get("error") or "no time"})
                continue
            row = common.timing_row("sim " + r["variant"], solver, case, float(ms))
            row.update(sim_bytes_per_step=r.get("bytes_per_step"), sim_gbps=r.get("gbps"),
                       iterations_per_step=r.get("iterations_per_step"))
            rows.append(row)
    for name, rep in merged["peers"].items():
        for r in rep.get("rows", []):
            rows.append(dict(r))
    best = {}
    for r in rows:
        if r["variant"].startswith("sim ") and "ms_per_step" in r:
            best[r["solver"]] = min(best.get(r["solver"], float("inf")), r["ms_per_step"])
    for r in rows:
        if "ms_per_step" in r and r["solver"] in best:
            r["vs_fastest_sim"] = r["ms_per_step"] / best[r["solver"]]
    merged["rows"] = rows

    # torch against jax on the self-check's fft step (each already checked against numpy)
    try:
        import numpy as np
        import core
        a = dict(np.load(os.path.join(out, "check_torch.npz")))
        b = dict(np.load(os.path.join(out, "check_jax.npz")))
        merged["torch_vs_jax_check_step"] = core.compare_states(a, b)
    except Exception as e:
        merged["torch_vs_jax_check_step"] = {"error": common.first_line(e)}

    lines = [f"bench_large step, {n}^2 cells, {p} particles; GB/s by sim's byte model (soa/software/atomic): "
             f"jacobi50 {common.step_bytes(case, 'jacobi50')['total'] / 1e9:.2f} GB/step, "
             f"fft {common.step_bytes(case, 'fft')['total'] / 1e9:.2f} GB/step", ""]
    for name, rep in list(merged["sim"].items()) + list(merged["peers"].items()):
        ceil = rep.get("ceiling") or {}
        what = ceil.get("gbps") if isinstance(ceil, dict) else None
        info = rep.get("framework") or {"device": rep.get("device") or rep.get("backend")}
        lines.append(f"{name}: {info}; ceiling {what if what is None else round(what, 1)} GB/s"
                     + (f"; ERROR {rep['error']}" if rep.get("error") else ""))
        for c in rep.get("checks", []):
            lines.append(f"  check {c.get('check')}: {'ok' if c.get('ok') else 'FAILED'}"
                         + (f" ({c['error']})" if c.get("error") else ""))
        for note in rep.get("notes", []) if isinstance(rep.get("notes"), list) else []:
            lines.append(f"  note: {note}")
    lines.append(f"torch vs jax, check step: {merged['torch_vs_jax_check_step']}")
    lines.append("")
    lines.append(f"{'variant':58} {'solver':8} {'ms/step':>9} {'steps/s':>8} {'GB/s':>8} {'x sim':>7}")
    for solver in ("jacobi50", "fft"):
        for r in sorted((r for r in rows if r["solver"] == solver), key=lambda r: r.get("ms_per_step", 1e30)):
            if "ms_per_step" in r:
                lines.append(f"{r['variant'][:58]:58} {solver:8} {r['ms_per_step']:9.3f} {r['steps_per_s']:8.1f} "
                             f"{r['gbps']:8.1f} {r.get('vs_fastest_sim', float('nan')):7.2f}")
            else:
                lines.append(f"{r['variant'][:58]:58} {solver:8} {r.get('error')}")
    lines.append("")
    lines.append("x sim: ms/step over the fastest sim row of the same solver (sim's fft rows: bench_large_solve.toml, "
                 "float64 pressure; the peers' fft: float32)")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "peers.txt"), "w") as f:
        f.write(text)
    common.write_json(os.path.join(out, "peers.json"), merged)
    print(text)


if __name__ == "__main__":
    main()
