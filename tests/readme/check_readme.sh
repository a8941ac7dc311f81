#!/usr/bin/env bash
# Usage: check_readme.sh README.md example.c example-binary
set -euo pipefail
readme=$1 src=$2 bin=$3
block=$(awk '/^```c$/{on=1; next} /^```$/{if (on) exit} on' "$readme")
if [ "$block" != "$(cat "$src")" ]; then
  echo "README's C example differs from $src:" >&2
  diff <(printf '%s\n' "$block") "$src" >&2 || true
  exit 1
fi
out=$("$bin")
expected=$'loss: 0.534838 0.419947 0.343525\nWEFT_OK'
[ "$out" = "$expected" ] || { echo "example printed '$out', expected '$expected'" >&2; exit 1; }
echo "README example ok: $out"
