#!/usr/bin/env bash
# Usage: check_install.sh BUILD_DIR CONSUMER_SRC_DIR
# Installs BUILD_DIR into a fresh prefix, then builds and runs the consumer
# three ways: CMake weft::weft (shared), CMake weft::weft_static, pkg-config.
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
# weft-prof is installed into bin/ and finds the installed library (RPATH)
"$prefix/bin/weft-prof" --version | grep -qE '^weft-prof [0-9]+\.[0-9]+\.[0-9]+$'
echo "install: bin/weft-prof --version ok"

for kind in shared static; do
  cmake -S "$src" -B "$work/c-$kind" -DCMAKE_PREFIX_PATH="$prefix" \
        -DWEFT_CONSUMER_STATIC=$([ $kind = static ] && echo ON || echo OFF) >/dev/null
  cmake --build "$work/c-$kind" >/dev/null
  LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64" "$work/c-$kind/consumer" | grep -q '^consumer ok$'
  echo "install: cmake $kind consumer ok"
done

libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -n1)
export PKG_CONFIG_PATH=$libdir
cc -std=c11 "$src/consumer.c" -o "$work/c-pc" $(pkg-config --cflags --libs weft)
LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64" "$work/c-pc" | grep -q '^consumer ok$'
# Libs.private (--static) carries the link option that keeps the archive's
# catalog member (lib/catalog); without it the op class lookup fails.
cc -std=c11 "$src/consumer.c" -o "$work/c-pc-static" $(pkg-config --cflags weft) \
   $(pkg-config --static --libs-only-other weft) "$(dirname "$libdir")/libweft.a" \
   $(pkg-config --libs hwloc jansson) -llapacke -lopenblas -lpthread -lm
"$work/c-pc-static" | grep -q '^consumer ok$'
echo "install: pkg-config shared and static consumers ok"
