#!/usr/bin/env python3
"""Run one loop (or parallelepiped) job under several integrators and tabulate the largest relative
change of the loop's area and Poincaré invariant (or of the parallelepiped's volume), side by side.

    examples/loop_pendulum_controls.py [JOB.json] [--vigor PATH]

The default job is examples/loop_pendulum.json: a circle of 256 initial conditions around a small
libration of the pendulum, sampled every 500 steps of 0.02 for 10^4 steps. Symplectic schemes keep
the area to round-off; explicit Euler expands it, RK4 loses it slowly, Newmark with gamma != 1/2
contracts it (see docs/phase_volume.md). Each run writes to a temporary directory.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# (label, integrator name, options)
SCHEMES = [
    ("verlet", "verlet", {}),
    ("symplectic_euler_a", "symplectic_euler_a", {}),
    ("symplectic_euler_b", "symplectic_euler_b", {}),
    ("yoshida4", "yoshida4", {}),
    ("yoshida6", "yoshida6", {}),
    ("midpoint", "midpoint", {}),
    ("lobatto3", "lobatto3", {}),
    ("newmark beta=1/4", "newmark", {"beta": 0.25}),
    ("rk4", "rk4", {}),
    ("newmark gamma=0.6", "newmark", {"gamma": 0.6}),
    ("explicit_euler", "explicit_euler", {}),
]


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("job", nargs="?", default=os.path.join(here, "loop_pendulum.json"))
    ap.add_argument("--vigor", default=os.path.join(here, "..", "build", "vigor"))
    a = ap.parse_args()
    with open(a.job) as f:
        job = json.load(f)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (label, name, options) in enumerate(SCHEMES):
            j = json.loads(json.dumps(job))
            j["integrator"] = {"name": name, "dt": job["integrator"]["dt"], **options}
            j["output"] = {"dir": os.path.join(tmp, f"run{k}")}
            path = os.path.join(tmp, f"job{k}.json")
            with open(path, "w") as f:
                json.dump(j, f)
            r = subprocess.run([a.vigor, "run", path, "--quiet"], capture_output=True, text=True)
            if r.returncode != 0:
                sys.stderr.write(f"{label}: {r.stderr}")
                if r.returncode == 2:  # the model does not pair with this integrator: skip it
                    continue
                return r.returncode
            with open(os.path.join(tmp, f"run{k}", "summary.json")) as f:
                s = json.load(f)
            rows.append((label, s["invariants"], s["energy_error_max"]))

    inv = rows[0][1] if rows else {}
    dt, steps = job["integrator"]["dt"], job["steps"]
    print(f"{job['model']['name']}, {inv.get('kind')}, dt = {dt}, {steps} steps (T = {dt * steps:g})")
    if inv.get("kind") == "loop":
        print(f"{'integrator':<20} {'max|dA|/|A0|':>13} {'max|dI|/|I0|':>13} {'max|E-E0|':>10}")
        for label, i, e in rows:
            note = "" if i["valid_samples"] == i["samples"] else "  (trajectories stopped)"
            print(f"{label:<20} {i['area_relative_change_max']:13.3e} "
                  f"{i['poincare_relative_change_max']:13.3e} {e:10.2e}{note}")
    else:
        print(f"{'integrator':<20} {'max|dV|/V0':>13} {'max|E-E0|':>10}")
        for label, i, e in rows:
            print(f"{label:<20} {i['volume_relative_change_max']:13.3e} {e:10.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
