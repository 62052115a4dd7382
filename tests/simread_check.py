# SPDX-License-Identifier: MIT
"""Checks examples/simread.py on the runs tests/simread_check.sh made in WORK:

  box/          config/box.toml 32 x 24, 500 particles, --steps 6 --snapshot-every 2 (dt 2 ms)
  tg/           config/taylor_green.toml 32 x 24, no particles, --steps 5 --snapshot-every 2 (dt 10 ms),
                compressed
  restarted/    box/ restarted from its step 2 into its own directory up to step 4
  files/        tg/ without sim.xdmf, plus copies as steps 999999 and 1000000 and a *.tmp

against truth found apart from the module: every array as h5dump (the HDF5 C tools) reads it, the
steps and times the command lines imply, the exact Taylor-Green field at the module's coordinates,
the dataset names, shapes, types and units of docs/OUTPUT.md, the seeded particle count and ids.

usage: python3 simread_check.py WORK SOURCE_DIR
"""
import os
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np

work, source = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(source, "examples"))
import simread  # noqa: E402

errors, checks = [], 0


def expect(cond, what):
    global checks
    checks += 1
    if not cond:
        errors.append(what)


def documented():
    """{group/name: (shape expression, dtype, unit)} from the tables of docs/OUTPUT.md."""
    text = open(os.path.join(source, "docs", "OUTPUT.md")).read()
    out = {}
    for group in ("grid", "particles"):
        table = text.split(f"<!-- BEGIN snapshot_fields_markdown({group}) -->")[1].split("<!-- END")[0]
        for name, shape, dtype, unit in re.findall(r"^\| `(\w+)` \| ([^|]+) \| (\w+) \| ([^|]+) \|", table, re.M):
            out[f"{group}/{name}"] = (shape.strip(), dtype, unit.strip())
    return out


def h5dump_array(path, key, dtype, tmp):
    """The dataset as h5dump reads it: shape from its header, values from its binary dump."""
    head = subprocess.run(["h5dump", "-d", key, "-b", "NATIVE", "-o", tmp, path], capture_output=True, text=True,
                          check=True).stdout
    shape = tuple(int(n) for n in re.search(r"SIMPLE \{ \( ([\d, ]+) \)", head).group(1).split(","))
    return np.fromfile(tmp, dtype=dtype).reshape(shape)


def check_against_reader(run, name):
    """Every array of every snapshot equals what a second reader sees, in the same orientation."""
    dump = shutil.which("h5dump")
    if not dump:
        print("simread_check: no h5dump; arrays compared with plain h5py reads instead")
    tmp = os.path.join(work, "dump.bin")
    for s in run:
        for group, arrays in (("grid", s.grid), ("particles", s.particles)):
            for key, a in arrays.items():
                path = f"/{group}/{key}"
                if dump:
                    b = h5dump_array(s.path, path, a.dtype, tmp)
                else:
                    with h5py.File(s.path, "r") as f:
                        b = f[path][()]
                expect(a.shape == b.shape and np.array_equal(a, b),
                       f"{name} step {s.step} {path}: module {a.shape}, second reader {b.shape} or other values")


def check_documented(s, name):
    """Names, shapes, types and units as docs/OUTPUT.md documents them."""
    doc = documented()
    expect(sorted("grid/" + k for k in s.grid) + sorted("particles/" + k for k in s.particles) ==
           sorted(doc), f"{name}: datasets {sorted(s.grid)} {sorted(s.particles)}, documented {sorted(doc)}")
    for key, (shape, dtype, unit) in doc.items():
        a = s[key]
        want = eval(shape.replace(")", ",)"), {"nx": s.nx, "ny": s.ny, "N": s.n_particles})
        expect(a.shape == want and a.dtype == np.dtype(dtype), f"{name} {key}: {a.shape} {a.dtype}, doc {shape} {dtype}")
        expect(s.units.get(key) == unit, f"{name} {key}: unit {s.units.get(key)!r}, documented {unit!r}")
    for key, unit in (("time", "s"), ("dt", "s"), ("grid/spacing", "m"), ("grid/origin", "m")):
        expect(s.units.get(key) == unit, f"{name} {key}: unit {s.units.get(key)!r}, want {unit!r}")


def check_series(run, name, steps, dt):
    expect(run.source == "sim.xdmf", f"{name}: read from {run.source}, not sim.xdmf")
    expect(run.steps.tolist() == steps, f"{name}: steps {run.steps.tolist()}, want {steps}")
    expect(np.allclose(run.times, np.array(steps) * dt, rtol=1e-12, atol=0), f"{name}: times {run.times.tolist()}")
    for i, s in enumerate(run):
        # The initial state (step 0) has taken no step: dt 0.
        expect(s.step == steps[i] and s.time == run.times[i] and s.dt == (dt if steps[i] else 0.0),
               f"{name}[{i}]: step {s.step} t {s.time} dt {s.dt}, index says {steps[i]} {run.times[i]}")
        expect(os.path.basename(s.path) == f"snap_{steps[i]:06d}.h5", f"{name}[{i}]: {s.path}")
    expect(run.at_step(steps[1]).step == steps[1], f"{name}: at_step")
    expect(run.at_time(run.times[-1] + 1).step == steps[-1], f"{name}: at_time past the end")
    stacked = run.stack("pressure")
    expect(stacked.shape == (len(steps), 24, 32) and
           all(np.array_equal(stacked[i], s.grid["pressure"]) for i, s in enumerate(run)), f"{name}: stack")


def check_taylor_green(run):
    """u = sin x cos y e^{-2 nu t}, v = -cos x sin y e^{-2 nu t}, p = rho/4 (cos 2x + cos 2y) e^{-4 nu t}
    (nu = 0.05, rho = 1) at the coordinates the module gives: a field transposed, or placed half a
    cell off, misses by 0.1 or more."""
    for s in run:
        e = np.exp(-2 * 0.05 * s.time)
        X, Y = np.meshgrid(*s.axes("u"))
        expect(np.abs(s.grid["u"] - np.sin(X) * np.cos(Y) * e).max() < 2e-3, f"tg step {s.step}: u")
        X, Y = np.meshgrid(*s.axes("v"))
        expect(np.abs(s.grid["v"] + np.cos(X) * np.sin(Y) * e).max() < 2e-3, f"tg step {s.step}: v")
        X, Y = np.meshgrid(*s.axes("pressure"))
        vel = s.grid["velocity"]
        expect(np.abs(vel[..., 0] - np.sin(X) * np.cos(Y) * e).max() < 1e-2, f"tg step {s.step}: velocity x")
        expect(np.abs(vel[..., 1] + np.cos(X) * np.sin(Y) * e).max() < 1e-2, f"tg step {s.step}: velocity y")
        p, pa = s.grid["pressure"], 0.25 * (np.cos(2 * X) + np.cos(2 * Y)) * e * e
        if s.step == 0:  # the initial state: no pressure solved yet
            pa = np.zeros_like(p)
        expect(np.abs((p - p.mean()) - (pa - pa.mean())).max() < 2e-2, f"tg step {s.step}: pressure")
        expect(np.allclose(s.xf[[0, -1]], [0, 2 * np.pi]) and np.allclose(s.yf[[0, -1]], [0, 2 * np.pi]) and
               s.extent == [0, s.lx, 0, s.ly], f"tg step {s.step}: faces span [0, 2 pi]")
        expect(s.n_particles == 0 and s.particles["position"].shape == (0, 3), f"tg step {s.step}: no particles")


def check_particles(run):
    for s in run:
        pos = s.particles["position"]
        expect(s.n_particles == 500 and pos.shape == (500, 3) and s.particles["velocity"].shape == (500, 3),
               f"box step {s.step}: {s.n_particles} particles, position {pos.shape}")
        expect(np.array_equal(s.particles["id"], np.arange(500)), f"box step {s.step}: ids 0..499")
        expect(np.all((pos[:, 0] > 0) & (pos[:, 0] < s.lx) & (pos[:, 1] > 0) & (pos[:, 1] < s.ly) & (pos[:, 2] == 0)),
               f"box step {s.step}: positions inside the domain, z = 0")
    s = simread.load(run.paths[0], fields=["u"], particles=False)
    expect(list(s.grid) == ["u"] and s.particles == {} and s.n_particles == 500 and (s.nx, s.ny) == (32, 24),
           f"load(fields=['u'], particles=False): {list(s.grid)} {list(s.particles)} {s.n_particles}")
    try:
        simread.load(run.paths[0], fields=["pressure", "nosuch"])
        expect(False, "load of a missing field raises")
    except KeyError as e:
        expect("nosuch" in str(e) and "pressure" in str(e), f"missing field message: {e}")


def check_restarted_and_files():
    # The index, not the files: a restart into the directory leaves the old snap_000006.h5.
    run = simread.load_series(os.path.join(work, "restarted"))
    expect(os.path.isfile(os.path.join(work, "restarted", "snap_000006.h5")), "restarted: old step 6 on disk")
    expect(run.steps.tolist() == [0, 2, 4], f"restarted: steps {run.steps.tolist()}, want [0, 2, 4] (sim.xdmf)")
    # Without an index: the files by step, not by name (snap_999999 before snap_1000000).
    files = os.path.join(work, "files")
    for src, step in (("snap_000004.h5", 999999), ("snap_000005.h5", 1000000)):
        dst = os.path.join(files, f"snap_{step:06d}.h5")
        shutil.copy(os.path.join(files, src), dst)
        with h5py.File(dst, "r+") as f:
            f.attrs["step"], f.attrs["time"] = np.int64(step), step * 0.01
    open(os.path.join(files, "snap_000002.h5.123.tmp"), "w").close()
    run = simread.load_series(files)
    want = [0, 2, 4, 5, 999999, 1000000]
    expect(run.source == "snap_*.h5" and run.steps.tolist() == want and
           np.allclose(run.times, np.array(want) * 0.01, rtol=1e-12), f"files: {run.steps.tolist()} {run.times}")
    expect(run[-1].step == 1000000, "files: last snapshot read")


def check_commands():
    py, ex = sys.executable, os.path.join(source, "examples")
    out = subprocess.run([py, os.path.join(ex, "simread.py"), os.path.join(work, "box")], capture_output=True, text=True)
    expect(out.returncode == 0 and "4 snapshots (from sim.xdmf), steps 0 .. 6" in out.stdout and
           re.search(r"grid/pressure .* \[Pa\] +-?[\d.e+-]+ \.\. ", out.stdout) and "500 particles" in out.stdout and
           re.search(r"particles/position .* \[m\] +x ", out.stdout), f"simread.py box: {out.stdout}{out.stderr}")
    out = subprocess.run([py, os.path.join(ex, "simread.py"), "--step", "4", os.path.join(work, "tg", "sim.xdmf")],
                         capture_output=True, text=True)
    expect(out.returncode == 0 and "snap_000004.h5: step 4, t = 0.04 [s]" in out.stdout and
           "particles/position     (0, 3)" in out.stdout, f"simread.py tg --step 4: {out.stdout}{out.stderr}")
    bad = os.path.join(work, "bad")
    os.makedirs(bad)
    with open(os.path.join(bad, "sim.xdmf"), "w") as f:
        f.write("<Xdmf><Domain>\n")
    for path, what in ((os.path.join(work, "nosuch"), "no such file or directory"), (bad, "not an XDMF index")):
        out = subprocess.run([py, os.path.join(ex, "simread.py"), path], capture_output=True, text=True)
        expect(out.returncode == 1 and out.stderr.count("\n") == 1 and out.stderr.startswith(f"simread: {path}") and
               what in out.stderr, f"simread.py on {path}: {out.returncode} {out.stderr!r}")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("simread_check: no matplotlib; quicklook.py not run")
        return
    for name, step in (("box", 6), ("tg", 5)):
        png = os.path.join(work, name + ".png")
        out = subprocess.run([py, os.path.join(ex, "quicklook.py"), os.path.join(work, name), "-o", png,
                              "--fields", "pressure,speed"], capture_output=True, text=True)
        expect(out.returncode == 0 and os.path.getsize(png) > 1000, f"quicklook.py {name}: {out.stderr}")


def main():
    box, tg = simread.load_series(os.path.join(work, "box")), simread.load_series(os.path.join(work, "tg"))
    check_series(box, "box", [0, 2, 4, 6], 0.002)
    check_series(tg, "tg", [0, 2, 4, 5], 0.01)
    check_documented(box[-1], "box")
    check_documented(tg[0], "tg")
    check_against_reader(box, "box")
    check_against_reader(tg, "tg")
    with h5py.File(tg.paths[0], "r") as f:
        expect(f["grid/u"].compression == "gzip", "tg: written compressed")
    check_taylor_green(tg)
    check_particles(box)
    check_restarted_and_files()
    check_commands()
    for e in errors:
        print("simread_check: " + e, file=sys.stderr)
    print(f"simread_check: {checks - len(errors)} of {checks} checks passed")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
