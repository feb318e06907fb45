#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh BUILD_DIR - run the C unit tests, replay the fuzz corpora, and run
# every bats file against the programs in BUILD_DIR/cmd, then print one
# summary line
#   tests: N passed, N failed
# counting every C unit test and every bats test. Exit 1 if any failed.
set -u
build=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
case $build in /*) ;; *) build="$top/$build" ;; esac

BFTOOLS_BIN="$build/cmd"
export BFTOOLS_BIN
BFTOOLS_TESTDATA=${BFTOOLS_TESTDATA:-$top/tests/data}
export BFTOOLS_TESTDATA
LC_ALL=C
export LC_ALL

log=$(mktemp)
trap 'rm -f "$log"' EXIT INT TERM

status=0
echo "== C unit tests"
"$build/tests/unit/unit" >"$log.unit" 2>&1 || status=1
cat "$log.unit"
cat "$log.unit" >>"$log"
rm -f "$log.unit"

echo "== fuzz corpora replayed"
sh "$here/fuzz/replay.sh" "$build" >"$log.fuzz" 2>&1 || status=1
cat "$log.fuzz"
cat "$log.fuzz" >>"$log"
rm -f "$log.fuzz"

echo "== bats"
# --tap gives one ok/not ok line per test, which is what we count.
bats --tap "$here"/*.bats >"$log.bats" 2>&1 || status=1
cat "$log.bats"
cat "$log.bats" >>"$log"
rm -f "$log.bats"

passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
	# A runner died without reporting a failed test: count that as one.
	failed=1
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
