#!/usr/bin/env python3
"""The compile CPU time of each translation unit in two builds, the two compiled at the same time.

    python3 bench/compile_time_pairs.py OLD_BUILD NEW_BUILD [PATTERN ...] [--json FILE] [--fold REGEX]

A clean build's time says how much longer a tree takes, not where. This compiles each translation
unit whose path (relative to its source tree) matches a PATTERN (a regular expression; default:
every unit), once with each build's own command from its compile_commands.json, the old and the
new one side by side, one per core: the machine's noise then falls on both alike. It prints the
user CPU seconds of each and their sum over the units both builds have. With --fold REGEX, a unit
the new build splits in two (cpu_x.cpp and cpu_x_solving.cpp, --fold '_solving(?=\.cpp$)') is timed
as one: the old unit on one core, the new parts in turn on the other. Objects go to a scratch
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
import signal
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


def spawn(name, cmd, directory, scratch, err=None):
    """Starts one compile in its own session (so that a filler can be stopped with its children);
    errors go to a file, so that no compile waits on a pipe while another is being waited for."""
    script = f"cd {shlex.quote(str(directory))} && {with_output(cmd, scratch / f'{name}.o')}"
    errfile = str(err) if err else str(scratch / f"{name}.err")
    actions = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, errfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
    return os.posix_spawnp("bash", ["bash", "-c", script], os.environ, file_actions=actions,
                           setsid=True)


def compile_lanes(lanes, scratch):
    """Runs each lane's (name, command, directory) jobs one after the other, the lanes at the same
    time; {name: user CPU seconds}, the shell's and its children's, from the rusage wait4 returns.
    A lane that finishes first compiles its last unit again, untimed, until every lane is done, so
    that each timed compile shares the machine as much as the others (a unit of the old build may
    be two in the new one, --fold). The shells are spawned with os.posix_spawnp rather than
    subprocess, whose bookkeeping may reap a finished child itself (when a later Popen is made)
    before wait4 could read its rusage."""
    queues = {lane: list(jobs) for lane, jobs in lanes.items()}
    running = {}  # pid: (lane, name or None for a filler)
    last = {}
    user = {}

    def start(lane):
        if queues[lane]:
            name, cmd, directory = queues[lane].pop(0)
            last[lane] = (cmd, directory)
            running[spawn(name, cmd, directory, scratch)] = (lane, name)
        else:
            cmd, directory = last[lane]
            pid = spawn(f"filler-{lane}", cmd, directory, scratch, err=os.devnull)
            running[pid] = (lane, None)

    def real_work_left():
        return any(name for _, name in running.values()) or any(queues.values())

    for lane in lanes:
        start(lane)
    while real_work_left():
        pid, status, usage = os.wait4(-1, 0)
        lane, name = running.pop(pid)
        if name is not None:
            code = os.waitstatus_to_exitcode(status)
            if code != 0:
                err = (scratch / f"{name}.err").read_text(errors="replace")
                for other in running:
                    os.killpg(other, signal.SIGKILL)
                sys.exit(f"{name}: compile failed ({code}):\n{err[-2000:]}")
            user[name] = usage.ru_utime
        if real_work_left():
            start(lane)
    for pid in list(running):
        os.killpg(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return user


def compile_pair(jobs, scratch):
    """Runs the (name, command, directory) jobs at once, one per lane; {name: user CPU seconds}."""
    return compile_lanes({name: [(name, cmd, directory)] for name, cmd, directory in jobs}, scratch)


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
    ap.add_argument("--keep", help="keep the objects under DIR/old and DIR/new (not those of units --fold "
                                   "joined: two new objects have no one old object to replace)")
    ap.add_argument("--fold", metavar="REGEX",
                    help="a new unit whose path less REGEX's match is an old unit's path is timed with "
                         "it: the old unit against the new build's units of that name, in turn")
    args = ap.parse_args()
    old, new = units(args.old), units(args.new)
    pats = [re.compile(p) for p in args.patterns] or [re.compile("")]
    fold = re.compile(args.fold) if args.fold else None
    groups = {}  # old unit: the new build's units timed against it
    for k in sorted(new):
        base = fold.sub("", k, count=1) if fold else k
        if base in old:
            groups.setdefault(base, []).append(k)
    keys = sorted(k for k in groups if any(p.search(k) for p in pats))
    if not keys:
        sys.exit("no translation unit in both builds matches")
    rows = []
    with tempfile.TemporaryDirectory() as t:
        scratch = pathlib.Path(t)
        for k in keys:
            parts = groups[k]
            new_jobs = [("new" if len(parts) == 1 else f"new{i}", *new[part]) for i, part in enumerate(parts)]
            u = compile_lanes({"old": [("old", *old[k])], "new": new_jobs}, scratch)
            if args.keep and len(parts) == 1:
                keep_objects(scratch, pathlib.Path(args.keep), k)
            new_s = sum(u[name] for name, _, _ in new_jobs)
            row = {"unit": k, "old_user_s": u["old"], "new_user_s": new_s}
            if len(parts) > 1:
                row["new_units"] = {part: u[name] for part, (name, _, _) in zip(parts, new_jobs)}
            rows.append(row)
            also = f"  (new: {' + '.join(f'{u[n]:.2f}' for n, _, _ in new_jobs)})" if len(parts) > 1 else ""
            print(f"{k:60} old {u['old']:8.2f} s  new {new_s:8.2f} s  new/old {ratio(new_s, u['old'])}{also}",
                  flush=True)
    so = sum(r["old_user_s"] for r in rows)
    sn = sum(r["new_user_s"] for r in rows)
    print(f"{'sum of ' + str(len(rows)) + ' units':60} old {so:8.2f} s  new {sn:8.2f} s  new/old {ratio(sn, so)}")
    folded = {part for parts in groups.values() for part in parts}
    only = sorted((old.keys() - groups.keys()) | (new.keys() - folded))
    if only:
        print(f"in one build only (not compiled): {', '.join(only[:10])}{' ...' if len(only) > 10 else ''}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"old": args.old, "new": args.new, "units": rows}, indent=1))


if __name__ == "__main__":
    main()
