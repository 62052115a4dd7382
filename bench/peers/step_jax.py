#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The config/bench_large.toml step in JAX (jax.jit of the whole step),
timed beside sim (scripts/bench-peers.sh).

The same physics as step_torch.py and the numpy reference
(bench/peers/core.py; see step_torch.py's docstring for the step and the
list of differences from sim). JAX specifics:
- the whole step is one jax.jit (the Jacobi sweeps a lax.fori_loop, so
  XLA sees one loop body, not 50 unrolled sweeps); the DCT eigenvalues and
  twiddles are passed as arguments, not baked into the program;
- deposits are `.at[idx].add` scatters: on the GPU, atomics, not
  deterministic in the last bits;
- the fft variant uses jnp.fft (Makhoul's one-FFT DCT-II, as in core.py),
  float32 (x64 stays disabled);
- time per step: median over trials of K steps, wall clock to
  block_until_ready, after the compile and a warm-up; the ceiling is an
  elementwise x + 1 stream (XLA may drop a plain copy), bytes read + written.

    XLA_PYTHON_CLIENT_PREALLOCATE=false python3 bench/peers/step_jax.py --json jax_peers.json

Imports jax only inside main(): the module imports without it.
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


class JaxOps:
    """core.py's array interface over jax.numpy (float32, int32 indices)."""

    def __init__(self, jax, jnp):
        self.jax, self.np = jax, jnp

    def const(self, a):
        return self.np.asarray(a)

    def zeros(self, shape):
        return self.np.zeros(shape, self.np.float32)

    def cat(self, xs, axis):
        return self.np.concatenate(xs, axis=axis)

    def pad_zero(self, x, top, bottom, left, right):
        return self.np.pad(x, ((top, bottom), (left, right)))

    def pad_edge(self, x):
        return self.np.pad(x, 1, mode="edge")

    def flip_last(self, x):
        return self.np.flip(x, -1)

    def floor(self, x):
        return self.np.floor(x)

    def to_int(self, x):
        return x.astype(self.np.int32)

    def to_float(self, x):
        return x.astype(self.np.float32)

    def clip(self, x, lo, hi):
        if lo is not None:
            x = self.np.maximum(x, lo)
        if hi is not None:
            x = self.np.minimum(x, hi)
        return x

    def where(self, c, a, b):
        return self.np.where(c, a, b)

    def exp(self, x):
        return self.np.exp(x)

    def expm1(self, x):
        return self.np.expm1(x)

    def absolute(self, x):
        return self.np.abs(x)

    def amax(self, x):
        return self.np.max(x)

    def maximum(self, a, b):
        return self.np.maximum(a, b)

    def minimum(self, a, b):
        return self.np.minimum(a, b)

    def sqrt(self, x):
        return self.np.sqrt(x)

    def sumsq(self, x):
        return self.np.sum(x * x)

    def fft_last(self, x):
        return self.np.fft.fft(x, axis=-1)

    def ifft_last(self, x):
        return self.np.fft.ifft(x, axis=-1)

    def real(self, x):
        return self.np.real(x)

    def complex(self, re, im):
        return self.jax.lax.complex(re, im)

    def transpose(self, x):
        return x.T

    def stack_last(self, xs):
        return self.np.stack(xs, axis=-1)

    def reshape_flat(self, x):
        return x.reshape(-1)

    def reshape2(self, x, shape):
        return x.reshape(tuple(shape))

    def gather(self, flat, idx):
        return flat[idx]

    def scatter_add(self, size, idxs, vals, cols=None):
        out = self.np.zeros((size,) if cols is None else (size, cols), self.np.float32)
        for k, v in zip(idxs, vals):
            out = out.at[k].add(v)
        return out

    def repeat(self, n, fn, x):
        return self.jax.lax.fori_loop(0, n, lambda i, p: fn(p), x)

    def f32(self, x):
        return x.astype(self.np.float32)


class JaxFramework:
    name = "jax"
    check_variant = "jit"
    variants = ["jit"]

    def __init__(self, jax, jnp, notes):
        self.jax, self.jnp = jax, jnp
        self.version = jax.__version__
        dev = jax.devices()[0]
        self.device_name = f"{dev.platform}: {getattr(dev, 'device_kind', dev)}"
        self.notes = notes

    def ops(self, case):
        return JaxOps(self.jax, self.jnp)

    def to_device(self, s):
        return tuple(self.jax.device_put(np.ascontiguousarray(s[k])) for k in common.STATE_KEYS)

    def to_numpy(self, state):
        return {k: np.asarray(v) for k, v in zip(common.STATE_KEYS, state)}

    def scalar(self, v):
        return float(v)

    def sync(self, state=None):
        if state is not None:
            self.jax.block_until_ready(state)

    def release(self):
        pass

    def make_step(self, phys, variant):
        consts = (phys.inv_lam_t, phys.tw)

        def step(state, k):
            phys.inv_lam_t, phys.tw = k  # tracers inside the jit: arguments, not literals
            return phys.step(state)

        jitted = self.jax.jit(step)
        return lambda state: jitted(state, consts)

    def timer(self, one, sync, steps, trials):
        samples = []
        sync()
        for _ in range(trials):
            t0 = time.perf_counter()
            for _ in range(steps):
                one()
            sync()
            samples.append((time.perf_counter() - t0) * 1e3 / steps)
        return statistics.median(samples)

    def copy_gbps(self, mib):
        n = (mib << 20) // 4
        src = self.jax.device_put(np.random.default_rng(0).random(n, dtype=np.float32))
        f = self.jax.jit(lambda x: x + 1.0)
        out = f(src)
        out.block_until_ready()
        holder = {}

        def one():
            holder["o"] = f(src)

        ms = self.timer(one, lambda: holder.get("o", out).block_until_ready(), 20, 5)
        if not bool(self.jnp.allclose(holder["o"][-16:], src[-16:] + 1.0)):
            raise RuntimeError("stream check failed")
        return 2 * n * 4 / (ms * 1e-3) / 1e9


def main():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    ap = peer_run.add_args(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    args = ap.parse_args()
    case = common.Case(args.n, args.particles, args.sweeps)
    try:
        if args.device == "cpu":
            os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import jax.numpy as jnp
        if args.device == "gpu" and jax.devices()[0].platform != "gpu":
            raise RuntimeError(f"no GPU: jax.devices() = {jax.devices()}")
    except Exception as e:
        report = common.new_report("jax", case, args)
        report["error"] = f"jax: {common.first_line(e)}"
        print("step_jax: " + report["error"], file=sys.stderr)
        common.write_json(args.json, report)
        return 1
    notes = ["deposits: .at[].add scatters (GPU atomics), not deterministic in the last bits",
             "float32 throughout (x64 disabled), fft solve included; dt reduced in float32 on the device",
             "no particle sorting, alive flags, injection or watchdog",
             "one jax.jit per step; Jacobi sweeps in lax.fori_loop; timed by wall clock to block_until_ready",
             "ceiling: jitted x + 1 over the buffer (a stream; a plain copy may be elided by XLA)"]
    fw = JaxFramework(jax, jnp, notes)
    return peer_run.run(fw, args, "jax")


if __name__ == "__main__":
    sys.exit(main())
