#!/bin/sh
# weft-ops-bench's op-row lines on 2000 elements: every field present and
# numeric, in order; with a python3 that imports numpy (as the tool looks for
# one) NumPy's figures and agree=yes, else the na fields; unknown rows and
# bad options refused with the usage (exit 2).
# Usage: check_opsbench.sh path/to/weft-ops-bench
bench=$1
fail() { echo "FAIL: $*"; exit 1; }

numpy=no
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import numpy' >/dev/null 2>&1; then numpy=yes; break; fi
done
num='[0-9]+\.[0-9]+'
if [ "$numpy" = yes ]; then
  tail="numpy_ms=$num vs_numpy=$num agree=yes"
else
  tail="numpy_ms=na vs_numpy=na agree=na"
fi
head="threads=1 ms=$num out_copy_ms=$num gbps=$num memcpy_gbps=$num bw_ratio=$num"

out=$("$bench" add_bcast sum --n 2000 --reps 3 --threads 1) || fail "exit status $?"
echo "$out"
[ "$(echo "$out" | wc -l)" -eq 2 ] || fail "expected 2 lines"
echo "$out" | sed -n 1p | grep -Eq "^opsbench op=add_bcast n=2000 $head bound=memory $tail\$" ||
  fail "add_bcast line"
echo "$out" | sed -n 2p | grep -Eq "^opsbench op=sum n=2000 $head bound=memory $tail\$" ||
  fail "sum line"

for bad in "nosuchrow" "--n 1500" "--threads 0" "--reps"; do
  # shellcheck disable=SC2086 # split on purpose: words of one case
  "$bench" $bad >/dev/null 2>&1
  [ $? -eq 2 ] || fail "'$bad' not refused with exit 2"
done
echo "ok"
