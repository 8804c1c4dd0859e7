#!/usr/bin/env python3
"""Writes kernels/core/pow_table.hpp: the table of pow's logarithm (kernels/core/pow.hpp).

m in [sqrt(1/2), sqrt(2)) is cut into 128 intervals of equal length in bit space (the top 7
significand bits of bits(m) - bits(sqrt(1/2))). Per interval: invc = 1/c rounded to 8 significant
bits, c the interval's centre (exactly 1 for the interval that holds 1, so that log x near 1 keeps
its relative accuracy), and log(1/invc) = hi + lo to twice the type's precision (mpmath, 300 bits).
With 8 bits, m invc - 1 fits the significand and one FMA computes it exactly; the script checks
|m invc - 1| < 2^-7 over every interval. Run: python3 scripts/pow_log_table.py > kernels/core/pow_table.hpp
(needs mpmath), then clang-format the file.
"""
import struct
import sys

import mpmath

mpmath.mp.prec = 300


def from_bits(u, kind):
    if kind == "double":
        return struct.unpack("<d", struct.pack("<Q", u))[0]
    return struct.unpack("<f", struct.pack("<I", u))[0]


def nearest(v, kind):
    """v rounded to the nearest double or float (through a 300-bit value, no double rounding)."""
    bits = 53 if kind == "double" else 24
    m, e = mpmath.frexp(v)
    r = mpmath.ldexp(mpmath.nint(mpmath.ldexp(m, bits)), e - bits)
    x = float(r)
    assert mpmath.mpf(x) == r
    return x


def hexfloat(x, kind):
    if x == 0:
        return "0.0" if kind == "double" else "0.0f"
    s = float.hex(x)
    mant, exp = s.split("p")
    if kind == "float":
        mant = mant.rstrip("0").rstrip(".")
        return mant + "p" + exp + "f"
    return s


def rows(kind):
    sqrt_half, shift = (0x3FE6A09E667F3BCD, 45) if kind == "double" else (0x3F3504F3, 16)
    worst = mpmath.mpf(0)
    out = []
    for i in range(128):
        lo = mpmath.mpf(from_bits(sqrt_half + (i << shift), kind))
        hi = mpmath.mpf(from_bits(sqrt_half + ((i + 1) << shift), kind))
        if lo <= 1 < hi:
            invc = mpmath.mpf(1)
        else:
            m, e = mpmath.frexp(2 / (lo + hi))
            invc = mpmath.ldexp(mpmath.nint(mpmath.ldexp(m, 8)), e - 8)
        worst = max(worst, abs(lo * invc - 1), abs(hi * invc - 1))
        log_c = -mpmath.log(invc)
        h = nearest(log_c, kind)
        out.append((nearest(invc, kind), h, nearest(log_c - mpmath.mpf(h), kind)))
    assert worst < mpmath.mpf(2) ** -7, worst
    return out, worst


def main():
    print("/// @file pow_table.hpp")
    print("/// @brief The table of pow's logarithm (pow.hpp): per interval of m, 1/c (8 bits) and")
    print("/// log c in two words. Written by scripts/pow_log_table.py; do not edit.")
    print("#pragma once")
    print()
    for kind, name in (("double", "DOUBLE"), ("float", "FLOAT")):
        table, worst = rows(kind)
        print(f"// {kind}: |m/c - 1| <= {mpmath.nstr(worst, 4)} over every interval.")
        print(f"#define VIGOR_POW_LOG_TABLE_{name} \\")
        for i, (a, b, c) in enumerate(table):
            sep = "," if i + 1 < len(table) else ""
            print(f"  {hexfloat(a, kind)}, {hexfloat(b, kind)}, {hexfloat(c, kind)}{sep} \\"
                  if i + 1 < len(table) else
                  f"  {hexfloat(a, kind)}, {hexfloat(b, kind)}, {hexfloat(c, kind)}")
        print()


if __name__ == "__main__":
    sys.exit(main())
