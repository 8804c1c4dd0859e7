#!/usr/bin/env python3
"""What the Python package adds to a run: the cost of vigor.run beyond the engine's own time on a
small job, and the rate at which a 10^6-trajectory run's final table becomes NumPy arrays.

    build/python-env/bin/python bench/python_overhead.py [--rounds 30] [--json FILE]

(after `make test`, whose virtual environment imports the build's package; or any Python with
the package installed). Definitions:
  overhead  = wall time of vigor.run - summary["wall_seconds"] (the engine's construction and
              integration, which the command line reports too) - the parse (vigor.validate of the
              same job: JSON, checks, the ensemble's generation, which the CLI pays as well).
              What is left is the tables, the conversion to NumPy and the Python around them.
  rate      = bytes of the final table's arrays / that overhead, for 10^6 trajectories.
  copy rate = the same bytes copied by NumPy into a fresh array (np.copy: the memory bandwidth a
              conversion can reach, page faults of the new array included), timed in the same
              round right after the large run.
The machine is shared and noisy: small and large runs alternate within a round; medians and the
best of the rounds are reported.
"""
import argparse
import json
import statistics
import time

import numpy as np

import vigor

SMALL = {
    "model": {"name": "henon_heiles"},
    "integrator": {"name": "verlet", "dt": 0.01},
    "steps": 1000,
    "ensemble": {"section_grid": {"energy": 0.125,
                                  "axes": {"q1": [-0.3, 0.4, 4], "p1": [-0.2, 0.2, 3]}}},
    "section": {"coordinate": "q0", "value": 0.0, "direction": "up"},
}
LARGE = {
    "model": {"name": "pendulum"},
    "integrator": {"name": "verlet", "dt": 0.01},
    "steps": 2,
    "ensemble": {"random_box": {"lo": [-1, -1], "hi": [1, 1], "count": 1000000, "seed": 1}},
}


def measure(job):
    t0 = time.perf_counter()
    vigor.validate(job)
    parse = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = vigor.run(job, progress=False)
    wall = time.perf_counter() - t0
    engine = res.summary["wall_seconds"]
    nbytes = sum(a.nbytes for a in res.final.values())
    return {"wall": wall, "engine": engine, "parse": parse,
            "overhead": wall - engine - parse, "bytes": nbytes}


def copy_rate(nbytes):
    src = np.ones(nbytes // 8)
    t0 = time.perf_counter()
    dst = np.copy(src)
    seconds = time.perf_counter() - t0
    del dst
    return nbytes / seconds


def stats(values):
    return {"median": statistics.median(values), "best": min(values)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--json")
    args = ap.parse_args()
    measure(SMALL)  # warm: first-use costs (registry, OpenMP threads) out of the rounds
    small, large, copies = [], [], []
    for r in range(args.rounds):
        small.append(measure(SMALL))
        if r % 3 == 0:
            large.append(measure(LARGE))
            copies.append(copy_rate(large[-1]["bytes"]))
    out = {
        "small_overhead_s": stats([m["overhead"] for m in small]),
        "small_engine_s": stats([m["engine"] for m in small]),
        "small_parse_s": stats([m["parse"] for m in small]),
        "large_overhead_s": stats([m["overhead"] for m in large]),
        "large_final_bytes": large[0]["bytes"],
        "large_rate_bytes_per_s": stats([m["bytes"] / m["overhead"] for m in large]),
        "numpy_copy_bytes_per_s": {"median": statistics.median(copies), "best": max(copies)},
        "rounds": {"small": len(small), "large": len(large)},
    }
    # The best rate is the largest; stats() takes the minimum.
    out["large_rate_bytes_per_s"]["best"] = max(m["bytes"] / m["overhead"] for m in large)
    out["rate_of_numpy_copy"] = {
        k: out["large_rate_bytes_per_s"][k] / out["numpy_copy_bytes_per_s"][k]
        for k in ("median", "best")}
    print(f"small job (12 trajectories x 1000 steps): overhead median "
          f"{out['small_overhead_s']['median'] * 1e3:.2f} ms, best "
          f"{out['small_overhead_s']['best'] * 1e3:.2f} ms (engine "
          f"{out['small_engine_s']['median'] * 1e3:.2f} ms, parse "
          f"{out['small_parse_s']['median'] * 1e3:.2f} ms)")
    print(f"10^6 final rows ({out['large_final_bytes'] / 1e6:.0f} MB of arrays): after the engine "
          f"{out['large_overhead_s']['median'] * 1e3:.1f} ms median, "
          f"{out['large_rate_bytes_per_s']['median'] / 1e9:.2f} GB/s "
          f"(best {out['large_rate_bytes_per_s']['best'] / 1e9:.2f} GB/s); NumPy copy of the same "
          f"bytes {out['numpy_copy_bytes_per_s']['median'] / 1e9:.2f} GB/s median "
          f"(best {out['numpy_copy_bytes_per_s']['best'] / 1e9:.2f}): "
          f"{out['rate_of_numpy_copy']['median']:.2f}x of it median, "
          f"{out['rate_of_numpy_copy']['best']:.2f}x best")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
