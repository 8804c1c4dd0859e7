#!/usr/bin/env bash
# On a GPU machine, vigor's GPU checks from a kit made by scripts/gpu_kit.sh (one build: nofmad,
# -DVIGOR_CUDA_FMAD=OFF, or fmad, the default), in the repository root of the same commit, writing
# what it finds to OUT (default ./gpu-kit-out):
#
#   bash scripts/gpu_kit_run.sh KIT.tar.xz [OUT] [STEP...]
#
# Steps (default: tests, identity and bench for nofmad; tests, bench and survey for fmad):
#   tests     test_backend_cuda with VIGOR_REQUIRE_GPU=1: the GPU against the CPU with tolerances
#             (fmad), byte for byte (nofmad, VIGOR_CUDA_BITWISE)
#   identity  scripts/compare_builds.py --backends cpu,cuda: the examples and every model x
#             integrator x precision of its matrix, every CSV byte for byte (the test
#             identity.cpu_and_cuda of a -DVIGOR_CUDA_FMAD=OFF build; nofmad only)
#   bench     vigor-bench --backend cuda --no-implicit at 10^6 trajectories: the bare kernel
#             against the hand-written one
#   survey    vigor-bench --backend cuda --survey-only: issue 27's table
# Each step has its own time limit (seconds, STEP_LIMIT, default 240), so that one that hangs
# leaves the others their time. OUT gets log.txt (appended to) and a JSON per step, named after the
# build. Exit status: the number of steps that failed.
set -uo pipefail

if [ $# -lt 1 ]; then
  echo "usage: bash scripts/gpu_kit_run.sh KIT.tar.xz [OUT] [tests|identity|bench|survey ...]" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
kit_file="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
out="$(mkdir -p "${2:-gpu-kit-out}" && cd "${2:-gpu-kit-out}" && pwd)"
shift $(($# >= 2 ? 2 : 1))
steps=("$@")
limit="${STEP_LIMIT:-240}"
log="$out/log.txt"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xJf "$kit_file" || { echo "gpu_kit_run: cannot unpack $kit_file" >&2; exit 2; }
kit="$work/kit"
build="$(sed -n 's/^build=//p' "$kit/kit.txt")"
source_dir="$(sed -n 's/^source_dir=//p' "$kit/kit.txt")"
build_dir="$(sed -n 's/^build_dir=//p' "$kit/kit.txt")"
if [ ${#steps[@]} -eq 0 ]; then
  steps=(tests bench survey)
  [ "$build" = nofmad ] && steps=(tests identity bench)
fi

# The builds compiled in where their source tree and build directory were (formula models compile
# their plugins at run time against both): here they become links to this repository and to the
# build's folder of the kit. A path that exists and is not such a link is left alone, and the run
# stops.
link() {  # $1: what the link points to, $2: the link
  if [ -L "$2" ]; then
    rm -f "$2"
  elif [ -e "$2" ]; then
    echo "gpu_kit_run: $2 exists and is not a link; the kit's binaries expect it there" >&2
    exit 2
  fi
  mkdir -p "$(dirname "$2")"
  ln -s "$1" "$2"
}
[ "$source_dir" = "$root" ] || link "$root" "$source_dir"
link "$kit/build" "$build_dir"

# Formula models compile their plugins at run time with the compilers the build named (the kit's
# generated/vigor/plugin_config.hpp). Where this machine has one elsewhere, the one on its PATH is
# named instead, through the variables vigor reads for that (docs/formula_models.md).
compiled_in() {  # $1: kPluginCompiler or kPluginCudaCompiler
  sed -n "s/.*$1 = \"\(.*\)\";.*/\1/p" "$kit/build/generated/vigor/plugin_config.hpp"
}
use_compiler() {  # $1: the variable, $2: the compiled-in path, $3...: names to look for on the PATH
  local var="$1" path="$2" name found=""
  shift 2
  if [ -z "$path" ] || [ -x "$path" ] || [ -n "${!var:-}" ]; then return; fi
  for name in "$@"; do
    found="$(command -v "$name" 2>/dev/null)" && break
  done
  if [ -n "$found" ]; then
    export "$var=$found"
    echo "gpu_kit_run: $path is not here; $var=$found"
  else
    echo "gpu_kit_run: $path is not here, nor $* on the PATH: formula models will not compile"
  fi
}
{
  echo "== gpu_kit_run $(date -u +%Y-%m-%dT%H:%MZ)"
  cat "$kit/kit.txt"
  echo "repository here: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo 'no .git')"
  nvidia-smi -L 2>&1
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv 2>&1
  echo "host: $(nproc) cores, $(g++ --version 2>&1 | head -1), $(nvcc --version 2>&1 | tail -1)"
} >>"$log"
use_compiler VIGOR_CXX "$(compiled_in kPluginCompiler)" c++ g++ >>"$log"
use_compiler VIGOR_NVCC "$(compiled_in kPluginCudaCompiler)" nvcc /usr/local/cuda/bin/nvcc >>"$log"

failed=0
run_step() {  # $1: name, then the command; its output goes to the log
  local name="$1"
  shift
  echo "== $name: $*" >>"$log"
  local start=$SECONDS
  timeout "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  echo "== $name: exit $rc after $((SECONDS - start)) s" | tee -a "$log"
  [ $rc -eq 0 ] || failed=$((failed + 1))
}

bin="$kit/build"
for step in "${steps[@]}"; do
  case "$step" in
    tests)
      VIGOR_REQUIRE_GPU=1 run_step "tests-$build" "$bin/test_backend_cuda" --gtest_brief=1 \
        --gtest_output="json:$out/tests-$build.json"
      ;;
    identity)  # the arguments of CMakeLists.txt's identity.cpu_and_cuda: keep the two alike
      if [ "$build" != nofmad ]; then
        echo "gpu_kit_run: identity needs the nofmad kit (the $build build's GPU contracts)" | tee -a "$log"
        failed=$((failed + 1))
        continue
      fi
      VIGOR_REQUIRE_GPU=1 run_step identity python3 "$root/scripts/compare_builds.py" \
        "$bin/vigor" "$bin/vigor" --backends cpu,cuda --only "(plane|every7|tangent)$" \
        --work "$work/identity"
      ;;
    bench)
      run_step "bench-$build" "$bin/vigor-bench" --backend cuda --sizes 1e6 --no-implicit \
        --json "$out/bench-$build.json"
      ;;
    survey)
      run_step "survey-$build" "$bin/vigor-bench" --backend cuda --survey-only \
        --json "$out/survey-$build.json"
      ;;
    *)
      echo "gpu_kit_run: unknown step '$step' (tests, identity, bench, survey)" | tee -a "$log"
      failed=$((failed + 1))
      ;;
  esac
done
echo "== gpu_kit_run: $failed step(s) failed; log $log" | tee -a "$log"
exit "$failed"
