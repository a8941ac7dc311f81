#!/usr/bin/env bash
# Runs an example and compares what it prints with the expected text; with
# a CHECKER (a python3 script), what it prints about the files the example
# wrote in the current folder follows the example's output.
#   check_output.sh PROGRAM EXPECTED_FILE [CHECKER]
set -euo pipefail
out=$("$1")
if [ $# -gt 2 ]; then out="$out"$'\n'"$(python3 "$3" .)"; fi
if ! diff <(echo "$out") "$2"; then
  echo "$1: output differs from $2 (< got, > expected)" >&2
  exit 1
fi
echo "$1: output as expected"
