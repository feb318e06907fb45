#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh BUILD_DIR - `make accuracy`: the false-positive rate of every
# layout at capacity, measured against the target and the model
# (accuracy.c says how and why the bounds are sound), then bfuniq's
# "expected distinct lines lost" against the lines it really lost.
#
#   ACCURACY_KEYS    keys added to each filter (default 1e7)
#   ACCURACY_FACTOR  queries per row are FACTOR / P (default 1e4: a 3%
#                    bias is then 3 sigma; 1e10 queries at P = 1e-6)
#   ACCURACY_MIN_QUERIES  at least this many queries per row (default 1e8:
#                    cheap at 1e-2 and 1e-3, where FACTOR / P is only 1e6
#                    and 1e7; accuracy.c says why)
#   ACCURACY_RATES   the targets P (default 1e-2,1e-3,1e-4,1e-6)
#   ACCURACY_LAYOUTS default blocked,classic,counting,growing
#
# bfuniq: ACCURACY_KEYS distinct keys, so every line it does not write
# is a false positive. The number lost is a sum of independent-enough
# Bernoulli trials with small p, so its variance is at most its mean E;
# a row holds when |lost - E| <= 3 sqrt(E) + 1 (the +1 for E near 0 and
# for the digits bfuniq prints). Then bftop's rows (top.sh: intervals,
# keys above EPS N and the top 100 on Zipf streams, ACCURACY_TOP_LINES
# lines, default 1e8). Exit 1 if any row fails.
set -u
build=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
case $build in /*) ;; *) build="$top/$build" ;; esac
keys=${ACCURACY_KEYS:-1e7}
factor=${ACCURACY_FACTOR:-1e4}
min_queries=${ACCURACY_MIN_QUERIES:-1e8}
rates=${ACCURACY_RATES:-1e-2,1e-3,1e-4,1e-6}
layouts=${ACCURACY_LAYOUTS:-blocked,classic,counting,growing}
accuracy="$build/tests/accuracy/accuracy"
LC_ALL=C
export LC_ALL

status=0
echo "== false-positive rate at capacity ($keys keys, $factor / P absent keys per row, at least $min_queries)"
"$accuracy" -n "$keys" -f "$factor" -q "$min_queries" -r "$rates" -l "$layouts" || status=1

count=$(awk -v n="$keys" 'BEGIN { printf "%.0f", n }')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
"$accuracy" --emit 0 "$count" >"$tmp/keys" || exit 2

echo
echo "== bfuniq -v: expected distinct lines lost vs lost ($count distinct keys)"
echo "| bfuniq | P | lost | expected | (lost - E)/sqrt(E) | result |"
echo "|---|---|--:|--:|--:|---|"
failed=0
for layout in $(echo "$layouts" | tr ',' ' '); do
	case $layout in
	growing) shape="" ;;	# no -n: it grows
	counting) continue ;;	# bfuniq has no counting layout
	*) shape="-n $count --layout $layout" ;;
	esac
	for p in $(echo "$rates" | tr ',' ' '); do
		# shellcheck disable=SC2086
		written=$("$build/cmd/bfuniq" -v --key 0123456789abcdef0123456789abcdef $shape -p "$p" "$tmp/keys" 2>"$tmp/err" | wc -l) || exit 2
		expected=$(sed -n 's/.*expected distinct lines lost to false positives: \([^ ]*\) .*/\1/p' "$tmp/err")
		[ -n "$expected" ] || { cat "$tmp/err" >&2; exit 2; }
		awk -v l="$layout" -v p="$p" -v n="$count" -v w="$written" -v e="$expected" 'BEGIN {
			lost = n - w; z = e > 0 ? (lost - e) / sqrt(e) : lost
			ok = (lost - e <= 3 * sqrt(e) + 1 && e - lost <= 3 * sqrt(e) + 1)
			printf "| %s | %s | %d | %s | %+.2f | %s |\n", l, p, lost, e, z, ok ? "PASS" : "FAIL"
			exit !ok }' || failed=$((failed + 1))
	done
done
echo "bfuniq: $failed row(s) failed"
[ "$failed" -eq 0 ] || status=1

echo
sh "$here/top.sh" "$build" || status=1
exit $status
