# SPDX-License-Identifier: MIT
"""What the peers of config/bench_large.toml share: the case's constants for
an N x N grid, the initial state (numpy, float32), the byte model of sim's
step for the same case, and writing the JSON report.

Imports only the standard library and numpy, so it runs anywhere.
"""
import json
import math
import os
import platform
import sys
import time

# config/bench_large.toml
N_DEFAULT = 4096
P_DEFAULT = 16_777_216
LX = LY = 1.0
RHO_F = 1000.0
NU = 1e-5
GX, GY = 0.0, -9.81
CFL = 0.5
DT_MAX = 2e-3
RHO_P = 2500.0
RESTITUTION = 0.5
REGION = dict(x0=0.1, x1=0.9, y0=0.5, y1=0.9, d_min=50e-6, d_max=100e-6)
JACOBI_SWEEPS = 50
SEED = 1


def f32(x):
    """x rounded to float32, as a Python float (what `static_cast<real>` gives)."""
    import numpy as np
    return float(np.float32(x))


class Case:
    """The constants of sim::make_constants for the bench_large case on an
    n x n grid, each rounded to float32 as sim stores it. The slab is one
    cell thick (lz = dx), as in the config at 4096 (lz = 1/4096), so the
    particle loading per cell does not depend on n at the same particles per
    cell."""

    def __init__(self, n=N_DEFAULT, particles=P_DEFAULT, sweeps=JACOBI_SWEEPS):
        self.nx = self.ny = int(n)
        self.particles = int(particles)
        self.sweeps = int(sweeps)
        dx = LX / self.nx
        dy = LY / self.ny
        self.dx, self.dy = dx, dy
        self.lz = dx
        self.inv_dx = f32(1.0 / dx)
        self.inv_dy = f32(1.0 / dy)
        self.inv_dx2 = f32(self.inv_dx * self.inv_dx)
        self.inv_dy2 = f32(self.inv_dy * self.inv_dy)
        self.lx, self.ly = f32(LX), f32(LY)
        self.nu = f32(NU)
        self.rho_p = f32(RHO_P)
        self.restitution = f32(RESTITUTION)
        buoy = 1.0 - RHO_F / RHO_P
        self.g_eff_x = f32(buoy * GX)
        self.g_eff_y = f32(buoy * GY)
        self.mu = f32(RHO_F * NU)
        self.mu18 = f32(18.0 * self.mu)                    # real(18) * k.mu
        self.mass_coef = f32(f32(self.rho_p * f32(math.pi)) / 6.0)  # k.rho_p * kPi / real(6)
        self.cell_mass = f32(RHO_F * dx * dy * self.lz)
        self.jacobi_diag = f32(f32(self.inv_dx2 * 2.0) + f32(self.inv_dy2 * 2.0))
        # sim::Simulation::next_dt, the CFL and viscous limits
        self.cfl = CFL
        self.dt_max = DT_MAX
        self.visc_dt = 1.0 / (2.0 * NU * (1.0 / (dx * dx) + 1.0 / (dy * dy)))

    def describe(self):
        return {"nx": self.nx, "ny": self.ny, "particles": self.particles, "jacobi_sweeps_per_solve": self.sweeps,
                "dx": self.dx, "lz": self.lz, "cell_mass": self.cell_mass,
                "viscous_dt_limit_x_cfl": self.cfl * self.visc_dt, "dt_max": self.dt_max}


def initial_state(case, seed=SEED):
    """The state of bench_large at t = 0 as numpy float32 arrays:
    U (ny, nx - 1): the u faces i = 1..nx-1 (the wall faces i = 0, nx are 0),
    V (ny - 1, nx): the v faces j = 1..ny-1, phi (ny, nx), all zero (fluid
    at rest); particles x in [0.1, 0.9], y in [0.5, 0.9], diameters uniform
    in [50, 100] um, at rest. The draws are numpy's (PCG64, `seed`), not
    sim's counter-based stream: the same distribution, not the same
    particles."""
    import numpy as np
    nx, ny, p = case.nx, case.ny, case.particles
    rng = np.random.default_rng(seed)
    r = REGION
    d = (r["d_min"] + (r["d_max"] - r["d_min"]) * rng.random(p, dtype=np.float32)).astype(np.float32)
    x = (r["x0"] + (r["x1"] - r["x0"]) * rng.random(p, dtype=np.float32)).astype(np.float32)
    y = (r["y0"] + (r["y1"] - r["y0"]) * rng.random(p, dtype=np.float32)).astype(np.float32)
    z = np.zeros(p, np.float32)
    return {
        "U": np.zeros((ny, nx - 1), np.float32),
        "V": np.zeros((ny - 1, nx), np.float32),
        "phi": np.zeros((ny, nx), np.float32),
        "x": x, "y": y, "vx": z, "vy": z.copy(), "d": d,
    }


STATE_KEYS = ("U", "V", "phi", "x", "y", "vx", "vy", "d")


def step_bytes(case, solver):
    """Bytes per step of sim's byte model (sim/app/bench/traffic.hpp,
    docs/BENCH.md) for this case in the variant closest to what the peers
    do: SoA particles, software sampling, atomic deposit, central
    advection, no obstacles, adaptive dt; `solver` "jacobi50" (two solves
    of `sweeps` sweeps, two residuals each) or "fft" (sim's transform-solve
    model). The same model for sim and the peers, so GB/s ratios are speed
    ratios."""
    nx, ny, p = case.nx, case.ny, case.particles
    C = nx * ny
    F = (nx + 1) * (ny + 1)
    dt = 8 * F
    particles = 40 * p + 8 * F                       # particle step SoA, fluid sampled once
    particles += p * (16 + 24) + F * (8 + 64 + 8)    # coupling passes 1-3 and M read again
    particles += 3 * 16 * F                          # three atomic deposits
    momentum = 72 * F
    pressure = 2 * 12 * C                            # two right-hand sides
    if solver == "fft":
        pressure += 2 * (16 * C + 20 * C)
    else:
        pressure += 4 * 8 * C + 2 * case.sweeps * 12 * C
    project = 2 * 20 * F
    return {"dt": dt, "particles": particles, "momentum": momentum, "pressure": pressure, "project": project,
            "total": dt + particles + momentum + pressure + project}


def first_line(e):
    text = f"{type(e).__name__}: {e}".strip()
    return text.splitlines()[0][:400] if text else type(e).__name__


def write_json(path, report):
    """Write atomically (a temporary file renamed), so a run killed by its
    time limit leaves the last complete report."""
    if not path:
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=1, default=str)
    os.replace(tmp, path)


def new_report(suite, case, args):
    return {"suite": suite, "host": platform.node(), "python": sys.version.split()[0],
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "case": case.describe(),
            "args": vars(args), "bytes_model": {s: step_bytes(case, s) for s in ("jacobi50", "fft")},
            "checks": [], "rows": [], "notes": []}


def timing_row(name, solver, case, ms, extra=None):
    b = step_bytes(case, solver)["total"]
    row = {"variant": name, "solver": solver, "ms_per_step": ms, "steps_per_s": 1e3 / ms,
           "bytes_per_step": b, "gbps": b / (ms * 1e6)}
    if extra:
        row.update(extra)
    return row


class Deadline:
    """Stop starting new variants when too little time is left."""

    def __init__(self, seconds):
        self.t0 = time.monotonic()
        self.seconds = seconds

    def left(self):
        return self.seconds - (time.monotonic() - self.t0) if self.seconds > 0 else float("inf")


def add_common_args(ap):
    ap.add_argument("--n", type=int, default=N_DEFAULT, help="grid side (default 4096)")
    ap.add_argument("--particles", type=int, default=P_DEFAULT, help="particles (default 16777216)")
    ap.add_argument("--sweeps", type=int, default=JACOBI_SWEEPS, help="Jacobi sweeps per solve (default 50)")
    ap.add_argument("--steps", type=int, default=10, help="steps per timed trial")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps after the first call")
    ap.add_argument("--solvers", default="jacobi50,fft")
    ap.add_argument("--copy-mib", type=int, default=1024, help="size of the copy-bandwidth buffers")
    ap.add_argument("--check-n", type=int, default=64, help="grid side of the self-check")
    ap.add_argument("--check-particles", type=int, default=1000)
    ap.add_argument("--skip-check", action="store_true")
    ap.add_argument("--max-seconds", type=float, default=0, help="start no variant after this many seconds (0: no limit)")
    ap.add_argument("--device", default="gpu", help="gpu, or cpu to try the script without a GPU")
    ap.add_argument("--json", help="write the results here")
    return ap
