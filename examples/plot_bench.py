#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Bar charts (PNG) of `sim bench` results, for docs/PERFORMANCE.md.

    python3 examples/plot_bench.py out/bench/bench.json --out docs/images
    python3 examples/plot_bench.py box.json micro.json torch_sweep.json box.csv ...

Reads the merged bench.json of scripts/bench.sh, single `sim bench --json`
reports, bench/torch_sweep.py's JSON, or `sim bench --csv` files, and writes
  bench_<case>_matrix.png   ms/step by phase per variant, fastest first, % of copy bandwidth
  bench_micro_sweeps.png    pressure sweeps: Gcell/s per size and variant (+ PyTorch), copy ceiling
  bench_micro_particles.png particle step: Gparticle/s per count and variant
Needs matplotlib (Debian: apt-get install python3-matplotlib).
"""
import argparse
import csv
import json
import math
import os
import sys

PHASES = ["particles", "momentum", "pressure", "project", "other"]


def number(v):
    try:
        x = float(v)
        return x if math.isfinite(x) else None
    except (TypeError, ValueError):
        return None


def ok(row):
    return not row.get("error")


def load(paths):
    """{name: report} from every input; a report has suite, rows, ceiling."""
    reports = {}
    for path in paths:
        stem = os.path.splitext(os.path.basename(path))[0]
        if path.endswith(".csv"):
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
            suite = "micro" if rows and "benchmark" in rows[0] else "matrix"
            reports[stem] = {"suite": suite, "rows": rows, "ceiling": {}}
            continue
        with open(path) as f:
            data = json.load(f)
        if "suite" in data or "rows" in data:
            reports[stem] = data
        else:  # merged: {name: report}
            for name, rep in data.items():
                if isinstance(rep, dict) and "rows" in rep:
                    reports[name] = rep
                elif isinstance(rep, dict) and rep.get("error"):
                    print(f"plot_bench: {name}: {rep['error']}", file=sys.stderr)
    return reports


def plot_matrix(plt, name, rep, out):
    rows = [r for r in rep["rows"] if ok(r) and number(r.get("total_ms")) is not None]
    if not rows:
        print(f"plot_bench: {name}: no successful variants", file=sys.stderr)
        return None
    rows.sort(key=lambda r: number(r["total_ms"]), reverse=True)  # fastest at the top
    labels = [r["variant"] for r in rows]
    fig, ax = plt.subplots(figsize=(10, 1.5 + 0.22 * len(rows)))
    left = [0.0] * len(rows)
    for phase in PHASES:
        vals = [number(r.get(phase + "_ms")) or 0.0 for r in rows]
        ax.barh(labels, vals, left=left, label=phase, height=0.8)
        left = [a + b for a, b in zip(left, vals)]
    for y, r in enumerate(rows):
        pct = number(r.get("copy_pct"))
        text = f" {number(r['total_ms']):.3g} ms"
        if pct is not None:
            text += f", {pct:.0f}% of copy" if pct >= 10 else f", {pct:.1f}% of copy"
        ax.text(left[y], y, text, va="center", fontsize=7)
    ax.set_xlabel("ms per step")
    ax.set_xlim(0, max(left) * 1.35)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.tick_params(axis="y", labelsize=7)
    title = f"sim bench: {rep.get('config', name)} on {rep.get('device', '?')}"
    steps = rep.get("steps")
    if steps:
        title += f" ({steps} steps after {rep.get('warmup', 0)} warm-up)"
    ax.set_title(title, fontsize=9)
    ax.legend(loc="upper right", fontsize=7)  # the fastest, shortest bars are at the top
    fig.tight_layout()
    path = os.path.join(out, f"bench_{name}_matrix.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def grouped(ax, groups, series, values, ylabel, decimals=0, style=None):
    """Bars: one group per x value, one bar per series; values[(series, group)].
    style(series) -> dict of extra bar arguments (colour, hatch), optional."""
    width = 0.8 / max(len(series), 1)
    for k, s in enumerate(series):
        xs, ys = [], []
        for g, group in enumerate(groups):
            v = values.get((s, group))
            if v is not None:
                xs.append(g + (k - (len(series) - 1) / 2) * width)
                ys.append(v)
        bars = ax.bar(xs, ys, width=width, label=s, **(style(s) if style else {}))
        for b, y in zip(bars, ys):
            ax.text(b.get_x() + b.get_width() / 2, y, f"{y:.{decimals}f}" if y >= 10 else f"{y:.2g}", ha="center",
                    va="bottom", fontsize=6, rotation=90)
    ax.set_xticks(range(len(groups)))
    ax.set_ylabel(ylabel)


def plot_sweeps(plt, micro, torch_rep, out):
    rows = [r for r in micro["rows"] if ok(r) and r.get("benchmark", "").endswith("_sweep")]
    if not rows:
        return None
    kinds = [k for k in ("jacobi_sweep", "sor_sweep") if any(r["benchmark"] == k for r in rows)]
    fig, axes = plt.subplots(1, len(kinds), figsize=(6.5 * len(kinds), 6), squeeze=False)
    ceiling = number(micro.get("ceiling", {}).get("gbps"))
    for ax, kind in zip(axes[0], kinds):
        mine = [r for r in rows if r["benchmark"] == kind]
        sizes = sorted({int(float(r["size"])) for r in mine})
        series = list(dict.fromkeys(r["variant"] for r in mine))
        values = {(r["variant"], int(float(r["size"]))): number(r["gitems_per_s"]) for r in mine}
        if kind == "jacobi_sweep" and torch_rep:
            for r in torch_rep.get("rows", []):
                if ok(r) and int(r["size"]) in sizes:
                    values[("torch " + r["impl"], int(r["size"]))] = number(r.get("gcells_per_s"))
                    if "torch " + r["impl"] not in series:
                        series.append("torch " + r["impl"])
        grouped(ax, sizes, series, values, "Gcell/s")
        ax.set_xticklabels([f"{n}²" for n in sizes])
        bpc = number(mine[0].get("bytes_per_item"))
        if ceiling and bpc:
            ax.axhline(ceiling / bpc, color="k", linestyle="--", linewidth=1,
                       label=f"copy ceiling {ceiling:.0f} GB/s at {bpc:.0f} B/cell")
        ax.set_title(kind.replace("_", " "), fontsize=10)
        ax.set_ylim(0, ax.get_ylim()[1] * 1.1)  # room for the value labels
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=4)  # below: bars stay visible
    fig.suptitle(f"pressure sweeps on {micro.get('device', '?')}", fontsize=10)
    fig.tight_layout()
    path = os.path.join(out, "bench_micro_sweeps.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_particles(plt, micro, out):
    rows = [r for r in micro["rows"] if ok(r) and r.get("benchmark") == "particle_step"]
    if not rows:
        return None
    counts = sorted({int(float(r["size"])) for r in rows})
    series = list(dict.fromkeys(r["variant"] for r in rows))
    values = {(r["variant"], int(float(r["size"]))): number(r["gitems_per_s"]) for r in rows}
    # one colour per strategy, hatched when the particles are in cell order
    sorted_tag = "/cell-sorted"
    bases = list(dict.fromkeys(s.replace(sorted_tag, "") for s in series))
    cmap = plt.get_cmap("tab20")

    def style(s):
        return {"color": cmap(bases.index(s.replace(sorted_tag, "")) % 20),
                "hatch": "//" if s.endswith(sorted_tag) else None, "edgecolor": "white"}

    fig, ax = plt.subplots(figsize=(min(14, max(6.5, 0.8 * len(series) * len(counts))), 4.8))
    grouped(ax, counts, series, values, "Gparticle/s", decimals=1, style=style)
    ax.set_xticklabels([f"{n / 2**20:g}M" if n % 2**20 == 0 else str(n) for n in counts])
    ax.set_xlabel("particles (one-way, no injection)")
    ceiling = number(micro.get("ceiling", {}).get("gbps"))
    for layout, style in (("soa", "--"), ("aos", ":")):
        r = next((r for r in rows if r.get("layout") == layout), None)
        bpp = number(r.get("bytes_per_item")) if r else None
        if ceiling and bpp:
            ax.axhline(ceiling / bpp, color="k", linestyle=style, linewidth=1,
                       label=f"copy ceiling {ceiling:.0f} GB/s at {layout.upper()} {bpp:.0f} B/particle")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))  # outside: bars stay visible
    ax.set_title(f"particle step on {micro.get('device', '?')}", fontsize=10)
    fig.tight_layout()
    path = os.path.join(out, "bench_micro_particles.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="+", help="bench.json, sim bench --json/--csv files, torch_sweep JSON")
    ap.add_argument("--out", default="docs/images", help="directory for the PNGs")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        sys.exit(f"plot_bench: needs matplotlib ({e}); on Debian: apt-get install python3-matplotlib")
    reports = load(args.inputs)
    os.makedirs(args.out, exist_ok=True)
    torch_rep = next((r for r in reports.values() if r.get("suite") == "torch"), None)
    written = []
    for name, rep in reports.items():
        if rep.get("suite") == "matrix":
            written.append(plot_matrix(plt, name, rep, args.out))
        elif rep.get("suite") == "micro":
            written.append(plot_sweeps(plt, rep, torch_rep, args.out))
            written.append(plot_particles(plt, rep, args.out))
    written = [w for w in written if w]
    for w in written:
        print(w)
    if not written:
        sys.exit("plot_bench: nothing to plot")


if __name__ == "__main__":
    main()
