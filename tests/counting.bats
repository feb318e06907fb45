#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# counting.bats - counting filters end to end (bfbuild(1) --layout counting
# and --remove, bf(5) layout 3): they are sized as classic in counters of
# 4 bits, deleting keys leaves the others all present and the deleted ones
# found only as never-added keys are, keys never added are reported, bit
# filters refuse --remove, and bfinfo, bfgrep, bfuniq, bfcount and bfmerge
# take counting filters.
#
# Every filter is built with the fixed key of helpers.bash, so every run
# sees the same counters. Header fields are read from the decompressed
# file: the stage header at 64 (layout 64, m 72, insertions 96, payload
# length 104, removals 112), the counters from byte 128.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	for prog in bfbuild bfgrep bfinfo bfmerge bfuniq bfcount; do
		if [ ! -x "$BFTOOLS_BIN/$prog" ]; then
			echo "$BFTOOLS_BIN/$prog is missing: build it (make) or set BFTOOLS_BIN" >&2
			return 1
		fi
	done
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
}

# numbered PREFIX FROM TO: the lines PREFIX<i> for i = FROM..TO.
numbered() {
	seq "$2" "$3" | sed "s/^/$1/"
}

# json_value FILTER KEY: the first value of KEY in bfinfo --json FILTER.
json_value() {
	bfinfo --json "$1" | grep -o "\"$2\":[^,}]*" | head -n 1 | cut -d: -f2
}

# repeated LINE N: LINE, N times.
repeated() {
	local i
	for i in $(seq 1 "$2"); do
		printf '%s\n' "$1"
	done
}

# ---------------------------------------------------------------- sizing

@test "counting: sized as classic (the same m and k), at 4 bits of memory per counter" {
	build c.bf --layout counting -n 1000000 -p 0.001 </dev/null
	build b.bf --layout classic -n 1000000 -p 0.001 </dev/null
	expect_eq "counters (m)" "$(json_value b.bf bits)" "$(json_value c.bf bits)"
	expect_eq "hashes (k)" "$(json_value b.bf hashes)" "$(json_value c.bf hashes)"
	# classic's 14.38 bits a key: 14377984 counters, 7188992 bytes at 4 bits each
	expect_eq "m" 14377984 "$(json_value c.bf bits)"
	expect_eq "memory" 7188992 "$(json_value c.bf bytes_in_memory)"
	expect_eq "classic's memory" 1797248 "$(json_value b.bf bytes_in_memory)"
	expect_eq "layout byte" 3 "$(header_uint c.bf 64 1)"
	expect_eq "payload length" 7188992 "$(header_uint c.bf 104 8)"
	run --separate-stderr bfbuild -v --key "$KEY" --layout counting -o c.bf </dev/null
	expect_status 0
	expect_eq "-v fill line" "bfbuild: 0 of 14377984 counters non-zero (0.00%), 0 saturated, k = 10, counting layout, 1 stage, 7.2 MB" "${stderr_lines[2]}"
}

@test "counting: -m counts counters, rounded up to a multiple of 512, half a byte each" {
	build c.bf --layout counting -m 1000 -K 3 </dev/null
	expect_eq "m" 1024 "$(header_uint c.bf 72 8)"
	expect_eq "payload length" 512 "$(header_uint c.bf 104 8)"
	expect_eq "content" 640 "$(gzip -dc c.bf | wc -c | tr -d ' ')"
}

# ---------------------------------------------------------------- removal

# 20000 keys in a filter sized for them at p = 0.01 (m = 192000 counters,
# k = 7); the odd half is removed. Counters count exactly (none saturates:
# bfinfo says 0), so the filter left is counter for counter the filter of
# the even half alone: every even key is present, and an odd key is found
# exactly when it would be in a filter that never held it. That rate is
# (1 - e^(-7 * 10000 / 192000))^7 = 2.5e-4, so about 2.5 of the 10000 odd
# keys are found; we require at most 20 (Poisson(2.5) exceeds 20 with
# probability below 1e-12, whatever the key), and exactly the lines the
# even half's own filter finds. Without the removal the odd keys would
# all be found.
@test "counting: delete half of a set: the other half all found, the deleted half only as false positives" {
	numbered user 1 20000 >all.txt
	awk 'NR % 2 == 1' all.txt >odd.txt
	awk 'NR % 2 == 0' all.txt >even.txt
	build half.bf --layout counting -n 20000 -p 0.01 all.txt
	run --separate-stderr bfbuild -f half.bf --remove odd.txt
	expect_status 0
	expect_stderr ""
	expect_eq "saturated counters" 0 "$(json_value half.bf saturated_counters)"
	run --separate-stderr bfgrep -c -f half.bf even.txt
	expect_output 10000
	bfgrep -f half.bf odd.txt >found.txt || true
	[ "$(wc -l <found.txt)" -le 20 ] || expect_eq "odd keys found (at most 20)" "<= 20" "$(wc -l <found.txt)"
	build even.bf --layout counting -n 20000 -p 0.01 even.txt
	bfgrep -f even.bf odd.txt >alone.txt || true
	cmp found.txt alone.txt
	expect_eq "insertions" 20000 "$(header_uint half.bf 96 8)"
	expect_eq "removals" 10000 "$(header_uint half.bf 112 8)"
}

@test "counting: removing lines never added is reported, exit 1, and the filter is still written" {
	numbered key 1 1000 >keys.txt
	build c.bf --layout counting -n 1000 keys.txt
	printf '%s\n' key1 never-1 key2 never-2 never-3 >gone.txt
	run --separate-stderr bfbuild -f c.bf --remove gone.txt
	expect_status 1
	expect_output ""
	expect_stderr "bfbuild: 3 keys to remove were not in the filter"
	run --separate-stderr bfgrep -c -f c.bf keys.txt
	expect_output 998
	expect_eq "removals" 2 "$(header_uint c.bf 112 8)"
	run --separate-stderr bfbuild -f c.bf --remove gone.txt
	expect_status 1
	expect_stderr "bfbuild: 5 keys to remove were not in the filter"
	echo never-4 >one.txt
	run --separate-stderr bfbuild -v -f c.bf --remove one.txt
	expect_status 1
	expect_eq "-v lines" "bfbuild: 1 lines read, 0 keys removed, 1 not in the filter, 0 lines without a key" "${stderr_lines[0]}"
	expect_eq "last line" "bfbuild: 1 key to remove was not in the filter" "${stderr_lines[4]}"
}

@test "counting: a key added twice stays until it is removed twice" {
	printf 'twice\ntwice\nonce\n' >in.txt
	build c.bf --layout counting -n 100 in.txt
	printf 'twice\nonce\n' | bfbuild -f c.bf --remove
	run --separate-stderr bfgrep -f c.bf in.txt
	expect_output "twice
twice"
	echo twice | bfbuild -f c.bf --remove
	run --separate-stderr bfgrep -c -f c.bf in.txt
	expect_status 1
	expect_output 0
}

@test "counting: --remove on a blocked or classic filter is refused, the filter left as it was" {
	echo a >in.txt
	for layout in blocked classic; do
		build f.bf --layout $layout in.txt
		cp f.bf before.bf
		run --separate-stderr bfbuild -f f.bf --remove in.txt
		expect_fail "bfbuild: f.bf: --remove needs a counting filter (built with --layout counting), and this one is $layout"
		cmp f.bf before.bf
	done
}

@test "counting: --remove without -f, or with --like, is a usage error" {
	build c.bf --layout counting -n 100 </dev/null
	run --separate-stderr bfbuild --remove -o x.bf </dev/null
	expect_usage_error bfbuild "--remove needs -f FILTER, the filter to remove the keys from"
	run --separate-stderr bfbuild --like c.bf --remove -o x.bf </dev/null
	expect_usage_error bfbuild "--remove needs -f FILTER, the filter to remove the keys from"
	run --separate-stderr bfbuild --layout bloom -o x.bf </dev/null
	expect_usage_error bfbuild "invalid layout 'bloom': expected 'blocked', 'classic' or 'counting'"
	[ ! -e x.bf ]
}

# ---------------------------------------------------------------- saturation

# One counter (-K 1): 20 additions take it to 15, where it stays, so 20
# removals leave the key present; 14 would have been counted exactly.
@test "counting: bfinfo shows saturated counters; a saturated key survives as many removals" {
	repeated often 20 >often.txt
	build c.bf --layout counting -m 512 -K 1 often.txt
	run --separate-stderr bfinfo c.bf
	expect_status 0
	case $output in
	*"  insertions:         20
  removals:           0
  counters non-zero:  1
  saturated counters: 1
  fill:               0.20%"*) ;;
	*) expect_eq "bfinfo stage fields" "(insertions 20, removals 0, 1 non-zero, 1 saturated)" "$output" ;;
	esac
	bfbuild -f c.bf --remove often.txt
	expect_eq "saturated_counters" 1 "$(json_value c.bf saturated_counters)"
	expect_eq "removals" 20 "$(json_value c.bf removals)"
	run --separate-stderr bfgrep -c -f c.bf often.txt
	expect_output 20
	repeated other 14 >other.txt
	build d.bf --layout counting -m 512 -K 1 other.txt
	bfbuild -f d.bf --remove other.txt
	expect_eq "saturated_counters" 0 "$(json_value d.bf saturated_counters)"
	run --separate-stderr bfgrep -c -f d.bf other.txt
	expect_output 0
}

@test "counting: bfinfo --json gives layout counting, removals and saturated_counters per stage" {
	echo a >in.txt
	build c.bf --layout counting -n 100 in.txt
	run --separate-stderr bfinfo --json c.bf
	expect_status 0
	case $output in
	*'"stages":[{"layout":"counting","bits":1536,"hashes":11,"capacity":100,"target_rate":0.001,"insertions":1,"removals":0,"bits_set":11,"saturated_counters":0,"fill":'*) ;;
	*) expect_eq "stage object" '{"layout":"counting",...,"removals":0,"bits_set":11,"saturated_counters":0,...}' "$output" ;;
	esac
	build b.bf in.txt
	run --separate-stderr bfinfo --json b.bf
	case $output in
	*saturated_counters* | *removals*) expect_eq "a blocked stage" "no counting fields" "$output" ;;
	esac
}

# ---------------------------------------------------------------- the other tools

@test "counting: bfmerge adds counters (OR) or keeps the smaller (AND), saturating at 15" {
	repeated x 10 >x10.txt
	build a.bf --layout counting -m 512 -K 1 x10.txt
	bfbuild --like a.bf -o b.bf x10.txt
	bfmerge -o or.bf a.bf b.bf
	bfmerge --intersect -o and.bf a.bf b.bf
	expect_eq "OR: 10 + 10 saturates" 1 "$(json_value or.bf saturated_counters)"
	expect_eq "AND: min(10, 10)" 0 "$(json_value and.bf saturated_counters)"
	# AND keeps 10: ten removals empty it
	bfbuild -f and.bf --remove x10.txt
	run --separate-stderr bfgrep -c -f and.bf x10.txt
	expect_output 0
	# OR saturated: no number of removals empties it
	bfbuild -f or.bf --remove x10.txt
	bfbuild -f or.bf --remove x10.txt
	run --separate-stderr bfgrep -c -f or.bf x10.txt
	expect_output 10
}

@test "counting: shards merged with bfmerge hold every key, and removing one shard's keys leaves the other's" {
	numbered a 1 3000 >a.txt
	numbered b 1 3000 >b.txt
	build template.bf --layout counting -n 6000 </dev/null
	bfbuild --like template.bf -o a.bf a.txt
	bfbuild --like template.bf -o b.bf b.txt
	run --separate-stderr bfmerge -o m.bf a.bf b.bf
	expect_status 0
	cat a.txt b.txt >both.txt
	run --separate-stderr bfgrep -c -f m.bf both.txt
	expect_output 6000
	run --separate-stderr bfbuild -f m.bf --remove a.txt
	expect_status 0
	run --separate-stderr bfgrep -c -f m.bf b.txt
	expect_output 3000
	bfbuild --like template.bf -o b-only.bf b.txt
	expect_eq "m.bf's counters are b.bf's" "$(gzip -dc b-only.bf | tail -c +129 | od -A n -v -t x1)" \
		"$(gzip -dc m.bf | tail -c +129 | od -A n -v -t x1)"
	build blocked.bf a.txt
	run --separate-stderr bfmerge -o x.bf m.bf blocked.bf
	expect_fail "bfmerge: blocked.bf: cannot be merged with m.bf: different layout"
}

@test "counting: bfuniq -f with a counting STATE adds to it, and --remove takes the lines out again" {
	build state.bf --layout counting -n 1000 </dev/null
	printf 'a\nb\na\n' >in.txt
	run --separate-stderr bfuniq -f state.bf in.txt
	expect_output "a
b"
	run --separate-stderr bfuniq -f state.bf in.txt
	expect_output ""
	expect_eq "insertions" 6 "$(header_uint state.bf 96 8)"
	# every line bfuniq saw was counted: a four times, b twice
	repeated a 4 | bfbuild -f state.bf --remove
	repeated b 2 | bfbuild -f state.bf --remove
	run --separate-stderr bfuniq -f state.bf in.txt
	expect_output "a
b"
}

@test "counting: bfcount -f estimates a counting filter exactly as the classic filter of the same keys" {
	numbered k 1 5000 >in.txt
	build c.bf --layout counting -n 10000 in.txt
	build b.bf --layout classic -n 10000 in.txt
	run --separate-stderr bfcount -f b.bf
	local classic=$output
	run --separate-stderr bfcount -f c.bf
	expect_status 0
	expect_output "$classic"
	# 2500 keys left in 143872 counters: the estimate's standard error is
	# about 15 (bfcount -v), so 2500 +- 100 is over 6 of them
	numbered k 1 2500 | bfbuild -f c.bf --remove
	run --separate-stderr bfcount -f c.bf
	[ "$output" -ge 2400 ] && [ "$output" -le 2600 ] || expect_eq "count after removing half" "about 2500" "$output"
}
