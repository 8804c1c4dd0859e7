"""Bad input raises vigor.JobError with the key and the command line's message; a run that cannot
happen raises vigor.RunError; Ctrl-C stops a run at a segment end."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import vigor
from conftest import henon_heiles_job


@pytest.mark.parametrize("change, key", [
    ({"integrator": {"name": "verlet", "dt": -0.1}}, "integrator.dt"),
    ({"steps": 0}, "steps"),
    ({"stepz": 10}, "stepz"),
    ({"model": {"name": "no_such_model"}}, "model.name"),
])
def test_bad_job_raises_job_error_naming_the_key(change, key):
    job = henon_heiles_job(**change)
    with pytest.raises(vigor.JobError) as e:
        vigor.run(job, progress=False)
    assert e.value.key == key
    assert str(e.value).startswith(key + ":")
    with pytest.raises(vigor.JobError):
        vigor.validate(job)


def test_bad_arguments_raise_job_error():
    job = henon_heiles_job()
    cases = [(dict(states=np.zeros((3, 5))), "states"),
             (dict(states=np.zeros(4)), "states"),
             (dict(states=np.zeros((0, 4))), "states"),
             (dict(backend="gpu"), "backend"),
             (dict(precision="half"), "precision"),
             (dict(threads=0), "threads")]
    for kwargs, key in cases:
        with pytest.raises(vigor.JobError) as e:
            vigor.run(job, progress=False, **kwargs)
        assert e.value.key == key, kwargs
    with pytest.raises(vigor.JobError) as e:
        vigor.run(job, states=[[0.0, 0.1, np.nan, 0.0]], progress=False)
    assert e.value.key.startswith("ensemble.states[0]")
    with pytest.raises(vigor.JobError) as e:
        vigor.run("/no/such/job.json", progress=False)
    assert e.value.key == "job"
    with pytest.raises(TypeError):
        vigor.run(42)


def test_missing_device_is_a_run_error():
    if vigor.backends()["cuda"]:
        pytest.skip("this machine has a GPU")
    with pytest.raises(vigor.RunError):
        vigor.run(henon_heiles_job(), backend="cuda", progress=False)


def test_keyboard_interrupt_stops_the_run_at_a_segment_end(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where vigor puts its scratch directory
    # 10^11 trajectory-steps in segments of 100 steps: minutes if it were not stopped.
    job = henon_heiles_job(steps=10_000_000, segment_steps=100)
    job["ensemble"] = {"random_box": {"lo": [-0.01, -0.01, 0.3, -0.01], "hi": [0.01, 0.01, 0.31, 0.01],
                                      "count": 10000, "seed": 3}}
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            vigor.run(job, progress=False)
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 30
    assert list(tmp_path.iterdir()) == []  # the run's scratch directory went with it
    # The module is usable afterwards.
    assert vigor.run(henon_heiles_job(steps=100), progress=False).summary["steps"] == 100


def test_validate_models_integrators():
    v = vigor.validate(henon_heiles_job())
    assert v["model"] == "henon_heiles" and v["integrator"] == "verlet" and v["section"]
    assert v["trajectories"] >= 1
    models = {m["name"]: m for m in vigor.models()}
    assert models["henon_heiles"]["state_names"] == ["q0", "q1", "p0", "p1"]
    assert "verlet" in models["henon_heiles"]["integrators"]
    integrators = {i["name"]: i for i in vigor.integrators()}
    assert integrators["verlet"]["order"] == 2 and integrators["verlet"]["symplectic"]
    assert vigor.backends()["cpu"] is True
    assert vigor.__version__
