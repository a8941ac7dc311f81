#!/usr/bin/env bash
# ctest driver for weft-prof (tools/prof) and its demo graph.
# Usage: check_prof.sh report WEFT_PROF DEMO_JSON WORKDIR
#        check_prof.sh badfile WEFT_PROF WORKDIR
#        check_prof.sh usage WEFT_PROF
set -euo pipefail
mode=$1
prof=$2

fail() { echo "check_prof: $*" >&2; exit 1; }

case "$mode" in
report)
  demo=$3; work=$4
  mkdir -p "$work"
  out=$("$prof" -n 2 -w 1 -t 2 --rows 5 --trace "$work/trace.json" --dot "$work/graph.dot" "$demo")
  for h in "Function profiling" "Class" "Ops" "Apply" "<% time> <sum %> <apply time>" \
           "Critical path" "Number of Apply nodes" "<bytes saved> <orderings added>" \
           "in-place nodes save"; do
    grep -qF -- "$h" <<<"$out" || fail "report lacks '$h'"
  done
  grep -q '"traceEvents"' "$work/trace.json" || fail "trace has no traceEvents"
  grep -q 'digraph' "$work/graph.dot" || fail "dot file has no digraph"
  # the first layer's bias rides on its product (local_gemm): b1's row view, then the Gemm
  grep -qF 'label="0: DimShuffle{order=(x,0)}(b1)' "$work/graph.dot" ||
    fail "dot file lacks node 0: DimShuffle{order=(x,0)}(b1)"
  grep -qF 'label="1: Gemm{inplace=-1}(DimShuffle{order=(x,0)}.out, 1, x, W1, 1)' "$work/graph.dot" ||
    fail "dot file lacks node 1: Gemm(b1 row, 1, x, W1, 1)"
  grep -q 'fillcolor' "$work/graph.dot" || fail "dot file marks no in-place node"
  grep -q 'label="update 0"' "$work/graph.dot" || fail "dot file lacks the updates"
  ;;
badfile)
  work=$3
  mkdir -p "$work"
  printf '{"format":"weft-graph","version":1,\n"inputs":[{"id":0,"dtype":"float64","shape":[2]}],\n"nodes":[{"op":"Foo","inputs":[0],"outputs":[1]}],"outputs":[1]}\n' >"$work/bad_op.json"
  printf '{"format":"weft-graph",\n"version":1,\n"inputs":[,\n' >"$work/truncated.json"
  for f in bad_op:"nodes[0].op: unknown op 'Foo'" truncated:"truncated.json:3:"; do
    name=${f%%:*}; want=${f#*:}
    if err=$("$prof" "$work/$name.json" 2>&1 >/dev/null); then fail "$name.json accepted"; fi
    grep -qF -- "$want" <<<"$err" || fail "$name.json: message '$err' lacks '$want'"
  done
  if "$prof" "$work/missing.json" 2>/dev/null; then fail "missing file accepted"; fi
  ;;
usage)
  "$prof" --help | grep -qF -- "--trace FILE" || fail "--help lacks --trace"
  set +e
  "$prof" --runs 0 x.json 2>/dev/null; rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "--runs 0: exit $rc, expected 2"
  ;;
*) fail "unknown mode $mode" ;;
esac
echo "check_prof $mode: ok"
