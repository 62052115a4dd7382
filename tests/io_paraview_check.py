# SPDX-License-Identifier: MIT
"""ParaView opens OUTPUT/sim.xdmf as the documentation says it does.

usage: io_paraview_check.py DIR
DIR holds sim.xdmf, its snapshots and expect.json (written by the doctest
"io: ParaView data"): times, grid size and extent, the cell and point arrays
of the snapshot field table with their components, and per snapshot the
particle count, value ranges and probe values read with the HDF5 C API.

Runs under pvpython/pvbatch, or any python that imports paraview.simple;
from another python it re-runs itself under pvpython or pvbatch. Without
ParaView it prints SKIPPED and exits 77 (ctest: SKIP_RETURN_CODE 77).
"""
import json
import os
import shutil
import sys

SKIP = 77


def reexec_under_paraview():
    if os.environ.get("SIM_PARAVIEW_CHECK_CHILD"):
        return
    for tool in ("pvpython", "pvbatch"):
        exe = shutil.which(tool)
        if exe:
            os.environ["SIM_PARAVIEW_CHECK_CHILD"] = "1"
            args = [exe] + (["--force-offscreen-rendering"] if tool == "pvbatch" else [])
            os.execv(exe, args + [os.path.abspath(__file__)] + sys.argv[1:])


try:
    from paraview import servermanager
    from paraview.simple import XDMFReader
except ImportError:
    reexec_under_paraview()
    print("SKIPPED: ParaView (pvpython, pvbatch or the paraview Python module) is not installed")
    sys.exit(SKIP)


def close(a, b, rel=1e-6, abs_tol=0.0):
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_tol)


def block_named(mb, name):
    """Blocks are named after the XDMF grids; later times get a [k] suffix."""
    for i in range(mb.GetNumberOfBlocks()):
        meta = mb.GetMetaData(i) if mb.HasMetaData(i) else None
        label = meta.Get(mb.NAME()) if meta else ""
        if label == name or label.startswith(name + "["):
            return mb.GetBlock(i)
    return None


def main():
    data = sys.argv[1]
    want = json.load(open(os.path.join(data, "expect.json")))
    errors = []

    def expect(cond, what):
        if not cond:
            errors.append(what)

    reader = XDMFReader(FileNames=[os.path.join(data, "sim.xdmf")])
    times = list(reader.TimestepValues)
    expect(len(times) == len(want["steps"]), f"{len(times)} times, expected {len(want['steps'])}")
    expect(sorted(reader.CellArrayStatus) == sorted(want["cell_arrays"]), f"cell arrays {reader.CellArrayStatus}")
    expect(sorted(reader.PointArrayStatus) == sorted(want["point_arrays"]), f"point arrays {reader.PointArrayStatus}")
    nx, ny, lx, ly = want["nx"], want["ny"], want["lx"], want["ly"]
    for t, step in zip(times, want["steps"]):
        where = f"t = {t}"
        expect(close(t, step["time"], 1e-12), f"{where}: expected time {step['time']}")
        reader.UpdatePipeline(t)
        mb = servermanager.Fetch(reader)
        grid = block_named(mb, "grid")
        if grid is None or grid.GetClassName() != "vtkImageData":
            errors.append(f"{where}: no image-data block 'grid'")
            continue
        b = grid.GetBounds()
        expect(close(b[0], 0, 0, 1e-12) and close(b[1], lx, 1e-9), f"{where}: x bounds {b[0:2]}, expected [0, {lx}]")
        expect(close(b[2], 0, 0, 1e-12) and close(b[3], ly, 1e-9), f"{where}: y bounds {b[2:4]}, expected [0, {ly}]")
        expect(grid.GetNumberOfCells() == nx * ny, f"{where}: {grid.GetNumberOfCells()} cells")
        cells = grid.GetCellData()
        for name, ncomp in want["cell_arrays"].items():
            a = cells.GetArray(name)
            if a is None or a.GetNumberOfComponents() != ncomp:
                errors.append(f"{where}: cell array {name} missing or not {ncomp} components")
                continue
            if name in step["ranges"]:
                lo, hi = a.GetRange(0)
                wlo, whi = step["ranges"][name]
                expect(close(lo, wlo) and close(hi, whi), f"{where}: {name} range ({lo}, {hi}), expected ({wlo}, {whi})")
        # Cell (i, j) is VTK cell i + nx j when x runs to the right and y up.
        for p in step["probes"]:
            got = cells.GetArray(p["array"]).GetComponent(p["i"] + nx * p["j"], p.get("component", 0))
            expect(close(got, p["value"]), f"{where}: {p['array']} at cell ({p['i']}, {p['j']}) is {got}, "
                                           f"expected {p['value']}")
        parts = block_named(mb, "particles")
        n = step["particles"]
        if n == 0:
            expect(parts is None or parts.GetNumberOfPoints() == 0, f"{where}: particles shown, none expected")
            continue
        if parts is None:
            errors.append(f"{where}: no particle block")
            continue
        expect(parts.GetNumberOfPoints() == n, f"{where}: {parts.GetNumberOfPoints()} particles, expected {n}")
        pd = parts.GetPointData()
        for name, ncomp in want["point_arrays"].items():
            a = pd.GetArray(name)
            expect(a is not None and a.GetNumberOfComponents() == ncomp, f"{where}: point array {name}")
        ids = pd.GetArray("id")
        if ids is not None and ids.GetNumberOfTuples() == n:
            k = n - 1
            x, y, z = parts.GetPoint(k)
            px, py = step["last_particle"]["position"]
            expect(int(ids.GetValue(k)) == step["last_particle"]["id"], f"{where}: last particle id")
            expect(close(x, px) and close(y, py) and z == 0, f"{where}: last particle at ({x}, {y}, {z})")
    for e in errors:
        print("io_paraview_check: " + e, file=sys.stderr)
    if not errors:
        print(f"io_paraview_check: {len(times)} times, grid and particles as expected")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
