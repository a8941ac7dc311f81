#!/usr/bin/env bash
# The README's test command: installs missing packages, then builds and runs
# the whole suite three times - plain, ThreadSanitizer, and
# AddressSanitizer+UndefinedBehaviorSanitizer - with warnings as errors, and
# runs the libFuzzer targets (docs/testing.md). The ASan+UBSan run is built
# with clang: its UBSan also checks float-to-int conversions and integer
# conversions (cmake/WeftHelpers.cmake), GCC's does not. Any test failure,
# sanitizer report or fuzzer crash fails it. The plain run also installs the
# package and builds a program against it (tests/install), and runs the NumPy
# differential test (tests/differential).
# Usage: tools/dev/test.sh [plain|tsan|asan|fuzz]...   (default: all four)
# WEFT_FUZZ_SECONDS: how long each fuzz target runs (default 30).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
bash tools/dev/deps.sh

JOBS=$(nproc)
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(plain tsan asan fuzz)

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

# The fuzz targets (tests/fuzz) built with clang, libFuzzer, ASan and UBSan;
# each runs for WEFT_FUZZ_SECONDS on a scratch corpus seeded from
# tests/fuzz/corpus/<target>. A crash, sanitizer report, leak, input slower
# than 10 s or allocation over 1 GiB stops it with a reproducer in
# build-test-fuzz/fuzz/<target>/crashes/.
run_fuzz() {
  local dir="$ROOT/build-test-fuzz" secs=${WEFT_FUZZ_SECONDS:-30}
  echo "=== weft tests: fuzz (clang, libFuzzer+ASan+UBSan, ${secs} s per target)"
  CC=clang cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DWEFT_WERROR=ON -DWEFT_FUZZ=ON -DWEFT_BUILD_TOOLS=OFF >/dev/null
  cmake --build "$dir" -j "$JOBS" --target fuzz_graph_io fuzz_npy
  local t work dict
  for t in graph_io npy; do
    work="$dir/fuzz/$t"
    rm -rf "$work" && mkdir -p "$work/corpus" "$work/crashes"
    dict=()
    [ -f "$ROOT/tests/fuzz/$t.dict" ] && dict=(-dict="$ROOT/tests/fuzz/$t.dict")
    if ! "$dir/tests/fuzz/fuzz_$t" "$work/corpus" "$ROOT/tests/fuzz/corpus/$t" "${dict[@]}" \
         -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
         -print_final_stats=1 -artifact_prefix="$work/crashes/" >"$work/log" 2>&1; then
      tail -n 40 "$work/log"
      echo "fuzz_$t: FAILED; reproducer: $(ls "$work"/crashes/* 2>/dev/null)" >&2
      return 1
    fi
    echo "fuzz_$t: $(grep -E '^Done [0-9]+ runs' "$work/log"); executed units:" \
         "$(grep -o 'number_of_executed_units: [0-9]*' "$work/log" | grep -o '[0-9]*$')"
  done
}

for c in "${configs[@]}"; do
  case "$c" in
    plain) run_config plain "" ;;
    tsan)  run_config tsan thread ;;
    asan)  run_config asan "address,undefined" clang ;;
    fuzz)  run_fuzz ;;
    *) echo "unknown config $c" >&2; exit 2 ;;
  esac
done

echo "weft: all test configurations passed (${configs[*]})"
