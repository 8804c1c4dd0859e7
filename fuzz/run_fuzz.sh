#!/usr/bin/env bash
# Build vigor's libFuzzer targets (fuzz/) with clang and run them for a bounded time.
#
#   fuzz/run_fuzz.sh BUILD_DIR [SECONDS] [libFuzzer flags...]
#
# BUILD_DIR is a configured vigor build: its generated/ headers are used and the fuzz build goes to
# BUILD_DIR/fuzz/build. SECONDS (default 60) is split between the targets: half for fuzz_job (job
# text into parse_job), a quarter each for fuzz_array_file (.npy / .csv state files) and
# fuzz_checkpoint (checkpoint.bin files for --resume). All start from seed corpora copied to
# BUILD_DIR/fuzz/run (examples/*.json, examples/gallery/*.json, fuzz/seeds/). An input that crashes, trips a sanitizer, leaks, hangs (20 s) or takes more than
# 2 GB is a finding: it is saved under BUILD_DIR/fuzz/findings/ and the script says how to replay it.
#
# Exit status: 0 no finding; 1 a finding or a failed build; 77 no clang with the libFuzzer and
# sanitizer runtimes on this machine (ctest counts it as skipped; Debian: clang libclang-rt-dev).
#
# Environment: VIGOR_FUZZ_CXX the clang++ to use (default: the newest clang++ on PATH);
# VIGOR_FUZZ_JOBS build parallelism (default: nproc); VIGOR_FUZZ_LAUNCHER a compiler launcher such
# as ccache; VIGOR_FUZZ_CORPUS a directory that keeps the corpora between runs, so that long runs
# build on earlier ones (default: fresh corpora every run).
set -euo pipefail

if [ $# -lt 1 ]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 1
fi
build=$(cd "$1" && pwd)
total=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
src=$(cd "$(dirname "$0")/.." && pwd)
fz=$build/fuzz
if [ ! -f "$build/generated/vigor/all_models.hpp" ]; then
  echo "run_fuzz: $build is not a configured vigor build (no generated/vigor/all_models.hpp)" >&2
  exit 1
fi

# One run at a time per build directory (a second one waits): they share the build and run dirs.
mkdir -p "$fz"
if command -v flock >/dev/null 2>&1; then
  exec 9> "$fz/lock"
  flock 9
fi

# --- clang with libFuzzer, ASan and UBSan, or skip ---------------------------------------------
cxx=${VIGOR_FUZZ_CXX:-}
if [ -z "$cxx" ]; then
  for c in clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14; do
    if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
  done
fi
if [ -z "$cxx" ] || ! command -v "$cxx" >/dev/null 2>&1; then
  echo "run_fuzz: skipped: no clang++ (install Debian's clang and libclang-rt-dev)"
  exit 77
fi
cxx=$(command -v "$cxx")
mkdir -p "$fz/probe"
printf '%s\n' 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
  > "$fz/probe/probe.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$fz/probe/probe.cpp" -o "$fz/probe/probe" \
     > "$fz/probe/log" 2>&1; then
  echo "run_fuzz: skipped: $cxx cannot link -fsanitize=fuzzer,address,undefined" \
       "(install Debian's libclang-rt-dev):"
  tail -n 5 "$fz/probe/log"
  exit 77
fi

# --- build -----------------------------------------------------------------------------------
start=$(date +%s)
# A build directory configured with another compiler is started afresh.
if [ -f "$fz/build/CMakeCache.txt" ] &&
   [ "$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$fz/build/CMakeCache.txt")" != "$cxx" ]; then
  rm -rf "$fz/build"
fi
configure=(-S "$src/fuzz" -B "$fz/build" -DCMAKE_CXX_COMPILER="$cxx"
           -DVIGOR_GENERATED_DIR="$build/generated")
if [ -n "${VIGOR_FUZZ_LAUNCHER:-}" ]; then
  configure+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$VIGOR_FUZZ_LAUNCHER")
fi
if ! cmake "${configure[@]}" > "$fz/configure.log" 2>&1 ||
   ! cmake --build "$fz/build" -j "${VIGOR_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}" \
       > "$fz/build.log" 2>&1; then
  echo "run_fuzz: the fuzz build failed:"
  tail -n 40 "$fz/configure.log" "$fz/build.log" 2>/dev/null
  exit 1
fi
echo "run_fuzz: built fuzz_job, fuzz_array_file and fuzz_checkpoint with $cxx in" \
     "$(( $(date +%s) - start )) s"

# --- run -------------------------------------------------------------------------------------
run=$fz/run
findings=$fz/findings
rm -rf "$run"
mkdir -p "$run/work" "$findings"
# The file-ensemble seeds name these files relative to the working directory.
cp "$src"/fuzz/seeds/files/* "$run/work/"
# fuzz_array_file writes each input to a file: on a tmpfs when there is one (much faster).
tmp=$run/work
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  tmp=$(mktemp -d /dev/shm/vigor-fuzz.XXXXXX)
  trap 'rm -rf "$tmp"' EXIT
fi

corpus_dir() {  # the corpus of target $1, seeded
  local dir
  if [ -n "${VIGOR_FUZZ_CORPUS:-}" ]; then dir=$VIGOR_FUZZ_CORPUS/$1; else dir=$run/corpus-$1; fi
  mkdir -p "$dir"
  shift
  local f
  for f in "$@"; do  # examples/x.json and examples/gallery/x.json may share a name
    cp "$f" "$dir/$(basename "$(dirname "$f")")-$(basename "$f")"
  done
  (cd "$dir" && pwd)
}

status=0
fuzz() {  # target, seconds, corpus, extra flags
  local target=$1 seconds=$2 corpus=$3
  shift 3
  local log=$run/$target.log
  echo "run_fuzz: $target for $seconds s on $(ls "$corpus" | wc -l) seeds (log: $log)"
  if (cd "$run/work" &&
      UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} VIGOR_FUZZ_TMPDIR=$tmp \
      "$fz/build/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=2048 \
        -timeout=20 -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
        -artifact_prefix="$findings/$target-" "$@" "$corpus" > "$log" 2>&1); then
    grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added)' "$log" |
      sed "s/^/  $target: /" || true
  else
    status=1
    echo "run_fuzz: FINDING in $target; the last lines of its log:"
    tail -n 60 "$log"
    echo "run_fuzz: replay with: (cd $run/work && $fz/build/$target $findings/$target-<name>)"
  fi
}

file_seconds=$(( total / 4 ))
job_seconds=$(( total - 2 * file_seconds ))
[ "$job_seconds" -ge 1 ] || job_seconds=1
[ "$file_seconds" -ge 1 ] || file_seconds=1
fuzz fuzz_job "$job_seconds" \
  "$(corpus_dir fuzz_job "$src"/examples/*.json "$src"/examples/gallery/*.json \
     "$src"/fuzz/seeds/jobs/*.json)" -dict="$src/fuzz/job.dict" "$@"
fuzz fuzz_array_file "$file_seconds" "$(corpus_dir fuzz_array_file "$src"/fuzz/seeds/files/*)" "$@"
fuzz fuzz_checkpoint "$file_seconds" \
  "$(corpus_dir fuzz_checkpoint "$src"/fuzz/seeds/checkpoints/*)" -max_len=16384 "$@"
exit $status
