#!/usr/bin/env python3
"""Inertia I and mass M of a rigid ellipsoid in ideal fluid (body plus added), on its principal axes.

The kinetic energy of the body and the fluid it moves is 1/2 Omega^T I Omega + 1/2 v^T M v with I
and M diagonal (the coupling S is zero for an ellipsoid on its principal axes), as in Kirchhoff's
equations (models/kirchhoff_se3.hpp). Lamb, Hydrodynamics (6th ed., 1932), §114-115 and §373:
with
    alpha0 = abc int_0^inf dl / ((a^2 + l) D),  D = sqrt((a^2 + l)(b^2 + l)(c^2 + l)),
and beta0, gamma0 alike (alpha0 + beta0 + gamma0 = 2), m' = (4/3) pi rho_f abc the displaced fluid,
    added mass along x        alpha0 / (2 - alpha0) m',
    added inertia about x     (1/5) m' (b^2 - c^2)^2 (gamma0 - beta0)
                              / (2 (b^2 - c^2) + (b^2 + c^2)(beta0 - gamma0)),
and cyclically; the body adds m = (4/3) pi rho_b abc to every mass and m (b^2 + c^2) / 5 to the
inertia about x. alpha0 = (2/3) abc R_D(b^2, c^2, a^2) with Carlson's symmetric integral R_D,
computed here by Carlson's duplication algorithm (Numer. Math. 33, 1979; DLMF 19.36.i) in plain
Python, no SciPy.

    python3 scripts/ellipsoid_added_mass.py 1 0.8 0.6 --rho-body 1 --rho-fluid 1
prints I1 I2 I3 M1 M2 M3 as the params of a kirchhoff_se3 job. Densities in any unit: a job's
units are those of a, b, c and rho.
"""
import argparse
import json
import math


def carlson_rd(x, y, z):
    """R_D(x, y, z) = 3/2 int_0^inf dt / ((t + z)^(3/2) sqrt((t + x)(t + y))), to round-off."""
    total = 0.0
    factor = 1.0
    for _ in range(60):
        sx, sy, sz = math.sqrt(x), math.sqrt(y), math.sqrt(z)
        lam = sx * sy + sx * sz + sy * sz
        total += factor / (sz * (z + lam))
        factor *= 0.25
        x, y, z = 0.25 * (x + lam), 0.25 * (y + lam), 0.25 * (z + lam)
        if max(abs(x - z), abs(y - z), abs(x - y)) < 1e-16 * z:
            break
    # The arguments have met: R_D(t, t, t) = t^(-3/2).
    return 3.0 * total + factor * z ** -1.5


def shape_integrals(a, b, c):
    """(alpha0, beta0, gamma0) of Lamb §114."""
    k = 2.0 / 3.0 * a * b * c
    return (k * carlson_rd(b * b, c * c, a * a), k * carlson_rd(c * c, a * a, b * b),
            k * carlson_rd(a * a, b * b, c * c))


def added_inertia(mf, b, c, beta0, gamma0):
    """Added moment of inertia about the axis normal to the semi-axes b and c (Lamb §373)."""
    if b == c:  # no fluid is moved by a rotation about an axis of symmetry
        return 0.0
    d = b * b - c * c
    return mf * d * d * (gamma0 - beta0) / (5.0 * (2.0 * d + (b * b + c * c) * (beta0 - gamma0)))


def ellipsoid(a, b, c, rho_body, rho_fluid):
    vol = 4.0 / 3.0 * math.pi * a * b * c
    mb, mf = rho_body * vol, rho_fluid * vol
    al, be, ga = shape_integrals(a, b, c)
    masses = [mb + mf * g / (2.0 - g) for g in (al, be, ga)]
    inertia = [mb * (b * b + c * c) / 5.0 + added_inertia(mf, b, c, be, ga),
               mb * (c * c + a * a) / 5.0 + added_inertia(mf, c, a, ga, al),
               mb * (a * a + b * b) / 5.0 + added_inertia(mf, a, b, al, be)]
    return {"I1": inertia[0], "I2": inertia[1], "I3": inertia[2],
            "M1": masses[0], "M2": masses[1], "M3": masses[2],
            "shape_integrals": [al, be, ga]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=float)
    ap.add_argument("b", type=float)
    ap.add_argument("c", type=float)
    ap.add_argument("--rho-body", type=float, default=1.0)
    ap.add_argument("--rho-fluid", type=float, default=1.0)
    args = ap.parse_args()
    if min(args.a, args.b, args.c, args.rho_body) <= 0 or args.rho_fluid < 0:
        ap.error("semi-axes and body density must be > 0, fluid density >= 0")
    r = ellipsoid(args.a, args.b, args.c, args.rho_body, args.rho_fluid)
    print(json.dumps({k: float(repr(v)) if not isinstance(v, list) else v for k, v in r.items()},
                     indent=2))


if __name__ == "__main__":
    main()
