#!/usr/bin/env python3
"""The Henon-Heiles section at E = 1/8 (the demo's figure) from Python: a job dict, one call,
NumPy columns back, and the section drawn on a Matplotlib axes.

    python3 examples/python/henon_heiles_section.py [--small] [--out FIGURE.png]
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import vigor  # noqa: E402
import vigor.plot  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", action="store_true", help="a 20 x 20 grid, 5000 steps")
    parser.add_argument("--out", default="henon_heiles_section.png")
    args = parser.parse_args()
    n, steps = (20, 5000) if args.small else (130, 30000)
    job = {
        "model": {"name": "henon_heiles"},
        "integrator": {"name": "verlet", "dt": 0.01},
        "steps": steps,
        "ensemble": {"section_grid": {"energy": 0.125,
                                      "axes": {"q1": [-0.45, 0.6, n], "p1": [-0.5, 0.5, n]}}},
        "section": {"coordinate": "q0", "value": 0.0, "direction": "up", "max_crossings": 1000},
    }
    res = vigor.run(job)
    print(res)
    fig, ax = plt.subplots(figsize=(6.2, 5.4))
    vigor.plot.section(res, ax=ax, color_by="trajectory")
    fig.savefig(args.out, dpi=150)
    print(f"wrote {args.out}: {len(res.sections['q1'])} section points")


if __name__ == "__main__":
    main()
