# SPDX-License-Identifier: MIT
"""Check of a snapshot's layout with h5py, apart from sim's HDF5 code (docs/OUTPUT.md).

usage: python3 io_h5py_check.py SNAPSHOT NX NY N_PARTICLES FIELDS_JSON
FIELDS_JSON lists the datasets of the snapshot field table (io/snapshot_fields.hpp,
from which docs/OUTPUT.md is generated): [{"path", "shape", "dtype"}, ...].
Exits 0 when every documented name, shape, type and attribute is present, and no other dataset.
"""
import json
import sys

import h5py
import numpy as np


def main():
    path, nx, ny, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    with open(sys.argv[5]) as fields:
        shapes = {d["path"].lstrip("/"): (tuple(d["shape"]), np.dtype(d["dtype"])) for d in json.load(fields)}
    errors = []

    def expect(cond, what):
        if not cond:
            errors.append(what)

    with h5py.File(path, "r") as f:
        for name, kind in [("time", np.floating), ("dt", np.floating), ("step", np.integer),
                           ("next_id", np.integer), ("removed", np.integer), ("recycled", np.integer),
                           ("capacity", np.integer), ("format_version", np.integer)]:
            expect(name in f.attrs and np.issubdtype(np.asarray(f.attrs[name]).dtype, kind), f"attribute {name}")
        for name in ["config", "strategies", "version", "units"]:
            expect(isinstance(f.attrs.get(name), str) and f.attrs[name], f"string attribute {name}")
        expect("[domain]" in f.attrs.get("config", ""), "config holds the TOML text")
        grid = f["grid"]
        expect(list(grid.attrs["origin"]) == [0.0, 0.0], "grid origin")
        expect(np.allclose(grid.attrs["spacing"] * [nx, ny], [1.5, 1.0]), "grid spacing [dx, dy]")
        expect(sorted(f["grid"]) + sorted(f["particles"]) ==
               sorted(k[5:] for k in shapes if k.startswith("grid/")) +
               sorted(k[10:] for k in shapes if k.startswith("particles/")),
               f"datasets {sorted(f['grid'])} {sorted(f['particles'])}, listed {sorted(shapes)}")
        for name, (shape, dtype) in shapes.items():
            expect(name in f and f[name].shape == shape and f[name].dtype == dtype,
                   f"{name}: want {shape} {np.dtype(dtype)}, got "
                   f"{(f[name].shape, f[name].dtype) if name in f else 'missing'}")
        if not errors:
            ids = f["particles/id"][()]
            expect(np.all(np.diff(ids.astype(np.int64)) > 0), "particle ids increase")
            expect(np.all(f["particles/position"][:, 2] == 0), "particle z = 0")
            expect(np.all(f["grid/velocity"][:, :, 2] == 0), "velocity z = 0")
            rho = float(f.attrs["config"].split("[fluid]")[1].split("density = ")[1].split()[0])
            expect(np.allclose(f["grid/pressure"][()], rho * f["grid/phi"][()].astype(np.float64), rtol=1e-6),
                   "pressure = rho_f * phi")
    for e in errors:
        print("io_h5py_check: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
