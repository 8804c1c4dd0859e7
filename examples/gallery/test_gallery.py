#!/usr/bin/env python3
"""Render the whole gallery in quick mode into a scratch directory and check the result.

    examples/gallery/test_gallery.py VIGOR SCRATCH_DIR

Runs make_gallery.py --quick with the given vigor binary, then asserts that every expected figure exists, is a
valid PNG (signature, IHDR chunk, IEND at the end) of sensible size, and that the generated gallery.md
references each one. Exit codes: 0 pass, 1 fail, 77 skip (matplotlib or numpy unavailable).
"""
import os
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = [
    "pendulum_euler.png",
    "newmark_rk4_energy.png",
    "marsden_wendlandt_errors.png",
    "j2_node_precession.png",
    "j2_routh_reduction.png",
    "henon_heiles_sections.png",
    "driven_pendulum_strobe.png",
    "outer_solar_system.png",
    "kirchhoff_sections.png",
    "dsp_rsprk_energy.png",
]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def plotting_available():
    try:
        import numpy
        import matplotlib
    except ImportError:
        return False
    del numpy, matplotlib
    return True


def png_problem(path):
    """None if `path` is a plausible figure: a PNG of 400-4000 x 200-3000 pixels, 5 kB to 1 MB."""
    size = os.path.getsize(path)
    if not 5_000 <= size <= 1_000_000:
        return f"file size {size} bytes outside [5 kB, 1 MB]"
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(PNG_SIGNATURE):
        return "no PNG signature"
    length, kind = struct.unpack(">I4s", data[8:16])
    if kind != b"IHDR" or length != 13:
        return "first chunk is not IHDR"
    width, height = struct.unpack(">II", data[16:24])
    if not (400 <= width <= 4000 and 200 <= height <= 3000):
        return f"unexpected dimensions {width} x {height}"
    if data[-8:-4] != b"IEND":
        return "truncated (no IEND chunk at the end)"
    return None


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 1
    vigor, scratch = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    if not plotting_available():
        print("SKIP: matplotlib or numpy is not installed")
        return 77
    fig_dir = os.path.join(scratch, "figures")
    md = os.path.join(scratch, "gallery.md")
    cmd = [sys.executable, os.path.join(HERE, "make_gallery.py"), "--quick", "--vigor", vigor,
           "--out-root", os.path.join(scratch, "runs"), "--fig-dir", fig_dir, "--md", md]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.time() - t0
    if r.returncode != 0:
        print(f"FAIL: make_gallery.py exited with {r.returncode}\n{r.stdout}{r.stderr}")
        return 1
    failures = check_outputs(fig_dir, md)
    # The Kirchhoff entry's states must lie on the level set its text names.
    level = subprocess.run([sys.executable, os.path.join(HERE, "kirchhoff_level_set.py"), "--check",
                            os.path.join(HERE, "kirchhoff_cay.json"), os.path.join(HERE, "kirchhoff_rk4.json")],
                           capture_output=True, text=True)
    if level.returncode != 0:
        failures.append(f"kirchhoff_level_set.py --check: {level.stdout}{level.stderr}")
    for f in failures:
        print(f"FAIL: {f}")
    if failures:
        return 1
    print(f"PASS: {len(EXPECTED)} figures and gallery.md in {elapsed:.1f} s")
    return 0


def check_outputs(fig_dir, md):
    failures = []
    if not os.path.isfile(md):
        return [f"{md} was not written"]
    with open(md, encoding="utf-8") as f:
        text = f.read()
    for name in EXPECTED:
        path = os.path.join(fig_dir, name)
        if not os.path.isfile(path):
            failures.append(f"{name}: missing")
            continue
        problem = png_problem(path)
        if problem:
            failures.append(f"{name}: {problem}")
        link = os.path.relpath(path, os.path.dirname(md)).replace(os.sep, "/")
        if f"]({link})" not in text:
            failures.append(f"{name}: not referenced as ]({link}) in {md}")
    return failures


if __name__ == "__main__":
    sys.exit(main(sys.argv))
