#!/usr/bin/env bash
# Build one stand-alone benchmark source against a source tree with the project's CPU flags, so that
# two commits' kernels can be compared by the same harness (bench/lane_shape, bench/composition_loops):
#   bash bench/build_against.sh SOURCE TREE OUT
#   e.g. bash bench/build_against.sh bench/lane_shape/lane_shape.cpp /tmp/old lane_shape_old
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tune="$(sh "$here/../scripts/cpu_tune.sh" "${CXX:-g++}")"
"${CXX:-g++}" -std=c++20 -O3 -march=native ${tune:+-mtune=$tune} -fno-math-errno -ffp-contract=off -DNDEBUG -I"$2" \
  "$1" -o "$3"
