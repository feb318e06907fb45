#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# window.bats - sliding windows (bfuniq --window, window.h): repeats within
# the window dropped, keys older than the window and its slack passing
# again, time windows read from a field, the state file carrying window and
# clock across runs, and every program's answer to a windowed filter.
#
# The bounds: a window of N keys (or W seconds) in G generations keeps a
# key at least N keys (W seconds) and forgets it before N G/(G-1) (W G/(G-1)),
# the slack being 1/(G-1). Every test fixes the SipHash key, so its outcome
# is deterministic; the arithmetic in the comments says why the bound that
# is asserted holds for any key. Time windows read synthetic times with
# --time-field or --now, so no test depends on the wall clock.

bats_require_minimum_version 1.5.0
load helpers

uniq_() {
	bfuniq --key "$KEY" "$@"
}

# cycle FILE PERIOD LINES: LINES lines, "k" followed by the line number modulo PERIOD.
cycle() {
	awk -v p="$2" -v n="$3" 'BEGIN { for (i = 0; i < n; i++) print "k" (i % p) }' >"$1"
}

@test "window: a count window drops every repeat within N keys" {
	# each key recurs exactly N = 1000 keys later: within the window of the
	# sighting before. Without refresh a key's age runs from the sighting
	# that passed, so the repeat 2000 keys on (past 1000 * 8/7 = 1143) passes
	# again: every other cycle, 10000 lines. With --refresh every repeat
	# renews the key, so only the first cycle passes. 1000 fresh keys at
	# rate 1e-6 lose one with probability under 1e-3; the fixed key makes
	# the outcome certain
	cycle in.txt 1000 20000
	run --separate-stderr uniq_ --window 1000keys in.txt
	expect_status 0
	expect_eq "lines" 10000 "$(printf '%s\n' "$output" | wc -l)"
	expect_eq "cycles 0 and 2" "$(sed -n '1,1000p;2001,3000p' in.txt)" "$(head -n 2000 <<<"$output")"
	run --separate-stderr uniq_ --window 1000keys --refresh in.txt
	expect_status 0
	expect_eq "refreshed" "$(head -n 1000 in.txt)" "$output"
}

@test "window: a key older than the window and its slack passes again" {
	# N = 1000, G = 8: forgotten before 1000 * 8/7 = 1143 keys; period 1200.
	# 12000 first sightings at 1e-6: the chance of any loss is about 1.2e-2
	# per key chosen; with this fixed key there is none
	cycle in.txt 1200 12000
	run --separate-stderr uniq_ --window 1000keys in.txt
	expect_status 0
	expect_eq "lines" 12000 "$(printf '%s\n' "$output" | wc -l)"
	# with G = 2 the slack is a whole window: period 1200 < 2000 is not enough
	run --separate-stderr uniq_ --window 1000keys --generations 2 in.txt
	expect_status 0
	[ "$(printf '%s\n' "$output" | wc -l)" -lt 12000 ]
}

@test "window: fresh keys are dropped at no more than the target rate" {
	# 200000 distinct keys through a window of 10000 at P = 0.01: the drops
	# are about Binomial(200000, <= 0.01); mean + 3 sigma = 2000 + 3 * 44.5 = 2134
	seq 1 200000 >in.txt
	run --separate-stderr uniq_ --window 1e4keys -p 0.01 in.txt
	expect_status 0
	kept=$(printf '%s\n' "$output" | wc -l)
	echo "dropped $((200000 - kept)) of 200000"
	[ $((200000 - kept)) -le 2134 ]
}

# loss_matches_model FILE ARGS...: bfuniq -v ARGS on FILE, whose lines
# all have distinct keys, so every line not written is a fresh key lost to
# a false positive. Given the filter's state, each fresh key is lost with
# the model's probability, so the loss L is a sum of Bernoulli trials of
# mean E (the expected loss -v prints) and variance below E. Asserted:
# |L - E| <= 4 sqrt(E) + 0.03 E, four standard deviations (one in 15,000
# for a key picked at random) plus 3% for the model's own error (sizing's
# rates are approximations; measured here within 2%). With the fixed key
# the outcome is certain.
loss_matches_model() {
	# not "lines": run sets that array
	local file=$1 total kept lost expected
	shift
	total=$(wc -l <"$file" | tr -d ' ')
	run --separate-stderr uniq_ -v "$@" "$file"
	expect_status 0
	kept=$(printf '%s\n' "$output" | wc -l | tr -d ' ')
	lost=$((total - kept))
	expected=$(sed -n 's/^bfuniq: expected distinct lines lost to false positives: \([0-9.e+]*\) .*/\1/p' <<<"$stderr")
	echo "$*: lost $lost, expected $expected"
	[ -n "$expected" ]
	awk -v l="$lost" -v e="$expected" 'BEGIN { d = l - e; if (d < 0) d = -d; exit !(e > 0 && d <= 4 * sqrt(e) + 0.03 * e) }'
}

@test "window: -v prints the expected loss, and the loss measured matches it" {
	# 200000 distinct keys through a window of 1e4 at P = 0.01: about 1580
	# expected (fresh keys meet the older generations' full rates and the
	# newest's filling one, below P), so the bound is about +-206; measured
	# 1614, 1691 with --refresh, 1256 with G = 3 (expected about 1280)
	seq 1 200000 >in.txt
	loss_matches_model in.txt --window 1e4keys -p 0.01
	loss_matches_model in.txt --window 1e4keys -p 0.01 --refresh
	loss_matches_model in.txt --window 1e4keys -p 0.01 --generations 3
	loss_matches_model in.txt --window 1e4keys -p 0.01 --layout classic
}

@test "window: a time window's expected loss follows its generations through a burst" {
	# 10 keys a second, then 50 a second for 600 s, through 1000 s windows
	# expecting 1e4 keys: the burst grows the generations by stages, whose
	# rates the model reads too. Expected about 860 (bound +-143); measured 906
	awk 'BEGIN { t = 1000000; for (i = 0; i < 200000; i++) {
		t += (i > 100000 && i < 130000) ? 0.02 : 0.1; printf "%.3f k%d\n", t, i } }' >in.txt
	loss_matches_model in.txt --window 1000s -n 1e4 -p 0.01 --time-field 1 -k 2
	[[ $stderr == *"8 live"* ]]
}

@test "window: a time window reads Unix seconds from --time-field" {
	# W = 60 s, G = 4: tau = 20 s; a key is kept 60 s and gone by 80 s
	put_lines in.txt "1000 a" "1005 b" "1059 a" "1064 b" "1090 a" "1091 a" "1099 c"
	run --separate-stderr uniq_ --window 60s --generations 4 --time-field 1 -k 2 in.txt
	expect_status 0
	expect_output "1000 a
1005 b
1090 a
1099 c"
}

@test "window: RFC 3339 times with fractions and offsets are read" {
	put_lines in.txt "2026-11-25T12:00:00Z a" "2026-11-25T13:00:30.5+01:00 a" \
		"2026-11-25T12:02:00.250Z a" "2026-11-25T12:05:00Z a"
	run --separate-stderr uniq_ --window 1m --time-field 1 -k 2 in.txt
	expect_status 0
	# 13:00:30.5+01:00 is 30.5 s after the first: a repeat; 12:02:00.250 is
	# past 60 * 8/7 = 68.6 s, and 12:05 past that again
	expect_output "2026-11-25T12:00:00Z a
2026-11-25T12:02:00.250Z a
2026-11-25T12:05:00Z a"
}

@test "window: an older time counts as the clock" {
	# the clock is the latest time seen: 1000 at 1200, gone; 'a' again at 500 is at 1200
	put_lines in.txt "1000 a" "1200 b" "500 a" "501 a"
	run --separate-stderr uniq_ --window 60s --time-field 1 -k 2 in.txt
	expect_status 0
	expect_output "1000 a
1200 b
500 a"
}

@test "window: a line whose time cannot be read is an error naming file and line" {
	put_lines in.txt "1000 a" "1001 b" "soon c"
	run --separate-stderr uniq_ --window 60s --time-field 1 -k 2 in.txt
	expect_status 2
	expect_eq stderr "bfuniq: in.txt:3: time field 1: not a time (Unix seconds or RFC 3339)" "$stderr"
}

@test "window: --bad-time=skip passes such lines through and -v counts them" {
	put_lines in.txt "1000 a" "x a" "1001 a" "y"
	run --separate-stderr uniq_ --window 60s --time-field 1 -k 2 --bad-time=skip -v in.txt
	expect_status 0
	expect_output "1000 a
x a
y"
	case $stderr in *"(first seen 1, repeats 1, without a key 0); written: 3"*"2 lines with no readable time passed through"*) ;; *) echo "$stderr"; false ;; esac
}

@test "window: --refresh keeps a key seen steadily from passing again" {
	# the key every 30 s in a 60 s window: without refresh it passes again
	# once its first sighting is old enough (by 80 s); with it, never
	for t in 0 30 60 90 120 150 180; do echo "$((1000 + t)) a"; done >in.txt
	run --separate-stderr uniq_ --window 60s --generations 4 --time-field 1 -k 2 in.txt
	expect_output "1000 a
1090 a
1180 a"
	run --separate-stderr uniq_ --window 60s --generations 4 --refresh --time-field 1 -k 2 in.txt
	expect_output "1000 a"
}

@test "window: the state file carries the window and its clock from run to run" {
	cycle all.txt 700 5000
	head -n 2600 all.txt >one.txt
	tail -n +2601 all.txt >two.txt
	uniq_ --window 1000keys all.txt >whole.txt
	uniq_ -f seen.bf --window 1000keys one.txt >split.txt
	uniq_ -f seen.bf two.txt >>split.txt
	cmp whole.txt split.txt
	# and a time window, the second run without --window
	put_lines day1.txt "1000 a" "1010 b"
	put_lines day2.txt "1050 a" "1100 b" "1200 a"
	uniq_ -f t.bf --window 60s --time-field 1 -k 2 day1.txt >out.txt
	uniq_ -f t.bf --time-field 1 -k 2 day2.txt >>out.txt
	expect_eq output "1000 a
1010 b
1100 b
1200 a" "$(cat out.txt)"
}

@test "window: a state saved on a generation boundary loads and continues" {
	# N = 1000, G = 8: generations of ceil(1000/7) = 143 keys. After 8 * 143
	# = 1144 keys the clock is the first place of generation 8, which leaves
	# generation 0 behind: the saved state must hold only generations 1-7
	# (it once kept 0 too, and refused to save itself), and the run split
	# there must print what the whole run prints
	cycle all.txt 700 3000
	head -n 1144 all.txt >one.txt
	tail -n +1145 all.txt >two.txt
	uniq_ --window 1000keys all.txt >whole.txt
	uniq_ -f seen.bf --window 1000keys one.txt >split.txt
	run --separate-stderr bfinfo seen.bf
	expect_status 0
	[[ $output == *"live generations:     7"* ]]
	[[ $output == *"generation 1:"* ]]
	[[ $output != *"generation 0:"* ]]
	uniq_ -f seen.bf two.txt >>split.txt
	cmp whole.txt split.txt
}

@test "window: a state of another window, or none, is refused" {
	put_lines in.txt a b
	uniq_ -f seen.bf --window 1000keys in.txt >/dev/null
	run --separate-stderr uniq_ -f seen.bf --window 2000keys in.txt
	expect_fail "bfuniq: seen.bf: a window of 1000 keys, 8 generations, not the 2000 keys, 8 generations asked for"
	uniq_ -f plain.bf in.txt >/dev/null
	run --separate-stderr uniq_ -f plain.bf --window 1000keys in.txt
	expect_fail "bfuniq: plain.bf: not a windowed filter: it was made without --window"
}

@test "window: programs that cannot use a windowed filter refuse it" {
	put_lines in.txt a b
	uniq_ -f seen.bf --window 1000keys in.txt >/dev/null
	run --separate-stderr bfbuild --like seen.bf -o new.bf in.txt
	expect_fail "bfbuild: seen.bf: a windowed filter (bfuniq --window): this program cannot use it"
}

@test "window: keys say keys, time has lower-case units, compound and fractional" {
	# issue 37: every spelling of 90 minutes is one window of 5400 s
	for w in 1h30m 1.5h 90m 5400s 1h1800s .0625d; do
		bfbuild --key "$KEY" --window "$w" -o "t.bf" </dev/null
		expect_eq "--window $w" '"window_seconds":5400' \
			"$(bfinfo --json t.bf | tr , '\n' | grep window_)"
	done
	bfbuild --key "$KEY" --window 1w -o w.bf </dev/null
	expect_eq "--window 1w" '"window_seconds":604800' "$(bfinfo --json w.bf | tr , '\n' | grep window_)"
	bfbuild --key "$KEY" --window 2kkeys -o k.bf </dev/null
	expect_eq "--window 2kkeys" '"window_keys":2000' "$(bfinfo --json k.bf | tr , '\n' | grep window_)"
}

@test "window: a bare number or 10M is refused, naming both readings" {
	local times="90s, 10m, 1h30m, 1.5h, 7d, 1w"
	for prog in bfuniq bfbuild bftop; do
		run --separate-stderr "$prog" --window 90 </dev/null
		expect_usage_error "$prog" "invalid window '90': keys or time? say 90keys for keys, or a time in lower-case units ($times)"
		run --separate-stderr "$prog" --window 10M </dev/null
		expect_usage_error "$prog" "invalid window '10M': keys or time? say 10Mkeys for keys, or a time in lower-case units ($times)"
	done
	run --separate-stderr bfuniq --window 1.5s </dev/null
	expect_usage_error bfuniq "invalid window '1.5s': not a whole number of seconds (keys: 1000keys, 10Mkeys; time: $times)"
	run --separate-stderr bfuniq --window 30m1h </dev/null
	expect_usage_error bfuniq "invalid window '30m1h': units out of order (largest first, each once: 1h30m) (keys: 1000keys, 10Mkeys; time: $times)"
	run --separate-stderr bfuniq --window 1H </dev/null
	expect_usage_error bfuniq "invalid window '1H': neither keys nor time (keys: 1000keys, 10Mkeys; time: $times)"
	run --separate-stderr bfuniq --window 0keys </dev/null
	expect_usage_error bfuniq "invalid window '0keys': must be at least 1 (keys: 1000keys, 10Mkeys; time: $times)"
}

@test "window: bad window options are usage errors" {
	run --separate-stderr bfuniq --window 0 </dev/null
	expect_any_usage_error bfuniq
	run --separate-stderr bfuniq --window 10x </dev/null
	expect_any_usage_error bfuniq
	run --separate-stderr bfuniq --window 10m --generations 1 </dev/null
	expect_any_usage_error bfuniq
	run --separate-stderr bfuniq --window 10m --generations 65 </dev/null
	expect_any_usage_error bfuniq
	run --separate-stderr bfuniq --window 1000keys --time-field 1 </dev/null
	expect_usage_error bfuniq "--time-field and --now need a time window (such as --window 10m)"
	run --separate-stderr bfuniq --window 1000keys -n 5 </dev/null
	expect_usage_error bfuniq "-n sizes a time window; a count window is its own capacity"
	run --separate-stderr bfuniq --refresh </dev/null
	expect_usage_error bfuniq "--generations, --refresh, --time-field, --bad-time and --now need --window"
	run --separate-stderr bfuniq --window 10m --bad-time=maybe </dev/null
	expect_usage_error bfuniq "invalid --bad-time 'maybe': expected error or skip"
	run --separate-stderr bfuniq --window 10m --now tomorrow </dev/null
	expect_usage_error bfuniq "invalid --now 'tomorrow': not a time (Unix seconds or RFC 3339)"
}

@test "window: memory stays flat over a stream 100 times the window" {
	is_plain_build || skip "RSS is measured on plain builds only"
	[ -x /usr/bin/time ] || skip "/usr/bin/time is not installed"
	# window 1e4 (blocked, P = 1e-4: 8 generations of ~5 KB) over 1e5 and
	# 1e6 fresh keys (10 and 100 windows; the first fills the pipeline's
	# buffers): a filter that never forgets would need ~2.2 MB more for the
	# 9e5 keys more; the window's peak must not grow by 1 MB
	seq 1 100000 >small.txt
	seq 1 1000000 >big.txt
	/usr/bin/time -f %M -o small.rss bfuniq --window 1e4keys -p 1e-4 small.txt >/dev/null
	/usr/bin/time -f %M -o big.rss bfuniq --window 1e4keys -p 1e-4 big.txt >/dev/null
	echo "peak RSS: $(cat small.rss) KB over 1e5 keys, $(cat big.rss) KB over 1e6"
	[ "$(cat big.rss)" -le $(($(cat small.rss) + 1024)) ]
}

@test "window: bfgrep answers 'seen within the window' as of --now" {
	put_lines in.txt "1000 a" "1030 b" "1065 c"
	uniq_ -f t.bf --window 60s --generations 4 --time-field 1 -k 2 in.txt >/dev/null
	put_lines q.txt a b c d
	# tau = 20 s; at 1065 s (generation 53) generations 50..53 are live: a (50), b (51), c (53)
	run --separate-stderr bfgrep -f t.bf --now 1065 q.txt
	expect_status 0
	expect_output "a
b
c"
	# at 1090 s (generation 54) generation 50 has gone: a is forgotten
	run --separate-stderr bfgrep -f t.bf --now 1090 q.txt
	expect_output "b
c"
	# much later nothing is within the window
	run --separate-stderr bfgrep -f t.bf --now 2026-11-25T00:00:00Z q.txt
	expect_status 1
	expect_output ""
}

@test "window: bfgrep answers for a count window's last N keys" {
	cycle in.txt 50 50
	uniq_ -f c.bf --window 100keys in.txt >/dev/null
	put_lines q.txt k7 k49 k50
	run --separate-stderr bfgrep -f c.bf q.txt
	expect_status 0
	expect_output "k7
k49"
}

@test "window: bfinfo shows the window, its clock and its generations" {
	put_lines in.txt "1000 a" "1030 b"
	uniq_ -f t.bf --window 60s --generations 4 -n 1000 --time-field 1 -k 2 in.txt >/dev/null
	run --separate-stderr bfinfo t.bf
	expect_status 0
	grep -qx 'kind:                 window (time)' <<<"$output"
	grep -qx 'window:               1m' <<<"$output"
	grep -qx 'generations:          4 (slack 1/3: forgotten within 4/3 of the window)' <<<"$output"
	grep -qx 'clock:                1970-01-01T00:17:10.000Z' <<<"$output"
	grep -qx 'generation 50:' <<<"$output"
	grep -qx 'generation 51:' <<<"$output"
	run --separate-stderr bfinfo --json t.bf
	expect_status 0
	case $output in *'"window_seconds":60,"generations":4,"refresh":false,"clock_ms":1030000'*) ;; *) echo "$output"; false ;; esac
}

@test "window: bfbuild --window builds a window and -f adds to it, its clock moving on" {
	put_lines day1.txt "1000 a" "1010 b"
	put_lines day2.txt "1100 c"
	bfbuild --key "$KEY" --window 60s --generations 4 --time-field 1 -k 2 -o w.bf day1.txt
	bfbuild -f w.bf --time-field 1 -k 2 day2.txt
	put_lines q.txt a b c
	# at 1100 s (generation 55) live are 52..55: a (50) and b (50) are gone
	run --separate-stderr bfgrep -f w.bf --now 1100 q.txt
	expect_status 0
	expect_output "c"
	# a time before the file's clock answers as of the clock
	run --separate-stderr bfgrep -f w.bf --now 1000 q.txt
	expect_output "c"
	# the same keys through bfuniq (at bfbuild's default rate) give the same file
	cat day1.txt day2.txt | uniq_ -f u.bf -p 1e-3 --window 60s --generations 4 --time-field 1 -k 2 >/dev/null
	cmp w.bf u.bf
}

@test "window: bfbuild refuses --window with options a window has no use for" {
	run --separate-stderr bfbuild --window 10m --layout counting -o w.bf </dev/null
	expect_usage_error bfbuild "--window cannot be used with --layout counting: generations are dropped whole"
	run --separate-stderr bfbuild --window 10m -m 4096 -o w.bf </dev/null
	expect_usage_error bfbuild "--window cannot be used with --format, --remove, --like, -m or -K"
	run --separate-stderr bfbuild --refresh -o w.bf </dev/null
	expect_usage_error bfbuild "--generations, --refresh, --time-field, --bad-time and --now need --window"
}

@test "window: bfcount -f estimates the keys within the window" {
	# 3000 distinct keys, the last 1000 within a count window of 1000; the
	# blocked estimate's error at these sizes is a few percent: 900..1300
	# covers it with room (a key may linger in the oldest generation: +1/7)
	seq 1 3000 >in.txt
	bfbuild --key "$KEY" --window 1000keys -p 1e-4 -o c.bf in.txt
	run --separate-stderr bfcount -f c.bf
	expect_status 0
	echo "estimate $output"
	[ "$output" -ge 900 ] && [ "$output" -le 1300 ]
}

@test "window: bfmerge merges windowed shards generation by generation" {
	# two shards of one stream, split by line parity, built apart; their
	# merge answers as the whole stream's window does
	awk 'BEGIN { for (i = 0; i < 400; i++) print 1000 + i, "k" i }' >all.txt
	awk 'NR % 2' all.txt >odd.txt
	awk '!(NR % 2)' all.txt >even.txt
	for f in all odd even; do
		bfbuild --key "$KEY" --window 60s --generations 4 --time-field 1 -k 2 -o $f.bf $f.txt
	done
	bfmerge -o merged.bf odd.bf even.bf
	awk '{ print $2 }' all.txt >q.txt
	bfgrep -f all.bf --now 1399 q.txt >want.txt
	run --separate-stderr bfgrep -f merged.bf --now 1399 q.txt
	expect_status 0
	expect_eq output "$(cat want.txt)" "$output"
	# the window is the last 60 s at least (keys from 1340 s on) and under 80 s
	grep -qx k340 want.txt
	! grep -qx k300 want.txt
	cmp merged.bf all.bf
}

@test "window: bfmerge refuses windows that do not line up, and plain filters" {
	put_lines in.txt "1000 a"
	bfbuild --key "$KEY" --window 60s --time-field 1 -k 2 -o a.bf in.txt
	bfbuild --key "$KEY" --window 90s --time-field 1 -k 2 -o b.bf in.txt
	bfbuild --key "$KEY" -o plain.bf in.txt
	run --separate-stderr bfmerge -o m.bf a.bf b.bf
	expect_fail "bfmerge: b.bf: cannot be merged with a.bf: different window size"
	run --separate-stderr bfmerge -o m.bf a.bf plain.bf
	expect_fail "bfmerge: plain.bf: cannot be merged with a.bf: not a windowed filter"
	# the other way round: bfmerge does merge windows, only not into a plain filter
	run --separate-stderr bfmerge -o m.bf plain.bf a.bf
	expect_fail "bfmerge: a.bf: a windowed filter (bfuniq --window): it merges only with windowed filters"
	run --separate-stderr bfmerge --intersect -o m.bf a.bf a.bf
	expect_fail "bfmerge: a.bf: cannot intersect windowed filters"
}

@test "window: a bfuniq state's generations count only the keys new to them, as the lines it wrote" {
	# 1000 keys, each twice in a run, and the whole run twice: 1000 lines
	# written in all, and 1000 insertions, both paths (fast: plain count
	# window; general: --refresh adds to the newest first)
	cycle keys.txt 1000 2000
	for refresh in "" --refresh; do
		rm -f state.bf
		# shellcheck disable=SC2086
		written=$(uniq_ --window 1e5keys $refresh -f state.bf keys.txt | wc -l)
		# shellcheck disable=SC2086
		again=$(uniq_ --window 1e5keys $refresh -f state.bf keys.txt | wc -l)
		expect_eq "written ($refresh)" 1000 "$written"
		expect_eq "written again ($refresh)" 0 "$again"
		total=$(bfinfo state.bf | awk '$1 == "insertions:" { s += $2 } END { print s }')
		expect_eq "insertions of every generation ($refresh)" 1000 "$total"
	done
}
