#!/usr/bin/env python3
"""The double spherical pendulum's formula models against the Cartesian Lagrangian they restate.

examples/formula_double_spherical_angles.json writes L(q, v) in the angles q = (theta1, theta2, psi,
phi1) — theta_i from the downward vertical, phi_i the azimuths, psi = phi2 - phi1 — and
examples/formula_double_spherical_reduced.json the Routhian R(x, v; mu) of its reduction by the
rotations about the vertical, x = (theta1, theta2, psi). Both were derived by hand
(docs/formula_models.md); this script checks them numerically, with nothing but the standard library:

1. L equals 1/2 m1 |r1'|^2 + 1/2 m2 |r2'|^2 - g (m1 z1 + m2 z2) computed from the Cartesian
   positions r1 = l1 u(theta1, phi1), r2 = r1 + l2 u(theta2, phi2) and their chain-rule velocities,
   at random points of the tangent bundle.
2. R(x, v; mu) = L - mu phi1' at the phi1' where dL/dphi1' = mu (Routh). L is quadratic in phi1', so
   three evaluations give its coefficients and phi1' exactly up to round-off.
3. The shape momenta agree: dR/dv_x = dL/dv_x at that phi1' (central differences), so a reduced run
   and an unreduced one start from the same (x, p_x) (tests/test_formula_run.cpp).

Tolerances: the formulas are evaluated in double precision with terms of size up to about
m2 l1 l2 |v|^2 ~ 50 and mu^2 / I; the identities hold to a few hundred ulps of that (1e-12 relative);
a wrong sign or factor anywhere shows at order one. The central differences in 3 have truncation
error O(e^2) = 1e-8 relative with e = 1e-4.
"""
import json
import math
import random
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def formula(name):
    job = json.loads((EXAMPLES / f"formula_double_spherical_{name}.json").read_text())
    return job["model"]["formula"]["lagrangian"], job["model"]["params"]


def evaluate(text, params, q, v, extra=None):
    """A formula of the job language evaluated in Python (its ^ is Python's **, -x^2 is -(x^2) in both)."""
    env = dict(params)
    env.update(extra or {})
    env.update({f"q{i}": x for i, x in enumerate(q)})
    env.update({f"v{i}": x for i, x in enumerate(v)})
    env.update(sin=math.sin, cos=math.cos)
    return eval(text.replace("^", "**"), {"__builtins__": {}}, env)  # our own example files only


def cartesian_lagrangian(p, q, v):
    t1, t2, psi, f1 = q
    w1, w2, wpsi, wf1 = v
    f2, wf2 = f1 + psi, wf1 + wpsi

    def u(t, f):
        return [math.sin(t) * math.cos(f), math.sin(t) * math.sin(f), -math.cos(t)]

    def du(t, f, wt, wf):
        return [wt * math.cos(t) * math.cos(f) - wf * math.sin(t) * math.sin(f),
                wt * math.cos(t) * math.sin(f) + wf * math.sin(t) * math.cos(f), wt * math.sin(t)]

    r1 = [p["l1"] * x for x in u(t1, f1)]
    v1 = [p["l1"] * x for x in du(t1, f1, w1, wf1)]
    r2 = [a + p["l2"] * b for a, b in zip(r1, u(t2, f2))]
    v2 = [a + p["l2"] * b for a, b in zip(v1, du(t2, f2, w2, wf2))]
    kinetic = 0.5 * p["m1"] * sum(x * x for x in v1) + 0.5 * p["m2"] * sum(x * x for x in v2)
    return kinetic - p["g"] * (p["m1"] * r1[2] + p["m2"] * r2[2])


def main():
    lagrangian, params = formula("angles")
    routhian, reduced_params = formula("reduced")
    mu0 = reduced_params.pop("mu")
    if reduced_params != params:
        print(f"the two examples' parameters differ: {params} and {reduced_params}")
        return 1
    rng = random.Random(20261128)
    worst = {"L": 0.0, "R": 0.0, "p": 0.0}
    for _ in range(300):
        q = [rng.uniform(-3, 3) for _ in range(4)]
        v = [rng.uniform(-2, 2) for _ in range(4)]
        exact = cartesian_lagrangian(params, q, v)
        worst["L"] = max(worst["L"], abs(evaluate(lagrangian, params, q, v) - exact) / (1 + abs(exact)))

        x, vx = q[:3] + [0.0], [rng.uniform(-2, 2) for _ in range(3)]
        mu = rng.uniform(-2, 2) * mu0

        def along_phi1(w, vx=vx, x=x):
            return cartesian_lagrangian(params, x, vx + [w])

        c = along_phi1(0.0)
        a, b = (along_phi1(1.0) + along_phi1(-1.0)) / 2 - c, (along_phi1(1.0) - along_phi1(-1.0)) / 2
        w = (mu - b) / (2 * a)  # dL/dphi1' = 2 a phi1' + b = mu
        expected = along_phi1(w) - mu * w
        got = evaluate(routhian, params, x[:3], vx, {"mu": mu})
        worst["R"] = max(worst["R"], abs(got - expected) / (1 + abs(expected)))

        e = 1e-4
        for k in range(3):
            up, down = list(vx), list(vx)
            up[k] += e
            down[k] -= e
            p_reduced = (evaluate(routhian, params, x[:3], up, {"mu": mu}) -
                         evaluate(routhian, params, x[:3], down, {"mu": mu})) / (2 * e)
            p_full = (cartesian_lagrangian(params, x, up + [w]) -
                      cartesian_lagrangian(params, x, down + [w])) / (2 * e)
            worst["p"] = max(worst["p"], abs(p_reduced - p_full) / (1 + abs(p_full)))
    limits = {"L": 1e-12, "R": 1e-12, "p": 1e-7}
    failed = False
    for key, text in (("L", "L against the Cartesian Lagrangian"),
                      ("R", "R against L - mu phi1' (Routh)"),
                      ("p", "shape momenta dR/dv against dL/dv")):
        ok = worst[key] <= limits[key]
        failed |= not ok
        print(f"{'ok  ' if ok else 'FAIL'} {text}: largest relative difference {worst[key]:.2e}"
              f" (limit {limits[key]:.0e})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
