#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# accuracy.bats - the quick version of `make accuracy`: every layout at
# capacity against its target rate and its model, and bfuniq's expected
# loss against its real loss, small enough for make check and make asan.
#
# The rows use 2e5 keys and 1000 / P absent keys (1e5 at P = 1e-2, 1e7 at
# 1e-4). A row holds within 3 sigma, sigma^2 = P / Q plus the spread of a
# filter's own rate (tests/accuracy/accuracy.c): for fixed filters about
# 3.2-3.5% of P, so a 20% bias is 6 sigma and fails; for growing ones,
# whose small first stages scatter more, 6-10% of P. Every row also
# compares the filter's rate computed from its own bits with the model.
# Keys and the SipHash key are fixed: the counts are the same every run.

load helpers

accuracy() {
	"$BFTOOLS_BIN/../tests/accuracy/accuracy" "$@"
}

@test "accuracy: every layout meets 1e-2, 1e-3 and 1e-4 at capacity, as its model says" {
	run accuracy -n 2e5 -f 1000 -r 1e-2,1e-3,1e-4 -l blocked,classic,counting,growing
	echo "$output"
	expect_status 0
	expect_eq "rows" 12 "$(grep -c '| PASS |' <<<"$output")"
	expect_eq "summary" "accuracy: 0 rows failed" "${lines[-1]}"
}

@test "accuracy: a filter holding 3% more keys than sized for (about 20% over its rate) fails its row" {
	# the check must see a 20% excess, or passing it proves nothing
	run accuracy -n 2e5 -f 1000 -r 1e-3 -l blocked,classic -x 1.03
	echo "$output"
	expect_status 1
	expect_eq "summary" "accuracy: 2 rows failed" "${lines[-1]}"
}

@test "bfuniq -v: expected distinct lines lost matches the lines lost, within 3 sigma" {
	accuracy --emit 0 200000 >keys
	for p in 1e-2 1e-3; do
		for shape in "-n 200000" "-n 200000 --layout classic" ""; do
			# shellcheck disable=SC2086
			written=$(bfuniq -v --key "$KEY" $shape -p "$p" keys 2>err | wc -l)
			expected=$(sed -n 's/.*lost to false positives: \([^ ]*\) .*/\1/p' err)
			lost=$((200000 - written))
			# |lost - E| <= 3 sqrt(E) + 1 (run.sh says why)
			awk -v l="$lost" -v e="$expected" 'BEGIN { exit !(l - e <= 3 * sqrt(e) + 1 && e - l <= 3 * sqrt(e) + 1) }' ||
				expect_eq "lost at p=$p shape '$shape'" "$expected" "$lost"
		done
	done
}
