#!/usr/bin/env python3
"""Run one job at several time steps and tabulate max |E - E0|, the momentum-map drift and the Newton
residual against h, with the observed order between successive steps.

    examples/convergence_in_h.py JOB.json [--dt 0.1,0.05,0.025,0.0125] [--time T] [--vigor PATH]

Each run keeps the job's total time (steps * dt, or --time) and writes to a temporary directory; the
job file itself is not changed. Example (Marsden–Wendlandt double spherical pendulum, RATTLE):

    examples/convergence_in_h.py examples/mw_double_spherical_pendulum.json --dt 0.004,0.002,0.001
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("job")
    ap.add_argument("--dt", default=None, help="comma-separated time steps (default: dt, dt/2, dt/4, dt/8)")
    ap.add_argument("--time", type=float, default=None, help="total time (default: the job's steps * dt)")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--vigor", default=os.path.join(here, "..", "build", "vigor"))
    a = ap.parse_args()

    with open(a.job) as f:
        job = json.load(f)
    dt0 = float(job["integrator"]["dt"])
    total = a.time if a.time is not None else dt0 * int(job["steps"])
    dts = [float(x) for x in a.dt.split(",")] if a.dt else [dt0 / 2**k for k in range(4)]

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, dt in enumerate(dts):
            job["integrator"]["dt"] = dt
            job["steps"] = max(1, round(total / dt))
            job["output"] = {"dir": os.path.join(tmp, f"run{k}")}
            path = os.path.join(tmp, f"job{k}.json")
            with open(path, "w") as f:
                json.dump(job, f)
            r = subprocess.run([a.vigor, "run", path, "--quiet"], capture_output=True, text=True)
            if r.returncode != 0:
                sys.stderr.write(r.stderr)
                return r.returncode
            with open(os.path.join(tmp, f"run{k}", "summary.json")) as f:
                s = json.load(f)
            rows.append((dt, s["energy_error_max"], s.get("momentum_error_max"), s.get("newton_residual_max")))

    print(f"{job['model']['name']} / {job['integrator']['name']}, T = {total:g}")
    print(f"{'dt':>10} {'max|E-E0|':>12} {'order':>6} {'max|J-J0|':>12} {'residual':>10}")
    for k, (dt, e, j, r) in enumerate(rows):
        order = ""
        if k > 0 and e > 0 and rows[k - 1][1] > 0:
            order = f"{math.log(rows[k - 1][1] / e) / math.log(rows[k - 1][0] / dt):6.2f}"
        js = f"{j:12.3e}" if j is not None else f"{'-':>12}"
        rs = f"{r:10.2e}" if r is not None else f"{'-':>10}"
        print(f"{dt:10.4g} {e:12.3e} {order:>6} {js} {rs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
