#!/usr/bin/env python3
"""results.h5 read back with h5py equals the CSV files and summary.json of the same run.

usage: test_h5_roundtrip.py VIGOR_BINARY SCRATCH_DIR

Runs a Hénon–Heiles section job (several segments, so /sections is appended more than once) in
double and in float precision with both CSV and HDF5 output, and once with HDF5 only; then checks
every column of /sections (sorted by trajectory, crossing), /final, /energy_series and the root
attributes against sections.csv, final.csv, energy_series.csv and summary.json. Double runs must
agree exactly (the CSV prints shortest round-trip text); float runs exactly as float32.
Exit 0 pass, 1 fail, 77 skip (no interpreter with h5py and numpy, or a build without HDF5).
"""
import json
import os
import shutil
import subprocess
import sys

SKIP = 77


def reexec_with_h5py():
    """The Python on PATH may lack h5py while Debian's python3-h5py is in /usr/bin/python3."""
    try:
        import h5py  # noqa: F401
        import numpy  # noqa: F401
        return
    except ImportError:
        pass
    alt = "/usr/bin/python3"
    if os.environ.get("VIGOR_H5_REEXEC") != "1" and os.path.exists(alt) and \
            os.path.realpath(sys.executable) != os.path.realpath(alt):
        os.environ["VIGOR_H5_REEXEC"] = "1"
        os.execv(alt, [alt] + sys.argv)
    print("skip: no Python with h5py and numpy (Debian: python3-h5py)")
    sys.exit(SKIP)


reexec_with_h5py()
import h5py  # noqa: E402
import numpy as np  # noqa: E402

FAILURES = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print("FAIL:", what)


def job(out_dir, precision, csv=True):
    return {
        "model": {"name": "henon_heiles"},
        "integrator": {"name": "verlet", "dt": 0.01},
        "steps": 5000,
        "segment_steps": 700,
        "ensemble": {"section_grid": {"energy": 0.125,
                                      "axes": {"q1": [-0.3, 0.4, 8], "p1": [-0.3, 0.3, 6]}}},
        "section": {"coordinate": "q0", "value": 0.0, "direction": "up"},
        "escape_radius": 0.55,
        "precision": precision,
        "output": {"dir": out_dir, "hdf5": True, "csv": csv},
    }


def run(vigor, scratch, name, spec):
    path = os.path.join(scratch, name + ".json")
    with open(path, "w") as f:
        json.dump(spec, f)
    p = subprocess.run([vigor, "run", path, "--force", "--quiet"], capture_output=True, text=True)
    if p.returncode == 2 and "built without HDF5" in p.stderr:
        print("skip: this vigor was built without HDF5")
        sys.exit(SKIP)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        sys.exit(1)
    return spec["output"]["dir"]


def read_csv(path, dtype):
    with open(path) as f:
        header = f.readline().strip().split(",")
        rows = [line.rstrip("\n").split(",") for line in f]
    cols = {}
    for k, name in enumerate(header):
        cells = [r[k] for r in rows]
        if name == "status":
            cols[name] = np.array(cells)
        elif name in ("trajectory", "crossing", "crossings", "segment"):
            cols[name] = np.array(cells, dtype=np.int64)
        else:
            cols[name] = np.array(cells, dtype=np.float64).astype(dtype)
    return header, cols


def same(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def compare_run(out, real):
    with h5py.File(os.path.join(out, "results.h5"), "r") as h5:
        # /sections in drain order; sorted by (trajectory, crossing) it is sections.csv.
        header, sec = read_csv(os.path.join(out, "sections.csv"), real)
        g = h5["sections"]
        check(sorted(g.keys()) == sorted(header), f"{out}: /sections columns {list(g.keys())}")
        order = np.lexsort((g["crossing"][:], g["trajectory"][:]))
        check(len(order) > 100, f"{out}: only {len(order)} section rows")
        for name in header:
            d = g[name]
            if name not in ("trajectory", "crossing"):
                check(d.dtype == real, f"{out}: /sections/{name} is {d.dtype}, not {real}")
            check(same(d[:][order], sec[name]), f"{out}: /sections/{name} differs from the CSV")
        check(g["t"].chunks is not None and g["t"].compression == "gzip",
              f"{out}: /sections not chunked and compressed")

        header, fin = read_csv(os.path.join(out, "final.csv"), real)
        g = h5["final"]
        check(list(g.keys()) and sorted(g.keys()) == sorted(header),
              f"{out}: /final columns {list(g.keys())} vs {header}")
        for name in header:
            d = g[name]
            if name == "status":
                codes = h5py.check_enum_dtype(d.dtype)
                check(codes is not None, f"{out}: /final/status is not an enumeration")
                names = {v: k for k, v in codes.items()}
                check(list(map(names.get, d[:])) == list(fin[name]),
                      f"{out}: /final/status differs")
                check("escaped" in set(fin[name]) and "ok" in set(fin[name]),
                      f"{out}: the job should mix ok and escaped trajectories")
            elif name == "t":
                # t = step dt is computed on the host in double in both files.
                check(same(d[:], read_csv(os.path.join(out, "final.csv"), np.float64)[1]["t"]),
                      f"{out}: /final/t differs")
            else:
                check(same(d[:], fin[name]), f"{out}: /final/{name} differs from the CSV")

        header, ser = read_csv(os.path.join(out, "energy_series.csv"), np.float64)
        g = h5["energy_series"]
        for name in header:
            check(same(g[name][:], ser[name]), f"{out}: /energy_series/{name} differs")

        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        attrs = h5.attrs
        check(json.loads(attrs["summary"]) == summary, f"{out}: summary attribute differs")
        check(json.loads(attrs["job"]) == summary["job"], f"{out}: job attribute differs")
        for key in ("vigor_version", "backend", "device", "precision", "model", "integrator"):
            check(attrs[key] == summary[key], f"{out}: attribute {key}")
        for key in ("trajectories", "steps", "crossings_total"):
            check(int(attrs[key]) == summary[key], f"{out}: attribute {key}")
        check(float(attrs["wall_seconds"]) == summary["wall_seconds"], f"{out}: wall_seconds")
        n = summary["trajectories"]
        check(all(h5["initial"][s].shape == (n,) for s in ("q0", "q1", "p0", "p1")),
              f"{out}: /initial")
        # The section_grid's states start on the section q0 = 0.
        check(np.all(h5["initial"]["q0"][:] == 0.0), f"{out}: /initial/q0 not on the section")
        return {name: h5["final"][name][:] for name in h5["final"]}, \
            {name: h5["sections"][name][:] for name in h5["sections"]}


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    vigor, scratch = sys.argv[1], sys.argv[2]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    d64 = run(vigor, scratch, "double", job(os.path.join(scratch, "double"), "double"))
    f64, s64 = compare_run(d64, np.float64)
    d32 = run(vigor, scratch, "float", job(os.path.join(scratch, "float"), "float"))
    compare_run(d32, np.float32)
    # HDF5 alone: the same container content, and no CSV of the large tables.
    only = run(vigor, scratch, "h5only", job(os.path.join(scratch, "h5only"), "double", csv=False))
    check(not os.path.exists(os.path.join(only, "sections.csv")) and
          not os.path.exists(os.path.join(only, "final.csv")), "csv: false wrote CSV files")
    with h5py.File(os.path.join(only, "results.h5"), "r") as h5:
        for name, v in f64.items():
            check(same(h5["final"][name][:], v), f"h5only: /final/{name} differs")
        for name, v in s64.items():
            check(same(h5["sections"][name][:], v), f"h5only: /sections/{name} differs")
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print("results.h5 matches the CSV files (double, float, HDF5-only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
