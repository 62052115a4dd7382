#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Quick look at one snapshot without ParaView: pressure and vorticity images
with the particles on top, written to a PNG (matplotlib; the files are read by simread.py).

    python3 examples/quicklook.py out/box                    # latest snapshot in the directory
    python3 examples/quicklook.py out/box/snap_000500.h5 -o box.png
    python3 examples/quicklook.py out/channel --fields vorticity

The layout read here is documented in docs/OUTPUT.md.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import simread  # noqa: E402  (beside this script)

# Colour map of each field; "speed" is |velocity| (x and y components).
LABELS = {
    "pressure": "RdBu_r",
    "vorticity": "PuOr_r",
    "divergence": "RdBu_r",
    "speed": "viridis",
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("snapshot", help="snap_NNNNNN.h5, or an output directory (its latest snapshot)")
    p.add_argument("-o", "--output", help="PNG to write (default: the snapshot name with .png)")
    p.add_argument("--fields", default="pressure,vorticity", help="comma-separated: " + ", ".join(LABELS))
    p.add_argument("--max-particles", type=int, default=20000, help="plot at most this many (evenly by id)")
    p.add_argument("--dpi", type=int, default=120)
    return p.parse_args()


def latest(path):
    """The snapshot file itself, or the last in time of a directory (its sim.xdmf, else its files)."""
    if os.path.isdir(path):
        run = simread.load_series(path)
        if not len(run):
            raise SystemExit(f"quicklook: no snapshots in {path}")
        return run.paths[-1]
    return path


def symmetric(name, data):
    """Signed fields get a colour scale centred on zero (pressure relative to its mean)."""
    if name == "speed":
        return data, None, None
    if name == "pressure":
        data = data - np.nanmean(data)
    lim = np.nanpercentile(np.abs(data), 99.5) or 1.0
    return data, -lim, lim


def main():
    args = parse_args()
    path = latest(args.snapshot)
    names = args.fields.split(",")
    unknown = [n for n in names if n not in LABELS]
    if unknown:
        raise SystemExit(f"quicklook: unknown field {', '.join(unknown)} (choose from {', '.join(LABELS)})")
    grid = {"velocity" if n == "speed" else n for n in names} | {"solid"}
    snap = simread.load(path, fields=sorted(grid))
    time, step = snap.time, snap.step
    dx, dy, nx, ny = snap.dx, snap.dy, snap.nx, snap.ny
    solid = snap.grid["solid"].astype(bool)
    fields = {}
    for name in names:
        if name == "speed":
            vel = snap.grid["velocity"]
            fields[name] = np.hypot(vel[..., 0], vel[..., 1])
        else:
            fields[name] = snap.grid[name].astype(np.float64)
    pos = snap.particles["position"]
    diam = snap.particles["diameter"]
    lx, ly = nx * dx, ny * dy
    if len(pos) > args.max_particles:
        keep = np.linspace(0, len(pos) - 1, args.max_particles).astype(int)
        pos, diam = pos[keep], diam[keep]

    n = len(fields)
    # Wide domains (a channel) stack the panels; others put them side by side.
    stacked = lx > 1.5 * ly
    panel_w = 10.0 if stacked else 5.0
    panel_h = panel_w * ly / lx
    rows, cols = (n, 1) if stacked else (1, n)
    fig, axes = plt.subplots(rows, cols, figsize=(cols * (panel_w + 1.2), rows * (panel_h + 0.6) + 0.4),
                             squeeze=False, layout="constrained")
    for ax, (name, data) in zip(axes.flat, fields.items()):
        cmap = LABELS[name]
        unit = snap.units.get("grid/" + ("velocity" if name == "speed" else name), "?")
        label = f"{name} [{unit}]"
        data = np.where(solid, np.nan, data)
        data, lo, hi = symmetric(name, data)
        im = ax.imshow(data, origin="lower", extent=[0, lx, 0, ly], cmap=cmap, vmin=lo, vmax=hi,
                       interpolation="nearest")
        if solid.any():
            ax.contourf(np.linspace(dx / 2, lx - dx / 2, nx), np.linspace(dy / 2, ly - dy / 2, ny), solid,
                        levels=[0.5, 1.5], colors=["0.35"])
        if len(pos):
            # Marker area grows with the diameter, within a readable range.
            size = 0.3 + 2.0 * (diam - diam.min()) / max(float(np.ptp(diam)), 1e-30)
            ax.scatter(pos[:, 0], pos[:, 1], s=size, c="k", linewidths=0, alpha=0.6)
        ax.set_xlim(0, lx)
        ax.set_ylim(0, ly)
        ax.set_aspect("equal")
        ax.set_xlabel(f"x [{snap.units.get('grid/spacing', 'm')}]")
        ax.set_ylabel(f"y [{snap.units.get('grid/spacing', 'm')}]")
        fig.colorbar(im, ax=ax, label=label + (" - mean" if name == "pressure" else ""), shrink=0.85)
    fig.suptitle(f"{os.path.basename(path)}: step {step}, t = {time:.4g} {snap.units.get('time', 's')}, {len(pos)} particles shown")
    out = args.output or os.path.splitext(path)[0] + ".png"
    fig.savefig(out, dpi=args.dpi)
    print(out)


if __name__ == "__main__":
    try:
        main()
    except (OSError, KeyError, ValueError) as e:
        raise SystemExit(f"quicklook: {e.args[0] if isinstance(e, KeyError) else e}") from None
