#!/usr/bin/env bash
# Build, on a machine without a GPU, what a GPU machine that can fetch nothing and build little needs
# to run vigor's GPU checks (scripts/gpu_kit_run.sh), and pack it into one file:
#
#   bash scripts/gpu_kit.sh BUILD_DIR KIT.tar.xz
#
# BUILD_DIR is configured for sm_90 machine code (H100, H200) and built twice: without nvcc's own
# contractions (-DVIGOR_CUDA_FMAD=OFF, whose tests demand the CPU's bits on the GPU) and with them
# (ON, the default). The second build recompiles only the CUDA units and what includes the plugin
# settings, not the CPU engines. Of each build the kit keeps `vigor`, `vigor-bench` and `test_backend_cuda`,
# stripped; the shared libraries they load that a bare machine may lack (HDF5, Open MPI and what
# they load, OpenMP, the CUDA runtime; not the C library); the generated headers that formula models
# compiled at run time include; and where the binaries expect the build and the source tree (paths
# compiled into the tests). The three binaries of a build hold the same engines, and the two builds
# the same CPU code, so xz with a dictionary larger than a binary stores them about once: the kit is
# a third to a half of the 64 MiB a device call carries beside the working tree.
#
# Time on 2 cores: the first build as long as `make test`'s engines (about 35-45 min), the second
# about 15 min. docs/building.md ("GPU checks from a kit") says how a session uses it.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: bash scripts/gpu_kit.sh BUILD_DIR KIT.tar.xz" >&2
  exit 2
fi
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(mkdir -p "$1" && cd "$1" && pwd)"
kit_file="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
jobs="${JOBS:-$(nproc)}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

configure() {  # $1: ON or OFF (VIGOR_CUDA_FMAD)
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIGOR_ENABLE_CUDA=ON \
        -DVIGOR_REQUIRE_CUDA=ON -DVIGOR_TESTING_ENGINES=ON -DCMAKE_CUDA_ARCHITECTURES=90-real \
        -DVIGOR_BUILD_FUZZ=OFF -DVIGOR_CUDA_FMAD="$1" >/dev/null
}

pack_build() {  # $1: the kit's name for this build (fmad, nofmad)
  local out="$stage/kit/$1"
  mkdir -p "$out"
  strip -o "$out/vigor" "$build/vigor"
  strip -o "$out/vigor-bench" "$build/bench/vigor-bench"
  strip -o "$out/test_backend_cuda" "$build/test_backend_cuda"
  cp -r "$build/generated" "$out/generated"
}

# Both builds; BUILD_DIR is left configured as the default (ON).
for fmad in OFF ON; do
  name=fmad
  [ "$fmad" = OFF ] && name=nofmad
  echo "gpu_kit: building with VIGOR_CUDA_FMAD=$fmad in $build"
  configure "$fmad"
  cmake --build "$build" -j"$jobs" --target vigor vigor-bench test_backend_cuda
  pack_build "$name"
done

# Shared libraries: everything the binaries load but the C library and the dynamic loader (the
# machine's own are newer and must be the ones used) and the GPU driver (the machine's).
mkdir -p "$stage/kit/lib"
for bin in "$stage"/kit/*/vigor "$stage"/kit/*/vigor-bench "$stage"/kit/*/test_backend_cuda; do
  ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libresolv.so.* | \
      ld-linux* | libcuda.so.* | libstdc++.so.* | libgcc_s.so.*) ;;
    *) cp -L "$lib" "$stage/kit/lib/" ;;
  esac
done

{
  echo "commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "dirty=$(git -C "$src" status --porcelain 2>/dev/null | grep -qv '^??' && echo yes || echo no)"
  echo "source_dir=$src"
  echo "build_dir=$build"
  echo "built=$(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n), $(g++ --version | head -1), $(nvcc --version | tail -1)"
} >"$stage/kit/kit.txt"

echo "gpu_kit: packing $kit_file"
tar -C "$stage" -cf - kit | xz -T1 --lzma2=preset=6,dict=192MiB >"$kit_file"
size=$(stat -c %s "$kit_file")
echo "gpu_kit: $kit_file: $((size / 1048576)) MiB ($(cat "$stage/kit/kit.txt" | head -1))"
if [ "$size" -gt $((48 * 1048576)) ]; then
  echo "gpu_kit: warning: over 48 MiB; with the working tree it may not fit a device call's 64 MiB" >&2
fi
