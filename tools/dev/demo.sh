#!/usr/bin/env bash
# The README's main-job command (until the profiler exists): installs missing
# packages, configures a Release build in build-release/, builds weft-bench
# and runs it with no arguments: the whole scheduler benchmark matrix of
# shared/bench/PROTOCOL.md, one protocol line per configuration.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/dev/deps.sh
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=OFF >/dev/null
cmake --build build-release --target weft-bench
build-release/tools/bench/weft-bench
