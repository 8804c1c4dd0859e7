#!/usr/bin/env bash
# The Python package's build and test environment: a virtual environment at $1 (make test puts it
# in the build folder) with nanobind, NumPy and pytest from PyPI, and the optional packages the
# tests exercise (matplotlib for vigor.plot and the notebook, SymPy, tqdm). Prints the CMake arguments that
# build the package with it, or, when the environment cannot be made (no venv module, no network
# to PyPI), the arguments that leave the package out, with a note on stderr: the package's tests
# are then skipped, never failed. Idempotent: an environment that has the packages is reused.
set -u
env_dir=${1:?usage: python-env.sh ENV_DIR}
python=${VIGOR_PYTHON:-python3}
packages="nanobind>=2.0 numpy pytest matplotlib sympy tqdm"

skip() {
  echo "vigor: the Python package is not built: $1 (remove $env_dir to try again)" >&2
  mkdir -p "$env_dir" && echo "$1" >"$env_dir/unavailable"
  echo "-DVIGOR_BUILD_PYTHON=OFF"
  exit 0
}

# A failed attempt is not repeated on every build (pip would wait on the network each time).
[ -f "$env_dir/unavailable" ] && skip "$(cat "$env_dir/unavailable")"

if ! "$env_dir/bin/python" -c "import nanobind, numpy, pytest, matplotlib, sympy, tqdm" 2>/dev/null; then
  "$python" -m venv "$env_dir" >/dev/null 2>&1 ||
    skip "'$python -m venv $env_dir' failed (Debian: apt-get install python3-venv)"
  "$env_dir/bin/python" -m pip install --quiet --disable-pip-version-check $packages \
    >"$env_dir/pip.log" 2>&1 ||
    skip "pip could not install $packages (no network to PyPI?); see $env_dir/pip.log"
fi
echo "-DVIGOR_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(cd "$env_dir" && pwd)/bin/python"
