#!/usr/bin/env bash
# A compiler launcher that logs each compile's wall and CPU seconds: where a build's time goes.
#
#   cmake -S . -B build -DCMAKE_CXX_COMPILER_LAUNCHER=$PWD/scripts/time_compile.sh \
#         -DCMAKE_CUDA_COMPILER_LAUNCHER=$PWD/scripts/time_compile.sh
#   VIGOR_COMPILE_LOG=/tmp/compile.log cmake --build build -j2
#
# Appends "<wall s> <user+sys s> <output file>" per compile to $VIGOR_COMPILE_LOG (default
# compile-times.log in the working directory); the compile's own exit status is returned.
log="${VIGOR_COMPILE_LOG:-compile-times.log}"
out="?"
prev=""
for a in "$@"; do
  [ "$prev" = "-o" ] && out="$a"
  prev="$a"
done
tmp=$(mktemp)
/usr/bin/time -f "%e %U %S" -o "$tmp" "$@"
rc=$?
read -r wall user sys < "$tmp"
rm -f "$tmp"
echo "$wall $(echo "$user + $sys" | bc) $out" >> "$log"
exit $rc
