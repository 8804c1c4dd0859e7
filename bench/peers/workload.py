"""The peer-benchmark workload, shared by the driver and every Python peer.

Störmer–Verlet (kick-drift-kick leapfrog) on Hénon–Heiles,

    H = (px^2 + py^2)/2 + (x^2 + y^2)/2 + x^2 y - y^3/3,

at E = 1/8 on the section x = 0 (y, py drawn from a fixed counter-based sequence inside the allowed
region, px > 0 from H = E): a mix of regular and chaotic orbits, no escapes. The same initial states
(float64, shape (N, 4), columns q0 q1 p0 p1) go to every peer; FP32 peers round them once.

FLOPs per step, counting what the algorithm needs (a fused multiply-add counts 2): the force
-grad V at the new position, ax = -(x + 2 x y), ay = -(y + x^2 - y^2): 9 (one per step: the force at
the end of a step is the next step's first); a drift q += h p: 4; Verlet's two half kicks
p += (h/2) a: 2 x 4, total 21; symplectic Euler's one kick p += h a: 4, total 17. vigor also
evaluates H every step (its energy-error monitor); that work is not counted, so vigor's FLOP/s are
a lower bound.
"""
import json
import os
import sys
import time

import numpy as np

ENERGY = 0.125
DT = 0.01
STEPS = 1000
FLOPS_PER_STEP = {"verlet": 21, "symplectic_euler_b": 17}


def initial_states(n, seed=12345):
    """n states on H = ENERGY, x = 0: (y, py) from a Weyl (golden-ratio) sequence mapped into the
    allowed region by rejection; reproducible and independent of the platform."""
    out = np.empty((n, 4))
    k = 0
    i = np.arange(4 * n + 64, dtype=np.float64)
    while k < n:
        u = np.modf((i + seed) * 0.6180339887498949)[0]
        v = np.modf((i + seed) * 0.7548776662466927)[0]
        y = -0.4 + 1.1 * u
        py = -0.5 + 1.0 * v
        V = 0.5 * y * y - y ** 3 / 3.0
        px2 = 2.0 * (ENERGY - V) - py * py
        ok = px2 > 1e-6
        take = min(n - k, int(ok.sum()))
        sel = np.nonzero(ok)[0][:take]
        out[k:k + take, 0] = 0.0
        out[k:k + take, 1] = y[sel]
        out[k:k + take, 2] = np.sqrt(px2[sel])
        out[k:k + take, 3] = py[sel]
        k += take
        i = i + len(i)
    return out


def peer_args(argv=None):
    """Command line every Python peer takes (the driver passes it)."""
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--variant", required=True)
    p.add_argument("--precision", choices=["fp64", "fp32"], required=True)
    p.add_argument("--init", required=True, help=".npy of initial states (N, 4), float64")
    p.add_argument("--out", required=True, help=".npy to write the final states to")
    p.add_argument("--steps", type=int, default=STEPS)
    p.add_argument("--dt", type=float, default=DT)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--device", default="auto", help="auto, cpu or gpu")
    return p.parse_args(argv)


def report(kernel_s, end_to_end_s, device, notes=""):
    """What a peer prints on its last stdout line: one JSON object the driver reads."""
    print(json.dumps({"kernel_s": kernel_s, "end_to_end_s": end_to_end_s, "device": device,
                      "notes": notes}))
    sys.stdout.flush()


def timed(fn):
    t = time.perf_counter()
    r = fn()
    return r, time.perf_counter() - t
