#!/bin/sh
# weft-ifelsebench --quick: every line has the documented fields and
# allocs_per_call=0.000 (the branch not taken allocates nothing).
set -eu
out=$("$1" --quick)
echo "$out"
n=$(echo "$out" | grep -c '^ifelsebench untaken_nodes=[0-9]* elems=[0-9]* threads=[0-9]* us_per_call=[0-9.]* allocs_per_call=0.000 taken_us_per_call=[0-9.]*$')
[ "$n" -eq 10 ] || { echo "expected 10 well-formed lines with no allocation, got $n"; exit 1; }
