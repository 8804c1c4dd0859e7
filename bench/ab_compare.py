#!/usr/bin/env python3
"""Two builds' CPU rates side by side, interleaved: vigor-bench-cpu and vigor-bench --backend cpu
of an old and a new build, round after round (the order alternating), medians per workload.

    python3 bench/ab_compare.py OLD_BUILD NEW_BUILD [--rounds 5] [--json FILE] [--quick]

The machine is shared and noisy: a build measured alone minutes after the other sees another
machine. Alternating the two in every round spreads the noise over both; the median over rounds
of each rate, and the ratio new / old of the medians, are what the table shows (the spread, as
min-max over rounds, beside it). The ratio of the best rates (best-of-N) is shown too: contention
on a shared machine only ever slows a run down, so the best of several rounds is the rate least
disturbed by it, and with many rounds it is the steadier of the two statistics. Both benchmarks also check their own results; a failed check
aborts the comparison.
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")


def rates_cpu_suite(j):
    """{metric: rate} of one vigor-bench-cpu JSON."""
    out = {}
    for r in j["results"]:
        key = f"bench-cpu {r['workload']} {r['precision']}"
        out[key + " kernel"] = r["engine"]["traj_steps_per_s_kernel"]
        out[key + " wall"] = r["engine"]["traj_steps_per_s_wall"]
    return out


def rates_bench(j):
    """{metric: rate} of one vigor-bench --backend cpu JSON."""
    out = {}
    for r in j.get("results", []):
        key = f"bench n={r['n']} {r['precision']}"
        out[key + " kernel"] = r["engine"]["kernel_traj_steps_per_s"]
        out[key + " wall"] = r["engine"]["traj_steps_per_s"]
    for r in j.get("implicit", []):
        key = f"bench {r['case']} {r['precision']}"
        out[key + " kernel"] = r["kernel_traj_steps_per_s"]
        out[key + " wall"] = r["traj_steps_per_s"]
    return out


def measure(build, tmp, quick):
    build = pathlib.Path(build)
    a, b = tmp / "cpu.json", tmp / "bench.json"
    cpu = [str(build / "bench/vigor-bench-cpu"), "--json", str(a)]
    bench = [str(build / "bench/vigor-bench"), "--backend", "cpu", "--json", str(b)]
    if quick:
        cpu.append("--quick")
        bench.append("--quick")
    run(cpu)
    run(bench)
    rates = rates_cpu_suite(json.loads(a.read_text()))
    rates.update(rates_bench(json.loads(b.read_text())))
    return rates


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true", help="the benchmarks' --quick sizes")
    args = ap.parse_args()
    samples = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as t:
        tmp = pathlib.Path(t)
        for k in range(args.rounds):
            order = ("old", "new") if k % 2 == 0 else ("new", "old")
            for which in order:
                t0 = time.time()
                samples[which].append(measure(getattr(args, which), tmp, args.quick))
                print(f"round {k + 1}/{args.rounds} {which}: {time.time() - t0:.0f} s", flush=True)
    keys = [k for k in samples["old"][0] if all(k in s for s in samples["old"] + samples["new"])]
    rows = []
    print(f"\n{'metric':58} {'old median':>12} {'new median':>12} {'new/old':>8} {'best':>6}"
          "  spread old / new")
    for k in keys:
        o = [s[k] for s in samples["old"]]
        n = [s[k] for s in samples["new"]]
        mo, mn = statistics.median(o), statistics.median(n)
        rows.append({"metric": k, "old_median": mo, "new_median": mn, "ratio": mn / mo,
                     "ratio_best": max(n) / max(o), "old": o, "new": n})
        print(f"{k:58} {mo:12.4g} {mn:12.4g} {mn / mo:8.3f} {max(n) / max(o):6.3f}  "
              f"{min(o):.3g}-{max(o):.3g} / {min(n):.3g}-{max(n):.3g}")
    worst = min(rows, key=lambda r: r["ratio"])
    print(f"\nlowest new/old: {worst['ratio']:.3f} ({worst['metric']})")
    worst = min(rows, key=lambda r: r["ratio_best"])
    print(f"lowest new/old of the best rates: {worst['ratio_best']:.3f} ({worst['metric']})")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(
            {"old": args.old, "new": args.new, "rounds": args.rounds, "statistic": "median; ratio_best: best-of-rounds",
             "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": rows},
            indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
