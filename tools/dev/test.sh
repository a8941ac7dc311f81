#!/usr/bin/env bash
# The README's test command: installs missing packages, then builds and runs
# the whole suite three times - plain, ThreadSanitizer, and
# AddressSanitizer+UndefinedBehaviorSanitizer - with warnings as errors. The
# last is built with clang: its UBSan also checks float-to-int conversions
# and integer conversions (cmake/WeftHelpers.cmake), GCC's does not.
# Any test failure or sanitizer report fails it. The plain run also installs
# the package and builds a program against it (tests/install).
# Usage: tools/dev/test.sh [plain|tsan|asan]...   (default: all three)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
bash tools/dev/deps.sh

JOBS=$(nproc)
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(plain tsan asan)

# halt_on_error makes every sanitizer report a test failure.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 history_size=4"
export ASAN_OPTIONS="detect_leaks=1 halt_on_error=1 abort_on_error=0 detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1"
# Kernels inside nodes run single-threaded BLAS; see include/weft/tensor.h.
export OPENBLAS_NUM_THREADS=1

# run_config NAME SANITIZERS [CC]: CC defaults to cc, the system compiler.
run_config() {
  local name=$1 sanitize=$2 cc=${3:-cc} dir="$ROOT/build-test-$1"
  echo "=== weft tests: $name (WEFT_SANITIZE='$sanitize', CC=$cc)"
  # A folder configured with another compiler is configured afresh.
  if [ -f "$dir/CMakeCache.txt" ] &&
     ! grep -qx "CMAKE_C_COMPILER:FILEPATH=$(command -v "$cc")" "$dir/CMakeCache.txt"; then
    rm -rf "$dir"
  fi
  CC=$cc cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DWEFT_WERROR=ON -DWEFT_SANITIZE="$sanitize" >/dev/null
  cmake --build "$dir" -j "$JOBS"
  # TSan needs a address-space layout it can map; some kernels randomize
  # mmap too widely for the runtime, so its runs go through setarch -R.
  local wrap=()
  [ "$name" = tsan ] && wrap=(setarch "$(uname -m)" -R)
  (cd "$dir" && "${wrap[@]}" ctest --output-on-failure -j "$JOBS" -LE bench)
}

for c in "${configs[@]}"; do
  case "$c" in
    plain) run_config plain "" ;;
    tsan)  run_config tsan thread ;;
    asan)  run_config asan "address,undefined" clang ;;
    *) echo "unknown config $c" >&2; exit 2 ;;
  esac
done

echo "weft: all test configurations passed (${configs[*]})"
