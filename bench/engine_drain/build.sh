#!/usr/bin/env bash
# Build bench/engine_drain/engine_drain.cpp against a source tree with the project's CPU flags, for
# an A/B of two commits' run-loop costs outside the kernel (upload, launches, drains):
#
#   git worktree add /tmp/old <commit>
#   bash bench/engine_drain/build.sh /tmp/old engine_drain_old
#   bash bench/engine_drain/build.sh .       engine_drain_new
#   for r in 1 2 3; do ./engine_drain_old; ./engine_drain_new; done    # in turn
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tune="$(sh "$here/../../scripts/cpu_tune.sh" "${CXX:-g++}")"
"${CXX:-g++}" -std=c++20 -O3 -march=native ${tune:+-mtune=$tune} -fno-math-errno -ffp-contract=off -fopenmp -DNDEBUG \
  -I"$1" "$here/engine_drain.cpp" "$1/host/backends/cpu_info.cpp" \
  "$1/host/backends/test_hooks.cpp" -o "$2"
