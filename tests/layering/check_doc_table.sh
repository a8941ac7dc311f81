#!/usr/bin/env bash
# The layer table of docs/architecture.md must state the build's module graph:
# the same modules, each with the same dependencies (its DEPS in CMake), and
# every dependency in an earlier layer.
#   check_doc_table.sh docs/architecture.md BUILD/weft_modules.txt
# Table rows: | layer | `weft_x` | folder | a, b, ... (or -) | headers |
set -euo pipefail
doc=$1 built=$2

# "layer weft_x weft_a weft_b ..." per row, dependencies as full module names.
rows=$(awk -F'|' '$3 ~ /`weft_[a-z]+`/ {
    name = $3; gsub(/[ `]/, "", name)
    uses = $5; gsub(/ /, "", uses)
    line = ($2 + 0) " " name
    if (uses != "-") { n = split(uses, p, ","); for (i = 1; i <= n; i++) line = line " weft_" p[i] }
    print line }' "$doc")

sorted_deps() { tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ *$//'; }
from_doc=$(while read -r _layer m deps; do
  echo "$m: $(sorted_deps <<<"${deps:-}")"; done <<<"$rows" | sed 's/ *$//' | sort)
from_build=$(sed 's/ *$//' "$built" | sort)
if [ "$from_doc" != "$from_build" ]; then
  echo "docs/architecture.md's layer table and the build disagree (< doc, > build):" >&2
  diff <(echo "$from_doc") <(echo "$from_build") >&2 || true
  exit 1
fi

declare -A layer
while read -r l m _; do layer[$m]=$l; done <<<"$rows"
while read -r l m deps; do
  for d in ${deps:-}; do
    if [ "${layer[$d]}" -ge "$l" ]; then
      echo "$m (layer $l) uses $d, which is not in an earlier layer (${layer[$d]})" >&2
      exit 1
    fi
  done
done <<<"$rows"
echo "layering: docs/architecture.md's table matches the build ($(wc -l <"$built") modules)"
