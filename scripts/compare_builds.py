#!/usr/bin/env python3
"""Run the same jobs with two vigor binaries and compare their outputs byte for byte.

    python3 scripts/compare_builds.py OLD_VIGOR NEW_VIGOR [--work DIR] [--quick] [--threads N]
                                      [--backends B,B] [--only REGEX]

For a change that must not change behaviour (a refactoring, a new build layout): every CSV of the
results directory (sections, final, energy_series, tangent_series, invariants) must be identical
byte for byte, and summary.json identical but for what measures the run (timings, memory, the
directory's name). Bad input must fail alike (exit code and message).

The jobs: every job file under examples/ (steps capped, ensembles thinned so that each runs in well
under a second), and a matrix over every model of `vigor list` and every integrator that handles
it, in both precisions, with the features the driver handles as events: a plane section with
relaunches on full buffers, a stroboscopic section, an escape radius, conservation checks every K
steps (the burst path), Newton tolerances, tangent maps. The new binary's plane-section hits must
also lie on the plane at times inside the run (identical wrong bytes in both builds pass the byte
comparison). Exit status 0 when everything matches.

The same binary twice with `--backends cpu,cuda` compares the GPU with the CPU: in a build with
`-DVIGOR_CUDA_FMAD=OFF` the two perform the same operations, so every CSV must be the same bytes
(docs/backends.md). summary.json may then differ only in what names or sizes the backend (BACKEND).
`--threads 1,2` runs the two sides with different thread counts. Exit status 77 when a backend
asked for cannot run here (no usable CUDA device), unless VIGOR_REQUIRE_GPU=1.
"""
import argparse
import copy
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# summary.json keys that measure the run rather than describe its results.
VOLATILE = {"wall_seconds", "kernel_seconds", "trajectory_steps_per_second",
            "trajectory_steps_per_second_wall", "peak_host_memory_bytes", "output_dir", "job"}

# summary.json keys that name the backend or size its buffers and launches, when the two sides run
# on different backends or thread counts: the results themselves must not depend on them.
BACKEND = {"backend", "device", "cpu_simd_lanes", "threads", "launches",
           "section_buffer_per_trajectory", "chunks", "chunk_trajectories", "memory_limit_bytes"}

SKIP = 77

# States of the models for the matrix (from the test suite), preferred to the examples' ensembles:
# a section grid needs the plane section the matrix's variants take away.
EXTRA_STATES = {
    "henon_heiles": [[0, 0.1, 0.35, 0], [0, -0.2, 0.3, 0.1], [0, 0.3, 0.2, 0],
                     [0, 0.05, 0.48, -0.1]],
    "double_pendulum": [[0.5, 0.2, 0.0, 0.0], [1.0, -0.5, 0.1, 0.2], [2.5, 1.0, 0.3, -0.4]],
    "harmonic_oscillator": [[1.0, 0.0], [0.5, 0.3], [-0.2, 0.9]],
    "pendulum_cartesian": [[1, 0, 0, 0.5], [0, -1, 1.0, 0]],
    "spherical_pendulum": [[0, 0, -1, 0.5, 0.3, 0], [0.6, 0, -0.8, 0, 0.7, 0]],
    "rigid_body_so3": [[1, 0, 0, 0, 1, 0, 0, 0, 1, 0.4535961214255773, 0, 0.8912073600614354]],
    # The models whose examples have no plane section (their FP32 plane sections went untested
    # until a compiler dropped the constrained models' hit writes: docs/building.md).
    "pendulum": [[1.0, 0.5], [3.0, 0.1], [-2.0, 1.5]],
    "driven_pendulum": [[1.0, 0.5], [-2.0, 1.0]],
    "j2_satellite": [[1.5, 0, 0, 0, 0.7, 0.4], [1.2, 0.3, 0.1, -0.2, 0.8, 0.3]],
    "double_spherical_pendulum": [[2.82, 0.025, -2.836719055528764, 5.085, 0.105,
                                   -4.802266053186159, 6.762, 5.012, 6.766316869691635, 8.7395,
                                   36.7325, 9.413745479904268]],
}


def list_models(vigor):
    """{model: {"integrators": [...], "state": [...], "implicit": set}} from `vigor list`."""
    text = subprocess.run([vigor, "list"], capture_output=True, text=True, check=True).stdout
    models, current, section = {}, None, None
    implicit = set()
    for line in text.splitlines():
        if line.startswith("models:"):
            section = "models"
            continue
        if line.startswith("integrators:"):
            section = "integrators"
            continue
        m = re.match(r"^  ([a-z0-9_]+)  \(", line)
        if m and section == "models":
            current = models.setdefault(m.group(1), {"integrators": [], "state": []})
            continue
        if m and section == "integrators" and "implicit" in line:
            implicit.add(m.group(1))
        if current is not None and section == "models":
            s = line.strip()
            if s.startswith("integrators:"):
                current["integrators"] = s.split(":", 1)[1].split()
            elif s.startswith("state:"):
                current["state"] = s.split(":", 1)[1].split()
    return models, implicit


def thin(job):
    """The job made small: few steps in several segments, a small ensemble."""
    job = copy.deepcopy(job)
    job["steps"] = min(int(job["steps"]), 3000)
    job["segment_steps"] = min(int(job.get("segment_steps", 1000)), 1000)
    kind, body = next(iter(job["ensemble"].items()))
    if kind == "section_grid":
        for axis in body["axes"].values():
            axis[2] = min(int(axis[2]), 7)
    elif kind == "random_box":
        body["count"] = min(int(body["count"]), 40)
    elif kind == "states":
        job["ensemble"]["states"] = body[:40]
    if "section" in job and "max_crossings" in job["section"]:
        job["section"]["max_crossings"] = min(int(job["section"]["max_crossings"]), 200)
    job.pop("output", None)
    job.pop("backend", None)
    return job


def base_jobs():
    """(name, job) for every example job file, thinned."""
    out = []
    for path in sorted(ROOT.glob("examples/*.json")) + sorted(ROOT.glob("examples/gallery/*.json")):
        job = json.loads(path.read_text())
        if "formula" in job.get("model", {}):
            continue
        out.append((path.stem, thin(job)))
    return out


def model_bases(examples):
    """One small job per model: the first example of it, or states from EXTRA_STATES."""
    bases = {}
    for name, job in examples:
        model = job["model"]["name"]
        if model in EXTRA_STATES:
            continue
        if model not in bases and "section" in job and "coordinate" in job["section"]:
            bases[model] = job
    for model, states in EXTRA_STATES.items():
        if model not in bases:
            dt = {"henon_heiles": 0.05, "double_spherical_pendulum": 0.001}.get(model, 0.01)
            bases[model] = {"model": {"name": model}, "integrator": {"name": "", "dt": dt},
                            "steps": 3000, "segment_steps": 1000,
                            "ensemble": {"states": states},
                            "section": {"coordinate": "q0" if model != "rigid_body_so3" else "Pi0",
                                        "value": 0.0, "direction": "both"}}
    return bases


def variants(model, base, integrators, implicit):
    """(name, job) of every feature variant of every integrator of one model."""
    out = []
    for integ in integrators:
        job = copy.deepcopy(base)
        job["integrator"] = {"name": integ, "dt": base["integrator"]["dt"]}
        job.pop("diagnostics", None)
        for precision in ("double", "float"):
            j = copy.deepcopy(job)
            j["precision"] = precision
            # Full buffers: small max_crossings and a section every step.
            j["section"]["max_crossings"] = 50
            out.append((f"{model}-{integ}-{precision}-plane", j))
            s = copy.deepcopy(j)
            s["section"] = {"stroboscopic": {"every": 13}, "max_crossings": 30}
            out.append((f"{model}-{integ}-{precision}-strobe", s))
            b = copy.deepcopy(j)
            del b["section"]
            b["diagnostics"] = {"conservation_every": 7}
            out.append((f"{model}-{integ}-{precision}-every7", b))
            if model not in ("rigid_body_so3", "kirchhoff_se3"):  # no bound position to escape
                e = copy.deepcopy(j)
                e["escape_radius"] = 1.5
                e["diagnostics"] = {"conservation_every": 3}
                out.append((f"{model}-{integ}-{precision}-escape", e))
            if integ in implicit:
                t = copy.deepcopy(j)
                t["newton_tolerance"] = 1e-15 if precision == "double" else 1e-7
                t["integrator"]["newton_iterations"] = 1
                out.append((f"{model}-{integ}-{precision}-newton", t))
        tj = copy.deepcopy(job)
        tj["diagnostics"] = {"tangent": True}
        tj["steps"] = 600
        tj["segment_steps"] = 200
        out.append((f"{model}-{integ}-double-tangent", tj))
    return out


def run(vigor, job, out_dir, threads, backend="cpu"):
    job = copy.deepcopy(job)
    job["output"] = {"dir": str(out_dir)}
    job_file = out_dir.with_suffix(".json")
    job_file.write_text(json.dumps(job))
    p = subprocess.run([vigor, "run", str(job_file), "--backend", backend, "--quiet", "--force",
                        "--threads", str(threads)], capture_output=True, text=True)
    # Messages that name the job file or the directory differ only by the path.
    err = p.stderr.replace(str(out_dir), "OUT").replace(str(job_file), "JOB")
    return p.returncode, err


def compare_dirs(a, b, ignored=frozenset()):
    """Differences between two results directories, as text lines; summary.json keys in VOLATILE
    and `ignored` are not compared."""
    diffs = []
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    for name in names:
        fa, fb = a / name, b / name
        if not fa.exists() or not fb.exists():
            diffs.append(f"{name}: only in one")
            continue
        if name == "summary.json":
            ja, jb = json.loads(fa.read_text()), json.loads(fb.read_text())
            for k in sorted(set(ja) | set(jb)):
                if k in VOLATILE or k in ignored:
                    continue
                if ja.get(k) != jb.get(k):
                    diffs.append(f"summary.json[{k}]: {ja.get(k)!r} != {jb.get(k)!r}")
        elif name.endswith(".csv") and fa.read_bytes() != fb.read_bytes():
            diffs.append(f"{name}: differs")
    return diffs


def plane_hit_problems(job, out_dir):
    """What is wrong with the hits of a plane section in one results directory: every hit lies on
    the plane (the locator pins the section coordinate to the value) at a time inside the run.
    Byte identity alone passes a path that writes the same wrong bytes in both builds."""
    sec = job.get("section", {})
    f = out_dir / "sections.csv"
    if "coordinate" not in sec or not f.exists():
        return []
    lines = f.read_text().splitlines()
    header = lines[0].split(",")
    col, t_col = header.index(sec["coordinate"]), header.index("t")
    value = float(sec.get("value", 0.0))
    t_end = job["steps"] * job["integrator"]["dt"] * (1 + 1e-6)
    for n, line in enumerate(lines[1:], start=2):
        cells = line.split(",")
        t, x = float(cells[t_col]), float(cells[col])
        if x != value or not 0 <= t <= t_end:
            return [f"sections.csv line {n}: t = {t}, {sec['coordinate']} = {x} (plane at {value})"]
    return []


def pair(text, kind):
    """"A,B" or "A" (both sides) as a pair."""
    parts = text.split(",")
    if len(parts) == 1:
        parts *= 2
    if len(parts) != 2 or not all(parts):
        raise SystemExit(f"compare_builds: --{kind} wants A,B or A, not {text!r}")
    return parts


def unavailable(vigor, backend, job, work):
    """Why `backend` cannot run here (the first job's error), or None when it can."""
    if backend == "cpu":
        return None
    code, err = run(vigor, job, work / f"probe-{backend}", 1, backend)
    return None if code == 0 else f"exit {code}: {err.strip()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--work", default="build/compare-builds")
    ap.add_argument("--threads", default="2", help="N, or OLD,NEW")
    ap.add_argument("--backends", default="cpu,cpu", help="OLD,NEW (cpu, cuda, auto)")
    ap.add_argument("--only", default="",
                    help="of the matrix, the jobs whose names match this regular expression")
    ap.add_argument("--quick", action="store_true", help="the example jobs only")
    args = ap.parse_args()
    backends = pair(args.backends, "backends")
    threads = [int(t) for t in pair(args.threads, "threads")]
    ignored = BACKEND if backends[0] != backends[1] or threads[0] != threads[1] else frozenset()
    work = pathlib.Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    (work / "old").mkdir(parents=True)
    (work / "new").mkdir(parents=True)

    examples = base_jobs()
    jobs = list(examples)
    if not args.quick:
        models, implicit = list_models(args.new)
        bases = model_bases(examples)
        for model, info in sorted(models.items()):
            if model in bases:
                jobs += variants(model, bases[model], info["integrators"], implicit)
            else:
                print(f"note: no states for model {model}; not in the matrix")
    if args.only:
        matrix = [(name, job) for name, job in jobs[len(examples):] if re.search(args.only, name)]
        jobs = examples + matrix
    for vigor, backend in {(args.old, backends[0]), (args.new, backends[1])}:
        why = unavailable(vigor, backend, examples[0][1], work)
        if why is None:
            continue
        required = os.environ.get("VIGOR_REQUIRE_GPU") == "1"
        print(f"{'FAIL' if required else 'skip'}: backend {backend} of {vigor}: {why}")
        return 1 if required else SKIP
    failures = 0
    for k, (name, job) in enumerate(jobs):
        ra = run(args.old, job, work / "old" / name, threads[0], backends[0])
        rb = run(args.new, job, work / "new" / name, threads[1], backends[1])
        problems = []
        if ra != rb:
            problems.append(f"exit/stderr: {ra!r} != {rb!r}")
        elif ra[0] == 0:
            problems += compare_dirs(work / "old" / name, work / "new" / name, ignored)
        if rb[0] == 0:
            problems += plane_hit_problems(job, work / "new" / name)
        status = "ok" if not problems else "DIFF"
        print(f"[{k + 1}/{len(jobs)}] {status:4} {name}" + ("" if ra[0] == 0 else f" (exit {ra[0]})"))
        for p in problems:
            print("        " + p)
        failures += bool(problems)
    print(f"{len(jobs) - failures} of {len(jobs)} jobs identical"
          f" ({backends[0]}, {threads[0]} thread(s), against {backends[1]}, {threads[1]})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
