#!/usr/bin/env bash
# Every shipped graph validates against docs/weft-graph.schema.json: the demo
# graphs (tools/demos/*.json), the tests' graph files (tests/**/*.json except
# the fuzz corpora, which hold malformed input on purpose) and every graph
# test_graph_io saves in its round trips.
#   check_schema.sh SOURCE_DIR TEST_GRAPH_IO WORKDIR
set -euo pipefail
src=$1 test_graph_io=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
WEFT_SAVED_GRAPHS_DIR=$work "$test_graph_io" >/dev/null
shopt -s nullglob globstar
files=("$src"/tools/demos/*.json)
for f in "$src"/tests/**/*.json; do
  case "$f" in "$src"/tests/fuzz/*) ;; *) files+=("$f") ;; esac
done
saved=("$work"/saved_*.json)
[ ${#saved[@]} -ge 5 ] || { echo "check_schema: test_graph_io saved only ${#saved[@]} graphs" >&2; exit 1; }
python3 "$src/tests/io/check_schema.py" "$src/docs/weft-graph.schema.json" "${files[@]}" "${saved[@]}"
