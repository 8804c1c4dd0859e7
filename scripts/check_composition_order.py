#!/usr/bin/env python3
"""Check the weights of the many-stage compositions of Stormer-Verlet in 50-digit arithmetic.

    python3 scripts/check_composition_order.py        (needs mpmath: pip install mpmath)

For kahan_li8 and sofspa10 (kernels/integrators/kahan_li8.hpp, sofspa10.hpp), the weights are
read from the headers, composed palindromically around the centre weight 1 - 2 sum(half) and run
on the pendulum H = p^2/2 - cos q in 50-digit arithmetic, against the exact solution from mpmath's
Taylor-series ODE solver: the global error must fall like h^p, p the scheme's order (pairwise
slopes within 0.2 of p once asymptotic). A misprinted digit in a weight breaks an order condition
and the slope falls to 2 or below. Also prints the exact q(2), p(2) from q(0) = 1, p(0) = 0 that
tests/test_integrators.cpp uses as its reference, and the errors on that problem.
Exit status 0 when both orders are confirmed, 1 when one is not, 77 (a skip for CTest, which runs
this script as integrators.composition_weights) without mpmath.
"""
import pathlib
import re
import sys

try:
    import mpmath as mp
except ImportError:
    print("check_composition_order: skipped, mpmath is not installed (pip install mpmath)")
    sys.exit(77)

mp.mp.dps = 50
ROOT = pathlib.Path(__file__).resolve().parent.parent


def half_weights(header):
    """The literals of the header's weight table, outermost first."""
    text = (ROOT / "kernels/integrators" / header).read_text()
    body = text[text.index("table() {"):]
    body = body[:body.index("}};")]
    return [mp.mpf(v) for v in re.findall(r"^\s*(-?[0-9.]+),$", body, re.M)]


def composition(half):
    return half + [1 - 2 * sum(half)] + half[::-1]


def verlet(q, p, h):
    p = p - h / 2 * mp.sin(q)
    q = q + h * p
    return q, p - h / 2 * mp.sin(q)


def run(weights, T, n, q, p):
    h = mp.mpf(T) / n
    for _ in range(n):
        for w in weights:
            q, p = verlet(q, p, w * h)
    return q, p


def exact(q0, p0, T):
    return mp.odefun(lambda t, y: [y[1], -mp.sin(y[0])], 0, [q0, p0])(T)


def main():
    ok = True
    q0, p0 = mp.mpf(1), mp.mpf("0.5")
    ref = exact(q0, p0, 1)
    for header, order in [("kahan_li8.hpp", 8), ("sofspa10.hpp", 10)]:
        w = composition(half_weights(header))
        print(f"{header}: {len(w)} stages, centre weight {mp.nstr(w[len(w) // 2], 25)}")
        prev = None
        for n in [2, 4, 8, 16]:
            q, p = run(w, 1, n, q0, p0)
            err = max(abs(q - ref[0]), abs(p - ref[1]))
            line = f"  T = 1, h = 1/{n}: error {mp.nstr(err, 4)}"
            if prev is not None:
                slope = mp.log(prev / err, 2)
                line += f", slope {mp.nstr(slope, 4)}"
                if n == 16 and abs(slope - order) > 0.2:
                    ok = False
                    line += f"  <- not order {order}"
            print(line)
            prev = err
    ex = exact(mp.mpf(1), mp.mpf(0), 2)
    print(f"exact q(2), p(2) from q(0) = 1, p(0) = 0: {mp.nstr(ex[0], 25)}, {mp.nstr(ex[1], 25)}")
    for header, steps in [("kahan_li8.hpp", [4, 5, 6, 8]), ("sofspa10.hpp", [4, 5, 6])]:
        w = composition(half_weights(header))
        errs = []
        for n in steps:
            q, p = run(w, 2, n, mp.mpf(1), mp.mpf(0))
            errs.append(max(abs(q - ex[0]), abs(p - ex[1])))
        print(f"  {header}, T = 2, steps {steps}: errors " + ", ".join(mp.nstr(e, 3) for e in errs))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
