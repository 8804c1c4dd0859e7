#!/usr/bin/env python3
"""Initial states of the rigid body in ideal fluid (kirchhoff_se3) on one level set of its integrals.

    examples/gallery/kirchhoff_level_set.py --count 24 [--seed 1] [--pi-p 0] [--p-p 5.22] [--energy 4]
        [--params I1,I2,I3,M1,M2,M3] [--write JOB.json ...]
    examples/gallery/kirchhoff_level_set.py --check JOB.json ...

Bou-Rabee's Poincaré benchmark (thesis §6.6) fixes the Casimirs Pi·P = 0, P·P = 5.22 and the energy
H = 1/2 Pi^T I^-1 Pi + 1/2 P^T M^-1 P = 4.0. A state on that level set: P uniform on the sphere |P|^2 = P·P;
Pi = pi_p P / |P|^2 + r u with u a unit vector at a uniform angle in the plane normal to P, and r >= 0 from
the energy (a quadratic in r). B = E and x = 0: the body dynamics (Pi, P) does not see them. A draw whose
quadratic has no root (P's kinetic energy alone above H) is redrawn, so the states are uniform over P's
directions that admit the level set, not over the level set's Liouville measure.

--write puts the states into each job's ensemble.states (other keys untouched); --check verifies that
every state of each job lies on the level set (the job's own model params) to 1e-12 relative, and exits 1
if one does not. Parameters default to the model's (models/kirchhoff_se3.hpp).
"""
import argparse
import json
import math
import random
import re
import sys

DEFAULT_PARAMS = [0.1253259217415516, 0.3939813715316293, 0.2962483540272737,
                  1.1613972017578527, 1.3774779656135212, 2.4212857655720033]
NAMES = ["I1", "I2", "I3", "M1", "M2", "M3"]


def energy(params, pi, p):
    return 0.5 * sum(pi[i] ** 2 / params[i] + p[i] ** 2 / params[3 + i] for i in range(3))


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def draw(rng, params, pi_p, p_p, h):
    """One (Pi, P) on the level set, or None if this draw of P admits none."""
    while True:
        g = [rng.gauss(0.0, 1.0) for _ in range(3)]
        n = math.sqrt(sum(x * x for x in g))
        if n > 1e-3:
            break
    p = [math.sqrt(p_p) * x / n for x in g]
    # An orthonormal pair (e1, e2) normal to P, then u at a uniform angle between them.
    helper = [1.0, 0.0, 0.0] if abs(p[0]) < 0.9 * math.sqrt(p_p) else [0.0, 1.0, 0.0]
    e1 = cross(p, helper)
    e1 = [x / math.sqrt(sum(y * y for y in e1)) for x in e1]
    e2 = cross([x / math.sqrt(p_p) for x in p], e1)
    phi = rng.uniform(0.0, 2.0 * math.pi)
    u = [math.cos(phi) * a + math.sin(phi) * b for a, b in zip(e1, e2)]
    c = [pi_p * x / p_p for x in p]
    # H(c + r u) = H: a r^2 + b r + k = 0 with the inertia-weighted products.
    a = 0.5 * sum(u[i] ** 2 / params[i] for i in range(3))
    b = sum(c[i] * u[i] / params[i] for i in range(3))
    k = energy(params, c, p) - h
    disc = b * b - 4 * a * k
    if disc < 0:
        return None
    r = (-b + math.sqrt(disc)) / (2 * a)
    if r < 0:
        return None
    return [c[i] + r * u[i] for i in range(3)], p


def states(count, seed, params, pi_p, p_p, h):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        d = draw(rng, params, pi_p, p_p, h)
        if d is None:
            continue
        pi, p = d
        out.append([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0] + pi + p)
    return out


def job_params(job):
    given = job.get("model", {}).get("params", {})
    return [float(given.get(n, d)) for n, d in zip(NAMES, DEFAULT_PARAMS)]


def check(path, pi_p, p_p, h):
    with open(path) as f:
        job = json.load(f)
    params = job_params(job)
    worst = 0.0
    for s in job["ensemble"]["states"]:
        pi, p = s[12:15], s[15:18]
        worst = max(worst, abs(sum(x * y for x, y in zip(pi, p)) - pi_p) / p_p,
                    abs(sum(x * x for x in p) - p_p) / p_p, abs(energy(params, pi, p) - h) / h)
    ok = worst <= 1e-12
    print(f"{path}: {len(job['ensemble']['states'])} states, largest relative deviation from the level set "
          f"{worst:.2e}: {'ok' if ok else 'OFF the level set'}")
    return ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pi-p", type=float, default=0.0)
    ap.add_argument("--p-p", type=float, default=5.22)
    ap.add_argument("--energy", type=float, default=4.0)
    ap.add_argument("--params", help="I1,I2,I3,M1,M2,M3 (default: the model's)")
    ap.add_argument("--write", nargs="+", metavar="JOB", help="put the states into these job files")
    ap.add_argument("--check", nargs="+", metavar="JOB", help="verify the states of these job files")
    a = ap.parse_args(argv)
    if a.check:
        return 0 if all([check(p, a.pi_p, a.p_p, a.energy) for p in a.check]) else 1
    params = DEFAULT_PARAMS if not a.params else [float(x) for x in a.params.split(",")]
    if len(params) != 6 or min(params) <= 0 or a.count < 1 or a.p_p <= 0:
        ap.error("--params needs six positive numbers, --count >= 1, --p-p > 0")
    s = states(a.count, a.seed, params, a.pi_p, a.p_p, a.energy)
    if not a.write:
        json.dump(s, sys.stdout)
        print()
        return 0
    for path in a.write:
        with open(path) as f:
            job = json.load(f)
        job["ensemble"] = {"states": s}
        text = json.dumps(job, indent=2)
        # One state per line: collapse every innermost array of numbers.
        text = re.sub(r"\[\s+([-0-9.eE+,\s]+?)\s+\]",
                      lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text)
        with open(path, "w") as f:
            f.write(text + "\n")
        print(f"{path}: {len(s)} states")
    return 0


if __name__ == "__main__":
    sys.exit(main())
