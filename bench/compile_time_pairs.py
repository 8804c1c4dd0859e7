#!/usr/bin/env python3
"""The compile CPU time of each translation unit in two builds, the two compiled at the same time.

    python3 bench/compile_time_pairs.py OLD_BUILD NEW_BUILD [PATTERN ...] [--json FILE]

A clean build's time says how much longer a tree takes, not where. This compiles each translation
unit whose path (relative to its source tree) matches a PATTERN (a regular expression; default:
every unit), once with each build's own command from its compile_commands.json, the old and the
new one side by side, one per core: the machine's noise then falls on both alike. It prints the
user CPU seconds of each and their sum over the units both builds have. Objects go to a scratch
directory; the builds are not touched. With --keep DIR each unit's two objects are kept there, as
DIR/old/PATH.o and DIR/new/PATH.o: relinked into one build's programs, the old objects give the
old code's speed without a second full build.

Both builds need the compile database: configure them with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON.
"""
import argparse
import json
import os
import pathlib
import re
import shlex
import sys
import tempfile


def units(build):
    """{unit: (command, directory)} of one build's compile database. A unit is its path relative to
    the build tree or else the source tree; a file outside both (a dependency's source) keeps its
    own path, the same in both builds."""
    build = pathlib.Path(build).resolve()
    db = build / "compile_commands.json"
    if not db.is_file():
        sys.exit(f"{db}: not found (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)")
    source = source_dir(build)
    out = {}
    for e in json.loads(db.read_text()):
        f = pathlib.Path(e["file"]).resolve()
        if f.is_relative_to(build):
            key = str(f.relative_to(build))
        elif f.is_relative_to(source):
            key = str(f.relative_to(source))
        else:  # a dependency's source compiled into the build (nanobind's): the same in both
            key = str(f)
        if "command" in e:
            cmd = e["command"]
        else:
            cmd = shlex.join(e["arguments"])
        out[key] = (cmd, e["directory"])
    return out


def source_dir(build):
    """The source tree a CMake build was configured from (its CMakeCache.txt)."""
    cache = build / "CMakeCache.txt"
    if cache.is_file():
        for line in cache.read_text().splitlines():
            if line.startswith("CMAKE_HOME_DIRECTORY:"):
                return pathlib.Path(line.split("=", 1)[1]).resolve()
    return build.parent


def with_output(cmd, obj):
    """The command with its object file redirected (-o FILE)."""
    new, n = re.subn(r"(\s-o\s+)(\"[^\"]*\"|\S+)", lambda m: m.group(1) + shlex.quote(str(obj)), cmd, 1)
    if n != 1:
        sys.exit(f"no -o in: {cmd[:200]}")
    return new


def compile_pair(jobs, scratch):
    """Runs the (name, command, directory) jobs at once; {name: user CPU seconds}, the shell's and
    its children's, from the rusage wait4 returns. Errors go to files, so that neither compile
    waits on a pipe while the other is being waited for. The shells are spawned with
    os.posix_spawnp rather than subprocess, whose bookkeeping may reap a finished child itself
    (when a later Popen is made) before wait4 could read its rusage."""
    pids = {}
    for name, cmd, directory in jobs:
        script = f"cd {shlex.quote(str(directory))} && {with_output(cmd, scratch / f'{name}.o')}"
        actions = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 2, str(scratch / f"{name}.err"),
                    os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
        pids[name] = os.posix_spawnp("bash", ["bash", "-c", script], os.environ, file_actions=actions)
    user = {}
    for name, pid in pids.items():
        _, status, usage = os.wait4(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err = (scratch / f"{name}.err").read_text(errors="replace")
            sys.exit(f"{name}: compile failed ({code}):\n{err[-2000:]}")
        user[name] = usage.ru_utime
    return user


def keep_objects(scratch, keep, unit):
    """Move the pair's objects from scratch to keep/old/UNIT.o and keep/new/UNIT.o."""
    for name in ("old", "new"):
        target = keep / name / f"{unit}.o"
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(scratch / f"{name}.o", target)


def ratio(new, old):
    return f"{new / old:.3f}" if old > 0 else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("patterns", nargs="*", help="regular expressions on the unit's path (default: all)")
    ap.add_argument("--json", help="also write the rows to FILE")
    ap.add_argument("--keep", help="keep the objects under DIR/old and DIR/new")
    args = ap.parse_args()
    old, new = units(args.old), units(args.new)
    pats = [re.compile(p) for p in args.patterns] or [re.compile("")]
    keys = sorted(k for k in old.keys() & new.keys() if any(p.search(k) for p in pats))
    if not keys:
        sys.exit("no translation unit in both builds matches")
    rows = []
    with tempfile.TemporaryDirectory() as t:
        scratch = pathlib.Path(t)
        for k in keys:
            u = compile_pair([("old", *old[k]), ("new", *new[k])], scratch)
            if args.keep:
                keep_objects(scratch, pathlib.Path(args.keep), k)
            rows.append({"unit": k, "old_user_s": u["old"], "new_user_s": u["new"]})
            print(f"{k:60} old {u['old']:8.2f} s  new {u['new']:8.2f} s  new/old {ratio(u['new'], u['old'])}",
                  flush=True)
    so = sum(r["old_user_s"] for r in rows)
    sn = sum(r["new_user_s"] for r in rows)
    print(f"{'sum of ' + str(len(rows)) + ' units':60} old {so:8.2f} s  new {sn:8.2f} s  new/old {ratio(sn, so)}")
    only = sorted((old.keys() ^ new.keys()))
    if only:
        print(f"in one build only (not compiled): {', '.join(only[:10])}{' ...' if len(only) > 10 else ''}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"old": args.old, "new": args.new, "units": rows}, indent=1))


if __name__ == "__main__":
    main()
