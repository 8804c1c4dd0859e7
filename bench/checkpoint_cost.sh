#!/usr/bin/env bash
# What checkpoints and chunking cost: the same Hénon–Heiles survey (Verlet, FP64, 10^6 random
# trajectories x 10^4 steps, 10 segments) run plainly, with a checkpoint after every segment, and
# in chunks under a memory limit. Prints wall and kernel seconds, chunks and peak host memory.
# usage: bench/checkpoint_cost.sh [VIGOR_BINARY] [TRAJECTORIES]
set -euo pipefail
vigor=${1:-build/vigor}
count=${2:-1000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/job.json" <<JOB
{
  "model": {"name": "henon_heiles"},
  "integrator": {"name": "verlet", "dt": 0.01},
  "steps": 10000, "segment_steps": 1000,
  "ensemble": {"random_box": {"count": $count, "lo": [-0.3, -0.3, -0.3, -0.3],
                              "hi": [0.3, 0.3, 0.3, 0.3], "seed": 1}},
  "backend": "cpu",
  "output": {"dir": "$dir/out"}
}
JOB
printf '%-28s %8s %8s %7s %9s\n' run wall_s kernel_s chunks peak_MiB
for args in "" "--checkpoint-every 0" "--memory-limit 40M"; do
  rm -rf "$dir/out"
  # shellcheck disable=SC2086
  "$vigor" run "$dir/job.json" --quiet $args
  python3 - "$dir/out/summary.json" "${args:-plain}" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:<28} {s['wall_seconds']:8.2f} {s['kernel_seconds']:8.2f} "
      f"{s.get('chunks', 1):7d} {s['peak_host_memory_bytes'] / 2**20:9.0f}")
PY
done
