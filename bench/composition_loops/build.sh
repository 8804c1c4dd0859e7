#!/usr/bin/env bash
# Build bench/composition_loops/composition_loops.cpp against a source tree with the project's CPU
# flags:   bash bench/composition_loops/build.sh TREE OUT
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tune="$(sh "$here/../../scripts/cpu_tune.sh" "${CXX:-g++}")"
"${CXX:-g++}" -std=c++20 -O3 -march=native ${tune:+-mtune=$tune} -fno-math-errno -ffp-contract=off -DNDEBUG -I"$1" \
  "$here/composition_loops.cpp" -o "$2"
