"""Independent check of a snapshot's layout with h5py (docs/OUTPUT.md).

usage: python3 io_h5py_check.py SNAPSHOT NX NY N_PARTICLES
Exits 0 when every documented name, shape, type and attribute is present.
"""
import sys

import h5py
import numpy as np


def main():
    path, nx, ny, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
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
        shapes = {
            "grid/pressure": ((ny, nx), np.float32), "grid/velocity": ((ny, nx, 3), np.float32),
            "grid/vorticity": ((ny, nx), np.float32), "grid/divergence": ((ny, nx), np.float32),
            "grid/solid": ((ny, nx), np.uint8), "grid/u": ((ny, nx + 1), np.float32),
            "grid/v": ((ny + 1, nx), np.float32), "grid/phi": ((ny, nx), np.float32),
            "particles/position": ((n, 3), np.float32), "particles/velocity": ((n, 3), np.float32),
            "particles/id": ((n,), np.uint64), "particles/diameter": ((n,), np.float32),
        }
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
