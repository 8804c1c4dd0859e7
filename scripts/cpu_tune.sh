#!/bin/sh
# The -mtune value vigor adds to -march=native for this machine, or nothing (the compiler's own).
#
#   sh scripts/cpu_tune.sh [C++ COMPILER]      (default: $CXX, else g++)
#
# "generic" exactly where GCC tunes for a Zen 1-3 on a CPU with AVX-512 enabled: its fallback for an
# AMD core newer than it knows (GCC 12.2 on a Zen 5), whose Zen 3 cost model schedules the lanes'
# 512-bit packs badly (docs/performance.md, "GCC's Zen 3 tuning on a newer AMD core"). A real Zen
# 1-3 has no AVX-512. Compilers without GCC's -Q --help=target get nothing. CMakeLists.txt and the
# benchmarks' build scripts call this, so the rule is written once.
cxx="${1:-${CXX:-g++}}"
help=$("$cxx" -march=native -Q --help=target 2>/dev/null) || exit 0
if printf '%s\n' "$help" | grep -Eq '^[[:space:]]*-mtune=[[:space:]]+znver[123]$' &&
  printf '%s\n' "$help" | grep -Eq '^[[:space:]]*-mavx512f[[:space:]]+\[enabled\]'; then
  echo generic
fi
exit 0
