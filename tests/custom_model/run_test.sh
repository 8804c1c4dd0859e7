#!/usr/bin/env bash
# vigor as a library, end to end (ctest custom_model_package):
#   1. cmake --install this build into a scratch prefix;
#   2. configure and build examples/custom_model against it (find_package(vigor), vigor::vigor);
#   3. its program lists, validates and runs the Toda lattice it registers, and the results obey
#      the physics: energy error within Störmer–Verlet's modified-Hamiltonian bound, error ratios
#      of order 2 (Verlet) and 4 (Yoshida), total momentum conserved to round-off;
#   4. bad input is refused: a bad parameter value (exit 2, key named), an integrator that does
#      not handle the model (the build stops at register_model's static_assert).
#
# usage: run_test.sh SOURCE_DIR BUILD_DIR CMAKE CXX_COMPILER HAVE_CUDA(ON|OFF)
# env:   VIGOR_TEST_CXX_LAUNCHER (optional compiler launcher, e.g. ccache)
# Exit 0 pass, 1 fail, 77 skip (a prerequisite of the test itself is missing).
set -uo pipefail

src=$1 build=$2 cmake=$3 cxx=$4 have_cuda=${5:-OFF}
launcher=${VIGOR_TEST_CXX_LAUNCHER:-}
example=$src/examples/custom_model

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $* ($(date +%T))"; }

for tool in awk sed grep; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done
[ -x "$cxx" ] || command -v "$cxx" >/dev/null || { echo "SKIP: compiler $cxx not found"; exit 77; }

# A fixed folder in the build tree (not mktemp): stable paths let a compiler cache hit on reruns,
# and what a failure leaves behind can be inspected. Wiped at the start of every run.
work=$build/custom_model_test
rm -rf "$work" && mkdir -p "$work" || fail "cannot create $work"
prefix=$work/prefix
t_start=$(date +%s)

step "install into $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; fail "cmake --install $build failed"; }
for f in bin/vigor include/vigor/host/custom_model.hpp include/vigor/host/backends/engine.hpp \
         include/vigor/kernels/driver/advance.hpp include/vigor/models/pendulum.hpp \
         include/vigor/models/models.def include/vigor/kernels/integrators/integrators.def \
         include/vigor/vigor/version.hpp include/vigor/vigor/all_models.hpp \
         include/vigor/vigor/all_integrators.hpp share/vigor/examples/custom_model/main.cpp; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
ls "$prefix"/lib*/libvigor_host.a >/dev/null 2>&1 || fail "not installed: lib/libvigor_host.a"
ls "$prefix"/lib*/cmake/vigor/vigorConfig.cmake "$prefix"/lib*/cmake/vigor/vigorConfigVersion.cmake \
  >/dev/null 2>&1 || fail "not installed: lib/cmake/vigor/vigorConfig{,Version}.cmake"
"$prefix/bin/vigor" --version >/dev/null || fail "installed bin/vigor does not run"

step "configure examples/custom_model against the installed package"
cfg=(-S "$example" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx"
     -DCMAKE_BUILD_TYPE=Release)
[ -n "$launcher" ] && cfg+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher")
"$cmake" "${cfg[@]}" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; fail "configuring examples/custom_model failed"; }

step "build examples/custom_model"
t0=$(date +%s)
"$cmake" --build "$work/build" >"$work/build.log" 2>&1 ||
  { tail -50 "$work/build.log" >&2; fail "building examples/custom_model failed"; }
echo "   built in $(($(date +%s) - t0)) s"
toda=$work/build/toda
[ -x "$toda" ] || fail "no executable $toda"

step "list"
"$toda" list >"$work/list.txt" 2>"$work/list.err" || fail "toda list failed: $(cat "$work/list.err")"
grep -q '^  toda_lattice  (dof 3, separable, registered by this program)' "$work/list.txt" ||
  fail "toda_lattice not listed as a registered model"
grep -q '^  henon_heiles  (dof 2, separable)' "$work/list.txt" || fail "henon_heiles listed as registered"
# Its integrators are exactly those registered; the built-in models are all still there.
awk '/^  toda_lattice /{f=1} f && /integrators:/{print; exit}' "$work/list.txt" |
  grep -qx '    integrators: verlet yoshida4' || fail "toda_lattice integrators are not 'verlet yoshida4'"
grep -q '^  henon_heiles ' "$work/list.txt" || fail "built-in model henon_heiles missing from list"
grep -q 'momentum maps: P' "$work/list.txt" || fail "momentum map P not listed"

cd "$work" || fail "cd $work"
step "validate and run job.json"
"$toda" validate "$example/job.json" >"$work/validate.txt" 2>&1 ||
  fail "validate job.json: $(cat "$work/validate.txt")"
run() {  # run JOB OUT [extra args]: a run that must succeed
  local job=$1 out=$2
  shift 2
  "$toda" run "$job" --out "$out" --quiet "$@" 2>"$out.err" || fail "run $job $*: $(cat "$out.err")"
  [ -s "$out/final.csv" ] && [ -s "$out/summary.json" ] || fail "run $job: no final.csv/summary.json"
}
run "$example/job.json" "$work/verlet"
grep -q '"model": *"toda_lattice"\|"name": *"toda_lattice"' "$work/verlet/summary.json" ||
  fail "summary.json does not name the model"
[ "$(wc -l <"$work/verlet/sections.csv")" -gt 100 ] || fail "too few section crossings recorded"

# Variants of job.json: dt halved (steps doubled, same time span), and Yoshida's composition.
variant() {  # variant OUT INTEGRATOR DT STEPS
  sed -e "s/\"name\": \"verlet\", \"dt\": 0.01/\"name\": \"$2\", \"dt\": $3/" \
      -e "s/\"steps\": 20000/\"steps\": $4/" "$example/job.json" >"$1"
  grep -q "\"name\": \"$2\", \"dt\": $3" "$1" && grep -q "\"steps\": $4" "$1" ||
    fail "job.json no longer has the integrator/dt/steps lines this test edits"
}
variant job_verlet_h2.json verlet 0.005 40000
variant job_yoshida.json yoshida4 0.02 10000
variant job_yoshida_h2.json yoshida4 0.01 20000
run job_verlet_h2.json "$work/verlet_h2"
run job_yoshida.json "$work/yoshida"
run job_yoshida_h2.json "$work/yoshida_h2"
run "$example/job.json" "$work/verlet_float" --precision float

step "physics"
# Columns by name from final.csv's header.
# Energy: Verlet conserves a modified Hamiltonian H~ = H + h^2 H2 + O(h^4) with
# H2 = c1 |grad V|^2 / m^2... (unit mass here) + c2 p^T Hess V p, |c1|, |c2| <= 1/12, so
# |H(t) - H(0)| <= h^2 (range of |grad V|^2 + range of p^T Hess V p) / 12. For the Toda ring
# (m = a = b = 1) at energy E: V >= 0, so T <= E and B = sum_i exp(-r_i) <= E + 3;
# |grad V|^2 = sum_i (e^{-r_i} - e^{-r_{i-1}})^2 <= 2 B^2 and
# p^T Hess V p = sum_i e^{-r_i} (p_{i+1} - p_i)^2 <= B * 4 T <= 4 B E. Hence
# max |H - H0| <= h^2 B (B + 2 E) / 6 (E from the final state; it differs from H0 by the error).
# Momentum: sum_i f_i telescopes to zero, so P changes only by round-off: at most a few ulps of
# |p| <= sqrt(2 E) per step, bounded here by 10 eps sqrt(2 E) per step.
check_final() {  # check_final CSV H STEPS
  awk -F, -v h="$2" -v steps="$3" '
    NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
    {
      q0 = $c["q0"]; q1 = $c["q1"]; q2 = $c["q2"]; p0 = $c["p0"]; p1 = $c["p1"]; p2 = $c["p2"]
      E = (p0 * p0 + p1 * p1 + p2 * p2) / 2 + exp(-(q1 - q0)) + exp(-(q2 - q1)) + exp(-(q0 - q2)) - 3
      B = E + 3; bound = h * h * B * (B + 2 * E) / 6
      err = $c["energy_error_max"] + 0; dp = $c["momentum_error_max"] + 0
      pbound = 10 * steps * 2.220446e-16 * sqrt(2 * E)
      if ($c["status"] != "ok") { print "trajectory " $1 ": status " $c["status"]; bad = 1 }
      if (!(err > 0 && err <= bound)) {
        printf "trajectory %s: energy_error_max %.3g not in (0, %.3g]\n", $1, err, bound; bad = 1 }
      if (!(dp <= pbound)) {
        printf "trajectory %s: momentum_error_max %.3g > %.3g\n", $1, dp, pbound; bad = 1 }
      printf "   trajectory %s: E %.4f  |dH| %.3e (bound %.3e)  |dP| %.2e (bound %.2e)\n", \
             $1, E, err, bound, dp, pbound
      ++n
    }
    END { if (n != 4) { print "expected 4 trajectories, got " n; bad = 1 } exit bad }' "$1"
}
check_final "$work/verlet/final.csv" 0.01 20000 || fail "verlet dt = 0.01: physics check"
check_final "$work/verlet_h2/final.csv" 0.005 40000 || fail "verlet dt = 0.005: physics check"

# Order: the error of an order-p scheme shrinks by 2^p when h is halved. Over 50+ periods the max
# of |H - H0| samples the same torus at both step sizes; the ratio must be within 15 % of 4 (Verlet)
# and of 16 (Yoshida 4).
ratio() {  # ratio CSV_H CSV_H2 LO HI LABEL
  awk -F, -v lo="$3" -v hi="$4" -v label="$5" '
    FNR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; ++file; next }
    file == 1 { e[$1] = $c["energy_error_max"]; next }
    {
      r = e[$1] / $c["energy_error_max"]
      printf "   %s trajectory %s: |dH|(h) / |dH|(h/2) = %.3f\n", label, $1, r
      if (!(r >= lo && r <= hi)) { printf "ratio %.3f outside [%s, %s]\n", r, lo, hi; bad = 1 }
    }
    END { exit bad }' "$1" "$2"
}
ratio "$work/verlet/final.csv" "$work/verlet_h2/final.csv" 3.4 4.6 verlet ||
  fail "Verlet is not second order on toda_lattice"
ratio "$work/yoshida/final.csv" "$work/yoshida_h2/final.csv" 13.6 18.4 yoshida4 ||
  fail "Yoshida4 is not fourth order on toda_lattice"
# Float: the same run in single precision stays within the bound plus float round-off.
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
         { if ($c["status"] != "ok" || !($c["energy_error_max"] < 1e-3)) bad = 1 }
         END { exit bad }' "$work/verlet_float/final.csv" || fail "float run: energy error >= 1e-3"

step "bad input"
sed 's/"a": 1.0/"a": -1.0/' "$example/job.json" >bad_param.json
grep -q '"a": -1.0' bad_param.json || fail "job.json no longer has the \"a\": 1.0 this test edits"
"$toda" run bad_param.json --out "$work/bad" --quiet 2>bad_param.err
code=$?
[ "$code" -eq 2 ] || fail "a negative parameter a: exit $code, expected 2"
grep -q '^error: model.params.a: ' bad_param.err || fail "bad parameter: message does not name model.params.a: $(cat bad_param.err)"
[ ! -e "$work/bad" ] || fail "a refused job wrote output"
if [ "$have_cuda" = ON ]; then
  # Registered without CUDA engines: auto runs on the CPU, an explicit cuda is refused as input.
  "$toda" validate "$example/job.json" --backend cuda 2>backend.err
  code=$?
  [ "$code" -eq 2 ] || fail "--backend cuda for a CPU-only registered model: exit $code, expected 2"
  grep -q '^error: --backend: model toda_lattice has no CUDA engine' backend.err ||
    fail "--backend cuda: unexpected message: $(cat backend.err)"
fi

step "an integrator that does not handle the model stops the build"
mkdir -p bad_integrator
cat >bad_integrator/CMakeLists.txt <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(bad_integrator LANGUAGES CXX)
find_package(vigor REQUIRED)
add_library(bad OBJECT bad.cpp)
target_include_directories(bad PRIVATE "$example")
target_link_libraries(bad PRIVATE vigor::vigor)
CMAKE
cat >bad_integrator/bad.cpp <<'CPP'
#include "host/custom_model.hpp"
#include "toda_lattice.hpp"
// RATTLE needs holonomic constraints; the Toda lattice has none.
void reg() { vigor::host::register_model<toda::TodaLattice, vigor::kernels::Rattle>(); }
CPP
cfg=(-S bad_integrator -B bad_integrator/build -DCMAKE_PREFIX_PATH="$prefix"
     -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release)
"$cmake" "${cfg[@]}" >bad_integrator.log 2>&1 || { cat bad_integrator.log >&2; fail "configure bad_integrator"; }
if "$cmake" --build bad_integrator/build >>bad_integrator.log 2>&1; then
  fail "register_model<TodaLattice, Rattle> compiled"
fi
grep -q 'register_model: an integrator in the list does not handle this model' bad_integrator.log ||
  { tail -30 bad_integrator.log >&2; fail "the build failed without register_model's static_assert message"; }
# Only that message: nothing past the check is instantiated.
[ "$(grep -c 'error:' bad_integrator.log)" -le 2 ] ||
  { grep 'error:' bad_integrator.log | head >&2; fail "more errors than the static_assert"; }

echo "PASS ($(($(date +%s) - t_start)) s)"
