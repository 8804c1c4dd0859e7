#!/usr/bin/env python3
"""Work against precision on the outer solar system (six bodies, Hairer-Lubich-Wanner I.2.4):
vigor's fixed-step symplectic compositions beside heyoka's Taylor integrator in batch mode.

Problem: `--systems` copies of the outer solar system of 5 September 1994 (the model's reference
state, AU, days, solar masses), each with its planets' positions moved by a random relative
1e-7 so that the copies differ, integrated for `--days` days (default 1e5: ~8 Jupiter orbits).
Error: the largest position error (AU) of any body of any copy at the end, against heyoka's
Taylor integrator in 80-bit long double at tolerance 1e-19 (so errors below ~1e-14 AU are the
reference's own). Cost: wall seconds for the whole ensemble on ONE core (vigor threads=1, the
engine's own time; heyoka's batch integrator is one thread, JIT compilation timed apart).
Rounds are interleaved and the best of `--rounds` is kept.

    build/python-env/bin/python bench/work_precision_outer.py --venv DIR [--systems 64]
                                                               [--days 1e5] [--rounds 3] [--json F]

`--venv DIR` creates DIR (once) with heyoka and SciPy from PyPI (bench/work_precision.py) and reruns
this script there with the build's vigor package on PYTHONPATH. heyoka is needed for the reference.
"""
import argparse
import sys
import time

import numpy as np

from work_precision import keep_best, report, rerun_in_venv

G = 2.95912208286e-4
MASSES = [1.00000597682, 0.000954786104043, 0.000285583733151, 4.37273164546e-5,
          5.17759138449e-5, 1.0 / 1.3e8]
# Heliocentric positions (AU) and velocities (AU/day), HLW I.2.4 (models/outer_solar_system.hpp).
POS_VEL = [
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [-3.5023653, -3.8169847, -1.5507963, 0.00565429, -0.00412490, -0.00190589],
    [9.0755314, -3.0458353, -1.6483708, 0.00168318, 0.00483525, 0.00192462],
    [8.3101420, -16.2901086, -7.2521278, 0.00354178, 0.00137102, 0.00055029],
    [11.4707666, -25.7294829, -10.8169456, 0.00288930, 0.00114527, 0.00039677],
    [-15.5387357, -25.2225594, -3.1902382, 0.00276725, -0.00170702, -0.00136504],
]
BODIES = len(MASSES)
VIGOR_STEPS = {  # name: step sizes in days (the sweep)
    "verlet": [20, 10, 5, 2.5, 1.25],
    "yoshida4": [40, 20, 10, 5, 2.5],
    "yoshida6": [80, 40, 20, 10, 5],
    "blanes_moan6": [100, 50, 25, 12.5, 6.25],
    "kahan_li8": [100, 50, 25, 12.5],
    "sofspa10": [200, 100, 50, 25],
}
HEYOKA_TOLS = [1e-6, 1e-8, 1e-10, 1e-12, 1e-14, 1e-16]


def systems(n, seed=11):
    """Positions and velocities (n, BODIES, 6): the reference state with each planet's position
    scaled by 1 + 1e-7 u, u uniform in [-1, 1]."""
    rng = np.random.default_rng(seed)
    pv = np.repeat(np.array(POS_VEL)[None], n, axis=0)
    pv[:, 1:, :3] *= 1.0 + 1e-7 * rng.uniform(-1.0, 1.0, (n, BODIES - 1, 1))
    return pv


def vigor_states(pv):
    """vigor's state rows: q (body-major x, y, z), then p = m v in the same order."""
    m = np.array(MASSES)[None, :, None]
    n = len(pv)
    return np.hstack([pv[:, :, :3].reshape(n, -1), (m * pv[:, :, 3:]).reshape(n, -1)])


def heyoka_state(pv):
    """heyoka's nbody state (x, y, z, vx, vy, vz per body) as columns, one per system."""
    return pv.reshape(len(pv), -1).T


def reference_positions(pv, days):
    import heyoka as hy
    sys_ = hy.model.nbody(BODIES, masses=MASSES, Gconst=G)
    ta = hy.taylor_adaptive(sys_, np.zeros(6 * BODIES, dtype=np.longdouble),
                            fp_type=np.longdouble, tol=np.longdouble(1e-19))
    out = np.empty((len(pv), BODIES, 3))
    for k, s in enumerate(pv):
        ta.time = np.longdouble(0)
        ta.state[:] = s.reshape(-1).astype(np.longdouble)
        ta.propagate_until(np.longdouble(days))
        out[k] = np.array(ta.state, dtype=float).reshape(BODIES, 6)[:, :3]
    return out


def max_error(q, ref):
    return float(np.max(np.linalg.norm(q - ref, axis=2)))


def run_vigor(states, days, name, h):
    import vigor
    steps = int(round(days / h))
    job = {"model": {"name": "outer_solar_system"},
           "integrator": {"name": name, "dt": days / steps}, "steps": steps,
           "diagnostics": {"conservation_every": steps}}
    res = vigor.run(job, states=states, backend="cpu", threads=1, progress=False)
    q = np.column_stack([res.final[f"q{c}"] for c in range(3 * BODIES)])
    return q.reshape(len(states), BODIES, 3), res.summary["wall_seconds"]


def heyoka_batch(pv, days, tol, batch, cache):
    import heyoka as hy
    if tol not in cache:
        sys_ = hy.model.nbody(BODIES, masses=MASSES, Gconst=G)
        t0 = time.perf_counter()
        ta = hy.taylor_adaptive_batch(sys_, np.zeros((6 * BODIES, batch)), tol=tol)
        cache[tol] = (ta, time.perf_counter() - t0)
    ta, compile_s = cache[tol]
    cols = heyoka_state(pv)
    n = len(pv)
    q = np.empty((n, BODIES, 3))
    t0 = time.perf_counter()
    for a in range(0, n, batch):
        k = min(batch, n - a)
        block = np.repeat(cols[:, a:a + 1], batch, axis=1)  # padding lanes integrate a copy
        block[:, :k] = cols[:, a:a + k]
        ta.set_time(0.0)
        ta.state[:] = block
        ta.propagate_until(float(days))
        q[a:a + k] = ta.state[:, :k].T.reshape(k, BODIES, 6)[:, :, :3]
    return q, time.perf_counter() - t0, compile_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", default="")
    ap.add_argument("--systems", type=int, default=64)
    ap.add_argument("--days", type=float, default=1e5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    if args.venv:
        rerun_in_venv(args.venv, __file__)
    try:
        import heyoka as hy
    except ImportError:
        sys.exit("work_precision_outer: heyoka is needed for the reference (--venv DIR installs it)")
    import vigor  # noqa: F401  (PYTHONPATH=build/python)

    pv = systems(args.systems)
    t0 = time.perf_counter()
    ref = reference_positions(pv, args.days)
    print(f"reference (heyoka, long double, tol 1e-19): {time.perf_counter() - t0:.1f} s",
          file=sys.stderr)
    states = vigor_states(pv)
    batch = hy.recommended_simd_size()
    best, cache = {}, {}
    for _ in range(args.rounds):
        for name, sweep in VIGOR_STEPS.items():
            for h in sweep:
                q, seconds = run_vigor(states, args.days, name, h)
                keep_best(best, ("vigor", name, h),
                          {"method": f"vigor {name}", "setting": f"h = {h:g} d",
                           "error": max_error(q, ref), "seconds": seconds})
        for tol in HEYOKA_TOLS:
            q, seconds, compile_s = heyoka_batch(pv, args.days, tol, batch, cache)
            keep_best(best, ("heyoka", tol),
                      {"method": f"heyoka batch ({batch})", "setting": f"tol {tol:g}",
                       "error": max_error(q, ref), "seconds": seconds,
                       "compile_seconds": compile_s})
    report(f"Outer solar system, {args.systems} systems x {args.days:g} days, one core, best of "
           f"{args.rounds}; error = max position error (AU) at the end", best, 16, args.json,
           {"systems": args.systems, "days": args.days, "rounds": args.rounds,
            "reference": "heyoka taylor_adaptive, long double, tol 1e-19"})


if __name__ == "__main__":
    main()
