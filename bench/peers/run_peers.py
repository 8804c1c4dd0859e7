#!/usr/bin/env python3
"""vigor against its peers, like for like: the same problem (Hénon–Heiles at E = 1/8), the same
algorithm (Störmer–Verlet leapfrog; symplectic Euler B for diffrax), the same precision and the same
step count, each peer written as its users write it (bench/peers/peer_*.py, vigor-peer-cpu), run in
turn on the same initial states (workload.py).

For every peer, precision and ensemble size: one warm-up run inside the peer, --repeats timed runs,
the median of the kernel-only and of the end-to-end times; the final states checked against vigor's
own run of the same algorithm and precision (same algorithm: agreement to round-off amplified by
the chaotic orbits, FP64 tol 1e-9, FP32 tol 2e-3 relative to max |x|). A fast but wrong peer is
reported as wrong. Peers that are not installed are listed as missing, not failed.

Writes bench/results/peers-<machine>.json, a Markdown table (.md) and a log-log plot (.png) of
throughput against ensemble size. Usage (from the repository root, after `make`):

    python3 bench/peers/run_peers.py                     # every peer found, sizes 1e3 .. 1e6
    python3 bench/peers/run_peers.py --venv .peer-venv   # first installs JAX + diffrax there (CPU)
    python3 bench/peers/run_peers.py --sizes 1e3,1e4 --peers vigor-cpu,odeint --repeats 1
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import numpy as np  # noqa: E402

import workload  # noqa: E402

TOL = {"fp64": 1e-9, "fp32": 2e-3}

# name: (kind, variant, algorithm, needs) — algorithm "verlet" or "symplectic_euler_b".
# vigor's "-bare" runs set diagnostics.conservation_every = steps: H is evaluated once, after the
# last step, instead of after every step (the energy-error monitor), so the step loop does what
# the hand-written loops do; the states are the same bits either way.
PEERS = {
    "vigor-cpu": ("vigor", "cpu", "verlet", "vigor"),
    "vigor-cuda": ("vigor", "cuda", "verlet", "gpu"),
    "vigor-cpu-bare": ("vigor", "cpu-bare", "verlet", "vigor"),
    "vigor-cuda-bare": ("vigor", "cuda-bare", "verlet", "gpu"),
    "vigor-cpu-se": ("vigor", "cpu", "symplectic_euler_b", "vigor"),
    "simd-ref": ("cpu", "simd", "verlet", "peer-cpu"),
    "odeint": ("cpu", "odeint", "verlet", "peer-cpu"),
    "jax-vmap": ("py", "peer_jax.py:vmap", "verlet", "jax"),
    "jax-diffrax": ("py", "peer_jax.py:diffrax", "symplectic_euler_b", "diffrax"),
    "torch-eager": ("py", "peer_torch.py:eager", "verlet", "torch"),
    "torch-compile": ("py", "peer_torch.py:compile", "verlet", "torch"),
    "cupy-kernel": ("py", "peer_cupy.py:rawkernel", "verlet", "cupy"),
}
# Nominal peaks (non-tensor-core FP64 / FP32 FLOP/s) of the GPUs this suite is run on.
GPU_PEAKS = {"H100 PCIe": (25.6e12, 51.2e12), "H100": (33.5e12, 66.9e12),
             "H200": (33.5e12, 66.9e12), "A100": (9.7e12, 19.5e12)}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def gpu_name():
    if not shutil.which("nvidia-smi"):
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        names = [x.strip() for x in out.stdout.splitlines() if x.strip()]
        return names[0] if out.returncode == 0 and names else None
    except (OSError, subprocess.SubprocessError):
        return None


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def has_module(python, module):
    r = subprocess.run([python, "-c", f"import {module}"], capture_output=True)
    return r.returncode == 0


def make_venv(path):
    """A virtual environment with the CPU peers from PyPI (never a requirement of the build)."""
    py = os.path.join(path, "bin", "python")
    if not os.path.exists(py):
        log(f"creating {path} (JAX, diffrax, numpy from PyPI)")
        subprocess.run([sys.executable, "-m", "venv", path], check=True)
    if not has_module(py, "diffrax"):
        subprocess.run([py, "-m", "pip", "install", "-q", "numpy", "jax", "diffrax"], check=True)
    return py


def run_vigor(args, variant, algorithm, precision, init, n, workdir):
    backend, _, bare = variant.partition("-")
    job = {
        "model": {"name": "henon_heiles"},
        "integrator": {"name": algorithm, "dt": args.dt},
        "steps": args.steps,
        "ensemble": {"file": {"path": init}},
        "backend": backend,
        "precision": "double" if precision == "fp64" else "float",
        "output": {"dir": os.path.join(workdir, "vigor-out")},
    }
    if bare:
        job["diagnostics"] = {"conservation_every": args.steps}
    path = os.path.join(workdir, "job.json")
    with open(path, "w") as f:
        json.dump(job, f)
    kernel, e2e = [], []
    cmd = [args.vigor, "run", path, "--quiet", "--force"]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    summary = None
    for _ in range(args.repeats):
        t = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        dt = time.perf_counter() - t
        if r.returncode != 0:
            raise RuntimeError(f"vigor exited {r.returncode}: {r.stderr.strip()}")
        with open(os.path.join(workdir, "vigor-out", "summary.json")) as f:
            summary = json.load(f)
        kernel.append(summary["kernel_seconds"])
        e2e.append(dt)
    names = ["q0", "q1", "p0", "p1"]
    with open(os.path.join(workdir, "vigor-out", "final.csv")) as f:
        header = f.readline().strip().split(",")
    cols = [header.index(c) for c in names]
    final = np.loadtxt(os.path.join(workdir, "vigor-out", "final.csv"), delimiter=",",
                       skiprows=1, usecols=cols, ndmin=2)
    device = f"{summary.get('backend', variant)}: {summary.get('device', '')}"
    return {"kernel_s": kernel, "end_to_end_s": e2e, "device": device,
            "notes": f"vigor {summary.get('vigor_version', '')}"}, final


def run_external(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"exit {r.returncode}: {' | '.join(tail)}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def check_final(final, ref, precision):
    """(max |final - ref| / max |ref|, whether within TOL[precision]); NaN and not ok without a
    reference, with a shape mismatch or with non-finite values."""
    if ref is None or final.shape != ref.shape:
        return float("nan"), False
    diff = float(np.max(np.abs(final - ref))) / max(float(np.max(np.abs(ref))), 1e-300)
    return diff, bool(diff <= TOL[precision])


def median(v):
    return float(np.median(np.asarray(v, dtype=float)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1e3,1e4,1e5,1e6")
    ap.add_argument("--steps", type=int, default=workload.STEPS)
    ap.add_argument("--dt", type=float, default=workload.DT)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--precisions", default="fp64,fp32")
    ap.add_argument("--peers", default="", help="comma-separated subset of: " + ",".join(PEERS))
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (default: all)")
    ap.add_argument("--max-seconds", type=float, default=60.0,
                    help="skip a peer's larger sizes once one timed run took longer (or the "
                         "whole invocation, compilation included, four times longer)")
    ap.add_argument("--vigor", default=os.path.join(ROOT, "build", "vigor"))
    ap.add_argument("--peer-cpu", default=os.path.join(ROOT, "build", "bench", "vigor-peer-cpu"))
    ap.add_argument("--python", default=sys.executable, help="Python with JAX/PyTorch/CuPy")
    ap.add_argument("--venv", default="", help="create/use this venv for the Python peers (CPU)")
    ap.add_argument("--out", default="", help="results stem (default bench/results/peers-<host>)")
    args = ap.parse_args()

    sizes = [int(float(s)) for s in args.sizes.split(",") if s]
    precisions = [p for p in args.precisions.split(",") if p]
    gpu = gpu_name()
    python = make_venv(args.venv) if args.venv else args.python
    available = {
        "vigor": os.access(args.vigor, os.X_OK),
        "gpu": gpu is not None and os.access(args.vigor, os.X_OK),
        "peer-cpu": os.access(args.peer_cpu, os.X_OK),
    }
    for mod in ("jax", "diffrax", "torch", "cupy"):
        available[mod] = has_module(python, mod)
    available["cupy"] = available["cupy"] and gpu is not None
    wanted = [p for p in (args.peers.split(",") if args.peers else PEERS) if p]
    for p in wanted:
        if p not in PEERS:
            ap.error(f"--peers: unknown peer '{p}' (known: {', '.join(PEERS)})")
    if not available["vigor"]:
        ap.error(f"--vigor: {args.vigor} is not an executable (run `make` first)")
    missing = [p for p in wanted if not available[PEERS[p][3]]]
    run = [p for p in wanted if p not in missing]
    # vigor's own run of each algorithm is the reference of every check.
    for ref in ("vigor-cpu", "vigor-cpu-se"):
        needed = any(PEERS[p][2] == PEERS[ref][2] for p in run)
        if needed and ref not in run:
            run.insert(0, ref)
    log(f"peers: {', '.join(run)}; missing: {', '.join(missing) or 'none'}")

    threads = args.threads or os.cpu_count()
    peak = {"cpu": None, "gpu": None}
    if available["peer-cpu"]:
        try:
            peak["cpu"] = run_external([args.peer_cpu, "--variant", "peak", "--precision", "fp64",
                                        "--threads", str(threads)])
        except RuntimeError as e:
            log(f"peak probe failed: {e}")
    if gpu:
        for key, v in GPU_PEAKS.items():
            if key in gpu:
                peak["gpu"] = {"fp64": v[0], "fp32": v[1], "name": gpu, "source": "nominal"}
                break

    rows = []
    stopped = set()
    host = platform.node().split(".")[0] or "machine"
    stem = args.out or os.path.join(ROOT, "bench", "results", f"peers-{host}")
    os.makedirs(os.path.dirname(os.path.abspath(stem)), exist_ok=True)
    result = {
        "date": datetime.date.today().isoformat(),
        "machine": {"cpu": cpu_name(), "threads": threads, "gpu": gpu},
        "workload": {"model": "henon_heiles", "energy": workload.ENERGY, "dt": args.dt,
                     "steps": args.steps, "flops_per_step": workload.FLOPS_PER_STEP},
        "peak": peak, "missing": missing, "rows": rows,
    }
    with tempfile.TemporaryDirectory(prefix="vigor-peers-") as tmp:
        for n in sizes:
            init = os.path.join(tmp, f"init-{n}.npy")
            np.save(init, workload.initial_states(n))
            for prec in precisions:
                refs = {}
                for name in run:
                    kind, variant, algorithm, _ = PEERS[name]
                    if (name, prec) in stopped:
                        continue
                    out = os.path.join(tmp, f"{name}-{prec}-{n}.npy")
                    log(f"{name:14s} {prec} N={n:>9d} ...")
                    started = time.perf_counter()
                    try:
                        if kind == "vigor":
                            res, final = run_vigor(args, variant, algorithm, prec, init, n, tmp)
                        else:
                            if kind == "cpu":
                                cmd = [args.peer_cpu, "--variant", variant, "--threads", str(threads)]
                            else:
                                script, var = variant.split(":")
                                cmd = [python, os.path.join(HERE, script), "--variant", var]
                            cmd += ["--precision", prec, "--init", init, "--out", out,
                                    "--steps", str(args.steps), "--dt", str(args.dt),
                                    "--repeats", str(args.repeats)]
                            res = run_external(cmd)
                            final = np.load(out)
                    except (RuntimeError, OSError, ValueError) as e:
                        log(f"  failed: {e}")
                        rows.append({"peer": name, "precision": prec, "n": n, "error": str(e)})
                        save(result, stem, sizes, precisions)
                        continue
                    wall = time.perf_counter() - started
                    if kind == "vigor" and variant == "cpu":
                        refs.setdefault(algorithm, final)
                    diff, ok = check_final(final, refs.get(algorithm), prec)
                    work = float(n) * args.steps
                    k, e = median(res["kernel_s"]), median(res["end_to_end_s"])
                    on_gpu = res["device"].startswith(("gpu", "cuda"))
                    pk = peak["gpu" if on_gpu else "cpu"]
                    flops = work * workload.FLOPS_PER_STEP[algorithm] / k
                    row = {
                        "peer": name, "algorithm": algorithm, "precision": prec, "n": n,
                        "steps": args.steps, "kernel_s": k, "end_to_end_s": e,
                        "kernel_s_all": res["kernel_s"], "end_to_end_s_all": res["end_to_end_s"],
                        "traj_steps_per_s": work / k, "traj_steps_per_s_end_to_end": work / e,
                        "flops": flops,
                        "peak_fraction": flops / pk[prec] if pk and pk.get(prec) else None,
                        "device": res["device"], "notes": res.get("notes", ""),
                        "peer_wall_s": wall,
                        "check": {"max_rel_diff": diff, "tolerance": TOL[prec],
                                  "reference": f"vigor-cpu {algorithm} {prec}", "ok": ok},
                    }
                    rows.append(row)
                    log(f"  {work / k:.3e} traj-steps/s kernel, {work / e:.3e} end to end, "
                        f"diff {diff:.1e} {'ok' if ok else 'WRONG'}")
                    save(result, stem, sizes, precisions)
                    # The whole invocation counts (JIT compilation, warm-up, every repeat).
                    if max(res["kernel_s"]) > args.max_seconds or wall > 4 * args.max_seconds:
                        stopped.add((name, prec))

    save(result, stem, sizes, precisions, with_plot=True)
    wrong = [r for r in rows if "check" in r and not r["check"]["ok"]]
    failed = [r for r in rows if "error" in r]
    log(f"wrote {stem}.json, .md, .png; {len(wrong)} wrong, {len(failed)} failed")
    return 1 if wrong or failed else 0


def save(result, stem, sizes, precisions, with_plot=False):
    """Write the JSON and the Markdown table (and the plot): after every row too, so that a run
    cut short (a time limit, a crash of one peer's runtime) keeps what it measured."""
    with open(stem + ".json.partial", "w") as f:
        json.dump(result, f, indent=1)
    os.replace(stem + ".json.partial", stem + ".json")
    with open(stem + ".md", "w") as f:
        f.write(markdown(result, sizes, precisions))
    if with_plot:
        plot(result, stem + ".png")


def markdown(result, sizes, precisions):
    rows = [r for r in result["rows"] if "check" in r]
    peers = list(dict.fromkeys(r["peer"] for r in rows))
    m = result["machine"]
    out = [f"Peers on {m['cpu']} ({m['threads']} threads)"
           + (f" and {m['gpu']}" if m["gpu"] else "") + f", {result['date']}. "
           f"Hénon–Heiles, {result['workload']['steps']} steps, h = {result['workload']['dt']}. "
           "Kernel-only trajectory-steps/s (end to end in parentheses); a peer whose final states "
           "disagree with vigor's is marked WRONG.", ""]
    for prec in precisions:
        out.append(f"| {prec} | " + " | ".join(f"N = {n:.0e}" for n in sizes)
                   + " | % of peak at largest N |")
        out.append("| --- |" + " ---: |" * (len(sizes) + 1))
        for p in peers:
            cells, frac = [], ""
            for n in sizes:
                r = next((x for x in rows if x["peer"] == p and x["n"] == n
                          and x["precision"] == prec), None)
                if r is None:
                    cells.append("—")
                    continue
                c = f"{r['traj_steps_per_s']:.2e} ({r['traj_steps_per_s_end_to_end']:.2e})"
                cells.append(c if r["check"]["ok"] else c + " WRONG")
                if r["peak_fraction"]:
                    frac = f"{100 * r['peak_fraction']:.1f}"
            out.append(f"| {p} | " + " | ".join(cells) + f" | {frac} |")
        out.append("")
    out += ratio_table(rows, sizes, precisions)
    if result["missing"]:
        out.append("Not installed here: " + ", ".join(result["missing"]) + ".")
    return "\n".join(out) + "\n"


# The comparisons the targets are stated in (kernel-only rates, same precision, same N).
RATIOS = [("vigor-cuda", "jax-vmap"), ("vigor-cuda", "torch-eager"), ("vigor-cuda", "cupy-kernel"),
          ("vigor-cuda-bare", "cupy-kernel"), ("vigor-cuda", "vigor-cpu"),
          ("vigor-cuda-bare", "vigor-cpu-bare"), ("vigor-cpu", "odeint"),
          ("vigor-cpu-bare", "simd-ref")]


def ratio_table(rows, sizes, precisions):
    """Markdown rows 'a / b' of kernel rates for every pair in RATIOS with both peers measured
    (and checked ok) at some size."""
    def rate(peer, prec, n):
        r = next((x for x in rows if x["peer"] == peer and x["precision"] == prec and x["n"] == n
                  and x["check"]["ok"]), None)
        return r["traj_steps_per_s"] if r else None
    lines = []
    for prec in precisions:
        body = []
        for a, b in RATIOS:
            cells = []
            for n in sizes:
                ra, rb = rate(a, prec, n), rate(b, prec, n)
                cells.append(f"{ra / rb:.3g}" if ra and rb else "—")
            if any(c != "—" for c in cells):
                body.append(f"| {a} / {b} | " + " | ".join(cells) + " |")
        if body:
            lines.append(f"| ratio, {prec} | " + " | ".join(f"N = {n:.0e}" for n in sizes) + " |")
            lines.append("| --- |" + " ---: |" * len(sizes))
            lines += body + [""]
    return lines


def plot(result, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no plot")
        return
    rows = [r for r in result["rows"] if "check" in r]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    # One colour per peer (its two precisions share it: solid FP64, dashed FP32).
    peers = list(dict.fromkeys(r["peer"] for r in rows))
    colours = plt.get_cmap("tab20" if len(peers) > 10 else "tab10")
    for (p, prec) in dict.fromkeys((r["peer"], r["precision"]) for r in rows):
        rs = sorted((r for r in rows if r["peer"] == p and r["precision"] == prec),
                    key=lambda r: r["n"])
        ax.plot([r["n"] for r in rs], [r["traj_steps_per_s"] for r in rs],
                "o-" if prec == "fp64" else "s--", color=colours(peers.index(p)),
                label=f"{p} {prec}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("trajectories")
    ax.set_ylabel("trajectory-steps / s (kernel)")
    m = result["machine"]
    ax.set_title(f"Verlet on Hénon–Heiles: {m['gpu'] or m['cpu']}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=150)


if __name__ == "__main__":
    sys.exit(main())
