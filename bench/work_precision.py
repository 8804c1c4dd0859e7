#!/usr/bin/env python3
"""Work against precision: vigor's fixed-step symplectic compositions (orders 2 to 10) beside
heyoka's Taylor integrator in batch mode and SciPy's DOP853, on an ensemble of Kepler orbits whose
exact solution is known (Kepler's equation).

Problem: planar Kepler, mu = 1, `--orbits` orbits with eccentricities spread over [0.1, 0.5]
(`--eccentricity EMIN EMAX`; `--eccentricity 0.6 0.6` is the e = 0.6 row of docs/performance.md) and
random orientations, each started at pericentre (semi-major axis 1, period 2 pi) and integrated for
`--periods` periods. Error: the largest position error over the ensemble at the end, against
Kepler's equation solved by Newton's method in double (accurate to ~1e-15 of the orbit size, so
errors below ~1e-13 are round-off of the reference). Cost: wall seconds for the whole ensemble on
ONE core (vigor threads=1; heyoka's batch integrator is one thread; SciPy one orbit at a time).

Each method as its users run it: vigor.run with a job per step size (the engine's own time,
summary.wall_seconds, and the call's wall time); heyoka.taylor_adaptive_batch with the recommended
SIMD batch size over a sweep of tolerances, JIT compilation timed apart; scipy solve_ivp(DOP853)
over a sweep of rtol = atol, on a subset of orbits (`--scipy-orbits`) and scaled to the ensemble.
Rounds are interleaved and the best of `--rounds` is kept (contention only slows a run down).

    build/python-env/bin/python bench/work_precision.py [--venv DIR] [--orbits 512]
                                                         [--periods 100] [--rounds 3] [--json F]
                                                         [--eccentricity EMIN EMAX]

`--venv DIR` creates DIR (once) with heyoka and SciPy from PyPI and reruns this script there with
the build's vigor package on PYTHONPATH (the venv must use the Python the package was built for).
Methods whose package is missing are skipped with a note.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VIGOR_INTEGRATORS = {  # name: step counts per period (the sweep)
    "verlet": [100, 200, 400, 800, 1600, 3200, 6400, 12800],
    "yoshida4": [50, 100, 200, 400, 800, 1600, 3200],
    "yoshida6": [40, 80, 160, 320, 640, 1280],
    "blanes_moan6": [25, 50, 100, 200, 400, 800],
    "kahan_li8": [25, 50, 100, 200, 400, 800],
    "sofspa10": [15, 25, 50, 100, 200, 400],
}
HEYOKA_TOLS = [1e-4, 1e-6, 1e-8, 1e-10, 1e-12, 1e-14, 1e-16]
SCIPY_TOLS = [1e-4, 1e-6, 1e-8, 1e-10, 1e-12, 1e-13]


def make_venv(path):
    python = os.path.join(path, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", path], check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "heyoka", "scipy", "numpy"], check=True)
    return python


def rerun_in_venv(venv, script):
    """Create `venv` (once) with the peers and run `script` there with this process's arguments
    less --venv DIR, the build's vigor package on PYTHONPATH; exits with its status."""
    python = make_venv(venv)
    env = dict(os.environ)
    paths = [os.path.join(ROOT, "build", "python")] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    argv = list(sys.argv[1:])
    i = argv.index("--venv")
    del argv[i:i + 2]
    sys.exit(subprocess.run([python, os.path.abspath(script)] + argv, env=env).returncode)


def keep_best(best, key, row):
    """Keep `row` under `key` unless a faster one is there (contention only slows a run down)."""
    if key not in best or row["seconds"] < best[key]["seconds"]:
        best[key] = row


def report(title, best, setting_width, json_path, meta):
    """Print the rows of `best` under `title`; with `json_path`, write them with `meta`."""
    rows = list(best.values())
    print(title)
    print(f"{'method':<22} {'setting':<{setting_width}} {'max error':>10} {'seconds':>9}")
    for r in rows:
        print(f"{r['method']:<22} {r['setting']:<{setting_width}} {r['error']:>10.2e} "
              f"{r['seconds']:>9.4f}")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(dict(meta, rows=rows), f, indent=2)


def orbits(n, e_min=0.1, e_max=0.5, seed=7):
    """Initial states (n, 4) at pericentre and each orbit's (e, omega)."""
    rng = np.random.default_rng(seed)
    e = np.linspace(e_min, e_max, n)
    omega = rng.uniform(0.0, 2.0 * math.pi, n)
    r, v = 1.0 - e, np.sqrt((1.0 + e) / (1.0 - e))
    c, s = np.cos(omega), np.sin(omega)
    states = np.column_stack([r * c, r * s, -v * s, v * c])
    return states, e, omega


def exact_positions(e, omega, t):
    """Positions at time t of the orbits (a = 1, mu = 1, pericentre at t = 0)."""
    m = np.mod(t, 2.0 * math.pi)
    big_e = m + e * np.sin(m)
    for _ in range(50):  # Newton on E - e sin E = M from E = M + e sin M (converges for e < 0.8)
        big_e -= (big_e - e * np.sin(big_e) - m) / (1.0 - e * np.cos(big_e))
    x = np.cos(big_e) - e
    y = np.sqrt(1.0 - e * e) * np.sin(big_e)
    c, s = np.cos(omega), np.sin(omega)
    return np.column_stack([c * x - s * y, s * x + c * y])


def max_error(q, exact):
    return float(np.max(np.linalg.norm(q - exact, axis=1)))


def run_vigor(states, t_end, name, steps_per_period, periods, compensated=False):
    import vigor
    steps = steps_per_period * periods
    integrator = {"name": name, "dt": t_end / steps}
    if compensated:
        integrator["compensated"] = True
    job = {"model": {"name": "kepler"}, "integrator": integrator,
           "steps": steps, "diagnostics": {"conservation_every": steps}}
    t0 = time.perf_counter()
    res = vigor.run(job, states=states, backend="cpu", threads=1, progress=False)
    wall = time.perf_counter() - t0
    q = np.column_stack([res.final["q0"], res.final["q1"]])
    return q, res.summary["wall_seconds"], wall


def heyoka_batch(t_end, states, tol, batch, cache):
    import heyoka as hy
    if tol not in cache:
        x, y, vx, vy = hy.make_vars("x", "y", "vx", "vy")
        r3 = (x * x + y * y) ** 1.5
        sys_ = [(x, vx), (y, vy), (vx, -x / r3), (vy, -y / r3)]
        t0 = time.perf_counter()
        ta = hy.taylor_adaptive_batch(sys_, np.zeros((4, batch)), tol=tol)
        cache[tol] = (ta, time.perf_counter() - t0)
    ta, compile_s = cache[tol]
    n = len(states)
    q = np.empty((n, 2))
    t0 = time.perf_counter()
    for a in range(0, n, batch):
        chunk = states[a:a + batch]
        k = len(chunk)
        block = np.zeros((4, batch))
        block[:, :k] = chunk.T
        block[:, k:] = chunk[0][:, None]  # padding lanes integrate a copy
        ta.set_time(0.0)
        ta.state[:] = block
        ta.propagate_until(t_end)
        q[a:a + k] = ta.state[:2, :k].T
    return q, time.perf_counter() - t0, compile_s


def scipy_dop853(t_end, states, tol):
    from scipy.integrate import solve_ivp

    def rhs(_, s):
        r3 = (s[0] * s[0] + s[1] * s[1]) ** 1.5
        return [s[2], s[3], -s[0] / r3, -s[1] / r3]

    q = np.empty((len(states), 2))
    t0 = time.perf_counter()
    for i, s in enumerate(states):
        sol = solve_ivp(rhs, (0.0, t_end), s, method="DOP853", rtol=tol, atol=tol)
        q[i] = sol.y[:2, -1]
    return q, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", default="")
    ap.add_argument("--orbits", type=int, default=512)
    ap.add_argument("--scipy-orbits", type=int, default=16)
    ap.add_argument("--periods", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default="")
    ap.add_argument("--eccentricity", type=float, nargs=2, default=[0.1, 0.5],
                    metavar=("EMIN", "EMAX"))
    ap.add_argument("--compensated", action="store_true",
                    help="also run every vigor integrator with integrator.compensated")
    args = ap.parse_args()
    if args.venv:
        rerun_in_venv(args.venv, __file__)

    e_min, e_max = args.eccentricity
    states, e, omega = orbits(args.orbits, e_min, e_max)
    t_end = 2.0 * math.pi * args.periods
    exact = exact_positions(e, omega, t_end)
    rows = []
    try:
        import vigor  # noqa: F401
        have_vigor = True
    except ImportError:
        have_vigor = False
        print("note: vigor is not importable (PYTHONPATH=build/python): skipped", file=sys.stderr)
    try:
        import heyoka as hy
        batch = hy.recommended_simd_size()
    except ImportError:
        hy, batch = None, 0
        print("note: heyoka is not installed (--venv DIR installs it): skipped", file=sys.stderr)
    try:
        import scipy  # noqa: F401
        have_scipy = True
    except ImportError:
        have_scipy = False
        print("note: SciPy is not installed: DOP853 skipped", file=sys.stderr)

    best = {}
    heyoka_cache = {}
    for _ in range(args.rounds):
        if have_vigor:
            for name, sweep in VIGOR_INTEGRATORS.items():
                for spp in sweep:
                    for comp in ([False, True] if args.compensated else [False]):
                        q, engine, wall = run_vigor(states, t_end, name, spp, args.periods, comp)
                        label = f"vigor {name}" + (" compensated" if comp else "")
                        keep_best(best, ("vigor", name, spp, comp),
                                  {"method": label, "setting": f"{spp} steps/period",
                                   "error": max_error(q, exact), "seconds": engine,
                                   "wall": wall})
        if hy is not None:
            for tol in HEYOKA_TOLS:
                q, seconds, compile_s = heyoka_batch(t_end, states, tol, batch, heyoka_cache)
                keep_best(best, ("heyoka", tol),
                          {"method": f"heyoka batch ({batch})", "setting": f"tol {tol:g}",
                           "error": max_error(q, exact), "seconds": seconds,
                           "compile_seconds": compile_s})
        if have_scipy:
            m = args.scipy_orbits
            for tol in SCIPY_TOLS:
                q, seconds = scipy_dop853(t_end, states[:m], tol)
                keep_best(best, ("scipy", tol),
                          {"method": "scipy DOP853", "setting": f"rtol=atol {tol:g}",
                           "error": max_error(q, exact[:m]), "seconds": seconds * args.orbits / m,
                           "note": f"{m} orbits, time scaled to {args.orbits}"})
    report(f"Kepler, {args.orbits} orbits (e {e_min:g}-{e_max:g}) x {args.periods} periods, one "
           f"core, best of {args.rounds}; error = max position error at the end", best, 22,
           args.json, {"orbits": args.orbits, "periods": args.periods, "rounds": args.rounds,
                       "eccentricity": [e_min, e_max]})


if __name__ == "__main__":
    main()
