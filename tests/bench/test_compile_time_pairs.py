#!/usr/bin/env python3
"""bench/compile_time_pairs.py pairs the units two builds share, redirects their objects, and stops
on a failed compile.

Two fake builds whose "compilers" are shell commands: units both have (one under the build tree,
one under the source tree, one outside both, as nanobind's sources are), a unit only the old one
has, a unit the new build splits in two (--fold), and a command that fails.
"""
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "compile_time_pairs.py"
sys.path.insert(0, str(ROOT / "bench"))
import compile_time_pairs  # noqa: E402


def fake_build(root, name, units):
    """A source tree and build under root/name whose compile database holds `units` ({path: cmd})."""
    src = root / name
    build = src / "build"
    build.mkdir(parents=True)
    (build / "CMakeCache.txt").write_text(f"CMAKE_HOME_DIRECTORY:INTERNAL={src}\n")
    db = []
    for path, cmd in units.items():
        if pathlib.Path(path).is_absolute():
            f = pathlib.Path(path)
        else:
            f = (build if path.startswith("generated/") else src) / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("")
        db.append({"directory": str(build), "file": str(f), "command": cmd})
    (build / "compile_commands.json").write_text(json.dumps(db))
    return build


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def main():
    # The object goes where -o says, even a quoted path with a space.
    cmd = compile_time_pairs.with_output('cc -c "a b.cpp" -o "x y.o" -O2', pathlib.Path("/s/old.o"))
    if cmd != 'cc -c "a b.cpp" -o /s/old.o -O2':
        sys.exit(f"with_output gave {cmd!r}")
    with tempfile.TemporaryDirectory() as t:
        root = pathlib.Path(t)
        # Each command writes its -o file, so a redirect that missed would leave no object behind.
        write = 'bash -c \'touch "$1"\' -o obj.o'
        dep = str(root / "dep" / "lib.cpp")  # outside both trees: keyed by its own path
        old = fake_build(root, "old", {"host/a.cpp": write, "generated/cpu_x.cpp": write,
                                       "tests/only_old.cpp": write, dep: write})
        new = fake_build(root, "new", {"host/a.cpp": write, "generated/cpu_x.cpp": write, dep: write})
        out_json = root / "rows.json"
        p = run(old, new, "--json", out_json)
        if p.returncode != 0:
            sys.exit(f"run failed: {p.stdout}\n{p.stderr}")
        rows = json.loads(out_json.read_text())["units"]
        if [r["unit"] for r in rows] != sorted([dep, "generated/cpu_x.cpp", "host/a.cpp"]):
            sys.exit(f"paired units {rows}, expected the three both builds have")
        if "sum of 3 units" not in p.stdout or "tests/only_old.cpp" not in p.stdout:
            sys.exit(f"output lacks the sum or the unpaired unit:\n{p.stdout}")
        if list(old.glob("obj.o")) or list(new.glob("obj.o")):
            sys.exit("an object was written into a build: -o was not redirected")
        # --keep leaves each unit's two objects under DIR/old and DIR/new, by the unit's path.
        keep = root / "kept"
        p = run(old, new, "^host/", "--keep", keep)
        kept = sorted(str(f.relative_to(keep)) for f in keep.rglob("*.o"))
        if p.returncode != 0 or kept != ["new/host/a.cpp.o", "old/host/a.cpp.o"]:
            sys.exit(f"--keep kept {kept}:\n{p.stdout}{p.stderr}")
        # A pattern selects units; one matching none is an error.
        p = run(old, new, "^generated/")
        if p.returncode != 0 or "host/a.cpp" in p.stdout or "cpu_x.cpp" not in p.stdout:
            sys.exit(f"pattern ^generated/ gave:\n{p.stdout}{p.stderr}")
        if run(old, new, "nothing-matches").returncode == 0:
            sys.exit("a pattern matching no unit did not fail")
        # --fold times a unit the new build splits in two against the old one: both parts, in turn.
        # The old compile is slow here, so the new lane runs its filler meanwhile.
        slow = 'bash -c \'sleep 0.5; touch "$1"\' -o obj.o'
        old2 = fake_build(root, "old2", {"generated/cpu_x.cpp": slow})
        new2 = fake_build(root, "new2", {"generated/cpu_x.cpp": write, "generated/cpu_x_solving.cpp": write})
        out2 = root / "rows2.json"
        p = run(old2, new2, "--fold", r"_solving(?=\.cpp$)", "--json", out2)
        rows = json.loads(out2.read_text())["units"] if p.returncode == 0 else []
        if (len(rows) != 1 or rows[0]["unit"] != "generated/cpu_x.cpp"
                or sorted(rows[0].get("new_units", {})) != ["generated/cpu_x.cpp", "generated/cpu_x_solving.cpp"]
                or "in one build only" in p.stdout):
            sys.exit(f"--fold gave {rows}:\n{p.stdout}{p.stderr}")
        # A failed compile stops the comparison with the unit's error.
        bad = fake_build(root, "bad", {"host/a.cpp": "bash -c 'echo broken >&2; exit 3' -o obj.o"})
        p = run(old, bad)
        if p.returncode == 0 or "broken" not in p.stderr:
            sys.exit(f"a failing compile gave rc {p.returncode}:\n{p.stderr}")
        # Each pair's children are waited for by the script alone: a helper that reaped a child
        # which finished before its partner was started (subprocess.Popen's bookkeeping does)
        # failed about one pair in ten here with "No child processes".
        for i in range(300):
            u = compile_time_pairs.compile_pair([("old", "true -o x.o", root), ("new", "true -o x.o", root)], root)
            if set(u) != {"old", "new"} or min(u.values()) < 0:
                sys.exit(f"pair {i} gave {u}")
    print("ok: shared units paired, split units folded, objects redirected, a failed compile stops the run, "
          "300 quick pairs waited for")


if __name__ == "__main__":
    main()
