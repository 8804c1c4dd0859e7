#!/usr/bin/env bash
# Install vigor's build and test dependencies from Debian's packages. Idempotent: does nothing
# (and needs no network) when everything is already installed.
#
# Required packages must install. Optional ones add features (HDF5 output, `vigor plot`, MPI runs,
# and their tests); when they cannot be installed the build goes on without them and says so.
set -euo pipefail

required=(cmake make g++ libeigen3-dev nlohmann-json3-dev libgtest-dev libgmock-dev
          libbenchmark-dev python3)
optional=(libhdf5-dev python3-numpy python3-matplotlib python3-h5py libopenmpi-dev openmpi-bin
          clang libclang-rt-dev)

missing_from() {
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      echo "$p"
    fi
  done
}

mapfile -t missing_required < <(missing_from "${required[@]}")
mapfile -t missing_optional < <(missing_from "${optional[@]}")
[ ${#missing_required[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    if [ ${#missing_required[@]} -gt 0 ]; then
      echo "install-deps: need root (or sudo) to install: ${missing_required[*]}" >&2
      exit 1
    fi
    echo "install-deps: without root, going on without: ${missing_optional[*]}" >&2
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
updated=0
update() {
  [ $updated -eq 1 ] || { $SUDO apt-get update -qq && updated=1; }
}
if [ ${#missing_required[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing_required[*]}" >&2
  update
  $SUDO apt-get install -y -qq --no-install-recommends "${missing_required[@]}"
fi
if [ ${#missing_optional[@]} -gt 0 ]; then
  echo "install-deps: installing optional ${missing_optional[*]}" >&2
  if ! { update && $SUDO apt-get install -y -qq --no-install-recommends "${missing_optional[@]}"; }; then
    echo "install-deps: could not install ${missing_optional[*]}; building without HDF5 output," \
         "plots or MPI (their tests are skipped)" >&2
  fi
fi
