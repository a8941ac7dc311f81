#!/usr/bin/env bash
# Runs an example and compares what it prints with the expected text.
#   check_output.sh PROGRAM EXPECTED_FILE
set -euo pipefail
out=$("$1")
if ! diff <(echo "$out") "$2"; then
  echo "$1: output differs from $2 (< got, > expected)" >&2
  exit 1
fi
echo "$1: output as expected"
