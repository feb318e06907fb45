#!/bin/sh
# SPDX-License-Identifier: MIT
# coverage.sh BUILD_DIR - after make check ran with gcov instrumentation in
# BUILD_DIR (make coverage does both), print one line per directory
#   lib/ lines: 95.1% branches: 85.3%
#   cmd/ lines: 95.4% branches: 86.3%
# from gcovr, and write the per-file reports, uncovered lines named, to
# BUILD_DIR/coverage-lib.txt and BUILD_DIR/coverage-cmd.txt for whoever
# wants to see what is left.
#
# Counts from every program run, the unit tests, the fuzz-corpus replay and
# the accuracy program are merged: gcovr reads every .gcda under BUILD_DIR.
# Branches are gcc's, taken and not taken counted apart, so one `if` is two.
#
# Exit 1 when lib/'s lines fall below COVERAGE_LIB_FLOOR percent (95 unless
# set), so that CI (.ci/run) notices coverage lost as well as a crash.
set -u
build=${1:?usage: coverage.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
case $build in /*) ;; *) build="$top/$build" ;; esac
cd "$top" || exit 1

for dir in lib cmd; do
	gcovr -r . --object-directory "$build" -f "$dir/" -o "$build/coverage-$dir.txt" || exit 1
done
gcovr -r . --object-directory "$build" -f lib/ -f cmd/ --json-summary -o "$build/coverage.json" ||
	exit 1
# gcovr is Python, so python3 is here: sum its per-file counts per directory.
python3 - "$build/coverage.json" "${COVERAGE_LIB_FLOOR:-95}" <<'EOF'
import json, sys

files = json.load(open(sys.argv[1]))["files"]
floor = float(sys.argv[2])
pct = lambda c, t: 100.0 * c / t if t else 100.0
status = 0
for d in ("lib/", "cmd/"):
    mine = [f for f in files if f["filename"].startswith(d)]
    lines = sum(f["line_covered"] for f in mine), sum(f["line_total"] for f in mine)
    branches = sum(f["branch_covered"] for f in mine), sum(f["branch_total"] for f in mine)
    print("%s lines: %.1f%% branches: %.1f%%" % (d, pct(*lines), pct(*branches)))
    if d == "lib/" and round(pct(*lines), 1) < floor:
        print("coverage: lib/ lines %.1f%% are below the floor of %g%%" % (pct(*lines), floor),
              file=sys.stderr)
        status = 1
sys.exit(status)
EOF
