"""Shared jobs and helpers of the package's tests (run by ctest as python.pytest, with the build's
package on PYTHONPATH and the build's `vigor` program in VIGOR_BIN)."""
import os
import subprocess

import numpy as np
import pytest

import vigor


def henon_heiles_job(steps=4000, **extra):
    """A few Henon-Heiles orbits at E = 1/8 with the q0 = 0 (up) section; small and quick."""
    job = {
        "model": {"name": "henon_heiles"},
        "integrator": {"name": "verlet", "dt": 0.01},
        "steps": steps,
        "ensemble": {"section_grid": {"energy": 0.125,
                                      "axes": {"q1": [-0.3, 0.4, 4], "p1": [-0.2, 0.2, 3]}}},
        "section": {"coordinate": "q0", "value": 0.0, "direction": "up"},
    }
    job.update(extra)
    return job


@pytest.fixture
def vigor_bin():
    path = os.environ.get("VIGOR_BIN")
    if not path or not os.path.exists(path):
        pytest.skip("VIGOR_BIN (the build's vigor program) is not set")
    return path


def run_cli(vigor_bin, job_file, out_dir, *args):
    subprocess.run([vigor_bin, "run", str(job_file), "--out", str(out_dir), "--quiet", *args],
                   check=True)


def read_csv(path):
    """A results CSV as column name -> array of the text fields (numbers compared after parsing
    with the same round trip the CSV was written for)."""
    with open(path) as f:
        header = f.readline().strip().split(",")
        rows = [line.rstrip("\n").split(",") for line in f]
    cols = {}
    for k, name in enumerate(header):
        cols[name] = np.array([r[k] for r in rows], dtype=object)
    return cols


def as_numbers(text_column, dtype):
    return np.array([dtype(x) for x in text_column], dtype=dtype) if len(text_column) else \
        np.zeros(0, dtype=dtype)


def assert_same_table(csv_cols, res_cols, float32_names=()):
    """Every column of a CSV equals the Result's, value for value (bit for bit for numbers)."""
    assert list(csv_cols) == list(res_cols)
    for name, text in csv_cols.items():
        got = res_cols[name]
        if got.dtype.kind in "US":
            assert list(got) == list(text), name
        elif got.dtype.kind == "i":
            np.testing.assert_array_equal(got, as_numbers(text, int), err_msg=name)
        else:
            want = as_numbers(text, np.float32 if got.dtype == np.float32 else float)
            np.testing.assert_array_equal(got, want, err_msg=name)


vigor  # the package under test is importable: collection fails loudly otherwise
