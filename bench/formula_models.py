#!/usr/bin/env python3
"""A formula model against the built-in model it restates, on the CPU or a GPU: Hénon–Heiles,
Verlet, FP64 and FP32, section on and off, through `vigor run` (the rate summary.json reports: the
engine's kernel seconds); and the compile latency of the formula model's plugin, cold (an empty
cache) and cached (what a cached model adds to a run).

    python3 bench/formula_models.py BUILD [--backend cpu|cuda] [--trajectories 100000]
                                    [--steps 10000] [--rounds 3] [--json FILE]

The machine is shared and noisy: the formula and built-in runs alternate within every round, and
the table shows the best rate of the rounds for each (contention only slows a run down) with the
median beside it.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

POTENTIAL = "(q0^2 + q1^2)/2 + a*q0^2*q1 + b*q1^3"
PARAMS = {"a": 1.0, "b": -0.3333333333333333}


def job(formula, section, precision, n, steps, out, backend="cpu"):
    if formula:
        model = {"formula": {"name": "bench_henon_heiles", "dof": 2, "potential": POTENTIAL},
                 "params": PARAMS}
    else:
        model = {"name": "henon_heiles", "params": PARAMS}
    j = {"model": model, "integrator": {"name": "verlet", "dt": 0.01}, "steps": steps,
         "ensemble": {"random_box": {"lo": [-0.01, -0.3, 0.2, -0.1],
                                     "hi": [0.01, 0.3, 0.35, 0.1], "count": n, "seed": 7}},
         "backend": backend, "precision": precision, "output": {"dir": out}}
    if section:
        j["section"] = {"coordinate": "q0", "value": 0.0, "direction": "up",
                        "max_crossings": 100}
    return j


def run(vigor, path, env):
    t0 = time.time()
    p = subprocess.run([vigor, "run", str(path), "--force", "--quiet"], capture_output=True,
                       text=True, env=env)
    wall = time.time() - t0
    if p.returncode != 0:
        sys.exit(f"vigor run {path} failed ({p.returncode}): {p.stderr[-2000:]}")
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--backend", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--trajectories", type=int, default=100000)
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    vigor = str(pathlib.Path(args.build) / "vigor")
    rows = []
    with tempfile.TemporaryDirectory() as t:
        tmp = pathlib.Path(t)
        env = dict(os.environ, VIGOR_CACHE_DIR=str(tmp / "cache"))
        # Compile latency: cold (empty cache: parse, generate, compile, load, run one step) and
        # cached (the same run again, against the built-in model's run of the same size).
        latency = {}
        for precision in ("double", "float"):
            tiny_f = tmp / f"tiny_f_{precision}.json"
            tiny_b = tmp / f"tiny_b_{precision}.json"
            tiny_f.write_text(json.dumps(job(True, False, precision, 1, 1, str(tmp / "o"),
                                             args.backend)))
            tiny_b.write_text(json.dumps(job(False, False, precision, 1, 1, str(tmp / "o"),
                                             args.backend)))
            cold = run(vigor, tiny_f, env)
            cached = min(run(vigor, tiny_f, env) for _ in range(5))
            builtin = min(run(vigor, tiny_b, env) for _ in range(5))
            latency[precision] = {"cold_s": cold, "cached_run_s": cached, "builtin_run_s": builtin,
                                  "cached_overhead_s": cached - builtin}
            print(f"{precision}: cold compile + run {cold:.1f} s; cached run {cached:.3f} s, "
                  f"built-in {builtin:.3f} s (best of 5)", flush=True)
        for precision in ("double", "float"):
            for section in (False, True):
                rates = {True: [], False: []}
                for k in range(args.rounds):
                    for formula in ((True, False) if k % 2 == 0 else (False, True)):
                        out = tmp / "out"
                        path = tmp / "job.json"
                        path.write_text(json.dumps(job(formula, section, precision,
                                                       args.trajectories, args.steps, str(out),
                                                       args.backend)))
                        run(vigor, path, env)
                        s = json.loads((out / "summary.json").read_text())
                        rates[formula].append(s["trajectory_steps_per_second"])
                f, b = max(rates[True]), max(rates[False])
                row = {"precision": precision, "section": section, "formula_best": f,
                       "builtin_best": b, "ratio_best": f / b,
                       "ratio_median": statistics.median(rates[True]) /
                       statistics.median(rates[False]),
                       "formula": rates[True], "builtin": rates[False]}
                rows.append(row)
                print(f"{precision} section={'on ' if section else 'off'}: formula {f:.3g}, "
                      f"built-in {b:.3g} traj-steps/s (best of {args.rounds}); "
                      f"ratio {f / b:.3f} (medians {row['ratio_median']:.3f})", flush=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(
            {"build": args.build, "backend": args.backend, "trajectories": args.trajectories, "steps": args.steps,
             "rounds": args.rounds, "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "latency": latency, "rates": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
