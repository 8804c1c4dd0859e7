#!/usr/bin/env python3
"""Work against precision for Poincaré sections: vigor's fixed-step symplectic schemes (section
points located at the scheme's own order) beside heyoka's Taylor integrator in batch mode, on the
section survey vigor exists for.

Problem: Hénon–Heiles (a = 1, b = -1/3) at E = 1/8, `--orbits` initial conditions on the section
q0 = 0 (a grid in q1 in [-0.3, 0.4] and p1 in [-0.2, 0.2], p0 > 0 from the energy, points outside
the energy surface dropped), integrated to t = `--t-end` with every upward crossing of q0 = 0
recorded. Error: the median, over the section points of `--ref-orbits` orbits spread through the
ensemble, of max(|q1 - q1_ref|, |p1 - p1_ref|) of the k-th crossing against a reference computed
with heyoka in extended precision (80-bit long double, tol 1e-18, crossings located by heyoka's
event detection and dense output). At E = 1/8 most orbits are regular; the chaotic minority's
points, whose errors grow exponentially with t, lie above the median. Cost: seconds for the whole
ensemble on ONE core.

  vigor            vigor.run(threads=1) of the ensemble with the section on: the call's wall time
                   (end to end: parse, engine, section points into NumPy) and the engine's.
  heyoka           taylor_adaptive_batch (the recommended SIMD batch size), one tolerance per
                   row: (a) the integration alone to t_end, no events (what vigor's section
                   recording adds nothing to, so it flatters heyoka); (b) with a non-terminal
                   batch event on q0 whose Python callback stores the crossing from the dense
                   output, as heyoka's Poincaré-section tutorial does it. JIT compilation is timed
                   apart and not counted.
Rounds are interleaved and the best of `--rounds` is kept (contention only slows a run down).

    build/python-env/bin/python bench/section_precision.py --venv DIR [--orbits 10000]
                                  [--t-end 200] [--ref-orbits 64] [--rounds 3] [--json F]

`--venv DIR` creates DIR (once) with heyoka from PyPI and reruns this script there with the
build's vigor package on PYTHONPATH, as bench/work_precision.py does.
"""
import argparse
import json
import math
import sys
import time

import numpy as np

from work_precision import rerun_in_venv

ENERGY = 0.125
VIGOR_RUNS = {  # label: (the job's integrator fields, step sizes: the sweep)
    "verlet": ({"name": "verlet"}, [0.02, 0.01, 0.005, 0.0025]),
    "yoshida6": ({"name": "yoshida6"}, [0.04, 0.02, 0.01, 0.005]),
    "blanes_moan6": ({"name": "blanes_moan6"}, [0.2, 0.1, 0.05, 0.025]),
    "kahan_li8": ({"name": "kahan_li8"}, [0.2, 0.1, 0.05, 0.025]),
    "sofspa10": ({"name": "sofspa10"}, [0.4, 0.2, 0.1, 0.05]),
    "gauss s=8": ({"name": "gauss", "stages": 8}, [0.4, 0.2, 0.1]),
    "gauss s=8, 8 sweeps": ({"name": "gauss", "stages": 8, "newton_iterations": 8},
                            [0.4, 0.2, 0.1]),
}
HEYOKA_TOLS = [1e-6, 1e-8, 1e-10, 1e-12, 1e-14, 1e-16]


def initial_states(n):
    """States (q0, q1, p0, p1) on q0 = 0 at E = 1/8 from a grid of about n points."""
    side = int(math.ceil(math.sqrt(n / 0.8)))  # about a fifth of the box is off the surface
    q1, p1 = np.meshgrid(np.linspace(-0.3, 0.4, side), np.linspace(-0.2, 0.2, side))
    q1, p1 = q1.ravel(), p1.ravel()
    p0sq = 2.0 * (ENERGY - (q1 * q1 / 2.0 - q1 ** 3 / 3.0)) - p1 * p1
    keep = p0sq > 1e-6
    states = np.column_stack([np.zeros(keep.sum()), q1[keep], np.sqrt(p0sq[keep]), p1[keep]])
    return states[:n]


def hh_system(hy):
    x, y, px, py = hy.make_vars("x", "y", "px", "py")
    return x, [(x, px), (y, py), (px, -x - 2.0 * x * y), (py, -y - x * x + y * y)]


def reference_sections(states, t_end):
    """Each orbit's crossings [(t, q1, p1), ...] in 80-bit arithmetic."""
    import heyoka as hy
    x, sys_ = hh_system(hy)
    found = []

    def cb(ta, t, d_sgn):
        if t > 1e-12:  # not the start on the plane
            ta.update_d_output(t)
            found.append((float(t), float(ta.d_output[1]), float(ta.d_output[3])))

    ev = hy.nt_event(x, cb, direction=hy.event_direction.positive, fp_type=np.longdouble)
    ta = hy.taylor_adaptive(sys_, np.zeros(4, dtype=np.longdouble), nt_events=[ev],
                            tol=np.longdouble("1e-18"),
                            fp_type=np.longdouble)
    out = []
    for s in states:
        found.clear()
        ta.time = np.longdouble(0)
        ta.state[:] = s.astype(np.longdouble)
        ta.propagate_until(np.longdouble(t_end))
        out.append(np.array(found))
    return out


def errors(points, reference):
    """max(|dq1|, |dp1|) of every crossing k present in both, over the reference orbits."""
    errs = []
    for got, ref in zip(points, reference):
        k = min(len(got), len(ref))
        if k:
            errs.append(np.max(np.abs(got[:k, 1:] - ref[:k, 1:]), axis=1))
    return np.concatenate(errs) if errs else np.array([np.nan])


def run_vigor(states, t_end, integrator, h, ref_rows):
    import vigor
    steps = int(round(t_end / h))
    job = {"model": {"name": "henon_heiles"}, "integrator": dict(integrator, dt=h),
           "steps": steps, "section": {"coordinate": "q0", "value": 0.0, "direction": "up",
                                       "max_crossings": 1000},
           "diagnostics": {"conservation_every": steps}}
    t0 = time.perf_counter()
    res = vigor.run(job, states=states, backend="cpu", threads=1, progress=False)
    wall = time.perf_counter() - t0
    s = res.sections
    traj = s["trajectory"]
    pts = []
    for i in ref_rows:
        sel = traj == i
        pts.append(np.column_stack([s["t"][sel], s["q1"][sel], s["p1"][sel]]))
    return pts, wall, res.summary["wall_seconds"]


def heyoka_runs(states, t_end, tol, batch, ref_rows, cache):
    """(points of ref_rows, seconds with events, seconds without, compile seconds)."""
    import heyoka as hy
    if tol not in cache:
        x, sys_ = hh_system(hy)
        store = {"lanes": None}

        def cb(ta, t, d_sgn, b):
            lanes = store["lanes"]
            if lanes is None or t < 1e-12:
                return
            times = np.full(ta.batch_size, t)
            ta.update_d_output(times)
            lanes[b].append((t, ta.d_output[1, b], ta.d_output[3, b]))

        ev = hy.nt_event_batch(x, cb, direction=hy.event_direction.positive)
        t0 = time.perf_counter()
        plain = hy.taylor_adaptive_batch(sys_, np.zeros((4, batch)), tol=tol)
        evented = hy.taylor_adaptive_batch(sys_, np.zeros((4, batch)), tol=tol, nt_events=[ev])
        cache[tol] = (plain, evented, store, time.perf_counter() - t0)
    plain, evented, store, compile_s = cache[tol]
    n = len(states)
    wanted = set(int(i) for i in ref_rows)
    points = {}
    timings = {}
    for label, ta in (("plain", plain), ("events", evented)):
        t0 = time.perf_counter()
        for a in range(0, n, batch):
            chunk = states[a:a + batch]
            k = len(chunk)
            block = np.zeros((4, batch))
            block[:, :k] = chunk.T
            block[:, k:] = chunk[0][:, None]  # padding lanes integrate a copy
            if label == "events":
                store["lanes"] = [[] for _ in range(batch)]
            ta.set_time(0.0)
            ta.state[:] = block
            ta.propagate_until(t_end)
            if label == "events":
                for j in range(k):
                    if a + j in wanted:
                        points[a + j] = np.array(store["lanes"][j])
        timings[label] = time.perf_counter() - t0
    return ([points.get(int(i), np.zeros((0, 3))) for i in ref_rows], timings["events"],
            timings["plain"], compile_s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", default="")
    ap.add_argument("--orbits", type=int, default=10000)
    ap.add_argument("--t-end", type=float, default=200.0)
    ap.add_argument("--ref-orbits", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default="")
    ap.add_argument("--compensated", action="store_true",
                    help="also run the high-order schemes with integrator.compensated")
    args = ap.parse_args()
    if args.venv:
        rerun_in_venv(args.venv, __file__)

    import heyoka as hy
    batch = hy.recommended_simd_size()
    states = initial_states(args.orbits)
    ref_rows = np.linspace(0, len(states) - 1, args.ref_orbits).astype(int)
    t0 = time.perf_counter()
    reference = reference_sections(states[ref_rows], args.t_end)
    print(f"reference: {sum(len(r) for r in reference)} crossings of {len(ref_rows)} orbits in "
          f"{time.perf_counter() - t0:.1f} s (80-bit, tol 1e-18)", file=sys.stderr)

    runs = dict(VIGOR_RUNS)
    if args.compensated:
        for name in ("blanes_moan6", "kahan_li8", "sofspa10", "gauss s=8, 8 sweeps"):
            integrator, sweep = VIGOR_RUNS[name]
            runs[name + ", compensated"] = (dict(integrator, compensated=True), sweep)
    best = {}
    cache = {}
    for _ in range(args.rounds):
        for name, (integrator, sweep) in runs.items():
            for h in sweep:
                pts, wall, engine = run_vigor(states, args.t_end, integrator, h, ref_rows)
                key = ("vigor", name, h)
                if key not in best or wall < best[key]["seconds"]:
                    best[key] = {"method": f"vigor {name}", "setting": f"h = {h:g}",
                                 "median_error": float(np.median(errors(pts, reference))),
                                 "seconds": wall, "engine_seconds": engine}
        for tol in HEYOKA_TOLS:
            pts, with_events, plain, compile_s = heyoka_runs(states, args.t_end, tol, batch,
                                                             ref_rows, cache)
            key = ("heyoka", tol)
            if key not in best or with_events < best[key]["seconds"]:
                best[key] = {"method": f"heyoka batch ({batch})", "setting": f"tol {tol:g}",
                             "median_error": float(np.median(errors(pts, reference))),
                             "seconds": with_events, "integration_alone_seconds": plain,
                             "compile_seconds": compile_s}
            else:
                best[key]["integration_alone_seconds"] = min(
                    best[key]["integration_alone_seconds"], plain)
    rows = list(best.values())
    print(f"Hénon–Heiles E = 1/8, {len(states)} orbits to t = {args.t_end:g}, section q0 = 0 up, "
          f"one core, best of {args.rounds}; error = median over the points of {len(ref_rows)} "
          f"orbits")
    print(f"{'method':<28} {'setting':<12} {'median err':>10} {'seconds':>9} {'engine/alone':>12}")
    for r in rows:
        other = r.get("engine_seconds", r.get("integration_alone_seconds"))
        print(f"{r['method']:<28} {r['setting']:<12} {r['median_error']:>10.2e} "
              f"{r['seconds']:>9.3f} {other:>12.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"orbits": len(states), "t_end": args.t_end, "ref_orbits": len(ref_rows),
                       "rounds": args.rounds, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
