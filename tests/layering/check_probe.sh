#!/usr/bin/env bash
# Builds one probe target of tests/layering and checks the outcome:
#   check_probe.sh BUILD_DIR TARGET pass
#   check_probe.sh BUILD_DIR TARGET fail 'text the failure must contain'
# A failure for another reason than the expected one fails the test.
set -uo pipefail
build=$1 target=$2 want=$3 text=${4:-}
out=$(cmake --build "$build" --target "$target" 2>&1)
rc=$?
if [ "$want" = pass ]; then
  [ $rc -eq 0 ] && { echo "layering: $target builds, as it should"; exit 0; }
  echo "$out"; echo "layering: $target should build but did not" >&2; exit 1
fi
if [ $rc -eq 0 ]; then
  echo "layering: $target built, but the layering should have refused it" >&2; exit 1
fi
if ! grep -qF -- "$text" <<<"$out"; then
  echo "$out"; echo "layering: $target failed, but not with '$text'" >&2; exit 1
fi
echo "layering: $target refused: $text"
