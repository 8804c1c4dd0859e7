#!/usr/bin/env python3
"""Kill a run for real and resume it: the results must equal an uninterrupted run's.

usage: test_kill_resume.py VIGOR_BIN SCRATCH_DIR

For each job (an explicit Verlet survey with a section and HDF5 output, the same in chunks under
a memory limit, and an implicit-midpoint run carrying tangent maps), the test runs it once uninterrupted, then again with a checkpoint
after every segment, killing the process with SIGKILL at pseudo-random moments (fixed seed, so a
failure can be replayed) and continuing it with `vigor run --resume` — itself killed again — until
it completes. It also stops a run with SIGINT (checkpoint, exit 3, a message with the resume
command) and resumes that, and makes a write fail mid-run (a file-size limit standing in for a full
disk: exit 3, the checkpoint kept) and resumes that. Then:
  * every CSV file is byte-identical to the uninterrupted run's;
  * summary.json is identical except the timings, the memory peak, the output directory and the
    record of the resumes;
  * results.h5 holds the same datasets with the same values (when h5py is importable);
  * nothing is left beside the results (no temporary directory, no spill, no checkpoint).
In an MPI build with mpirun, a run interrupted under 2 ranks is resumed by 1 process and
must still equal the uninterrupted run: checkpoints hold the whole ensemble in trajectory order.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

VIGOR, SCRATCH = sys.argv[1], sys.argv[2]

TIMING_KEYS = {"wall_seconds", "kernel_seconds", "trajectory_steps_per_second",
               "trajectory_steps_per_second_wall", "peak_host_memory_bytes", "output_dir",
               "resumed_at_step", "mpi_ranks", "device"}
# How the ensemble was split (ranks, chunks) shows in these, not in the results.
SPLIT_KEYS = {"launches", "chunks", "chunk_trajectories", "memory_limit_bytes",
              "section_buffer_per_trajectory"}

SURVEY = {
    "model": {"name": "henon_heiles"},
    "integrator": {"name": "verlet", "dt": 0.01},
    "steps": 300000,
    "segment_steps": 2000,
    "ensemble": {"section_grid": {"energy": 0.125,
                                  "axes": {"q1": [-0.45, 0.6, 40], "p1": [-0.5, 0.5, 40]}}},
    "section": {"coordinate": "q0", "value": 0.0, "direction": "up", "max_crossings": 300},
    "backend": "cpu",
    "output": {"dir": "OUT", "hdf5": True},
}

TANGENT = {
    "model": {"name": "pendulum"},
    "integrator": {"name": "midpoint", "dt": 0.05},
    "steps": 40000,
    "segment_steps": 500,
    "ensemble": {"box": {"counts": [20, 20], "lo": [-2.5, -1.5], "hi": [2.5, 1.5]}},
    "section": {"coordinate": "q0", "value": 0.0, "direction": "up", "max_crossings": 100},
    "diagnostics": {"tangent": True},
    "backend": "cpu",
    "output": {"dir": "OUT"},
}


def have_h5py():
    try:
        import h5py  # noqa: F401
        import numpy  # noqa: F401
        return True
    except ImportError:
        return False


def write_job(spec, out_dir, path):
    job = json.loads(json.dumps(spec))
    job["output"]["dir"] = out_dir
    if job["output"].get("hdf5") and not hdf5_build():
        del job["output"]["hdf5"]
    with open(path, "w") as f:
        json.dump(job, f)
    return path


_HDF5 = None


def hdf5_build():
    """Whether this vigor writes HDF5 (a build without libhdf5 refuses output.hdf5 with exit 2)."""
    global _HDF5
    if _HDF5 is None:
        probe = os.path.join(SCRATCH, "probe.json")
        with open(probe, "w") as f:
            json.dump(dict(SURVEY, output={"dir": os.path.join(SCRATCH, "probe"), "hdf5": True}), f)
        r = subprocess.run([VIGOR, "validate", probe], capture_output=True, text=True)
        _HDF5 = r.returncode == 0
    return _HDF5


def run(args, **kw):
    return subprocess.run([VIGOR] + args, capture_output=True, text=True, **kw)


def run_killed(args, delay):
    """Starts vigor, kills it with SIGKILL after `delay` seconds; returns its exit code (or
    -9 when the kill came first)."""
    p = subprocess.Popen([VIGOR] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        return p.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGKILL)
        return p.wait()


def compare(ref, got, label):
    failures = []
    ref_files = sorted(os.listdir(ref))
    got_files = sorted(os.listdir(got))
    if ref_files != got_files:
        failures.append(f"{label}: files {got_files}, expected {ref_files}")
    for name in ref_files:
        if name not in got_files:
            continue
        a, b = os.path.join(ref, name), os.path.join(got, name)
        if name.endswith(".csv"):
            if open(a, "rb").read() != open(b, "rb").read():
                failures.append(f"{label}: {name} differs from the uninterrupted run's")
        elif name == "summary.json":
            sa, sb = json.load(open(a)), json.load(open(b))
            for k in TIMING_KEYS | (SPLIT_KEYS if "mpi" in label else set()):
                sa.pop(k, None)
                sb.pop(k, None)
            # The two runs' jobs differ in their output directory only.
            for s in (sa, sb):
                s["job"]["output"].pop("dir", None)
            if sa != sb:
                diff = {k: (sa.get(k), sb.get(k)) for k in set(sa) | set(sb) if sa.get(k) != sb.get(k)}
                failures.append(f"{label}: summary.json differs: {diff}")
        elif name == "results.h5" and have_h5py():
            failures += compare_h5(a, b, label)
    return failures


def compare_h5(a, b, label):
    import h5py
    import numpy as np
    failures = []
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        names_a, names_b = [], []
        fa.visit(names_a.append)
        fb.visit(names_b.append)
        if sorted(names_a) != sorted(names_b):
            return [f"{label}: results.h5 objects {sorted(names_b)}, expected {sorted(names_a)}"]
        for n in names_a:
            if isinstance(fa[n], h5py.Dataset):
                x, y = fa[n][()], fb[n][()]
                if x.dtype != y.dtype or not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
                    failures.append(f"{label}: results.h5 /{n} differs")
    return failures


def prepare(spec, name, extra=()):
    """SCRATCH/name with the reference job run uninterrupted into ref/ and the job to interrupt
    (writing out/): (base, out, job, error message or None)."""
    base = os.path.join(SCRATCH, name)
    os.makedirs(base)
    ref_job = write_job(spec, os.path.join(base, "ref"), os.path.join(base, "ref.json"))
    out = os.path.join(base, "out")
    job = write_job(spec, out, os.path.join(base, "job.json"))
    r = run(["run", ref_job, "--quiet"] + list(extra))
    if r.returncode != 0:
        return base, out, job, f"{name}: the uninterrupted run failed: {r.stderr}"
    return base, out, job, None


def final_checks(base, out, name):
    """The resumed results against the uninterrupted ones, and nothing left beside them."""
    failures = compare(os.path.join(base, "ref"), out, name)
    left = sorted(set(os.listdir(base)) - {"ref", "out", "ref.json", "job.json"})
    if left:
        failures.append(f"{name}: left beside the results: {left}")
    return failures


def kill_and_resume(spec, name, rng, duration, extra=()):
    """Uninterrupted reference, then a run killed at random moments and resumed to the end; `extra`
    arguments go to every run (and resume)."""
    extra = list(extra)
    base, out, job, error = prepare(spec, name, extra)
    if error:
        return [error]
    failures = []
    kills = 0
    attempts = 0
    resumable = False
    while True:
        attempts += 1
        if attempts > 40:
            return failures + [f"{name}: not finished after 40 attempts"]
        args = (["run", "--resume", out] if resumable else ["run", job]) + \
            ["--quiet", "--checkpoint-every", "0"] + extra
        if kills < 4:
            # Each attempt is killed somewhere in the first half of a whole run's time: before its
            # first checkpoint, mid-run, while a checkpoint is written, or — once little is left —
            # during the final writes.
            code = run_killed(args, rng.uniform(0.05, 0.5) * duration)
            if code == -signal.SIGKILL:
                kills += 1
                # A kill that lands after the final rename but before the process exits finds
                # the run finished (seen under the sanitizers on a loaded machine): `out` is
                # complete and there is nothing left to resume.
                if os.path.exists(os.path.join(out, "summary.json")):
                    break
                # Resumable when a checkpoint (or finished results) survived; a run killed before
                # its first checkpoint starts again from scratch.
                resumable = any(os.path.exists(os.path.join(base, d, "checkpoint.bin")) or
                                os.path.exists(os.path.join(base, d, "summary.json"))
                                for d in os.listdir(base) if d.startswith(".out.partial-"))
                continue
        else:
            code = run(args).returncode
        if code == 0:
            break
        return failures + [f"{name}: attempt {attempts} ({' '.join(args)}) exited {code}"]
    print(f"{name}: finished after {kills} SIGKILLs and {attempts} attempts")
    # The first attempt is killed at most halfway through a whole run: at least that one lands
    # (later ones may come after a resumed run with little left has finished).
    if kills < 1:
        failures.append(f"{name}: no kill landed before the run finished")
    return failures + final_checks(base, out, name)


def sigint_and_resume(spec, name, mpi_ranks=0, extra=()):
    """SIGINT mid-run: checkpoint, exit 3 with the resume command; --resume finishes the run.
    With mpi_ranks, the interrupted run has that many ranks and one process resumes it."""
    base, out, job, error = prepare(spec, name)
    if error:
        return [error]
    cmd = [VIGOR, "run", job, "--quiet", "--threads", "1", "--checkpoint-every", "0"] + list(extra)
    if mpi_ranks:
        cmd = ["mpirun", "--oversubscribe", "-np", str(mpi_ranks)] + cmd
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=mpi_env())
    # Wait for the run's first checkpoint (after its first of many segments), then interrupt it:
    # vigor itself, or under mpirun every rank (mpirun would follow SIGINT with SIGKILL).
    for _ in range(2000):
        if any(os.path.exists(os.path.join(base, d, "checkpoint.bin"))
               for d in os.listdir(base) if d.startswith(".out.partial-")):
            break
        time.sleep(0.01)
    if mpi_ranks:
        ranks = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True)
        for pid in ranks.stdout.split():
            os.kill(int(pid), signal.SIGINT)
    else:
        p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=300)
    failures = []
    if p.returncode != 3 and not (mpi_ranks and p.returncode != 0):
        return [f"{name}: SIGINT gave exit {p.returncode}, expected 3: {err}"]
    if "continue with: vigor run --resume " not in err:
        failures.append(f"{name}: the message does not say how to resume: {err!r}")
    r = run(["run", "--resume", out, "--quiet"])
    if r.returncode != 0:
        return failures + [f"{name}: --resume exited {r.returncode}: {r.stderr}"]
    summary = json.load(open(os.path.join(out, "summary.json")))
    if not summary.get("resumed_at_step"):
        failures.append(f"{name}: summary.json does not record the resume")
    return failures + final_checks(base, out, name)


def full_disk_and_resume(spec, name, failing_file):
    """A write failing (a file-size limit stands in for a full disk): exit 3 naming the checkpoint
    kept; --resume, with room again, finishes with the uninterrupted run's results. `failing_file`:
    the file the error must name (the spill mid-run, or sections.csv among the final writes)."""
    import resource
    base, out, job, error = prepare(spec, name)
    if error:
        return [error]

    def small_disk():
        # Writes beyond 2 MiB fail with EFBIG (SIGXFSZ ignored). The checkpoints (about 150 kB)
        # never reach it; the spill (48 bytes a crossing, about 1 800 crossings of the ensemble
        # every 1000 steps: 1.4 MB at 16 000 steps) does at 40 000 steps, about 23 000 steps in
        # (mid-run), and at 16 000 steps only sections.csv (1.8 times the spill: 2.5 MB) does.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2 << 20, 2 << 20))

    r = subprocess.run([VIGOR, "run", job, "--quiet", "--checkpoint-every", "0"],
                       capture_output=True, text=True, preexec_fn=small_disk)
    if r.returncode != 3:
        return [f"{name}: exit {r.returncode} with a full disk, expected 3: {r.stderr}"]
    failures = []
    if "the last checkpoint is kept in" not in r.stderr or "vigor run --resume" not in r.stderr:
        failures.append(f"{name}: the error does not point to the checkpoint: {r.stderr!r}")
    if failing_file not in r.stderr.split("(disk full?)")[0]:
        failures.append(f"{name}: expected the write of {failing_file} to fail: {r.stderr!r}")
    r = run(["run", "--resume", out, "--quiet"])
    if r.returncode != 0:
        return failures + [f"{name}: --resume exited {r.returncode}: {r.stderr}"]
    return failures + final_checks(base, out, name)


def mpi_env():
    e = dict(os.environ)
    # Open MPI refuses to start as root without these (CI containers run as root).
    e["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    e["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return e


def mpi_build():
    """mpirun exists and this vigor is built with MPI (2 ranks report mpi_ranks 2)."""
    if shutil.which("mpirun") is None or shutil.which("pgrep") is None:
        return False
    job = write_job(dict(SURVEY, steps=100), os.path.join(SCRATCH, "mpi-probe"),
                    os.path.join(SCRATCH, "mpi-probe.json"))
    r = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", VIGOR, "run", job, "--quiet",
                        "--threads", "1"], capture_output=True, text=True, env=mpi_env(),
                       timeout=300)
    try:
        s = json.load(open(os.path.join(SCRATCH, "mpi-probe", "summary.json")))
    except (OSError, ValueError):
        return False
    return r.returncode == 0 and s.get("mpi_ranks") == 2


def sized(spec, name):
    """The job with fewer steps where a whole run would take much longer than TARGET_SECONDS (a
    sanitizer build runs 15-20 times slower than a release build): at least MIN_SEGMENTS segments,
    so kills still land before, between and during checkpoints. A release build keeps the job."""
    probe_steps = spec["steps"] // 20
    job = write_job(dict(spec, steps=probe_steps), os.path.join(SCRATCH, name + "-probe"),
                    os.path.join(SCRATCH, name + "-probe.json"))
    t0 = time.monotonic()
    r = run(["run", job, "--quiet"])
    estimate = 20 * (time.monotonic() - t0)
    if r.returncode != 0:
        raise SystemExit(f"FAIL {name}: the probe run exited {r.returncode}: {r.stderr}")
    if estimate <= TARGET_SECONDS:
        return spec
    seg = spec["segment_steps"]
    steps = max(MIN_SEGMENTS * seg, int(spec["steps"] * TARGET_SECONDS / estimate) // seg * seg)
    print(f"{name}: a whole run would take about {estimate:.0f} s here: {steps} steps instead of "
          f"{spec['steps']}")
    return dict(spec, steps=steps)


TARGET_SECONDS = float(os.environ.get("VIGOR_RESUME_TARGET_SECONDS", "4"))
MIN_SEGMENTS = 12


def main():
    shutil.rmtree(SCRATCH, ignore_errors=True)
    os.makedirs(SCRATCH)
    rng = random.Random(int(os.environ.get("VIGOR_RESUME_SEED", "20261122")))
    survey, tangent = sized(SURVEY, "survey"), sized(TANGENT, "tangent")
    # How long an uninterrupted run takes here sets the range of kill points.
    failures = []
    durations = {}
    for spec, name in ((survey, "survey"), (tangent, "tangent")):
        probe = write_job(spec, os.path.join(SCRATCH, name + "-timing"),
                          os.path.join(SCRATCH, name + "-timing.json"))
        t0 = time.monotonic()
        r = run(["run", probe, "--quiet", "--checkpoint-every", "0"])
        duration = time.monotonic() - t0
        if r.returncode != 0:
            print(f"FAIL {name}: {r.stderr}")
            return 1
        print(f"{name}: an uninterrupted run takes {duration:.2f} s")
        durations[name] = duration
        failures += kill_and_resume(spec, name + "-kill", rng, duration)
        failures += sigint_and_resume(spec, name + "-sigint")
    # Fixed step counts: which write fails depends on the output's size, not on this machine.
    failures += full_disk_and_resume(dict(SURVEY, steps=40000), "survey-full-disk", "spill")
    failures += full_disk_and_resume(dict(SURVEY, steps=16000), "survey-full-disk-final-writes",
                                     "sections.csv")
    # In chunks under a memory limit (the reference too: results.h5 rows follow the chunks).
    failures += kill_and_resume(survey, "survey-chunked-kill", rng, durations["survey"],
                                ["--memory-limit", "150K"])
    if not have_h5py():
        print("no h5py in this Python: results.h5 was compared by its presence only")
    if mpi_build():
        # Section rows of results.h5 are in drain order, which depends on the rank count.
        failures += sigint_and_resume(dict(survey, output={"dir": "OUT"}), "survey-mpi2-resume1",
                                      mpi_ranks=2)
        # Each rank in chunks (the last one padded) under a memory limit; one process resumes
        # with the stored limit, in its own chunking (the reference runs unchunked).
        failures += sigint_and_resume(dict(survey, output={"dir": "OUT"}),
                                      "survey-mpi2-chunked-resume1", mpi_ranks=2,
                                      extra=["--memory-limit", "100K"])
    else:
        print("no MPI build or no mpirun: the rank-count-independent resume is not tested")
    for f in failures:
        print("FAIL", f)
    if failures:
        return 1
    print("kill and resume: all results equal the uninterrupted runs'")
    shutil.rmtree(SCRATCH, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
