#!/usr/bin/env bash
# ctest driver for weft-prof (tools/prof) and its demo graph.
# Usage: check_prof.sh report WEFT_PROF DEMO_JSON WORKDIR
#        check_prof.sh badfile WEFT_PROF WORKDIR
#        check_prof.sh usage WEFT_PROF
#        check_prof.sh data WEFT_PROF DEMO_JSON WORKDIR PROFILE_SCHEMA
#        check_prof.sh plugin WEFT_PROF PLUGIN.so USER_OP_JSON WORKDIR
#        check_prof.sh inplace WEFT_PROF WORKDIR
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
           "in-place nodes save" "over their last-read input (memory plan)"; do
    grep -qF -- "$h" <<<"$out" || fail "report lacks '$h'"
  done
  # without the inplace rewrite, the one-worker memory plan lets last readers write over
  # their input (docs/execution.md §4.6, slot reuse): 8 nodes of the demo
  reuse=$("$prof" -n 1 -t 1 -x inplace --rows 100 "$demo")
  grep -qF "8 nodes write 1048576 bytes over their last-read input (memory plan), no orderings" \
    <<<"$reuse" || fail "report lacks the demo's 8 slot reuses"
  [ "$(grep -c "reuses input [01]'s memory" <<<"$reuse")" = 8 ] || fail "not 8 slot reuse rows"
  grep -q '"traceEvents"' "$work/trace.json" || fail "trace has no traceEvents"
  grep -q 'digraph' "$work/graph.dot" || fail "dot file has no digraph"
  # the first layer's bias rides on its product (local_gemm): b1's row view, then the Gemm
  grep -qF 'label="0: DimShuffle{order=(x,0)}(b1)' "$work/graph.dot" ||
    fail "dot file lacks node 0: DimShuffle{order=(x,0)}(b1)"
  grep -qF 'label="1: Gemm(DimShuffle.out#0, 1, x, W1, 1)\nfloat64[64,256]\n' "$work/graph.dot" ||
    fail "dot file lacks node 1: Gemm(b1 row, 1, x, W1, 1) with its type"
  grep -q 'peripheries=2' "$work/graph.dot" || fail "dot file marks no in-place node"
  grep -q 'fillcolor="#ff' "$work/graph.dot" || fail "dot file colours no node by time"
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
  for o in "--trace FILE" "--json FILE" "--csv FILE" "--outputs DIR" "--plugin LIB.so" \
           "--trace-last N" "--accept-inplace" "--version"; do
    "$prof" --help | grep -qF -- "$o" || fail "--help lacks $o"
  done
  set +e
  "$prof" --runs 0 x.json 2>/dev/null; rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "--runs 0: exit $rc, expected 2"
  ;;
data)
  # --json / --csv / --trace-last / --outputs / --version
  demo=$3; work=$4; schema=$5
  rm -rf "$work"; mkdir -p "$work"
  "$prof" --version | grep -qE '^weft-prof [0-9]+\.[0-9]+\.[0-9]+$' || fail "--version"
  "$prof" -n 3 -w 0 -t 1 --json "$work/r.json" --csv "$work/r.csv" --trace "$work/t.json" \
    --trace-last 2 --outputs "$work/out" "$demo" >/dev/null
  python3 - "$work" "$schema" <<'PY' || fail "data outputs"
import json, sys
import jsonschema
w = sys.argv[1]
r = json.load(open(w + "/r.json"))
jsonschema.validate(r, json.load(open(sys.argv[2])), cls=jsonschema.Draft202012Validator)
assert r["format"] == "weft-profile" and r["calls"] == 3, r["calls"]
assert len(r["applies"]) > 0 and all("out_types" in a for a in r["applies"])
assert any(a["destroys"] == 0 and a["name"].endswith(" destroys input 0") for a in r["applies"])
assert len(r["rewrites"]) > 0
t = json.load(open(w + "/t.json"))
calls = sorted({e["args"]["call"] for e in t["traceEvents"] if e["ph"] == "X"})
assert calls == [0, 1], calls  # the last 2 of 3 calls
rows = open(w + "/r.csv").read().splitlines()
assert rows[0] == "id,name,op,class,calls,time_ns,percent,worker,critical,out_types,out_bytes,destroys,inplace_bytes,inplace_orderings,reuses_input,skips"
assert len(rows) == len(r["applies"]) + 1
npy = open(w + "/out/output_0.npy", "rb").read()
assert npy[:8] == b"\x93NUMPY\x01\x00" and b"'descr': '<f8'" in npy and len(npy) == 128 + 8, len(npy)
PY
  ;;
plugin)
  # a user's op class from a shared library (--plugin), and a missing plugin
  plugin=$3; graph=$4; work=$5
  rm -rf "$work"; mkdir -p "$work"
  # x = [[0.0, 0.1, ..., 1.1]] (4x3 float64) as an .npy written by hand
  python3 - "$work/x.npy" <<'PY'
import struct, sys
h = "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 3), }"
h += " " * (117 - len(h)) + "\n"
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode()
                              + struct.pack("<12d", *[i / 10 for i in range(12)]))
PY
  if err=$("$prof" -n 1 "$graph" 2>&1 >/dev/null); then fail "user op loaded without its plugin"; fi
  grep -qF "nodes[0].op: unknown op 'UserTriple'" <<<"$err" || fail "no-plugin message: $err"
  out=$("$prof" -n 2 -t 1 --plugin "$plugin" --input "x=$work/x.npy" --outputs "$work/out" "$graph")
  grep -qF "UserTriple(x)" <<<"$out" || fail "report lacks the plugin's node UserTriple(x)"
  python3 - "$work/out/output_0.npy" <<'PY' || fail "plugin graph output is not tanh(3x)"
import math, struct, sys
b = open(sys.argv[1], "rb").read()
hl = struct.unpack("<H", b[8:10])[0]
assert b"'shape': (4, 3)" in b[10:10 + hl]
y = struct.unpack("<12d", b[10 + hl:])
for i, v in enumerate(y):
    assert abs(v - math.tanh(3 * i / 10)) <= 1e-15 * 4, (i, v)
PY
  if err=$("$prof" --plugin "$work/none.so" "$graph" 2>&1 >/dev/null); then fail "missing plugin"; fi
  grep -qF -- "--plugin $work/none.so: " <<<"$err" || fail "missing-plugin message: $err"
  ;;
inplace)
  # an in-place op stored in the graph: weft-prof's hints name its own option and the
  # JSON key, and the graph runs once both are given
  work=$3
  mkdir -p "$work"
  for m in false true; do
    printf '{"format":"weft-graph","version":1,\n"inputs":[{"id":0,"name":"x","dtype":"float64","shape":[3],"mutable":%s}],\n"nodes":[{"op":"Tanh","props":{"inplace":0},"inputs":[0],"outputs":[1]}],\n"outputs":[1]}\n' \
      "$m" >"$work/inplace_$m.json"
  done
  if err=$("$prof" -n 1 "$work/inplace_true.json" 2>&1 >/dev/null); then fail "in-place accepted"; fi
  grep -qF -- "--accept-inplace accepts them" <<<"$err" || fail "no --accept-inplace hint: $err"
  if err=$("$prof" -n 1 --accept-inplace "$work/inplace_false.json" 2>&1 >/dev/null); then
    fail "immutable input overwritten"
  fi
  grep -qF '"mutable": true' <<<"$err" || fail "no mutable hint: $err"
  "$prof" -n 1 --accept-inplace "$work/inplace_true.json" | grep -qF "Tanh(x) destroys input 0" ||
    fail "in-place graph with a mutable input did not run"
  ;;
*) fail "unknown mode $mode" ;;
esac
echo "check_prof $mode: ok"
