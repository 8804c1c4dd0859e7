#!/usr/bin/env python3
"""Work-precision plots of the benchmarks' JSON results: one panel per file, error against cost on
log-log axes, one line per method (its settings sorted by cost), so that the method below and to
the left of another wins at that accuracy.

    build/python-env/bin/python bench/plot_work_precision.py RESULT.json [...] --out FIGURE.png

Reads what bench/work_precision.py, bench/work_precision_outer.py and bench/section_precision.py
write with --json (rows of method, setting, error or median_error, seconds). Needs matplotlib (the
build's python-env has it).
"""
import argparse
import json
import pathlib
import sys


def panel_title(path, meta):
    """What the file measured, from the keys its benchmark writes."""
    if "systems" in meta:
        return f"outer solar system, {meta['systems']} systems, {meta['days']:g} days"
    if "t_end" in meta:
        return f"Hénon–Heiles section points, {meta['orbits']} orbits, t = {meta['t_end']:g}"
    e = meta.get("eccentricity") or [0.1, 0.5]
    ecc = f"e = {e[0]:g}" if e[0] == e[1] else f"e {e[0]:g}–{e[1]:g}"
    return f"Kepler, {meta['orbits']} orbits, {ecc}, {meta['periods']} periods"


def series(rows):
    """{method: [(seconds, error), ...]} sorted by cost."""
    out = {}
    for r in rows:
        err = r.get("error", r.get("median_error"))
        if err is None or not r.get("seconds") or err <= 0:
            continue
        out.setdefault(r["method"], []).append((r["seconds"], err))
    return {m: sorted(v) for m, v in out.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        sys.exit("plot_work_precision: matplotlib is needed (build/python-env has it)")
    n = len(args.results)
    fig, axes = plt.subplots(1, n, figsize=(5.2 * n, 4.4), squeeze=False)
    for ax, path in zip(axes[0], args.results):
        meta = json.loads(pathlib.Path(path).read_text())
        for method, pts in series(meta["rows"]).items():
            xs, ys = zip(*pts)
            style = "-o" if method.startswith("vigor") else "--s"
            ax.loglog(xs, ys, style, ms=3, lw=1.2, label=method)
        ax.set_title(panel_title(path, meta), fontsize=9)
        ax.set_xlabel("seconds")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_ylabel("error")
        ax.grid(True, which="both", lw=0.3, alpha=0.5)
        ax.legend(fontsize=6.5)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
