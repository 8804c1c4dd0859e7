#!/usr/bin/env bash
# Build, on a machine without a GPU, what a GPU machine that can fetch nothing and build little needs
# to run vigor's GPU checks (scripts/gpu_kit_run.sh), and pack it into one file per build:
#
#   bash scripts/gpu_kit.sh BUILD_DIR KIT_DIR    # KIT_DIR/vigor-kit-{nofmad,fmad}.tar.xz
#
# BUILD_DIR is configured for sm_90 machine code (H100, H200) and built twice: without nvcc's own
# contractions (-DVIGOR_CUDA_FMAD=OFF, whose tests demand the CPU's bits on the GPU) and with them
# (ON, the default). The second build recompiles only the CUDA units and what includes the plugin
# settings, not the CPU engines. Each build's kit holds its `vigor`, `vigor-bench` and
# `test_backend_cuda`, stripped; the shared libraries they load that a bare machine may lack (HDF5,
# Open MPI and what they load, OpenMP, the CUDA runtime; not the C library or libstdc++, whose
# machine's versions are newer); the generated headers that formula models compiled at run time
# include; and kit.txt: the commit, the build, and the paths compiled into the tests and plugins.
# The three binaries hold the same engines, so xz with a dictionary larger than a binary stores
# them about once; their sm_90 machine code (69 MB of the 108 MB of each) compresses 2.5 times.
# A kit is then about 43 MiB, which a device call carries beside the working tree (13 MiB); both
# would not fit one call's 64 MiB.
#
# Time on 2 cores: the first build about as long as `make test`'s engines (35-45 min), the second
# about 15 min. docs/building.md ("GPU checks from a kit") says how a session uses the kits.
set -euo pipefail

command -v patchelf >/dev/null || { echo "gpu_kit: needs patchelf (apt-get install patchelf)" >&2; exit 2; }
if [ $# -ne 2 ]; then
  echo "usage: bash scripts/gpu_kit.sh BUILD_DIR KIT_DIR" >&2
  exit 2
fi
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(mkdir -p "$1" && cd "$1" && pwd)"
kits="$(mkdir -p "$2" && cd "$2" && pwd)"
jobs="${JOBS:-$(nproc)}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

configure() {  # $1: ON or OFF (VIGOR_CUDA_FMAD)
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIGOR_ENABLE_CUDA=ON \
        -DVIGOR_REQUIRE_CUDA=ON -DVIGOR_TESTING_ENGINES=ON -DCMAKE_CUDA_ARCHITECTURES=90-real \
        -DVIGOR_BUILD_FUZZ=OFF -DVIGOR_CUDA_FMAD="$1" >/dev/null
}

# The kit of the build in BUILD_DIR, as KIT_DIR/vigor-kit-$1.tar.xz ($1: fmad or nofmad).
pack_build() {
  local kit="$stage/$1/kit"
  mkdir -p "$kit/build" "$kit/lib"
  local b
  # Each binary with an RPATH to the kit's libraries, which applies to what those libraries load
  # too (unlike a RUNPATH), and to nothing else: LD_LIBRARY_PATH would hand them to the machine's
  # own Python as well.
  for b in vigor bench/vigor-bench test_backend_cuda; do
    strip -o "$kit/build/${b##*/}" "$build/$b"
    patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$kit/build/${b##*/}"
  done
  cp -r "$build/generated" "$kit/build/generated"
  # Everything the binaries load but the C library, the dynamic loader, libstdc++ and libgcc_s
  # (the machine's own, newer, must be the ones used) and the GPU driver (the machine's).
  for b in vigor vigor-bench test_backend_cuda; do
    ldd "$kit/build/$b" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
  done | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libresolv.so.* | \
        ld-linux* | libcuda.so.* | libstdc++.so.* | libgcc_s.so.*) ;;
      *) cp -L "$lib" "$kit/lib/" ;;
    esac
  done
  # A library with a RUNPATH of its own (Open MPI's) looks up what it loads there alone, past the
  # binaries' RPATH: each looks beside itself.
  for lib in "$kit"/lib/*; do
    patchelf --set-rpath '$ORIGIN' "$lib"
  done
  {
    echo "build=$1"
    echo "commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "changes=$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null | wc -l)"
    echo "source_dir=$src"
    echo "build_dir=$build"
    echo "built=$(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n), $(g++ --version | head -1), $(nvcc --version | tail -1)"
  } >"$kit/kit.txt"
  local file="$kits/vigor-kit-$1.tar.xz"
  tar -C "$stage/$1" -cf - kit | xz -T1 --lzma2=preset=6,dict=192MiB >"$file"
  local size
  size=$(stat -c %s "$file")
  echo "gpu_kit: $file: $((size / 1048576)) MiB"
  if [ "$size" -gt $((48 * 1048576)) ]; then
    echo "gpu_kit: warning: over 48 MiB; with the working tree it may not fit a device call's 64 MiB" >&2
  fi
}

# The bitwise build first; BUILD_DIR is left configured as the default (ON).
for fmad in OFF ON; do
  name=fmad
  [ "$fmad" = OFF ] && name=nofmad
  echo "gpu_kit: building with VIGOR_CUDA_FMAD=$fmad in $build"
  configure "$fmad"
  cmake --build "$build" -j"$jobs" --target vigor vigor-bench test_backend_cuda
  pack_build "$name"
done
