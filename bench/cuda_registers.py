#!/usr/bin/env python3
"""Registers, stack frame and spills of every CUDA kernel of a build, from ptxas; two builds side by
side. No GPU is needed: ptxas reports what it allocated when it compiles.

    python3 bench/cuda_registers.py BUILD [BASE_BUILD] [--models a,b] [--jobs 2] [--json FILE]
    python3 bench/cuda_registers.py REPORT.json BASE_REPORT.json[:base]

BUILD (and BASE_BUILD) are configured vigor builds with the CUDA backend (CMake found nvcc); their
generated per-model translation units (BUILD/generated/cuda_<model>.cu) are compiled again with the
build's own nvcc flags plus `-Xptxas -v`, one model per job. With a BASE_BUILD, each kernel's
register count is printed next to the base's with the ratio, and the exit status is 1 when a
kernel uses more than 10 % more registers than in the base, or spills where the base did not.

Either may also be a report this script wrote with --json (bench/results/cuda-registers-*.json): its
kernels' counts stand for the build it measured, so a build is compared with a recorded one without
rebuilding it. `REPORT.json:base` takes the counts of that report's own base instead (base_regs,
base_spill). Kernels are matched by their readable names.
"""
import argparse
import concurrent.futures
import json
import pathlib
import re
import shlex
import subprocess
import sys


def flags_of(build):
    """nvcc, its flags, defines and includes from the build's flags.make."""
    flags = (build / "CMakeFiles/vigor_host.dir/flags.make").read_text()
    get = lambda key: re.search(rf"^{key} = (.*)$", flags, re.M).group(1)
    cache = (build / "CMakeCache.txt").read_text()
    nvcc = re.search(r"^CMAKE_CUDA_COMPILER:\w+=(.*)$", cache, re.M).group(1)
    includes = get("CUDA_INCLUDES")
    if includes.startswith("--options-file"):
        rsp = build / includes.split()[1]
        includes = rsp.read_text()
    # A build for testing without a GPU makes PTX only (CMAKE_CUDA_ARCHITECTURES=90-virtual), and
    # then ptxas never runs: such a target gets the machine code of its own architecture here.
    cuda_flags = [re.sub(r"^(--generate-code=arch=compute_(\d+),code=)\[compute_\d+\]$",
                         r"\1[sm_\2]", f)
                  for f in shlex.split(get("CUDA_FLAGS"))]
    return [nvcc] + shlex.split(get("CUDA_DEFINES")) + shlex.split(includes) + cuda_flags


def compile_model(build, cmd, source):
    p = subprocess.run(cmd + ["-Xptxas", "-v", "-c", str(source), "-o", "/dev/null"],
                       cwd=build, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{source}: nvcc failed:\n{p.stderr[-3000:]}")
    return p.stderr


def parse(text):
    """{mangled kernel: {regs, stack, spill}} from ptxas -v output.

    ptxas prints, per entry function, "Compiling entry function K", "Function properties for K"
    with its stack frame and spills, then "Used N registers"; the properties of the device
    functions it kept out of line follow under their own names. Stack and spills are taken only
    from the properties block of K itself: a helper's block after K's is not K's.
    """
    out, cur, props = {}, None, None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '(\S+)'", line)
        if m:
            cur = m.group(1)
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            props = m.group(1)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores", line)
        if m and cur and props == cur:
            out.setdefault(cur, {}).update(stack=int(m.group(1)), spill=int(m.group(2)))
        m = re.search(r"Used (\d+) registers", line)
        if m and cur:
            out.setdefault(cur, {})["regs"] = int(m.group(1))
    return out


def readable(mangled):
    d = subprocess.run(["c++filt"], input=mangled, capture_output=True, text=True).stdout.strip()
    d = re.sub(r"vigor::(kernels|models)::", "", d)
    return re.sub(r"\(.*", "", d)


def recorded_kernels(spec, models):
    """{readable kernel: {regs, stack, spill}} from a report written with --json ("FILE[:base]")."""
    path, _, which = spec.partition(":")
    data = json.loads(pathlib.Path(path).read_text())
    rows = data["kernels"] if isinstance(data, dict) else data
    out = {}
    for row in rows:
        if models and not any(re.search(rf"(?<![A-Za-z]){model_type(m)}<", row["kernel"])
                              for m in models):
            continue
        if which == "base":
            if "base_regs" in row:
                out[row["kernel"]] = {"regs": row["base_regs"], "spill": row.get("base_spill", 0)}
        else:
            out[row["kernel"]] = {k: row.get(k) for k in ("regs", "stack", "spill")}
    return out


def model_type(model):
    """henon_heiles -> HenonHeiles: the model's class as a readable kernel name spells it."""
    return "".join(w.capitalize() for w in model.split("_")).replace("So3", "SO3").replace("Se3", "SE3")


def kernels_of(build, models, jobs):
    if build.endswith(".json") or ".json:" in build:
        return recorded_kernels(build, models)
    build = pathlib.Path(build).resolve()
    cmd = flags_of(build)
    sources = sorted((build / "generated").glob("cuda_*.cu"))
    if models:
        sources = [s for s in sources if s.stem[len("cuda_"):] in models]
    result = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for text in pool.map(lambda s: compile_model(build, cmd, s), sources):
            result.update(parse(text))
    kernels = {readable(k): v for k, v in result.items() if "segment" in k}
    if not kernels:
        raise RuntimeError(f"{build}: ptxas reported no segment kernel")
    return kernels


def template_args(name):
    """The top-level template arguments of 'void f<A<x, y>, B, C>' and the name before them."""
    head, _, rest = name.partition("<")
    args, depth, cur = [], 0, ""
    for ch in rest[:-1] if rest.endswith(">") else rest:
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            continue
        depth += (ch == "<") - (ch == ">")
        cur += ch
    args.append(cur.strip())
    return head, args


def match_key(name):
    """The name a kernel is matched by across builds. A tangent kernel names the plain integrator
    (which locates crossings) and the tangent step since 2026-11-27; before, only the tangent
    step: matched without the plain one."""
    head, args = template_args(name)
    if head.endswith("segment_tangent_kernel") and len(args) == 4:
        return f"{head}<{', '.join([args[0]] + args[2:])}>"
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("base", nargs="?")
    ap.add_argument("--models", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json")
    a = ap.parse_args()
    models = set(filter(None, a.models.split(",")))
    new = kernels_of(a.build, models, a.jobs)
    base = kernels_of(a.base, models, a.jobs) if a.base else {}
    base = {match_key(k): v for k, v in base.items()}
    bad = 0
    rows = []
    for k in sorted(new):
        n = new[k]
        if n.get("regs") is None:
            continue
        b = base.get(match_key(k))
        row = {"kernel": k, "regs": n.get("regs"), "stack": n.get("stack"),
               "spill": n.get("spill")}
        line = f"{n.get('regs', '-'):>4} regs {n.get('stack', 0):>4} B stack {n.get('spill', 0):>4} B spill"
        if b:
            ratio = n["regs"] / b["regs"]
            row.update(base_regs=b["regs"], base_spill=b.get("spill", 0), ratio=ratio)
            worse = ratio > 1.10 or (n.get("spill", 0) > 0 and b.get("spill", 0) == 0)
            bad += worse
            line += f"  | base {b['regs']:>4} regs {b.get('spill', 0):>4} B spill  x{ratio:.3f}"
            line += "  <-- over" if worse else ""
        rows.append(row)
        print(f"{line}  {row['kernel'][:110]}")
    if base:
        missing = sorted(set(base) - {match_key(k) for k in new})
        for k in missing:
            print(f"   only in base: {k[:110]}")
        print(f"{len(new)} kernels, {bad} more than 10 % over the base's registers or newly spilling")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
