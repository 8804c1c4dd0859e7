#!/usr/bin/env python3
"""Test of python/vigor/plot.py (what `vigor plot` runs) on tiny vigor runs.

Usage: test_vigor_plot.py VIGOR_BIN SCRATCH_DIR
Exit status: 0 pass, 1 fail, 77 skipped (this interpreter has no numpy/matplotlib).

Runs three small jobs with --threads 1 (a Henon-Heiles section, the same with tangent-map
diagnostics, a pendulum loop ensemble), plots them and checks: the expected figures and only those,
valid PNG headers with sensible sizes, a section.png that is not blank, SVGs with --svg, the
energy series panel, thinning to --max-points, the default section axes, and that bad inputs exit 2
with an `error:` message and no traceback; with h5py and a vigor built with HDF5, the same
figures from a run that wrote results.h5 and no CSVs.
"""
import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys

try:
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.image as mimage
except ImportError:
    print("numpy or matplotlib missing in this interpreter: skipped")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python", "vigor", "plot.py")

GRID = {"energy": 0.125, "axes": {"q1": [-0.45, 0.6, 10], "p1": [-0.5, 0.5, 10]}}
JOBS = {
    "section": {
        "model": {"name": "henon_heiles"},
        "integrator": {"name": "verlet", "dt": 0.01},
        "steps": 6000,
        "ensemble": {"section_grid": GRID},
        "section": {"coordinate": "q0", "value": 0.0, "direction": "up", "max_crossings": 200},
    },
    "tangent": {
        "model": {"name": "henon_heiles"},
        "integrator": {"name": "verlet", "dt": 0.01},
        "steps": 4000,
        "segment_steps": 1000,
        "ensemble": {"section_grid": GRID},
        "section": {"coordinate": "q0", "value": 0.0, "direction": "up", "max_crossings": 200},
        "diagnostics": {"tangent": True},
        "escape_radius": 3.0,
    },
    "loop": {
        "model": {"name": "pendulum"},
        "integrator": {"name": "verlet", "dt": 0.02},
        "steps": 2000,
        "ensemble": {"loop": {"center": [0.2, 0.0], "plane": ["q0", "p0"], "shape": "circle",
                              "radius": 0.05, "points": 64, "every": 250}},
    },
}
EXPECTED = {
    "section": {"section", "energy", "throughput"},
    "tangent": {"section", "chaos_map", "energy", "symplectic", "throughput"},
    "loop": {"section", "energy", "invariants", "throughput"},
}
ALL_FIGURES = {"section", "chaos_map", "energy", "symplectic", "invariants", "throughput"}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}")
    return condition


def plot(args, env=None):
    r = subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True, env=env)
    return r.returncode, r.stdout, r.stderr


def png_size(path):
    """(width, height) from the IHDR chunk, or None when the file is not a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def load_module():
    spec = importlib.util.spec_from_file_location("vigor_plot", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_jobs(vigor, scratch):
    out = {}
    for name, job in JOBS.items():
        job_path = os.path.join(scratch, f"{name}.json")
        with open(job_path, "w") as f:
            json.dump(job, f)
        out[name] = os.path.join(scratch, name)
        r = subprocess.run([vigor, "run", job_path, "--out", out[name], "--force", "--threads", "1",
                            "--quiet"], capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout, r.stderr)
            raise SystemExit(f"FAIL: vigor run {name} exited {r.returncode}")
    return out


def check_figures(name, out_dir, svg):
    plot_dir = os.path.join(out_dir, "plots")
    code, stdout, stderr = plot([out_dir] + (["--svg"] if svg else []))
    if not check(code == 0, f"{name}: vigor_plot exited {code}: {stderr}"):
        return
    check("Traceback" not in stderr, f"{name}: traceback on stderr: {stderr}")
    exts = ("png", "svg") if svg else ("png",)
    expected = {os.path.join(plot_dir, f"{fig}.{e}") for fig in EXPECTED[name] for e in exts}
    printed = set(stdout.split())
    check(printed == expected, f"{name}: printed {sorted(printed)}, expected {sorted(expected)}")
    for fig in ALL_FIGURES - EXPECTED[name]:
        check(not os.path.exists(os.path.join(plot_dir, f"{fig}.png")),
              f"{name}: {fig}.png written without its data")
    for fig in EXPECTED[name]:
        path = os.path.join(plot_dir, f"{fig}.png")
        if not check(os.path.exists(path), f"{name}: {path} missing"):
            continue
        size = png_size(path)
        if check(size is not None, f"{name}: {path} is not a PNG"):
            w, h = size
            check(300 <= w <= 6000 and 200 <= h <= 4000, f"{name}: {path} is {w} x {h}")
        if svg:
            svg_path = os.path.join(plot_dir, f"{fig}.svg")
            if check(os.path.exists(svg_path), f"{name}: {svg_path} missing"):
                with open(svg_path, "rb") as f:
                    text = f.read()
                check(b"<svg" in text[:2000], f"{name}: {svg_path} is not an SVG")
                check(len(text) < 5_000_000, f"{name}: {svg_path} is {len(text)} bytes")
    section = os.path.join(plot_dir, "section.png")
    if os.path.exists(section):
        check(os.path.getsize(section) > 20_000, f"{name}: section.png is only "
              f"{os.path.getsize(section)} bytes")
        # Axes, labels and grid are grey; the points are coloured. Left of any colorbar, an
        # empty section plot has no coloured pixel at all, these plots about 1 %.
        img = np.asarray(mimage.imread(section), dtype=float)[..., :3]
        plot_area = img[:, :int(0.75 * img.shape[1])]
        coloured = ((plot_area.max(axis=2) - plot_area.min(axis=2)) > 0.25).mean()
        check(img.std() > 0.05 and coloured > 0.002,
              f"{name}: section.png looks blank (std {img.std():.3g}, coloured {coloured:.3g})")


def check_hdf5(vigor, scratch):
    """With h5py here and a vigor built with HDF5: a run with results.h5 and no CSVs plots the
    same figures (the chaos map on the grid of initial points)."""
    if importlib.util.find_spec("h5py") is None:
        print("h5py missing: results.h5 checks skipped")
        return
    job = dict(JOBS["tangent"], output={"hdf5": True, "csv": False})
    job_path = os.path.join(scratch, "hdf5.json")
    with open(job_path, "w") as f:
        json.dump(job, f)
    out_dir = os.path.join(scratch, "hdf5")
    r = subprocess.run([vigor, "run", job_path, "--out", out_dir, "--force", "--threads", "1",
                        "--quiet"], capture_output=True, text=True)
    if r.returncode == 2:
        print(f"vigor refuses HDF5 output here: results.h5 checks skipped ({r.stderr.strip()})")
        return
    if not check(r.returncode == 0, f"vigor run with results.h5 exited {r.returncode}"):
        return
    check(not os.path.exists(os.path.join(out_dir, "final.csv")), "final.csv with csv: false")
    code, stdout, stderr = plot([out_dir])
    check(code == 0, f"results.h5: vigor_plot exited {code}: {stderr}")
    for fig in EXPECTED["tangent"]:
        check(os.path.join(out_dir, "plots", f"{fig}.png") in stdout.split(),
              f"results.h5: no {fig}.png ({stdout!r})")


def check_energy_series(out_dir, scratch):
    """energy_series.csv (optional) adds a time-series panel beside the histogram."""
    copy = os.path.join(scratch, "energy_series")
    shutil.copytree(out_dir, copy)
    series = os.path.join(copy, "energy_series.csv")
    if os.path.exists(series):
        os.remove(series)
    plot([copy])
    width_alone = (png_size(os.path.join(copy, "plots", "energy.png")) or (0, 0))[0]
    with open(series, "w") as f:
        f.write("segment,t,energy_error_max,energy_error_median,energy_error_p99\n")
        f.write("0,0,0,0,0\n1,30,2e-06,1e-06,1.9e-06\n2,60,3e-06,1.5e-06,2.8e-06\n")
    code, _, stderr = plot([copy])
    width_series = (png_size(os.path.join(copy, "plots", "energy.png")) or (0, 0))[0]
    check(code == 0 and width_series > 1.4 * width_alone,
          f"energy_series.csv: no second panel (width {width_alone} -> {width_series}; "
          f"{stderr})")


def check_bad_inputs(dirs, scratch):
    def expect_error(args, what, needle, env=None, exit_code=2):
        code, stdout, stderr = plot(args, env)
        check(code == exit_code, f"{what}: exit {code}, expected {exit_code} ({stderr.strip()})")
        check(stderr.lstrip().startswith("error:") or "\nerror:" in stderr,
              f"{what}: no 'error:' message: {stderr!r}")
        check("Traceback" not in stderr, f"{what}: traceback: {stderr}")
        check(needle in stderr, f"{what}: message lacks '{needle}': {stderr!r}")
        check(stdout == "", f"{what}: wrote {stdout!r}")

    job_file = os.path.join(scratch, "section.json")
    expect_error([job_file], "a file instead of a directory", "not a directory")
    expect_error([os.path.join(scratch, "does-not-exist")], "a missing directory",
                 "no such directory")
    empty = os.path.join(scratch, "empty")
    os.makedirs(empty, exist_ok=True)
    expect_error([empty], "a directory without summary.json", "not a vigor output directory")
    expect_error([dirs["section"], "--axes", "q1,bogus"], "--axes with an unknown name",
                 "valid: q0, q1, p0, p1")
    expect_error([dirs["section"], "--axes", "q1"], "--axes with one name", "two names")
    expect_error([dirs["section"], "--color-by", "bogus"], "--color-by unknown", "valid:")
    broken = os.path.join(scratch, "broken")
    shutil.copytree(dirs["section"], broken)
    with open(os.path.join(broken, "summary.json"), "w") as f:
        f.write("{ not json")
    expect_error([broken], "unreadable summary.json", "summary.json")
    h5_only = os.path.join(scratch, "h5_only")
    os.makedirs(h5_only, exist_ok=True)
    with open(os.path.join(h5_only, "results.h5"), "wb") as f:
        f.write(b"not an HDF5 file")
    expect_error([h5_only], "a results.h5 that cannot be read", "results.h5")
    # An interpreter without matplotlib: the install hint, exit 3 (the environment, not the input).
    fake = os.path.join(scratch, "no_matplotlib", "matplotlib")
    os.makedirs(fake, exist_ok=True)
    with open(os.path.join(fake, "__init__.py"), "w") as f:
        f.write("raise ImportError('matplotlib hidden by the test')\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(fake))
    expect_error([dirs["section"]], "no matplotlib", "apt-get install python3-matplotlib", env,
                 exit_code=3)


def check_units(module, dirs):
    hh = ["q0", "q1", "p0", "p1"]
    section_q0 = {"section": {"coordinate": "q0", "value": 0.0, "direction": "up"}}
    check(module.default_axes(hh, section_q0) == ("q1", "p1"),
          f"default axes for a section on q0: {module.default_axes(hh, section_q0)}")
    check(module.default_axes(hh, {"section": {"coordinate": "q1"}}) == ("q0", "p0"),
          "default axes for a section on q1")
    check(module.default_axes(["q0", "p0"], {"section": {"stroboscopic": {"every": 100}}})
          == ("q0", "p0"), "default axes for a stroboscopic section")
    with open(os.path.join(dirs["section"], "summary.json")) as f:
        job = json.load(f)["job"]
    names = module.state_names(module.CsvTable(os.path.join(dirs["section"], "final.csv")).columns)
    check(names == hh, f"state names from final.csv: {names}")
    check(module.default_axes(names, job) == ("q1", "p1"),
          f"default axes of the section run: {module.default_axes(names, job)}")
    with open(os.path.join(dirs["loop"], "summary.json")) as f:
        loop_job = json.load(f)["job"]
    check(module.default_axes(["q0", "p0"], loop_job) == ("q0", "p0"), "loop plane axes")

    # Thinning keeps every k-th row and every trajectory's first crossing.
    table = module.CsvTable(os.path.join(dirs["section"], "sections.csv"))
    data = module.SectionData(table, "q1", "p1", 100)
    traj = table.read(["trajectory"])["trajectory"]
    check(data.total == len(traj) > 100, f"crossings counted: {data.total} vs {len(traj)}")
    check(0 < len(data.points["q1"]) <= 100, f"thinned to {len(data.points['q1'])} points")
    check(np.array_equal(data.first["trajectory"], np.unique(traj)),
          "first crossing of every trajectory kept")


def check_cli(vigor, out_dir, scratch):
    """`vigor plot` finds the script and a Python with matplotlib, and passes the options on."""
    plots = os.path.join(scratch, "cli_plots")
    r = subprocess.run([vigor, "plot", out_dir, "--out", plots], capture_output=True, text=True)
    check(r.returncode == 0, f"vigor plot: exit {r.returncode}: {r.stderr}")
    check(png_size(os.path.join(plots, "section.png")) is not None,
          "vigor plot: no section.png in --out")
    r = subprocess.run([vigor, "plot"], capture_output=True, text=True)
    check(r.returncode == 2 and "plot needs a results directory" in r.stderr,
          f"vigor plot without a directory: exit {r.returncode}: {r.stderr}")
    r = subprocess.run([vigor, "plot", os.path.join(scratch, "does-not-exist")],
                       capture_output=True, text=True)
    check(r.returncode == 2 and "error:" in r.stderr,
          f"vigor plot on a missing directory: exit {r.returncode}: {r.stderr}")
    env = dict(os.environ, VIGOR_PLOT_SCRIPT=os.path.join(scratch, "no-such-script.py"))
    r = subprocess.run([vigor, "plot", out_dir], capture_output=True, text=True, env=env)
    check(r.returncode == 3 and "error:" in r.stderr,
          f"vigor plot with a missing script: exit {r.returncode}: {r.stderr}")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 1
    vigor, scratch = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    scratch = os.path.join(scratch, "vigor_plot_test")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    dirs = run_jobs(vigor, scratch)
    check_figures("section", dirs["section"], svg=False)
    check_figures("tangent", dirs["tangent"], svg=True)
    check_figures("loop", dirs["loop"], svg=False)
    check_energy_series(dirs["section"], scratch)
    check_hdf5(vigor, scratch)
    check_bad_inputs(dirs, scratch)
    check_cli(vigor, dirs["section"], scratch)
    check_units(load_module(), dirs)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("vigor_plot: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
