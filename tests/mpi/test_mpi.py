#!/usr/bin/env python3
"""MPI runs equal the one-process run: `mpirun -np R vigor run` for R = 1, 2, 4 against plain
`vigor run`, on this machine (loopback, oversubscribed).

usage: test_mpi.py VIGOR_BINARY SCRATCH_DIR

Checks, for a Hénon–Heiles section survey with tangent diagnostics (sections, final states,
chaos indicators, both series), the same survey of Hénon–Heiles written as a formula model (each
rank count starting from an empty plugin cache, so that the ranks compile the plugin at once and
share the one that lands first), and a loop ensemble (invariants.csv): every CSV byte for byte,
summary.json equal except timings, memory and mpi_ranks, results.h5 equal after sorting its
section rows; and that bad input under mpirun exits 2 with the message printed once, also when
only one rank was given it or the ranks were given different jobs.
Ranks started with command lines of their own (MPMD) give the same files too: one thread on one
rank and two on the other; and, in a build whose GPU performs the CPU's operations
(VIGOR_CUDA_BITWISE=ON in the environment, set by CMake for -DVIGOR_CUDA_FMAD=OFF) on a machine
with a usable GPU, one rank on the CPU and one on the GPU, either way round (failed without a GPU
under VIGOR_REQUIRE_GPU=1).
Exit 0 pass, 1 fail, 77 skip (no mpirun, or a vigor built without MPI).
"""
import json
import os
import shutil
import subprocess
import sys

SKIP = 77
FAILURES = []
# Keys that differ between runs by nature: clocks, memory, the rank count itself, the directory.
VOLATILE = {"wall_seconds", "kernel_seconds", "trajectory_steps_per_second",
            "trajectory_steps_per_second_wall", "peak_host_memory_bytes", "mpi_ranks",
            "output_dir", "device"}
# Keys that name rank 0's backend or size its buffers and launches: ranks on different backends.
BACKEND = {"backend", "cpu_simd_lanes", "threads", "launches", "section_buffer_per_trajectory"}


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print("FAIL:", what)


def env(extra=None):
    e = dict(os.environ, **(extra or {}))
    # Open MPI refuses to start as root without these (CI containers run as root).
    e["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    e["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    e["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    return e


def run(cmd, extra=None, timeout=600):
    return subprocess.run(cmd, capture_output=True, text=True, env=env(extra), timeout=timeout)


def mpirun(np_, args, extra=None):
    return run(["mpirun", "--oversubscribe", "-np", str(np_)] + args, extra)


def mpmd(argvs, extra=None, timeout=600):
    """mpirun with a command line of its own for each rank (rank k runs argvs[k])."""
    cmd = ["mpirun", "--oversubscribe"]
    for k, argv in enumerate(argvs):
        cmd += ([":"] if k else []) + ["-np", "1"] + argv
    return run(cmd, extra, timeout)


def jobs(scratch):
    hh = {
        "model": {"name": "henon_heiles"},
        "integrator": {"name": "verlet", "dt": 0.01},
        "steps": 4000,
        "segment_steps": 900,
        "ensemble": {"section_grid": {"energy": 0.125,
                                      "axes": {"q1": [-0.4, 0.55, 23], "p1": [-0.45, 0.45, 19]}}},
        "section": {"coordinate": "q0", "value": 0.0, "direction": "up", "max_crossings": 40},
        "diagnostics": {"tangent": True},
        "escape_radius": 0.6,
    }
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                           "loop_pendulum.json")) as f:
        loop = json.load(f)
    loop["steps"] = min(loop["steps"], 3000)
    loop.pop("output", None)
    formula = dict(hh, model={
        "formula": {"name": "mpi_henon_heiles", "dof": 2,
                    "potential": "(q0^2 + q1^2)/2 + a*q0^2*q1 + b*q1^3"},
        "params": {"a": 1.0, "b": -0.3333333333333333}})
    out = {}
    for name, j in (("survey", hh), ("formula", formula), ("loop", loop)):
        path = os.path.join(scratch, name + ".json")
        with open(path, "w") as f:
            json.dump(j, f)
        out[name] = path
    return out


def files(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".csv"))


def compare(ref, other, label, ignored=frozenset()):
    check(files(ref) == files(other), f"{label}: files {files(other)} vs {files(ref)}")
    for f in files(ref):
        with open(os.path.join(ref, f), "rb") as a, open(os.path.join(other, f), "rb") as b:
            check(a.read() == b.read(), f"{label}: {f} differs")
    with open(os.path.join(ref, "summary.json")) as a, \
            open(os.path.join(other, "summary.json")) as b:
        sa, sb = json.load(a), json.load(b)
    for k in sorted(set(sa) | set(sb)):
        if k not in VOLATILE and k not in ignored:
            check(sa.get(k) == sb.get(k), f"{label}: summary.json {k}: {sb.get(k)} vs {sa.get(k)}")
    return sb


def compare_h5(ref, other, label):
    try:
        import h5py
        import numpy as np
    except ImportError:
        return
    if not os.path.exists(os.path.join(ref, "results.h5")):
        return
    with h5py.File(os.path.join(ref, "results.h5")) as a, \
            h5py.File(os.path.join(other, "results.h5")) as b:
        for g in ("final", "initial", "energy_series", "tangent_series"):
            for k in a[g]:
                check(np.array_equal(a[g][k][:], b[g][k][:], equal_nan=True),
                      f"{label}: results.h5 /{g}/{k} differs")
        oa = np.lexsort((a["sections/crossing"][:], a["sections/trajectory"][:]))
        ob = np.lexsort((b["sections/crossing"][:], b["sections/trajectory"][:]))
        for k in a["sections"]:
            check(np.array_equal(a["sections"][k][:][oa], b["sections"][k][:][ob]),
                  f"{label}: results.h5 /sections/{k} differs")


def mixed_ranks(vigor, job, scratch):
    """Ranks with command lines of their own against the one-process run of `job` (survey-plain)."""
    ref = os.path.join(scratch, "survey-plain")
    base = [vigor, "run", job, "--quiet"]
    cpu = ["--backend", "cpu"]
    cases = [("cpu with 1 thread : cpu with 2", cpu + ["--threads", "1"], cpu + ["--threads", "2"])]
    if os.environ.get("VIGOR_CUDA_BITWISE") == "ON":
        probe = run(base + ["--backend", "cuda", "--out", os.path.join(scratch, "cuda-probe")])
        if probe.returncode == 0:
            cuda = ["--backend", "cuda"]
            cases += [("cpu : cuda", cpu + ["--threads", "1"], cuda),
                      ("cuda : cpu", cuda, cpu + ["--threads", "1"])]
        elif os.environ.get("VIGOR_REQUIRE_GPU") == "1":
            check(False, f"VIGOR_REQUIRE_GPU=1 but the cuda backend fails: {probe.stderr!r}")
        else:
            print("note: no usable GPU: ranks on the CPU and on the GPU were not compared")
    for k, (label, first, second) in enumerate(cases):
        out = os.path.join(scratch, f"survey-mixed{k}")
        p = mpmd([base + ["--out", out] + first, base + ["--out", out] + second])
        if p.returncode != 0:
            print(p.stdout, p.stderr)
            check(False, f"ranks {label}: exit {p.returncode}")
            continue
        s = compare(ref, out, f"ranks {label}", BACKEND if "cuda" in label else frozenset())
        check(s.get("mpi_ranks") == 2, f"ranks {label}: mpi_ranks {s.get('mpi_ranks')}")
    refused(vigor, job, scratch)


def refused(vigor, job, scratch):
    """Ranks that were given different jobs, or of which one was given bad input the others were
    not, are refused at once: exit 2 on every rank, one message naming the key and the value (and
    the rank, when it is not rank 0), nothing written. Before, every case but the first waited
    forever: the ranks that had read their input went on into a collective call."""
    out = os.path.join(scratch, "survey-refused")
    base = [vigor, "run", job, "--quiet", "--out", out]
    cases = [
        ("another output dir", base, base[:-1] + [out + "-other"],
         "error: mpi ranks: were not all given the same job"),
        ("bad --threads on rank 1", base, base + ["--threads", "0"],
         'error: rank 1 of 2: --threads: must be an integer between 1 and 4096, got "0"'),
        ("unknown option on rank 0", base + ["--bogus"], base,
         "error: --bogus: unknown option"),
        ("bad --backend on rank 1", base, base + ["--backend", "gpu"],
         'error: rank 1 of 2: --backend: must be "auto", "cpu" or "cuda", got "gpu"'),
        ("missing job file on rank 1", base, [vigor, "run", job + ".missing", "--out", out],
         "error: rank 1 of 2: job: cannot read job file"),
        ("run : validate", base, [vigor, "validate", job],
         "error: mpi ranks: were not all given the same command"),
    ]
    for label, first, second, message in cases:
        try:
            p = mpmd([first, second], timeout=180)
        except subprocess.TimeoutExpired:
            check(False, f"ranks with {label}: still waiting after 180 s")
            continue
        errors = [line for line in p.stderr.splitlines() if line.startswith("error:")]
        check(p.returncode == 2 and len(errors) == 1 and errors[0].startswith(message),
              f"ranks with {label}: exit {p.returncode}: {p.stderr!r}")
        check(not os.path.exists(out) and not os.path.exists(out + "-other"),
              f"ranks with {label} wrote an output dir")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 1
    vigor, scratch = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if shutil.which("mpirun") is None:
        print("skip: no mpirun (Debian: openmpi-bin)")
        return SKIP
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    j = jobs(scratch)
    for name, job in j.items():
        # A plugin cache of its own for every run (formula models compile into it).
        def cache(tag):
            return {"VIGOR_CACHE_DIR": os.path.join(scratch, f"cache-{name}-{tag}")}
        ref = os.path.join(scratch, name + "-plain")
        p = run([vigor, "run", job, "--out", ref, "--quiet", "--threads", "1"], cache("plain"))
        if p.returncode != 0:
            print(p.stdout, p.stderr)
            return 1
        for np_ in (1, 2, 4):
            out = os.path.join(scratch, f"{name}-np{np_}")
            p = mpirun(np_, [vigor, "run", job, "--out", out, "--quiet", "--threads", "1"],
                       cache(f"np{np_}"))
            if name == "formula" and p.returncode == 0:
                plugins = os.path.join(scratch, f"cache-{name}-np{np_}", "plugins")
                built = [d for d in os.listdir(plugins)
                         if os.path.exists(os.path.join(plugins, d, "complete"))]
                check(len(built) == 1, f"formula -np {np_}: plugins in the cache: {built}")
            if p.returncode != 0:
                print(p.stdout, p.stderr)
                check(False, f"{name} -np {np_}: exit {p.returncode}")
                continue
            s = compare(ref, out, f"{name} -np {np_}")
            if np_ == 2 and "mpi_ranks" not in s:
                print("skip: this vigor was built without MPI (ranks ran the whole job each)")
                return SKIP
            check(s.get("mpi_ranks", 1) == np_, f"{name} -np {np_}: mpi_ranks {s.get('mpi_ranks')}")
    mixed_ranks(vigor, j["survey"], scratch)
    # results.h5 across rank counts (the section rows in the order each run drained them).
    hj = os.path.join(scratch, "survey-h5.json")
    with open(j["survey"]) as f:
        spec = json.load(f)
    spec["output"] = {"hdf5": True}
    with open(hj, "w") as f:
        json.dump(spec, f)
    p1 = run([vigor, "run", hj, "--out", os.path.join(scratch, "h5-plain"), "--quiet"])
    if p1.returncode == 0:
        p4 = mpirun(4, [vigor, "run", hj, "--out", os.path.join(scratch, "h5-np4"), "--quiet"])
        check(p4.returncode == 0, f"hdf5 -np 4: exit {p4.returncode}: {p4.stderr}")
        if p4.returncode == 0:
            compare_h5(os.path.join(scratch, "h5-plain"), os.path.join(scratch, "h5-np4"), "hdf5")
    # Bad input: every rank exits 2, one message.
    bad = os.path.join(scratch, "bad.json")
    spec["integrator"]["dt"] = -0.1
    with open(bad, "w") as f:
        json.dump(spec, f)
    p = mpirun(2, [vigor, "run", bad, "--out", os.path.join(scratch, "bad-out")])
    check(p.returncode == 2, f"bad job under mpirun: exit {p.returncode}")
    check(p.stderr.count("error: integrator.dt") == 1,
          f"bad job under mpirun: message not printed exactly once: {p.stderr!r}")
    check(not os.path.exists(os.path.join(scratch, "bad-out")), "bad job wrote its output dir")
    # An output directory that holds results is refused on rank 0; the other ranks follow.
    held = os.path.join(scratch, "survey-np2")
    before = open(os.path.join(held, "final.csv"), "rb").read()
    p = mpirun(2, [vigor, "run", j["survey"], "--out", held])
    check(p.returncode == 2 and "output.dir" in p.stderr,
          f"existing results under mpirun: exit {p.returncode}: {p.stderr!r}")
    check(open(os.path.join(held, "final.csv"), "rb").read() == before,
          "existing results were changed")
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print("mpirun -np 1, 2, 4, and ranks with command lines of their own, give the one-process "
          "outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
