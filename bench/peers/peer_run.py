# SPDX-License-Identifier: MIT
"""The driver the PyTorch and JAX peers share: the self-check at a small
size against the numpy reference, then the timing of each variant, each
inside its own try so that one failure leaves the other results.

A framework module passes a `Framework` with: name, version, device_name,
ops(case) (core.py's array interface), to_device(dict of numpy) -> tuple,
to_numpy(tuple) -> dict, make_step(phys, variant) -> callable(state) ->
(state, stats), timer(fn, steps, trials) -> median ms per step,
copy_gbps(mib), variants (names), notes (list of strings).
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import core  # noqa: E402
import reference_numpy  # noqa: E402

CHECK_TOL = {"fft": 1e-4, "jacobi50": 1e-3}


def self_check(fw, args, report):
    """One step at args.check_n against numpy, both solvers, every variant
    the framework times at this size (torch.compile is checked at full
    size against eager instead, see run())."""
    case = common.Case(args.check_n, args.check_particles)
    s0 = reference_numpy.moving_state(case)
    ok = True
    for solver in core.SOLVERS:
        name = f"{fw.name} {fw.check_variant} {solver}, {case.nx}^2, {case.particles} particles"
        row = {"check": name}
        try:
            ref, _ = reference_numpy.run_steps(case, solver, s0, 1)
            phys = core.Physics(fw.ops(case), case, solver)
            step = fw.make_step(phys, fw.check_variant)
            state, stats = step(fw.to_device(s0))
            got = fw.to_numpy(state)
            diff = core.compare_states(ref, got, before=s0)
            rel, div = core.max_divergence(case, got["U"], got["V"])
            stats = [float(fw.scalar(v)) for v in stats]
            row.update(max_rel_diff_vs_numpy=diff, max_div_times_dx_over_max_u=rel, max_div=div,
                       dt=stats[0], last_residual_over_rhs=stats[4] / max(stats[3], 1e-300),
                       fluid_momentum=core.fluid_momentum(case, got["U"], got["V"]),
                       particle_momentum=core.particle_momentum(case, got["vx"], got["vy"], got["d"]))
            worst = max(diff.values())
            row["ok"] = bool(worst < CHECK_TOL[solver] and (solver != "fft" or rel < 1e-4)
                             and all(np.isfinite(got[k]).all() for k in common.STATE_KEYS))
            print(f"check {name}: max rel diff vs numpy {worst:.1e} (" +
                  ", ".join(f"{k} {v:.1e}" for k, v in diff.items()) +
                  f"), max|div u| dx/max|u| {rel:.1e}: {'ok' if row['ok'] else 'FAILED'}")
            if solver == "fft" and args.check_npz:
                np.savez(args.check_npz, **got)
            if solver == "fft":  # the coupling passes alone
                ops = fw.ops(case)
                phys_c = core.Physics(ops, case, solver)

                def coupling_only(s):
                    t = fw.to_device(s)
                    dt = phys_c.next_dt(t[0], t[1])
                    r = phys_c.particle_step(t[0], t[1], t[3], t[4], t[5], t[6], t[7], dt)
                    n = fw.to_numpy((r[0], r[1], t[2], r[2], r[3], r[4], r[5], t[7]))
                    return n["U"], n["V"], n["x"], n["y"], n["vx"], n["vy"], float(fw.scalar(dt))

                bal = reference_numpy.particle_step_balance(case, fw.name, coupling_only, s0)
                report["checks"].append(bal)
                print(f"check {bal['check']}: y gain relative error {bal['relative_error_y']:.1e}, "
                      f"x gain / y gain {bal['x_gain_over_y']:.1e}: {'ok' if bal['ok'] else 'FAILED'}")
                ok &= bal["ok"]
        except Exception as e:
            row["ok"] = False
            row["error"] = common.first_line(e)
            print(f"check {name}: {row['error']}", file=sys.stderr)
        ok &= row["ok"]
        report["checks"].append(row)
    return ok


def run(fw, args, suite):
    case = common.Case(args.n, args.particles, args.sweeps)
    report = common.new_report(suite, case, args)
    report["framework"] = {"name": fw.name, "version": fw.version, "device": fw.device_name}
    report["notes"] = fw.notes  # the same list: notes added while running reach the JSON
    deadline = common.Deadline(args.max_seconds)
    save = lambda: common.write_json(args.json, report)  # noqa: E731
    print(f"{fw.name} {fw.version} on {fw.device_name}; grid {case.nx}^2, {case.particles} particles")
    save()

    try:
        gbps = fw.copy_gbps(args.copy_mib)
        report["ceiling"] = {"what": f"{fw.name} device-to-device copy, {args.copy_mib} MiB, bytes read + written",
                             "gbps": gbps}
        print(f"copy: {gbps:.1f} GB/s")
    except Exception as e:
        report["ceiling"] = {"error": common.first_line(e)}
        print(f"copy: {report['ceiling']['error']}", file=sys.stderr)
    save()

    if not args.skip_check:
        report["check_ok"] = self_check(fw, args, report)
        save()

    try:
        init = common.initial_state(case)
    except Exception as e:
        report["error"] = f"initial state: {common.first_line(e)}"
        save()
        return 1
    solvers = [s for s in args.solvers.split(",") if s]
    eager_first = {}
    for solver in solvers:
        for variant in fw.variants:
            name = f"{fw.name} {variant} {solver}"
            if deadline.left() < args.variant_seconds:
                report["rows"].append({"variant": name, "solver": solver, "error": "skipped: time limit"})
                print(f"{name}: skipped (time limit)")
                save()
                continue
            row = {"variant": name, "solver": solver}
            try:
                phys = core.Physics(fw.ops(case), case, solver)
                step = fw.make_step(phys, variant)
                state = fw.to_device(init)
                t0 = time.perf_counter()
                state, stats = step(state)
                fw.sync(state)
                first_s = time.perf_counter() - t0
                first = fw.to_numpy(state)
                stats = [float(fw.scalar(v)) for v in stats]
                extra = {"first_call_s": first_s, "dt": stats[0],
                         "residual_over_rhs": [stats[2] / max(stats[1], 1e-300), stats[4] / max(stats[3], 1e-300)]}
                if variant == fw.variants[0]:
                    eager_first[solver] = first
                elif solver in eager_first:  # a compiled variant against the first (eager) one, same step
                    extra["max_rel_diff_vs_" + fw.variants[0]] = core.compare_states(eager_first[solver], first)
                del first
                if not all(np.isfinite(stats)):
                    raise RuntimeError(f"non-finite step statistics {stats}")
                holder = {"s": state}

                def one():
                    holder["s"], _ = step(holder["s"])

                for _ in range(args.warmup):
                    one()
                ms = fw.timer(one, lambda: fw.sync(holder["s"]), args.steps, args.trials)
                row.update(common.timing_row(name, solver, case, ms, extra))
                if "gbps" in report.get("ceiling", {}):
                    row["copy_pct"] = 100 * row["gbps"] / report["ceiling"]["gbps"]
                print(f"{name}: {ms:.3f} ms/step, {row['steps_per_s']:.1f} steps/s, {row['gbps']:.1f} GB/s by the "
                      f"byte model, first call {first_s:.1f} s")
                del holder, state
            except Exception as e:
                row["error"] = common.first_line(e)
                print(f"{name}: {row['error']}", file=sys.stderr)
            fw.release()
            report["rows"].append(row)
            save()
    report["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    save()
    failed = any("error" in r for r in report["rows"]) or report.get("check_ok") is False
    return 1 if failed else 0


def add_args(ap):
    common.add_common_args(ap)
    ap.add_argument("--check-npz", help="write the self-check's fft step here (for the torch-vs-jax comparison)")
    ap.add_argument("--variant-seconds", type=float, default=60,
                    help="with --max-seconds: start no variant with fewer seconds than this left")
    return ap
