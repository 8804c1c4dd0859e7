#!/usr/bin/env bash
# Build bench/section_kernel/section_kernel.cpp against a source tree with the project's CPU flags,
# for a kernel-only A/B of two commits (the driver's and the models' headers come from TREE):
#
#   git worktree add /tmp/old <commit>
#   bash bench/section_kernel/build.sh /tmp/old section_kernel_old
#   bash bench/section_kernel/build.sh .       section_kernel_new
#   for r in 1 2 3; do ./section_kernel_old; ./section_kernel_new; done    # in turn
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tune="$(sh "$here/../../scripts/cpu_tune.sh" "${CXX:-g++}")"
"${CXX:-g++}" -std=c++20 -O3 -march=native ${tune:+-mtune=$tune} -fno-math-errno -ffp-contract=off -DNDEBUG -I"$1" \
  "$here/section_kernel.cpp" -o "$2"
