#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The config/bench_large.toml step in PyTorch, eager and torch.compile,
timed beside sim (scripts/bench-peers.sh).

What it computes (bench/peers/core.py, the same code as the numpy
reference, which agrees with sim's CPU backend on one step to ~4e-7):
an N x N closed box of water (default 4096^2), P glass particles (default
16,777,216) in x in [0.1, 0.9], y in [0.5, 0.9], 50-100 um, at rest; per
step, as sim/model/simulation.cpp: the adaptive dt (on the device), the
particles with the implicit two-way coupling (mass deposit, the drag's A
and B deposits, the face update u + (A - B u)/(m_f + B), sampling and the
exactly integrated Stokes drag, walls with restitution), then Heun:
stage 1, pressure solve, projection; stage 2, solve with dt/2,
projection. Two pressure variants: jacobi50 (50 Jacobi sweeps per solve,
warm-started from phi, plus the residual norms sim computes) and fft (the
closed box's DCT solve through torch.fft, exact).

Where it differs from sim:
- deposits are index_add_ (atomics on CUDA) in corner-major order: the
  sums are not deterministic in their last bits (sim: `atomic` is not
  either, `sorted` is);
- no particle sorting, no alive flags, no injection, no watchdog counts;
- float32 everywhere, also the fft solve and its projection (sim's fft
  solve keeps the pressure in float64 and projects in double), and dt is
  reduced in float32 on the device (sim: in double, read back);
- fields are stored without halo; each stencil pads what it reads (an
  extra copy per padded field, which fusion may or may not remove);
- torch.compile compiles the phases (dt, particles, stage, rhs, one
  Jacobi sweep, residual, DCT solve, projection) separately, and Python
  calls them: 2 x 50 sweep calls a step, as sim launches its sweeps.

    python3 bench/peers/step_torch.py --json torch_peers.json [--n 4096] [--particles 16777216]
    python3 bench/peers/step_torch.py --device cpu --n 64 --particles 1000 --steps 2 --trials 2 --copy-mib 8

Imports torch only inside main(): the module imports without it.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import peer_run  # noqa: E402


class TorchOps:
    """core.py's array interface over torch (float32, int64 indices)."""

    def __init__(self, torch, device):
        self.t = torch
        self.F = torch.nn.functional
        self.device = device

    def const(self, a):
        return self.t.from_numpy(np.ascontiguousarray(a)).to(self.device)

    def zeros(self, shape):
        return self.t.zeros(shape, dtype=self.t.float32, device=self.device)

    def cat(self, xs, axis):
        return self.t.cat(xs, dim=axis)

    def pad_zero(self, x, top, bottom, left, right):
        return self.F.pad(x, (left, right, top, bottom))

    def pad_edge(self, x):
        return self.F.pad(x[None, None], (1, 1, 1, 1), mode="replicate")[0, 0]

    def flip_last(self, x):
        return self.t.flip(x, (-1,))

    def floor(self, x):
        return self.t.floor(x)

    def to_int(self, x):
        return x.to(self.t.int64)

    def to_float(self, x):
        return x.to(self.t.float32)

    def clip(self, x, lo, hi):
        return self.t.clamp(x, min=lo, max=hi)

    def where(self, c, a, b):
        return self.t.where(c, a, b)

    def exp(self, x):
        return self.t.exp(x)

    def expm1(self, x):
        return self.t.expm1(x)

    def absolute(self, x):
        return self.t.abs(x)

    def amax(self, x):
        return self.t.amax(x)

    def maximum(self, a, b):
        return self.t.maximum(a, b)

    def minimum(self, a, b):
        return self.t.minimum(a, b)

    def sqrt(self, x):
        return self.t.sqrt(x)

    def sumsq(self, x):
        return self.t.sum(x * x)

    def fft_last(self, x):
        return self.t.fft.fft(x, dim=-1)

    def ifft_last(self, x):
        return self.t.fft.ifft(x, dim=-1)

    def real(self, x):
        return self.t.real(x)

    def complex(self, re, im):
        return self.t.complex(re.contiguous(), im.contiguous())

    def transpose(self, x):
        return x.transpose(0, 1).contiguous()

    def stack_last(self, xs):
        return self.t.stack(xs, dim=-1)

    def reshape_flat(self, x):
        return x.reshape(-1)

    def reshape2(self, x, shape):
        return x.reshape(tuple(shape))

    def gather(self, flat, idx):
        return flat[idx]

    def scatter_add(self, size, idxs, vals, cols=None):
        out = self.t.zeros((size,) if cols is None else (size, cols), dtype=self.t.float32, device=self.device)
        for k, v in zip(idxs, vals):
            out.index_add_(0, k, v)
        return out

    def repeat(self, n, fn, x):
        for _ in range(n):
            x = fn(x)
        return x

    def f32(self, x):
        return x.to(self.t.float32)


COMPILED_PHASES = ("next_dt", "particle_step", "stage", "rhs", "sweep", "residual_norm", "fft_solve", "project")


class TorchFramework:
    name = "torch"
    check_variant = "eager"

    def __init__(self, torch, device, compile_ok, notes):
        self.t = torch
        self.device = device
        self.version = torch.__version__
        self.device_name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
        self.variants = ["eager"] + (["compile"] if compile_ok else [])
        self.notes = notes

    def ops(self, case):
        return TorchOps(self.t, self.device)

    def to_device(self, s):
        return tuple(self.t.from_numpy(np.ascontiguousarray(s[k])).to(self.device) for k in common.STATE_KEYS)

    def to_numpy(self, state):
        return {k: v.detach().cpu().numpy() for k, v in zip(common.STATE_KEYS, state)}

    def scalar(self, v):
        return v.item() if hasattr(v, "item") else v

    def sync(self, state=None):
        if self.device == "cuda":
            self.t.cuda.synchronize()

    def release(self):
        if self.device == "cuda":
            self.t.cuda.empty_cache()

    def make_step(self, phys, variant):
        if variant == "compile":
            for name in COMPILED_PHASES:
                setattr(phys, name, self._guarded(name, getattr(phys, name)))
        return phys.step

    def _guarded(self, name, eager):
        """The phase compiled; if compiling or running it fails, the reason
        goes into the notes and the phase runs eager from then on."""
        compiled = self.t.compile(eager, mode="default", dynamic=False)
        box = {"fn": compiled}

        def call(*a):
            if box["fn"] is compiled:
                try:
                    return compiled(*a)
                except Exception as e:
                    box["fn"] = eager
                    self.notes.append(f"torch.compile of {name} failed, it runs eager: {common.first_line(e)}")
                    print("step_torch: " + self.notes[-1], file=sys.stderr)
            return box["fn"](*a)

        return call

    def timer(self, one, sync, steps, trials):
        """Median ms per step over `trials` runs of `steps` steps (CUDA events)."""
        samples = []
        for _ in range(trials):
            if self.device == "cuda":
                start = self.t.cuda.Event(enable_timing=True)
                stop = self.t.cuda.Event(enable_timing=True)
                sync()
                start.record()
                for _ in range(steps):
                    one()
                stop.record()
                stop.synchronize()
                samples.append(start.elapsed_time(stop) / steps)
            else:
                t0 = time.perf_counter()
                for _ in range(steps):
                    one()
                samples.append((time.perf_counter() - t0) * 1e3 / steps)
        return statistics.median(samples)

    def copy_gbps(self, mib):
        n = (mib << 20) // 4
        src = self.t.rand(n, device=self.device)
        dst = self.t.empty_like(src)
        for _ in range(3):
            dst.copy_(src)
        self.sync()
        ms = self.timer(lambda: dst.copy_(src), self.sync, 20, 5)
        if not self.t.equal(dst[-16:], src[-16:]):
            raise RuntimeError("copy check failed")
        del src, dst
        self.release()
        return 2 * n * 4 / (ms * 1e-3) / 1e9


def main():
    ap = peer_run.add_args(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    ap.add_argument("--no-compile", action="store_true", help="time eager only")
    args = ap.parse_args()
    case = common.Case(args.n, args.particles, args.sweeps)
    try:
        import torch
    except Exception as e:
        report = common.new_report("torch", case, args)
        report["error"] = f"cannot import torch: {common.first_line(e)}"
        print("step_torch: " + report["error"], file=sys.stderr)
        common.write_json(args.json, report)
        return 1
    device = "cuda" if args.device == "gpu" else args.device
    notes = ["deposits: index_add_ (CUDA atomics), not deterministic in the last bits",
             "float32 throughout, fft solve included; dt reduced in float32 on the device",
             "no particle sorting, alive flags, injection or watchdog",
             "torch.compile: phases compiled separately (mode default, dynamic=False), "
             "called from Python (the Jacobi sweep 50 times per solve)"]
    if device == "cuda" and not torch.cuda.is_available():
        report = common.new_report("torch", case, args)
        report["error"] = "torch.cuda.is_available() is False"
        print("step_torch: " + report["error"], file=sys.stderr)
        common.write_json(args.json, report)
        return 1
    compile_ok = not args.no_compile
    if compile_ok and not hasattr(torch, "compile"):
        notes.append(f"torch.compile unavailable in torch {torch.__version__}")
        print("step_torch: " + notes[-1], file=sys.stderr)
        compile_ok = False
    torch.manual_seed(0)
    fw = TorchFramework(torch, device, compile_ok, notes)
    with torch.no_grad():
        return peer_run.run(fw, args, "torch")


if __name__ == "__main__":
    sys.exit(main())
