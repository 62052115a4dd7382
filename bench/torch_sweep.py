#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The 5-point Jacobi sweep with a right-hand side, in PyTorch, for comparison
with `sim bench --micro` (docs/PERFORMANCE.md).

    out = (p_w + p_e + p_s + p_n - h^2 rhs) / 4     over the n x n interior

phi is (n + 2) x (n + 2) float32 with a one-cell halo, rhs n x n, out a new
n x n tensor (out of place, as our Jacobi kernel): at least 12 bytes per cell
move through device memory (read phi and rhs, write out). Times PyTorch eager
and torch.compile (mode "default"; if compiling fails the reason is printed
and recorded, and the eager numbers still come out), and a device-to-device
copy in the same process as the ceiling. Each figure is the median over
trials of back-to-back calls timed with CUDA events, after a warm-up.

    python3 bench/torch_sweep.py --json torch_sweep.json [--sizes 8192,16384]
"""
import argparse
import json
import statistics
import sys
import time

BYTES_PER_CELL = 12  # read phi and rhs, write out: 3 float32


def sweep(phi, rhs, h2):
    """Jacobi update of the interior of phi: one new n x n tensor."""
    return (phi[1:-1, :-2] + phi[1:-1, 2:] + phi[:-2, 1:-1] + phi[2:, 1:-1] - h2 * rhs) * 0.25


def timed(torch, fn, warmup, repeats, trials, device):
    """Median milliseconds per call: `trials` runs of `repeats` calls each."""
    for _ in range(warmup):
        fn()
    if device == "cuda":
        torch.cuda.synchronize()
        samples = []
        for _ in range(trials):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(repeats):
                fn()
            stop.record()
            stop.synchronize()
            samples.append(start.elapsed_time(stop) / repeats)
        return statistics.median(samples)
    samples = []
    for _ in range(trials):
        t0 = time.perf_counter()
        for _ in range(repeats):
            fn()
        samples.append((time.perf_counter() - t0) * 1e3 / repeats)
    return statistics.median(samples)


def copy_bandwidth(torch, device, mib, args):
    """Bytes read + written per second of a device-to-device copy."""
    n = (mib << 20) // 4
    src = torch.rand(n, device=device)
    dst = torch.empty_like(src)
    ms = timed(torch, lambda: dst.copy_(src), args.warmup, args.repeats, args.trials, device)
    if not torch.equal(dst[-16:], src[-16:]):
        raise RuntimeError("copy check failed")
    return 2 * n * 4 / (ms * 1e-3)


def first_line(e):
    text = f"{type(e).__name__}: {e}".strip()
    return text.splitlines()[0][:300] if text else type(e).__name__


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="8192,16384", help="grid sides n, comma-separated")
    ap.add_argument("--repeats", type=int, default=50, help="calls per trial")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--copy-mib", type=int, default=1024, help="size of the copy-bandwidth buffers")
    ap.add_argument("--device", default="cuda", help="cuda, or cpu to try the script without a GPU")
    ap.add_argument("--no-compile", action="store_true", help="time eager only")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]

    report = {"suite": "torch", "bytes_per_cell": BYTES_PER_CELL, "rows": [], "notes": []}

    def finish(code):
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=2)
        return code

    try:
        import torch
    except Exception as e:  # no PyTorch: say so in the results too
        print(f"torch_sweep: cannot import torch: {first_line(e)}", file=sys.stderr)
        report["error"] = f"cannot import torch: {first_line(e)}"
        return finish(1)
    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        report["error"] = "torch.cuda.is_available() is False"
        print("torch_sweep: " + report["error"], file=sys.stderr)
        return finish(1)
    report["torch_version"] = torch.__version__
    report["device"] = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    torch.manual_seed(0)

    bw = copy_bandwidth(torch, device, args.copy_mib, args)
    report["ceiling"] = {"what": f"torch copy_ on {device}, {args.copy_mib} MiB, median of {args.trials} "
                                 f"trials of {args.repeats}, bytes read + written", "gbps": bw / 1e9}
    print(f"ceiling: {bw / 1e9:.1f} GB/s ({report['ceiling']['what']})")

    impls = [("eager", sweep)]
    if not args.no_compile:
        if not hasattr(torch, "compile"):
            report["notes"].append(f"torch.compile unavailable in torch {torch.__version__}")
            print("torch_sweep: " + report["notes"][-1], file=sys.stderr)
        else:
            impls.append(("compile", torch.compile(sweep, mode="default", dynamic=False)))

    # Per size: fresh random inputs, each implementation checked against a
    # float64 reference on them, then timed. The JSON is rewritten after
    # every row, so a stage killed by its time limit keeps what it measured.
    for n in sizes:
        try:
            phi = torch.rand(n + 2, n + 2, device=device)
            rhs = torch.rand(n, n, device=device)
            h2 = 1.0 / (n * n)
            ref = sweep(phi.double(), rhs.double(), h2)
        except Exception as e:
            for name, _ in impls:
                report["rows"].append({"impl": name, "size": n, "error": f"inputs: {first_line(e)}"})
            finish(0)
            continue
        for name, fn in impls:
            row = {"impl": name, "size": n}
            try:
                t0 = time.perf_counter()
                got = fn(phi, rhs, h2)
                err = float(torch.linalg.norm(got.double() - ref) / torch.linalg.norm(ref))
                row["first_call_s"] = time.perf_counter() - t0
                row["relative_error"] = err
                del got
                if not err < 1e-5:
                    raise RuntimeError(f"relative error {err:.3e} against float64 exceeds 1e-5")
                ms = timed(torch, lambda: fn(phi, rhs, h2), args.warmup, args.repeats, args.trials, device)
                cells = n * n
                gbps = cells * BYTES_PER_CELL / (ms * 1e6)
                row.update(ms_per_op=ms, gcells_per_s=cells / (ms * 1e6), gbps=gbps, copy_pct=100 * gbps * 1e9 / bw)
                print(f"{name} {n}: {ms:.4f} ms, error vs float64 {err:.1e}, first call {row['first_call_s']:.1f} s")
            except Exception as e:
                row["error"] = first_line(e)
                print(f"torch_sweep: {name} {n}: {row['error']}", file=sys.stderr)
            report["rows"].append(row)
            finish(0)
        phi = rhs = ref = None  # free before the next size
        if device == "cuda":
            torch.cuda.empty_cache()

    print(f"\n{'impl':8} {'size':>8} {'ms/sweep':>10} {'Gcell/s':>9} {'GB/s':>8} {'%copy':>6}")
    for r in report["rows"]:
        if "error" in r:
            print(f"{r['impl']:8} {r['size']:>8}  {r['error']}")
        else:
            print(f"{r['impl']:8} {r['size']:>8} {r['ms_per_op']:10.4f} {r['gcells_per_s']:9.1f} "
                  f"{r['gbps']:8.1f} {r['copy_pct']:6.1f}")
    failed = any("error" in r for r in report["rows"])
    return finish(1 if failed or not report["rows"] else 0)


if __name__ == "__main__":
    sys.exit(main())
