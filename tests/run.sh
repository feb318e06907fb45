#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh BUILD_DIR - run the C unit tests, replay the fuzz corpora, and run
# every bats file against the programs in BUILD_DIR/cmd, and the Python
# package's pytest suite (BFTOOLS_PYDIR: where make built it), then print
# one summary line
#   tests: N passed, N failed
# counting every C unit test, bats test and pytest test. Exit 1 if any failed.
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

# The Python package's pytest suite (python/tests/), on the module make
# built for this build directory (BFTOOLS_PYDIR): one TAP line per test
# (python/tests/conftest.py writes them), counted with the rest.
if [ -n "${BFTOOLS_PYTHON_SKIP:-}" ]; then
	echo "== python: not run under ${BFTOOLS_PYTHON_SKIP}"
elif [ -n "${BFTOOLS_PYDIR:-}" ]; then
	echo "== python (pytest)"
	env PYTHONPATH="$BFTOOLS_PYDIR" BFTOOLS_TAP="$log.tap" PYTHONDONTWRITEBYTECODE=1 \
		ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" \
		${BFTOOLS_PYTHON_PRELOAD:+LD_PRELOAD="$BFTOOLS_PYTHON_PRELOAD"} \
		"${BFTOOLS_PYTHON:-/usr/bin/python3}" -m pytest -q -p no:cacheprovider \
		"$top/python/tests" >"$log.py" 2>&1 || status=1
	cat "$log.tap" "$log.py" 2>/dev/null
	cat "$log.tap" >>"$log" 2>/dev/null
	rm -f "$log.tap" "$log.py"
fi

passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
	# A runner died without reporting a failed test: count that as one.
	failed=1
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
