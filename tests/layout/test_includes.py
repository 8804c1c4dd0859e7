#!/usr/bin/env python3
"""The rooms of docs/architecture.md, checked: which room may include which, and no include
cycles among vigor's own headers.

    python3 tests/layout/test_includes.py SOURCE_DIR

Every `#include "..."` of a project file under kernels/, models/ and host/ is resolved against the
source tree (generated headers, "vigor/...", are left out); a file of one room including a file
of a room it may not include is an error, as is any cycle. Exit 0 when the tree follows the rules.
"""
import pathlib
import re
import sys

# Room of a path (the first matching prefix) and the rooms it may include.
ROOMS = [
    ("kernels/core/", "core"),
    ("kernels/", "kernels"),
    ("models/", "models"),
    ("host/errors.hpp", "base"),
    ("host/build_info.hpp", "base"),
    ("host/backends/", "backends"),
    ("host/job/", "job"),
    ("host/output/", "output"),
    ("host/run/", "run"),
    ("host/cli/", "cli"),
    ("host/custom_model", "library"),
]
ALLOWED = {
    "core": {"core"},
    "kernels": {"core", "kernels"},
    "models": {"core", "kernels", "models"},
    "base": {"base"},
    "backends": {"base", "backends", "core", "kernels", "models"},
    "job": {"base", "backends", "job", "core", "kernels"},
    "output": {"base", "backends", "job", "output", "core", "kernels"},
    "run": {"base", "backends", "job", "output", "run", "core", "kernels"},
    "cli": {"base", "backends", "job", "output", "run", "cli", "core", "kernels"},
    "library": {"base", "backends", "cli", "core", "kernels", "library"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def room(path):
    for prefix, name in ROOMS:
        if path.startswith(prefix):
            return name
    return None


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    files = {}
    for top in ("kernels", "models", "host"):
        for p in (root / top).rglob("*"):
            if p.suffix in {".hpp", ".cpp", ".cuh", ".cu"}:
                files[str(p.relative_to(root))] = p
    errors = []
    graph = {}
    for rel, p in sorted(files.items()):
        src = room(rel)
        deps = []
        for inc in INCLUDE.findall(p.read_text(errors="replace")):
            if inc.startswith("vigor/") or inc.endswith(".def"):
                continue  # generated headers and the registries' X-macro lists
            if inc not in files:
                if (p.parent / inc).exists():
                    continue  # a header beside the file (none expected in these rooms)
                errors.append(f"{rel}: includes \"{inc}\", which is not in the tree")
                continue
            dst = room(inc)
            if dst not in ALLOWED.get(src, set()):
                errors.append(f"{rel} ({src}) includes {inc} ({dst}): not allowed "
                              f"(docs/architecture.md)")
            deps.append(inc)
        graph[rel] = deps
    # Cycles, by depth-first search.
    state = {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for d in graph.get(node, []):
            if state.get(d) == 1:
                errors.append("include cycle: " + " -> ".join(stack[stack.index(d):] + [d]))
            elif d not in state:
                visit(d, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    for e in errors:
        print(e)
    print(f"{len(files)} files, {sum(len(v) for v in graph.values())} includes, "
          f"{len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
