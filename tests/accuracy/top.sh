#!/bin/sh
# SPDX-License-Identifier: MIT
# top.sh BUILD_DIR - bftop's accuracy rows of `make accuracy` (issue 24):
# on Zipf streams (tests/bench/gen.c: ACCURACY_TOP_LINES lines, default
# 1e8, over 1e6 distinct URLs, skews 0.8, 1.0 and 1.2, fixed seeds),
# bftop -n 0 -v with the default EPS (1e-4) must show (lines "LOWER UPPER
# MARK KEY": every key that may be frequent)
#   - every interval holding the key's exact count,
#   - every key counted more than EPS * N times,
#   - at skew 1.0 and up, the exact top 100 as its first 100 (ties aside:
#     every key above the 100th exact count among them, and none below it).
# These are deterministic guarantees (Space-Saving's) except the last,
# which holds on these streams with a wide margin (see tests/bftop.bats).
#
# The stream is piped from gen into bftop, never stored (1e8 lines are
# 6 GB); the exact counts come from `gen zipfcounts`, which replays the
# same draws into a counter per id and prints what `sort | uniq -c`
# would (tests/bftop.bats checks that equality on smaller streams).
# Exit 1 if any row fails, 2 if the run itself fails.
set -u
build=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
case $build in /*) ;; *) build="$top/$build" ;; esac
lines=$(awk -v n="${ACCURACY_TOP_LINES:-1e8}" 'BEGIN { printf "%.0f", n }')
distinct=1000000
LC_ALL=C
export LC_ALL

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -o "$tmp/gen" \
	"$top/tests/bench/gen.c" -lm || exit 2

# check EXACT BOUNDS EPSN TOP100: one table row; exit status 1 when it fails.
check() {
	awk -v epsn="$3" -v top100="$4" '
		NR == FNR { c = $1; sub(/^ *[0-9]+ /, ""); exact[$0] = c; next }
		{ lo = $1; hi = $2; sub(/^ *[0-9]+ +[0-9]+ [-+?] /, "")
		  n = ($0 in exact) ? exact[$0] : 0
		  if (lo > n || n > hi) broken++
		  listed[$0] = 1; rank++
		  if (rank <= 100) first[$0] = 1 }
		END {
			for (k in exact) {
				if (exact[k] > epsn && !(k in listed)) missing++
				if (top100 != "" && exact[k] > top100 && !(k in first)) outside++
			}
			if (top100 != "") for (k in first) if (exact[k] < top100) below++
			printf "%d | %d | %d | %s | %s", rank, broken, missing,
				top100 == "" ? "-" : outside + below, (broken || missing || outside || below) ? "FAIL" : "PASS"
			exit (broken || missing || outside || below) ? 1 : 0
		}' "$1" "$2"
}

echo "== bftop on Zipf streams: $lines lines, $distinct distinct, EPS 1e-4"
echo "| skew | listed | seconds | intervals broken | keys > EPS N missing | top 100 wrong | result |"
echo "|---|--:|--:|--:|--:|--:|---|"
status=0
seed=1
for skew in 0.8 1.0 1.2; do
	"$tmp/gen" zipfcounts "$lines" "$distinct" "$skew" "$seed" >"$tmp/exact" || exit 2
	t0=$(date +%s)
	"$tmp/gen" zipf "$lines" "$distinct" "$skew" "$seed" | "$build/cmd/bftop" -n 0 -v >"$tmp/bounds" 2>/dev/null ||
		exit 2
	secs=$(($(date +%s) - t0))
	cut=""
	case $skew in 0.8) ;; *) cut=$(sort -k1,1nr "$tmp/exact" | awk 'NR == 100 { print $1 }') ;; esac
	row=$(check "$tmp/exact" "$tmp/bounds" "$((lines / 10000))" "$cut") || status=1
	echo "| $skew | ${row%% *} | $secs | ${row#* | } |"
	seed=$((seed + 1))
done
exit $status
