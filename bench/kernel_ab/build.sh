#!/usr/bin/env bash
# Build bench/kernel_ab/kernel_ab.cu against a source tree, for a kernel-only A/B of two commits:
#
#   git worktree add /tmp/old <commit>
#   bash bench/kernel_ab/build.sh /tmp/old kernel_ab_old
#   bash bench/kernel_ab/build.sh .       kernel_ab_new
#   for r in 1 2; do ./kernel_ab_old; ./kernel_ab_new; done     # on the GPU machine, in turn
#
# The tree's headers are the ones measured; this file comes from the current checkout, so it must
# compile against both (it uses only launch_segment, launch_initial_energy and the model and
# integrator headers). Also prints ptxas's registers and spills per segment kernel.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$1"
out="$2"
nvcc="${NVCC:-nvcc}"
"$nvcc" -I"$root" -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr \
  -gencode arch=compute_90,code=sm_90 -Xptxas -v "$here/kernel_ab.cu" -o "$out" 2>&1 |
  c++filt | sed 's/vigor::\(kernels\|models\):://g' |
  awk '/Compiling entry function .*segment_kernel</ {k = $0; sub(/.*segment_kernel</, "", k); sub(/>\(.*/, "", k)}
       /spill stores/ {s = $5}
       /Used [0-9]+ registers/ && k != "" {print $5, "registers,", s, "bytes spilled:", k; k = ""}'
