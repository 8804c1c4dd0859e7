#!/usr/bin/env python3
"""A MEGNO chaos map of the Henon-Heiles section at E = 1/8, with the initial states made in NumPy:
a grid in (q1, p1) on q0 = 0, p0 > 0 solved from H = E, handed to vigor.run as `states=`. MEGNO
tends to 2 on regular orbits and grows linearly with time on chaotic ones (SCIENCE.md).

    python3 examples/python/megno_map.py [--small] [--out FIGURE.png]
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import vigor  # noqa: E402

ENERGY = 0.125


def section_states(q1, p1):
    """States (q0, q1, p0, p1) with q0 = 0 and p0 >= 0 on H = E; NaN-free rows only."""
    Q1, P1 = np.meshgrid(q1, p1, indexing="xy")
    v = 0.5 * Q1**2 - Q1**3 / 3.0  # V(0, q1) of Henon-Heiles (a = 1, b = -1/3)
    p0_sq = 2.0 * (ENERGY - v) - P1**2
    allowed = p0_sq >= 0
    states = np.column_stack([np.zeros(allowed.sum()), Q1[allowed], np.sqrt(p0_sq[allowed]),
                              P1[allowed]])
    return states, allowed


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", action="store_true", help="a 24 x 24 grid, 5000 steps")
    parser.add_argument("--out", default="megno_map.png")
    args = parser.parse_args()
    n, steps = (24, 5000) if args.small else (200, 100000)
    q1, p1 = np.linspace(-0.45, 0.65, n), np.linspace(-0.5, 0.5, n)
    states, allowed = section_states(q1, p1)
    job = {"model": {"name": "henon_heiles"}, "integrator": {"name": "verlet", "dt": 0.01},
           "steps": steps, "diagnostics": {"tangent": True}, "escape_radius": 3.0}
    res = vigor.run(job, states=states)
    megno = np.full(allowed.shape, np.nan)
    megno[allowed] = res.final["megno"]
    fig, ax = plt.subplots(figsize=(6.2, 5.4))
    image = ax.pcolormesh(q1, p1, megno, vmin=0, vmax=8, cmap="viridis", shading="nearest")
    fig.colorbar(image, ax=ax, label="MEGNO at t = %g" % (steps * 0.01))
    ax.set_xlabel("q1")
    ax.set_ylabel("p1")
    ax.set_title(f"Henon-Heiles, E = 1/8: {len(states)} orbits, {res.summary['wall_seconds']:.2g} s")
    fig.savefig(args.out, dpi=150)
    regular = np.isfinite(megno) & (np.abs(megno - 2) < 0.2)
    print(f"wrote {args.out}: {regular.sum()} of {allowed.sum()} orbits have MEGNO within 0.2 of 2")


if __name__ == "__main__":
    main()
