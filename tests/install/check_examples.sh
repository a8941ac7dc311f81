#!/usr/bin/env bash
# Usage: check_examples.sh BUILD_DIR
# Installs BUILD_DIR into a fresh prefix, then builds the installed examples
# (share/doc/weft/examples) standalone against it with find_package(weft) and
# with pkg-config, runs every example and compares its output with the
# installed expected/ files (one per example).
set -euo pipefail
build=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
src=$prefix/share/doc/weft/examples
export LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64"

cmake -S "$src" -B "$work/ex" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/ex" >/dev/null
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -n1)
export PKG_CONFIG_PATH=$libdir
cd "$work" # where example_profiling writes its files
for expected in "$src"/expected/*.txt; do
  ex=$(basename "$expected" .txt)
  checker=()
  [ -f "$src/check_$ex.py" ] && checker=("$src/check_$ex.py")
  bash "$src/check_output.sh" "$work/ex/example_$ex" "$src/expected/$ex.txt" "${checker[@]}"
  cc -std=c11 "$src/$ex.c" -o "$work/pc-$ex" $(pkg-config --cflags --libs weft) -lm
  bash "$src/check_output.sh" "$work/pc-$ex" "$src/expected/$ex.txt" "${checker[@]}"
  echo "examples: $ex built with find_package and pkg-config, output as expected"
done
