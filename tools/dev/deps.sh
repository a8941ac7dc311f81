#!/usr/bin/env bash
# Installs the Debian packages weft needs to build, test and benchmark, when
# any is missing (python3-numpy only for the NumPy differential test,
# python3-jsonschema for the JSON graph schema test;
# libclang-rt-14-dev, clang's sanitizer and libFuzzer runtimes, which clang
# only recommends, for the libFuzzer targets; Open MPI, METIS and ScaLAPACK
# for the optional MPI component libweft_mpi, its tests and demos,
# docs/distributed.md). Runs apt-get as root (directly,
# or through sudo when not root). CMake itself never installs anything.
# Usage: deps.sh [--no-update]   (--no-update: the caller ran apt-get update)
set -euo pipefail

# libclang-rt-dev: clang's sanitizer runtimes (only recommended by clang,
# and recommends are not installed); the asan configuration of test.sh
# builds with clang.
PACKAGES=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-dev
  libopenblas-dev liblapacke-dev libhwloc-dev libcmocka-dev libjansson-dev
  libtbb-dev libomp-dev time
  python3 python3-numpy python3-jsonschema libclang-rt-14-dev
  libopenmpi-dev openmpi-bin libmetis-dev libscalapack-openmpi-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
[ "${1:-}" = "--no-update" ] || $SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
