#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The bench_large step in numpy on the CPU: the reference the PyTorch and
JAX peers are checked against (bench/peers/core.py holds the physics; this
file the numpy array interface). Slow; meant for small grids.

    python3 bench/peers/reference_numpy.py [--n 64] [--particles 1000] [--steps 3]
    python3 bench/peers/reference_numpy.py --against-sim OUT0/snap_000000.h5 OUT1/snap_000001.h5 --solver fft

The second form checks one step of this code against sim itself: two
snapshots of the same small case (a run of 0 steps and one of 1 step, the
case of `--against-sim` in bench/peers/README.md); the step starts from the
first file's state and is compared with the second's. Needs h5py.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import core  # noqa: E402


class NumpyOps:
    """core.py's array interface over numpy (float32 arrays, int64 indices)."""
    name = "numpy"

    @staticmethod
    def const(a):
        return np.asarray(a)

    def zeros(self, shape):
        return np.zeros(shape, np.float32)

    def cat(self, xs, axis):
        return np.concatenate(xs, axis=axis)

    def pad_zero(self, x, top, bottom, left, right):
        return np.pad(x, ((top, bottom), (left, right)))

    def pad_edge(self, x):
        return np.pad(x, 1, mode="edge")

    def flip_last(self, x):
        return x[..., ::-1]

    def floor(self, x):
        return np.floor(x)

    def to_int(self, x):
        return x.astype(np.int64)

    def to_float(self, x):
        return x.astype(np.float32)

    def clip(self, x, lo, hi):
        return np.clip(x, lo, hi)

    def where(self, c, a, b):
        return np.where(c, a, b)

    def exp(self, x):
        return np.exp(x)

    def expm1(self, x):
        return np.expm1(x)

    def absolute(self, x):
        return np.abs(x)

    def amax(self, x):
        return np.max(x)

    def maximum(self, a, b):
        return np.maximum(a, b)

    def minimum(self, a, b):
        return np.minimum(a, b)

    def sqrt(self, x):
        return np.sqrt(x)

    def sumsq(self, x):
        return np.sum(x * x, dtype=x.dtype)

    def fft_last(self, x):
        y = np.fft.fft(x, axis=-1)  # numpy computes in complex128
        return y.astype(np.complex64) if x.dtype == np.float32 else y

    def ifft_last(self, x):
        y = np.fft.ifft(x, axis=-1)
        return y.astype(np.complex64) if x.dtype == np.complex64 else y

    def real(self, x):
        return np.real(x)

    def complex(self, re, im):
        return re + 1j * im if re.dtype == np.float64 else (re + np.complex64(1j) * im).astype(np.complex64)

    def transpose(self, x):
        return np.ascontiguousarray(x.T)

    def stack_last(self, xs):
        return np.stack(xs, axis=-1)

    def reshape_flat(self, x):
        return x.reshape(-1)

    def reshape2(self, x, shape):
        return x.reshape(shape)

    def gather(self, flat, idx):
        return flat[idx]

    def scatter_add(self, size, idxs, vals, cols=None):
        """Sequential float32 adds in particle order, corner after corner (deterministic)."""
        out = np.zeros((size,) if cols is None else (size, cols), np.float32)
        for k, v in zip(idxs, vals):
            np.add.at(out, k, v.astype(np.float32))
        return out

    def repeat(self, n, fn, x):
        for _ in range(n):
            x = fn(x)
        return x

    def f32(self, x):
        return np.asarray(x, np.float32)


def run_steps(case, solver, state, steps, fft_dtype=np.float32):
    """`steps` steps from `state` (dict of numpy arrays); returns (state, per-step stats)."""
    ops = NumpyOps()
    phys = core.Physics(ops, case, solver, fft_dtype=fft_dtype)
    s = tuple(state[k] for k in common.STATE_KEYS)
    stats = []
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(steps):
            s, st = phys.step(s)
            stats.append([float(v) for v in st])
    return dict(zip(common.STATE_KEYS, s)), stats


def particle_step_balance(case, ops_name, phys_step, state):
    """The coupling passes alone: the mixture's y momentum must gain
    sum m_p g_eff dt, its x momentum nothing. Returns the report row.
    `phys_step(state) -> (U, V, x, y, vx, vy, dt)` as numpy."""
    U, V, x, y, vx, vy, dt = phys_step(state)
    f0 = core.fluid_momentum(case, state["U"], state["V"])
    p0 = core.particle_momentum(case, state["vx"], state["vy"], state["d"])
    f1 = core.fluid_momentum(case, U, V)
    p1 = core.particle_momentum(case, vx, vy, state["d"])
    m = case.rho_p * np.pi / 6.0 * state["d"].astype(np.float64) ** 3
    expected = float(np.sum(m) * case.g_eff_y * dt)
    gain_y = (f1[1] + p1[1]) - (f0[1] + p0[1])
    gain_x = (f1[0] + p1[0]) - (f0[0] + p0[0])
    return {"check": f"{ops_name}: coupling momentum balance", "expected_y_gain": expected, "y_gain": gain_y,
            "relative_error_y": abs(gain_y - expected) / abs(expected), "x_gain_over_y": abs(gain_x) / abs(expected),
            "particle_momentum_y": p1[1], "fluid_momentum_y": f1[1],
            "ok": bool(abs(gain_y - expected) <= 1e-3 * abs(expected) and abs(gain_x) <= 1e-3 * abs(expected))}


def moving_state(case, seed=2):
    """The initial state with particles already moving (so the drag is not
    only gravity's): vx, vy uniform in [-0.05, 0.05] m/s."""
    s = common.initial_state(case)
    rng = np.random.default_rng(seed)
    s["vx"] = (0.1 * rng.random(case.particles) - 0.05).astype(np.float32)
    s["vy"] = (0.1 * rng.random(case.particles) - 0.05).astype(np.float32)
    return s


def self_check(n, particles, steps):
    case = common.Case(n, particles)
    ok = True
    s0 = moving_state(case)
    phys = core.Physics(NumpyOps(), case, "fft")

    def coupling_only(s):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            dt = phys.next_dt(s["U"], s["V"])
            r = phys.particle_step(s["U"], s["V"], s["x"], s["y"], s["vx"], s["vy"], s["d"], dt)
        return (*r, float(dt))

    row = particle_step_balance(case, "numpy", coupling_only, s0)
    print(f"coupling balance: y gain {row['y_gain']:.6e} vs sum m g dt {row['expected_y_gain']:.6e}, "
          f"relative error {row['relative_error_y']:.2e}, x gain / that {row['x_gain_over_y']:.2e}: "
          f"{'ok' if row['ok'] else 'FAILED'}")
    ok &= row["ok"]
    for solver in core.SOLVERS:
        s, stats = run_steps(case, solver, s0, steps)
        rel, div = core.max_divergence(case, s["U"], s["V"])
        fm, pm = core.fluid_momentum(case, s["U"], s["V"]), core.particle_momentum(case, s["vx"], s["vy"], s["d"])
        finite = all(np.isfinite(s[k]).all() for k in common.STATE_KEYS)
        print(f"{solver}: {steps} steps, dt {stats[-1][0]:.4e}, max|div u| dx/max|u| {rel:.2e} ({div:.2e} 1/s), "
              f"last solve residual/|rhs| {stats[-1][4] / max(stats[-1][3], 1e-300):.2e}, "
              f"fluid momentum ({fm[0]:.3e}, {fm[1]:.3e}), particles ({pm[0]:.3e}, {pm[1]:.3e}), finite {finite}")
        ok &= finite
        if solver == "fft":
            ok &= rel < 1e-4
        # float32 against float64 pressure: how far float32 rounding alone moves a step
        if solver == "fft":
            s64, _ = run_steps(case, solver, s0, 1, fft_dtype=np.float64)
            s32, _ = run_steps(case, solver, s0, 1)
            d = core.compare_states(s64, s32)
            print("fft, one step, float32 vs float64 pressure, max|diff|/max|ref|: " +
                  ", ".join(f"{k} {v:.1e}" for k, v in d.items()))
    return ok


def load_snapshot(path):
    import h5py
    with h5py.File(path, "r") as f:
        u = np.asarray(f["grid/u"], np.float32)  # (ny, nx + 1)
        v = np.asarray(f["grid/v"], np.float32)  # (ny + 1, nx)
        phi = np.asarray(f["grid/phi"], np.float32)
        pos = np.asarray(f["particles/position"], np.float32)
        vel = np.asarray(f["particles/velocity"], np.float32)
        d = np.asarray(f["particles/diameter"], np.float32)
        dt = float(f.attrs["dt"])
    return {"U": u[:, 1:-1].copy(), "V": v[1:-1, :].copy(), "phi": phi, "x": pos[:, 0].copy(), "y": pos[:, 1].copy(),
            "vx": vel[:, 0].copy(), "vy": vel[:, 1].copy(), "d": d}, dt


def against_sim(first, second, solver):
    a, _ = load_snapshot(first)
    b, dt_sim = load_snapshot(second)
    ny, nx = a["phi"].shape
    case = common.Case(nx, len(a["x"]))
    s, stats = run_steps(case, solver, a, 1, fft_dtype=np.float64 if solver == "fft" else np.float32)
    d = core.compare_states(b, s)
    print(f"one step of {nx}x{ny}, {len(a['x'])} particles, {solver}: dt here {stats[0][0]:.9e}, sim {dt_sim:.9e}")
    print("max|sim - here| / max|sim|: " + ", ".join(f"{k} {v:.2e}" for k, v in d.items()))
    worst = max(v for k, v in d.items() if k != "phi")
    return worst < 1e-4


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--particles", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--solver", default="fft", choices=core.SOLVERS)
    ap.add_argument("--against-sim", nargs=2, metavar=("SNAP0", "SNAP1"))
    args = ap.parse_args()
    if args.against_sim:
        ok = against_sim(*args.against_sim, args.solver)
    else:
        ok = self_check(args.n, args.particles, args.steps)
    print("reference_numpy:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
