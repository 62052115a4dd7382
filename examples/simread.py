#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Read sim's output into numpy: one snapshot, or a run's whole series, with names and units.

    import simread                             # examples/ on sys.path, or a copy of this file
    s = simread.load("out/box/snap_001000.h5")
    s.time, s.step, s.grid["pressure"], s.units["grid/pressure"]    # ..., 'Pa'
    run = simread.load_series("out/box")       # the snapshots in time order
    run.steps, run.times                       # from sim.xdmf: no snapshot opened yet
    for s in run: ...                          # each snapshot read when reached
    p = run.stack("pressure")                  # (snapshots, ny, nx): one dataset of every snapshot

    python3 examples/simread.py out/box        # summary: steps, times, fields with units and ranges

Orientation (as in the files, docs/OUTPUT.md): grid arrays are [ny, nx], y slowest, x along the
last axis; a[j, i] is cell column i (x) of row j (y). Coordinates: s.x, s.y the cell centres,
s.xf, s.yf the cell faces; s.axes(name) gives the pair for a dataset (u lies at (xf, y), v at
(x, yf)), so plt.pcolormesh(*s.axes("u"), s.grid["u"]) draws it in place.
Needs h5py and numpy only (Debian: python3-h5py).
"""
import glob
import os
import re
import sys
import warnings
import xml.etree.ElementTree as ET

import h5py
import numpy as np

SNAP = re.compile(r"^snap_(\d+)\.h5$")
SECTION = re.compile(r"(Attributes|/grid|/particles):\s*")


def parse_units(text):
    """{name: unit} from a snapshot's `units` attribute.

    The attribute lists "name [unit]" items per section ("Attributes:", "/grid:",
    "/particles:"); dataset keys are their paths ("grid/pressure", "particles/velocity"),
    root attributes their names ("time", "dt"), group attributes "grid/spacing".
    An explanation inside the brackets ("1 = obstacle") is dropped: the unit is "1".
    """
    units = {}
    parts = SECTION.split(text or "")
    for section, body in zip(parts[1::2], parts[2::2]):
        prefix = "" if section == "Attributes" else section[1:] + "/"
        for names, unit in re.findall(r"([^,\[\]]+?)\s*\[([^\]]*)\]", body):
            names = re.sub(r"\([^)]*\)", "", names).strip(" .,")
            group = prefix
            m = re.match(r"^/(\w+)\s+(.*)$", names)  # "/grid spacing and origin"
            if m:
                group, names = m.group(1) + "/", m.group(2)
            for name in re.split(r"\s+and\s+", names):
                if name:
                    units[group + name.strip()] = unit.split("=")[0].strip()
    return units


def _open(path):
    """h5py.File(path) for reading; OSError naming the file when it cannot be read."""
    try:
        return h5py.File(path, "r")
    except OSError as e:
        raise OSError(f"{path}: {e}") from None


def _attr(value):
    """An HDF5 attribute as plain Python (numbers, str, lists)."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray):
        return value.tolist() if value.ndim else value.item()
    return value.item() if isinstance(value, np.generic) else value


class Snapshot:
    """One snapshot file: grid fields, particles, time, step, units.

    grid: {name: array} of the /grid datasets read ([ny, nx] and the shapes of
    docs/OUTPUT.md); particles: {name: array} of /particles (position (N, 3), velocity
    (N, 3), id, diameter; N may be 0); attrs: every root attribute; units: from the
    file's `units` attribute ({} when it has none).
    """

    def __init__(self, path, fields=None, particles=True):
        self.path = path
        with _open(path) as f:
            if "grid" not in f or "step" not in f.attrs:
                raise ValueError(f"{path}: not a sim snapshot (no /grid or no 'step' attribute)")
            self.attrs = {k: _attr(v) for k, v in f.attrs.items()}
            g = f["grid"]
            names = list(g) if fields is None else list(fields)
            missing = [n for n in names if n not in g]
            if missing:
                raise KeyError(f"{path}: no grid dataset {', '.join(missing)} (has {', '.join(g)})")
            self.grid = {n: g[n][()] for n in names}
            self.spacing = np.asarray(g.attrs["spacing"], dtype=np.float64)
            self.origin = np.asarray(g.attrs.get("origin", [0.0, 0.0]), dtype=np.float64)
            # Cell-centred datasets are (ny, nx), the face ones one longer on one axis.
            self.ny = min(d.shape[0] for d in g.values())
            self.nx = min(d.shape[1] for d in g.values())
            self.particles = {}
            if particles and "particles" in f:
                self.particles = {n: d[()] for n, d in f["particles"].items()}
            self.n_particles = f["particles/id"].shape[0] if "particles/id" in f else 0
        self.time = float(self.attrs["time"])
        self.step = int(self.attrs["step"])
        self.dt = float(self.attrs["dt"]) if "dt" in self.attrs else float("nan")
        self.config = self.attrs.get("config", "")
        self.units = parse_units(self.attrs.get("units", ""))

    dx = property(lambda self: float(self.spacing[0]))
    dy = property(lambda self: float(self.spacing[1]))
    lx = property(lambda self: self.nx * self.dx)
    ly = property(lambda self: self.ny * self.dy)
    xf = property(lambda self: self.origin[0] + self.dx * np.arange(self.nx + 1))
    yf = property(lambda self: self.origin[1] + self.dy * np.arange(self.ny + 1))
    x = property(lambda self: self.origin[0] + self.dx * (np.arange(self.nx) + 0.5))
    y = property(lambda self: self.origin[1] + self.dy * (np.arange(self.ny) + 0.5))
    extent = property(lambda self: [self.origin[0], self.origin[0] + self.lx,
                                    self.origin[1], self.origin[1] + self.ly])

    def axes(self, name):
        """(x, y) coordinates of the points of grid dataset `name`, by its shape."""
        shape = self.grid[name].shape[:2]
        xs = {self.nx: self.x, self.nx + 1: self.xf}[shape[1]]
        ys = {self.ny: self.y, self.ny + 1: self.yf}[shape[0]]
        return xs, ys

    def __getitem__(self, key):
        """s["pressure"], s["grid/pressure"], s["particles/position"]."""
        group, _, name = key.rpartition("/")
        return (self.particles if group == "particles" else self.grid)[name]

    def __repr__(self):
        return (f"<Snapshot {os.path.basename(self.path)}: step {self.step}, t = {self.time:g} s, "
                f"{self.nx} x {self.ny} cells, {self.n_particles} particles>")


def load(path, fields=None, particles=True):
    """Read one snapshot file. fields: the grid datasets to read (default all);
    particles=False leaves the particle arrays out (n_particles is still set)."""
    return Snapshot(path, fields, particles)


def _from_xdmf(index):
    """[(step, time, path)] of the snapshots sim.xdmf lists."""
    try:
        root = ET.parse(index).getroot()
    except ET.ParseError as e:
        raise ValueError(f"{index}: not an XDMF index ({e})") from None
    here = os.path.dirname(index)
    out = []
    for series in root.iter("Grid"):
        if series.get("CollectionType") != "Temporal":
            continue
        for entry in series.findall("Grid"):
            item = next((d for d in entry.iter("DataItem") if d.get("Format") == "HDF"), None)
            when = entry.find("Time")
            if item is None or when is None:
                continue
            name = item.text.strip().split(":")[0]
            step = re.fullmatch(r"step_(\d+)", entry.get("Name", ""))
            m = step or SNAP.match(os.path.basename(name))
            out.append((int(m.group(1)), float(when.get("Value")), os.path.join(here, name)))
    return out


def _from_files(directory):
    """[(step, time, path)] of the snap_*.h5 files (the step from the name, the time from the file)."""
    out = []
    for path in glob.glob(os.path.join(directory, "snap_*.h5")):
        m = SNAP.match(os.path.basename(path))
        if m:
            with _open(path) as f:
                if "time" not in f.attrs:
                    raise ValueError(f"{path}: no 'time' attribute: not a sim snapshot")
                out.append((int(m.group(1)), float(f.attrs["time"]), path))
    return out


class Series:
    """A run's snapshots in time order. From OUTPUT/sim.xdmf when present (it lists
    only complete snapshots, and after a restart into the directory only those of the
    continued run); else from the snap_*.h5 files, ordered by step. Steps, times and
    paths are known up front; a snapshot is read when indexed or iterated over."""

    def __init__(self, path):
        if os.path.isfile(path) and path.endswith(".xdmf"):
            index, self.directory = path, os.path.dirname(path) or "."
        else:
            index, self.directory = os.path.join(path, "sim.xdmf"), path
        if not os.path.isdir(self.directory):
            raise FileNotFoundError(f"{path}: no such file or directory" if not os.path.exists(path) else
                                    f"{path}: not a directory or an .xdmf index")
        self.source = "sim.xdmf" if os.path.isfile(index) else "snap_*.h5"
        entries = _from_xdmf(index) if os.path.isfile(index) else _from_files(self.directory)
        self.missing = [p for _, _, p in entries if not os.path.isfile(p)]
        if self.missing:
            warnings.warn(f"{index} lists {len(self.missing)} snapshot(s) not on disk, "
                          f"e.g. {self.missing[0]}; left out")
        entries = sorted((e for e in entries if os.path.isfile(e[2])), key=lambda e: (e[0], e[1]))
        self.steps = np.array([e[0] for e in entries], dtype=np.int64)
        self.times = np.array([e[1] for e in entries], dtype=np.float64)
        self.paths = [e[2] for e in entries]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        """run[i] a Snapshot (run[-1] the last); run[a:b] a list of them."""
        if isinstance(i, slice):
            return [load(p) for p in self.paths[i]]
        return load(self.paths[i])

    def __iter__(self):
        return (load(p) for p in self.paths)

    def load(self, i, fields=None, particles=True):
        return load(self.paths[i], fields, particles)

    def at_step(self, step):
        hit = np.flatnonzero(self.steps == step)
        if not len(hit):
            raise KeyError(f"{self.directory}: no snapshot of step {step} (steps {self.steps.tolist()})")
        return self[int(hit[0])]

    def at_time(self, time):
        """The snapshot nearest to `time`."""
        return self[int(np.argmin(np.abs(self.times - time)))]

    def stack(self, name):
        """One dataset ("pressure", "grid/u", "particles/diameter") of every snapshot,
        stacked along a new first axis; ValueError when its shape changes (a particle
        count that changes)."""
        key = name if "/" in name else "grid/" + name
        arrays = []
        for p in self.paths:
            with _open(p) as f:
                arrays.append(f[key][()])
        if len({a.shape for a in arrays}) > 1:
            raise ValueError(f"{key} changes shape over the series: read the snapshots one by one")
        return np.stack(arrays) if arrays else np.empty((0,))

    def __repr__(self):
        return f"<Series {self.directory}: {len(self)} snapshots from {self.source}>"


def load_series(path):
    """The snapshots of an output directory (or its sim.xdmf) in time order."""
    return Series(path)


def _ranges(s):
    """Lines "name shape dtype [unit] min .. max" for the arrays of a snapshot."""
    lines = []
    for group, arrays in (("grid", s.grid), ("particles", s.particles)):
        for name, a in arrays.items():
            unit = s.units.get(f"{group}/{name}", "?")
            if not a.size:
                span = "(empty)"
            elif a.ndim > 1 and a.shape[-1] == 3:  # (x, y, 0) vectors: x and y apart
                span = ", ".join(f"{c} {np.nanmin(a[..., k]):.6g} .. {np.nanmax(a[..., k]):.6g}"
                                 for k, c in enumerate("xy"))
            else:
                span = f"{np.nanmin(a):.6g} .. {np.nanmax(a):.6g}"
            lines.append(f"  {group + '/' + name:22} {str(a.shape):16} {str(a.dtype):8} [{unit}]"
                         f"{'':{max(1, 10 - len(unit))}}{span}")
    return lines


def summary(path, step=None, rows=12):
    """The text `python3 simread.py PATH` prints."""
    if os.path.isfile(path) and not path.endswith(".xdmf"):
        snap, out = load(path), []
    else:
        run = load_series(path)
        if not len(run):
            raise FileNotFoundError(f"{path}: no snapshots (no sim.xdmf entries or snap_*.h5 files)")
        out = [f"{path}: {len(run)} snapshots (from {run.source}), steps {run.steps[0]} .. {run.steps[-1]}, "
               f"t = {run.times[0]:g} .. {run.times[-1]:g} s",
               f"  {'step':>10} {'time [s]':>14}  file"]
        shown = range(len(run)) if len(run) <= rows else [*range(rows // 2), None, *range(len(run) - rows // 2, len(run))]
        for i in shown:
            out.append("  ..." if i is None else
                       f"  {run.steps[i]:>10} {run.times[i]:>14.6g}  {os.path.basename(run.paths[i])}")
        snap = run[-1] if step is None else run.at_step(step)
    u = snap.units
    out.append(f"{snap.path}: step {snap.step}, t = {snap.time:g} [{u.get('time', '?')}], "
               f"dt = {snap.dt:g} [{u.get('dt', '?')}], {snap.nx} x {snap.ny} cells of "
               f"{snap.dx:g} x {snap.dy:g} [{u.get('grid/spacing', '?')}], {snap.n_particles} particles")
    return "\n".join(out + _ranges(snap))


def main(argv=None):
    import argparse
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("path", help="an output directory, its sim.xdmf, or one snap_NNNNNN.h5")
    p.add_argument("--step", type=int, help="the snapshot whose fields to show (default: the last)")
    args = p.parse_args(argv)
    try:
        print(summary(args.path, args.step))
    except BrokenPipeError:  # simread.py ... | head
        sys.stderr.close()
        return 0
    except (OSError, KeyError, ValueError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"simread: {msg}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
