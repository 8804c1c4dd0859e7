#!/usr/bin/env python3
"""The body-in-fluid model's default I and M are Lamb's for its stated ellipsoid.

    tests/models/check_ellipsoid_added_mass.py VIGOR

Checks scripts/ellipsoid_added_mass.py against closed forms (the sphere; the prolate spheroid's shape
integrals, Lamb §115) and, where mpmath is installed, against direct quadrature of Lamb's integrals; then that
`vigor list` reports for kirchhoff_se3 the I1..I3, M1..M3 the script computes for the ellipsoid
models/kirchhoff_se3.hpp states: semi-axes (1, 0.6, 0.3), rho_body = rho_fluid = 3 / (4 pi abc). Exit 0 pass,
1 fail.
"""
import importlib.util
import math
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
spec = importlib.util.spec_from_file_location("added_mass", os.path.join(REPO, "scripts", "ellipsoid_added_mass.py"))
am = importlib.util.module_from_spec(spec)
spec.loader.exec_module(am)

EPS = 2.220446049250313e-16
failures = []


def close(name, got, want, rel):
    if not abs(got - want) <= rel * abs(want):
        failures.append(f"{name}: {got!r} vs {want!r} (relative {abs(got - want) / abs(want):.2e} > {rel:.1e})")


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 1
    # Sphere: alpha0 = 2/3, added mass half the displaced fluid, no added inertia.
    s = am.ellipsoid(1.0, 1.0, 1.0, 1.0, 1.0)
    vol = 4.0 / 3.0 * math.pi
    for g in s["shape_integrals"]:
        close("sphere alpha0", g, 2.0 / 3.0, 4 * EPS)
    close("sphere M1", s["M1"], 1.5 * vol, 4 * EPS)
    close("sphere I1", s["I1"], 0.4 * vol, 4 * EPS)
    # Prolate spheroid a > b = c, eccentricity e (Lamb §115): alpha0 = 2 (1 - e^2) / e^3 (atanh(e) - e),
    # beta0 = gamma0 = 1/e^2 - (1 - e^2) / (2 e^3) ln((1 + e) / (1 - e)).
    for a, b in ((2.0, 1.0), (5.0, 1.0), (1.0, 0.9)):
        e = math.sqrt(1 - (b / a) ** 2)
        alpha0 = 2 * (1 - e * e) / e ** 3 * (math.atanh(e) - e)
        beta0 = 1 / (e * e) - (1 - e * e) / (2 * e ** 3) * math.log((1 + e) / (1 - e))
        got = am.shape_integrals(a, b, b)
        close(f"prolate {a}:{b} alpha0", got[0], alpha0, 64 * EPS / e ** 3)
        close(f"prolate {a}:{b} beta0", got[1], beta0, 64 * EPS / e ** 3)
    # Every ellipsoid: alpha0 + beta0 + gamma0 = 2.
    for abc in ((1.0, 0.6, 0.3), (3.0, 2.0, 1.0), (1.0, 0.5, 0.25)):
        close(f"sum of shape integrals {abc}", sum(am.shape_integrals(*abc)), 2.0, 8 * EPS)
    try:
        import mpmath
    except ImportError:
        mpmath = None
        print("mpmath not installed: the quadrature check is skipped")
    if mpmath:
        mpmath.mp.dps = 30
        a, b, c = 1.0, 0.6, 0.3
        delta = lambda l: mpmath.sqrt((a * a + l) * (b * b + l) * (c * c + l))
        for s2, got in zip((a * a, b * b, c * c), am.shape_integrals(a, b, c)):
            ref = a * b * c * mpmath.quad(lambda l: 1 / ((s2 + l) * delta(l)), [0, 1, 10, 100, mpmath.inf])
            close(f"quadrature, semi-axis^2 {s2}", got, float(ref), 16 * EPS)
    # The model's defaults.
    rho = 3.0 / (4.0 * math.pi * 1.0 * 0.6 * 0.3)
    want = am.ellipsoid(1.0, 0.6, 0.3, rho, rho)
    text = subprocess.run([argv[1], "list"], capture_output=True, text=True, check=True).stdout
    block = text.split("\n  kirchhoff_se3  (", 1)
    if len(block) != 2:
        failures.append("vigor list does not list kirchhoff_se3")
    else:
        defaults = {}
        for line in re.split(r"\n  (?=\S)", block[1])[0].splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "default":
                defaults[parts[0]] = float(parts[2])
        for name in ("I1", "I2", "I3", "M1", "M2", "M3"):
            if name not in defaults:
                failures.append(f"vigor list shows no default for {name}")
            else:
                close(f"default {name}", defaults[name], want[name], 4 * EPS)
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("PASS: Lamb's added masses (sphere, prolate spheroids, quadrature) and kirchhoff_se3's defaults")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
