#!/usr/bin/env python3
"""Registers, stack frame and spills of every CUDA kernel of a build, from ptxas; two builds side by
side. No GPU is needed: ptxas reports what it allocated when it compiles.

    python3 bench/cuda_registers.py BUILD [BASE_BUILD] [--models a,b] [--jobs 2] [--json FILE]

BUILD (and BASE_BUILD) are configured vigor builds with the CUDA backend (CMake found nvcc); their
generated per-model translation units (BUILD/generated/cuda_<model>.cu) are compiled again with the
build's own nvcc flags plus `-Xptxas -v`, one model per job. With a BASE_BUILD, each kernel's
register count is printed next to the base's with the ratio, and the exit status is 1 when a
kernel uses more than 10 % more registers than in the base, or spills where the base did not.
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
    return [nvcc] + shlex.split(get("CUDA_DEFINES")) + shlex.split(includes) + \
        shlex.split(get("CUDA_FLAGS"))


def compile_model(build, cmd, source):
    p = subprocess.run(cmd + ["-Xptxas", "-v", "-c", str(source), "-o", "/dev/null"],
                       cwd=build, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{source}: nvcc failed:\n{p.stderr[-3000:]}")
    return p.stderr


def parse(text):
    """{mangled kernel: {regs, stack, spill}} from ptxas -v output."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '(\S+)'", line)
        if m:
            cur = m.group(1)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores", line)
        if m and cur:
            out.setdefault(cur, {}).update(stack=int(m.group(1)), spill=int(m.group(2)))
        m = re.search(r"Used (\d+) registers", line)
        if m and cur:
            out.setdefault(cur, {})["regs"] = int(m.group(1))
    return out


def readable(mangled):
    d = subprocess.run(["c++filt"], input=mangled, capture_output=True, text=True).stdout.strip()
    d = re.sub(r"vigor::(kernels|models)::", "", d)
    return re.sub(r"\(.*", "", d)


def kernels_of(build, models, jobs):
    build = pathlib.Path(build).resolve()
    cmd = flags_of(build)
    sources = sorted((build / "generated").glob("cuda_*.cu"))
    if models:
        sources = [s for s in sources if s.stem[len("cuda_"):] in models]
    result = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for text in pool.map(lambda s: compile_model(build, cmd, s), sources):
            result.update(parse(text))
    return {k: v for k, v in result.items() if "segment" in k}


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
    bad = 0
    rows = []
    for k in sorted(new):
        n = new[k]
        b = base.get(k)
        row = {"kernel": readable(k), "regs": n.get("regs"), "stack": n.get("stack"),
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
        missing = sorted(set(base) - set(new))
        for k in missing:
            print(f"   only in base: {readable(k)[:110]}")
        print(f"{len(new)} kernels, {bad} more than 10 % over the base's registers or newly spilling")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
