#!/usr/bin/env bash
# The README's main-job command: installs missing packages, configures a
# Release build in build-release/, builds weft-prof and runs it on the demo
# graph tools/demos/mlp_train.json (one training step of a 4-layer tanh MLP,
# width 256, batch 64): the per-node profile report of 20 calls on the default
# pool. Extra arguments go to weft-prof (e.g. --threads 1, --trace t.json).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/dev/deps.sh
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=OFF >/dev/null
cmake --build build-release --target weft-prof
build-release/tools/prof/weft-prof --runs 20 --warmup 2 "$@" tools/demos/mlp_train.json
