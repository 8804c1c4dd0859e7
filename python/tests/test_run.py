"""vigor.run: the same results as the command line, NumPy columns, states, precision, outputs."""
import glob
import json
import os
import sys
import tempfile

import numpy as np
import pytest

import vigor
from conftest import assert_same_table, henon_heiles_job, read_csv, run_cli


def test_run_returns_columns_of_the_csv_contract():
    res = vigor.run(henon_heiles_job(), progress=False)
    assert list(res.sections)[:3] == ["trajectory", "crossing", "t"]
    assert res.state_names == ["q0", "q1", "p0", "p1"]
    assert list(res.final)[:7] == ["trajectory", "t", "q0", "q1", "p0", "p1", "energy_error_max"]
    n = res.summary["trajectories"]
    assert n == len(res.final["trajectory"]) >= 1
    assert set(res.final["status"]) == {"ok"}
    # Every crossing lies on the section q0 = 0 to the step's round-off (located, not the step).
    assert len(res.sections["q0"]) > 0
    assert np.abs(res.sections["q0"]).max() < 1e-9
    # Sorted by trajectory then crossing, crossings numbered from 0 in time order.
    traj, crossing, t = res.sections["trajectory"], res.sections["crossing"], res.sections["t"]
    assert np.all(np.diff(traj) >= 0)
    for k in np.unique(traj):
        sel = traj == k
        np.testing.assert_array_equal(crossing[sel], np.arange(sel.sum()))
        assert np.all(np.diff(t[sel]) > 0)
    assert res.final["crossings"].sum() == len(traj)
    assert res.tangent_series is None and res.invariants is None
    assert len(res.energy_series["t"]) == res.summary["segments"] + 1
    assert "vigor.Result" in repr(res)


def cli_run(tmp_path, vigor_bin, job, *args):
    """The job written to tmp_path/job.json and run by the command line into tmp_path/cli."""
    job_file = tmp_path / "job.json"
    job_file.write_text(json.dumps(job))
    run_cli(vigor_bin, job_file, tmp_path / "cli", *args)
    return job_file


def assert_same_as_cli(tmp_path, res):
    assert_same_table(read_csv(tmp_path / "cli" / "sections.csv"), res.sections)
    assert_same_table(read_csv(tmp_path / "cli" / "final.csv"), res.final)


def test_results_equal_the_command_lines_value_for_value(tmp_path, vigor_bin):
    job = henon_heiles_job()
    job_file = cli_run(tmp_path, vigor_bin, job)
    for res in (vigor.run(job, progress=False), vigor.run(str(job_file), progress=False)):
        assert_same_as_cli(tmp_path, res)


def test_float_run_gives_float32_columns_equal_to_the_csv(tmp_path, vigor_bin):
    job = henon_heiles_job()
    cli_run(tmp_path, vigor_bin, job, "--precision", "float")
    res = vigor.run(job, precision="float", progress=False)
    assert res.sections["q1"].dtype == np.float32 and res.final["p0"].dtype == np.float32
    assert res.final["t"].dtype == np.float64  # t = steps * dt, exact in double
    assert_same_as_cli(tmp_path, res)


def test_out_writes_the_command_lines_directory(tmp_path, vigor_bin):
    job = henon_heiles_job()
    cli_run(tmp_path, vigor_bin, job)
    res = vigor.run(job, out=tmp_path / "py", progress=False)
    for name in ("sections.csv", "final.csv"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    summary = json.loads((tmp_path / "py" / "summary.json").read_text())
    assert summary["trajectories"] == res.summary["trajectories"]
    assert res.summary["output_dir"] == str(tmp_path / "py")
    assert_same_table(read_csv(tmp_path / "py" / "sections.csv"), res.sections)
    # An existing directory is kept unless force=True, as with --force.
    with pytest.raises(vigor.JobError):
        vigor.run(job, out=tmp_path / "py", progress=False)
    vigor.run(job, out=tmp_path / "py", force=True, progress=False)


def test_nothing_is_written_without_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scratch = tempfile.gettempdir()
    before = set(glob.glob(os.path.join(scratch, "vigor-run-*")))
    job = henon_heiles_job(output={"dir": "results/should_not_exist"})
    vigor.run(job, progress=False)
    assert list(tmp_path.iterdir()) == []
    assert set(glob.glob(os.path.join(scratch, "vigor-run-*"))) == before


def test_states_array_replaces_the_ensemble_in_any_layout():
    rows = [[0.0, 0.1, 0.35, 0.0], [0.0, -0.2, 0.3, 0.1], [0.0, 0.05, 0.4, -0.05]]
    job = henon_heiles_job()
    by_job = vigor.run(dict(job, ensemble={"states": rows}), progress=False)
    c_order = np.array(rows)
    results = [vigor.run(job, states=c_order, progress=False),
               vigor.run(job, states=np.asfortranarray(c_order), progress=False),
               vigor.run({k: v for k, v in job.items() if k != "ensemble"}, states=rows,
                         progress=False),
               vigor.run(job, states=np.array(rows, dtype=np.float32), progress=False),
               vigor.run(job, states=np.array(rows, dtype=np.float32).astype(np.float64),
                         progress=False)]
    for res in results[:3]:
        for name in by_job.final:
            np.testing.assert_array_equal(res.final[name], by_job.final[name], err_msg=name)
        for name in by_job.sections:
            np.testing.assert_array_equal(res.sections[name], by_job.sections[name])
    # float32 states are taken as they are: the same run as their float64 values.
    for name in results[3].final:
        np.testing.assert_array_equal(results[3].final[name], results[4].final[name])


def test_cloud_ensemble_gives_invariants():
    job = {"model": {"name": "pendulum"}, "integrator": {"name": "verlet", "dt": 0.02},
           "steps": 2000,
           "ensemble": {"loop": {"center": [0.2, 0.0], "plane": ["q0", "p0"], "shape": "circle",
                                 "radius": 0.05, "points": 64, "every": 500}}}
    res = vigor.run(job, progress=False)
    inv = res.invariants
    assert list(inv) == ["t", "area", "area_relative_change", "poincare_invariant",
                         "poincare_relative_change"]
    assert len(inv["t"]) == 2000 // 500 + 1
    # Verlet is symplectic: the loop's area is kept to round-off (SCIENCE.md section 2); the
    # spectral quadrature of 64 points is exact to ~1e-13 for this smooth loop.
    assert np.abs(inv["area_relative_change"]).max() < 1e-9
    assert res.summary["invariants"]["kind"] == "loop"


def test_threads_and_backend_choices():
    a = vigor.run(henon_heiles_job(), threads=1, backend="cpu", progress=False)
    b = vigor.run(henon_heiles_job(), threads=2, backend="cpu", progress=False)
    for name in a.sections:
        np.testing.assert_array_equal(a.sections[name], b.sections[name])
    assert a.summary["backend"] == "cpu"


def test_a_million_row_final_table_is_numpy_not_objects():
    job = {"model": {"name": "pendulum"}, "integrator": {"name": "verlet", "dt": 0.01},
           "steps": 2, "ensemble": {"random_box": {"lo": [-1, -1], "hi": [1, 1],
                                                   "count": 1000000, "seed": 1}}}
    res = vigor.run(job, progress=False)
    assert res.final["q0"].shape == (1000000,) and res.final["q0"].dtype == np.float64
    assert res.final["status"].dtype.kind == "U"


def test_progress_bar_with_and_without_tqdm(capsys, monkeypatch):
    job = henon_heiles_job(steps=3000, segment_steps=1000)
    vigor.run(job, progress=False)
    assert capsys.readouterr().err == ""
    # Without tqdm: the command line's bar, drawn by vigor (host/run/progress.cpp).
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "tqdm", None)
        m.setitem(sys.modules, "tqdm.auto", None)
        vigor.run(job, progress=True)
    err = capsys.readouterr().err
    assert "100%" in err and "[" in err and "crossings" in err
    pytest.importorskip("tqdm")
    vigor.run(job, progress=True)
    assert "vigor" in capsys.readouterr().err  # tqdm's bar, with its description


def test_series_and_summary_equal_the_command_lines(tmp_path, vigor_bin):
    job = henon_heiles_job(diagnostics={"tangent": True})
    cli_run(tmp_path, vigor_bin, job)
    res = vigor.run(job, progress=False)
    assert_same_as_cli(tmp_path, res)
    assert_same_table(read_csv(tmp_path / "cli" / "energy_series.csv"), res.energy_series)
    assert_same_table(read_csv(tmp_path / "cli" / "tangent_series.csv"), res.tangent_series)
    summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert res.summary["job"] == summary["job"]
    for key in ("trajectories", "steps", "dt", "crossings_total", "energy_error_max",
                "status_counts"):
        assert res.summary[key] == summary[key], key


def test_summary_records_the_states_that_were_run(tmp_path):
    rows = np.array([[0.0, 0.1, 0.35, 0.0], [0.0, -0.2, 0.3, 0.1], [0.0, 0.05, 0.4, -0.05]])
    res = vigor.run(henon_heiles_job(), states=rows, out=tmp_path / "out", progress=False)
    given = res.summary["job"]["ensemble"]
    assert given["states"]["rows"] == 3 and res.summary["trajectories"] == 3
    on_disk = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert on_disk["job"]["ensemble"] == given
    # A directory that exists is refused in this API's words.
    with pytest.raises(vigor.JobError) as e:
        vigor.run(henon_heiles_job(), out=tmp_path / "out", progress=False)
    assert "force=True" in str(e.value) and "--force" not in str(e.value)



def test_compensated_run_is_listed_run_and_summarised():
    """integrator.compensated: the integrators that offer it say so, and a run records it (its
    engine is compiled on first use, like a formula model's)."""
    offer = {i["name"]: i["compensable"] for i in vigor.integrators()}
    assert offer["verlet"] and offer["blanes_moan6"] and offer["gauss"]
    assert not offer["midpoint"] and not offer["rk4"]
    job = henon_heiles_job(steps=500)
    job["integrator"]["compensated"] = True
    res = vigor.run(job, progress=False)
    assert res.summary["compensated"] is True
    assert set(res.final["status"]) == {"ok"}
    plain = vigor.run(henon_heiles_job(steps=500), progress=False)
    assert "compensated" not in plain.summary
    # The same orbits to round-off: the sums differ in the last bits, the scheme not at all.
    assert np.abs(res.final["q1"] - plain.final["q1"]).max() < 1e-12
    bad = henon_heiles_job(steps=10)
    bad["integrator"] = {"name": "midpoint", "dt": 0.01, "compensated": True}
    with pytest.raises(vigor.JobError) as e:
        vigor.validate(bad)
    assert e.value.key == "integrator.compensated"
