#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# bftop.bats - the command-line contract of bftop (bftop(1)): on Zipf
# corpora (tests/bench/gen.c, fixed seeds) every printed interval holds
# the exact count of `sort | uniq -c`, every key above EPS times the
# stream is listed, the top 100 at skew >= 1 are the exact top 100 (ties
# aside); the output is the same for every -j; summaries save, load, go on
# and merge; the key options; point queries; JSON; bad input and usage
# errors.
#
# Space-Saving's bounds are deterministic, so every assertion about
# intervals and listed keys holds for any input, not just these; only the
# top-100 assertions depend on the corpus (they hold with a wide margin:
# see the comment there).

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
	local gen=$BATS_FILE_TMPDIR/gen
	${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
		-o "$gen" "$BATS_TEST_DIRNAME/bench/gen.c" -lm
	# 200000 lines over 100000 ids: 0.8 spreads them thin, 1.2 piles them up
	"$gen" zipf 200000 100000 0.8 1 >"$BATS_FILE_TMPDIR/z08.txt"
	"$gen" zipf 200000 100000 1.0 2 >"$BATS_FILE_TMPDIR/z10.txt"
	"$gen" zipf 200000 100000 1.2 3 >"$BATS_FILE_TMPDIR/z12.txt"
	for s in 08 10 12; do
		sort "$BATS_FILE_TMPDIR/z$s.txt" | uniq -c | sort -k1,1nr -k2 \
			>"$BATS_FILE_TMPDIR/exact$s.txt"
	done
}

setup() {
	if [ ! -x "$BFTOOLS_BIN/bftop" ]; then
		echo "$BFTOOLS_BIN/bftop is missing: build it (make) or set BFTOOLS_BIN" >&2
		return 1
	fi
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
}

# intervals_hold EXACT BOUNDS: every line "LOWER UPPER MARK KEY" of BOUNDS
# (bftop -v) has LOWER <= exact count of KEY <= UPPER; prints the first
# that does not.
intervals_hold() {
	awk 'NR == FNR { c = $1; sub(/^ *[0-9]+ /, ""); exact[$0] = c; next }
	     { lo = $1; hi = $2; sub(/^ *[0-9]+ +[0-9]+ [-+?] /, "")
	       n = ($0 in exact) ? exact[$0] : 0
	       if (lo > n || n > hi) { print "interval broken: " n " not in [" lo ", " hi "] for " $0; bad = 1; exit 1 } }
	     END { exit bad }' "$1" "$2"
}

# marks_hold BOUNDS FLOOR: every line of BOUNDS (bftop -v) is marked + when
# its LOWER is above FLOOR, else ? with its UPPER above FLOOR (nothing else
# is listed); prints the first that is not.
marks_hold() {
	awk -v floor="$2" '{ want = $1 > floor ? "+" : $2 > floor ? "?" : "unlisted"
	       if ($3 != want) { print "marked " $3 ", not " want ": " $0; bad = 1; exit 1 } }
	     END { exit bad }' "$1"
}

# heavy_listed EXACT LISTED LIMIT: every key of EXACT counted more than
# LIMIT times is in LISTED (bftop output, with or without -v).
heavy_listed() {
	awk -v limit="$3" 'NR == FNR { sub(/^ *[0-9]+(-[0-9]+)? +([0-9]+ [-+?] +)?/, ""); listed[$0] = 1; next }
	     { c = $1; sub(/^ *[0-9]+ /, ""); if (c > limit && !($0 in listed)) { print "not listed: " c " " $0; bad = 1; exit 1 } }
	     END { exit bad }' "$2" "$1"
}

# sure_hold EXACT TOP FLOOR: every line "COUNT KEY" of TOP (bftop without
# -v), COUNT N or LOWER-UPPER, holds the exact count of KEY (N: equals it),
# and no key listed is a false positive: its LOWER and its exact count are
# above FLOOR. Prints the first that is not.
sure_hold() {
	awk -v floor="$3" 'NR == FNR { c = $1; sub(/^ *[0-9]+ /, ""); exact[$0] = c; next }
	     { f = $1; lo = hi = f; ranged = split(f, b, "-") == 2; if (ranged) { lo = b[1]; hi = b[2] }
	       sub(/^ *[0-9]+(-[0-9]+)? /, ""); n = ($0 in exact) ? exact[$0] : 0
	       # a range only where the bounds differ
	       if (lo + 0 > n || n > hi + 0 || lo + 0 <= floor || n <= floor || ranged == (lo + 0 == hi + 0)) {
		       print "not a sure count: exact " n ", printed " lo "-" hi ", floor " floor " for " $0; bad = 1; exit 1 } }
	     END { exit bad }' "$1" "$2"
}

# The error bound bftop -v reports on standard error ("error bound N:").
error_bound() {
	sed -n 's/.*; error bound \([0-9]*\): .*/\1/p' "$1"
}

# Every key of a zipf corpus bftop lists, with and without -v, against
# sort | uniq -c: -v lists every key above the error bound (none is
# missed) with intervals that hold and marks that say which are sure;
# without -v exactly the sure ones, none of them a false positive.
check_skew() {
	local exact=$BATS_FILE_TMPDIR/exact$1.txt floor
	# -e 1e-3: 1000 keys kept for ~50000 distinct, so evictions are many
	bftop -e 1e-3 -n 0 -v "$BATS_FILE_TMPDIR/z$1.txt" >bounds.txt 2>report.txt
	floor=$(error_bound report.txt)
	# Space-Saving: the floor is at most N / C = EPS N = 1e-3 * 200000 = 200
	[ -n "$floor" ] && [ "$floor" -le 200 ]
	intervals_hold "$exact" bounds.txt
	marks_hold bounds.txt "$floor"
	heavy_listed "$exact" bounds.txt "$floor"
	run --separate-stderr bftop -e 1e-3 -n 0 "$BATS_FILE_TMPDIR/z$1.txt"
	expect_status 0
	printf '%s\n' "$output" >top.txt
	sure_hold "$exact" top.txt "$floor"
	# the sure ones, in the same order
	expect_eq "keys listed" "$(awk '$3 == "+" { sub(/^ *[0-9]+ +[0-9]+ \+ /, ""); print }' bounds.txt)" \
		"$(sed 's/^ *[0-9]*\(-[0-9]*\)\{0,1\} //' top.txt)"
	[ "$(wc -l <top.txt)" -gt 10 ]
}

@test "bftop: zipf 0.8: no key listed is a false positive, -v misses none, every interval holds" {
	check_skew 08
}

@test "bftop: zipf 1.0: no key listed is a false positive, -v misses none, every interval holds" {
	check_skew 10
}

@test "bftop: zipf 1.2: no key listed is a false positive, -v misses none, every interval holds" {
	check_skew 12
}

# The 100th most frequent id at skew 1.0 is counted about 200000 / (100 *
# H(100000) = 12.09) = 165 times, the 101st 1.6 fewer; with the default
# EPS (10000 keys kept) the keys at the top are kept from their first few
# occurrences, when the smallest count is 0 or 1, so their error is that
# small and the order is the exact one but for ties.
top_is_exact() {
	local exact=$BATS_FILE_TMPDIR/exact$1.txt
	bftop -n 100 "$BATS_FILE_TMPDIR/z$1.txt" >top.txt
	[ "$(wc -l <top.txt)" -eq 100 ]
	cut100=$(awk 'NR == 100 { print $1 }' "$exact")
	# every key above the 100th exact count is printed, and every key printed has at least that count
	heavy_listed "$exact" top.txt "$cut100"
	awk -v cut="$cut100" 'NR == FNR { c = $1; sub(/^ *[0-9]+ /, ""); exact[$0] = c; next }
	     { sub(/^ *[0-9]+(-[0-9]+)? /, ""); if (exact[$0] < cut) { print "not in the exact top: " $0; exit 1 } }' "$exact" top.txt
}

@test "bftop: zipf 1.0: the top 100 are the exact top 100, ties aside" {
	top_is_exact 10
}

@test "bftop: zipf 1.2: the top 100 are the exact top 100, ties aside" {
	top_is_exact 12
}

@test "gen zipfcounts prints exactly what sort | uniq -c counts in gen zipf (make accuracy relies on it)" {
	"$BATS_FILE_TMPDIR/gen" zipfcounts 200000 100000 1.0 2 | sort >counts.txt
	sort "$BATS_FILE_TMPDIR/exact10.txt" >uniq.txt
	cmp counts.txt uniq.txt
}

@test "bftop: the output and the summary are the same for -j 1, 2, 3, 4 and 8" {
	for j in 1 2 3 4 8; do
		bftop -j "$j" -e 1e-3 -n 0 -v -o "s$j.top" "$BATS_FILE_TMPDIR/z08.txt" >"out$j.txt" 2>/dev/null
	done
	for j in 2 3 4 8; do
		cmp out1.txt "out$j.txt"
		cmp s1.top "s$j.top"
	done
}

@test "bftop: prints uniq -c's format, most frequent first, ten by default" {
	printf 'b\na\nb\nc\nb\na\n' >in.txt
	run --separate-stderr bftop in.txt
	expect_status 0
	expect_output "      3 b
      2 a
      1 c"
	seq 1 30 >many.txt
	run --separate-stderr bftop many.txt
	[ "${#lines[@]}" -eq 10 ]
}

@test "bftop: -n, -v and --json" {
	printf 'b\na\nb\nc\nb\na\n' >in.txt
	run --separate-stderr bftop -n 2 -v in.txt
	expect_status 0
	expect_output "      3       3 + b
      2       2 + a"
	expect_stderr "bftop: 6 keys counted; 3 kept of 10000; error bound 0: 3 keys surely occurred more often, 0 more may have, every other key at most that often"
	printf 'x"\\\n' >>in.txt
	run --separate-stderr bftop --json -n 2 in.txt
	expect_output '[
  {"key": "b", "count": 3, "lower": 3, "upper": 3, "guaranteed": true},
  {"key": "a", "count": 2, "lower": 2, "upper": 2, "guaranteed": true}
]'
	run --separate-stderr bftop --json -n 0 - </dev/null
	expect_status 1
	expect_output "[]"
	printf 'x"\\\n' | bftop --json >esc.txt
	expect_file esc.txt '[\n  {"key": "x\\"\\\\", "count": 1, "lower": 1, "upper": 1, "guaranteed": true}\n]\n'
}

# issue 32: seq 1 2000000 | bftop -n 3 printed "29 1968016", a key that
# occurred once shown with an upper bound as its count. 2e6 distinct keys
# in C = 10000 entries: the error bound is at most N / C = 200, and no
# key's lower bound can be above it (each occurred once).
@test "bftop: an all-distinct stream has no frequent keys: nothing on stdout, the bound on stderr, status 1" {
	seq 1 2000000 >in.txt
	run --separate-stderr bftop -n 3 in.txt
	expect_status 1
	expect_output ""
	bftop -v -n 0 in.txt >bounds.txt 2>report.txt || true
	floor=$(error_bound report.txt)
	[ -n "$floor" ] && [ "$floor" -gt 0 ] && [ "$floor" -le 200 ]
	expect_stderr "bftop: no frequent keys: none of the 2000000 keys counted surely occurred more than $floor times (the error bound)"
	# --bounds: the candidates, each marked as only possibly frequent, status 1 still
	run --separate-stderr bftop -v -n 0 in.txt
	expect_status 1
	[ "${#lines[@]}" -gt 0 ]
	marks_hold bounds.txt "$floor"
	[ "$(grep -c ' + ' bounds.txt)" -eq 0 ]
	# --json: an empty array; -o: the summary is saved all the same
	run --separate-stderr bftop --json -o s.top in.txt
	expect_status 1
	expect_output "[]"
	[ -s s.top ]
	head -n 200000 in.txt >short.txt
	run --separate-stderr bftop -n 3 short.txt
	expect_status 1
	expect_output ""
}

# 200000 lines, from line 20001 on one in 20 one of five heavy keys, each
# about 200000 * 0.9 / 20 / 5 = 1800 times; the rest keys drawn from 1e9,
# which repeat a few times at most. With -e 1e-3 (C = 1000) the summary
# is full long before the heavy keys come, so they are taken in with an
# error: their counts are ranges, and the error bound is at most N / C =
# 200, far below 1800.
@test "bftop: a stream with a few heavy keys lists exactly them, with counts or ranges that hold" {
	awk 'BEGIN { srand(7); for (i = 0; i < 200000; i++) { r = rand()
		if (i >= 20000 && r < 0.05) print "heavy" int(r * 100); else print "tail" int(rand() * 1e9) } }' >in.txt
	sort in.txt | uniq -c | sort -k1,1nr -k2 >exact.txt
	[ "$(awk '$1 > 200' exact.txt | wc -l)" -eq 5 ]
	bftop -e 1e-3 -v -n 0 in.txt >bounds.txt 2>report.txt
	floor=$(error_bound report.txt)
	run --separate-stderr bftop -e 1e-3 -n 0 in.txt
	expect_status 0
	printf '%s\n' "$output" >top.txt
	sure_hold exact.txt top.txt "$floor"
	# (as sets: two heavy keys' ranges may overlap, and another awk draws another stream)
	expect_eq "keys listed" "$(awk '$1 > 200 { print $2 }' exact.txt | sort)" "$(awk '{ print $2 }' top.txt | sort)"
	grep -q '^ *[0-9]*-[0-9]* heavy' top.txt
	# --json: lower, upper, a count only where exact, and guaranteed; -v adds the candidates
	bftop -e 1e-3 -n 0 --json in.txt >top.json
	bftop -e 1e-3 -n 0 -v --json in.txt >bounds.json
	python3 -c '
import json, sys
exact = {k: int(c) for c, k in (l.split() for l in open("exact.txt"))}
floor = int(sys.argv[1])
top, bounds = json.load(open("top.json")), json.load(open("bounds.json"))
assert sorted(d["key"] for d in top) == sorted(k for k, c in exact.items() if c > 200), top
assert [d for d in bounds if d["guaranteed"]] == top and len(bounds) > len(top)
for d in bounds:
    assert d["lower"] <= exact.get(d["key"], 0) <= d["upper"], d
    assert d["count"] == (d["lower"] if d["lower"] == d["upper"] else None), d
    assert d["guaranteed"] == (d["lower"] > floor) and d["upper"] > floor, d
' "$floor"
}

@test "bftop: -k, -t, -i, -w and -z make the keys" {
	printf '1 GET /a\n2 get /b\n3 GET /a\n' >log.txt
	run --separate-stderr bftop -k 2 -i -n 1 log.txt
	expect_output "      3 get"
	run --separate-stderr bftop -t / -k 2 -n 1 log.txt
	expect_output "      2 a"
	run --separate-stderr bftop -w -n 1 log.txt
	expect_output "      2 /a"
	printf 'a b\0a b\0c\0' | bftop -z >z.out
	expect_file z.out '      2 a b\0      1 c\0'
}

# ---------------------------------------------------------- the key group
# bftop takes its siblings' key options, read by their parser and cut by
# their code: each line's key is the one bfgrep -o prints for it, and the
# keys bftop lists are the keys of the lines bfuniq writes.

# key_data: files whose keys are easy to get wrong: CSV with quoted
# separators and a newline in a quoted field, a header, JSON Lines with
# nested paths, a line without the field.
key_data() {
	printf 'name,city,n\n"Smith, J",Oslo,1\n"Smith, J",Bergen,2\nDoe,Oslo,3\n"Lee\nAnn",Oslo,4\nDoe,"Oslo",5\n' >m.csv
	printf 'host\tpath\n10.0.0.1\t/a\n10.0.0.2\t/a\n10.0.0.1\t/a\n10.0.0.1\t/b\nshort\n' >h.tsv
	printf '%s\n' '{"user":{"id":42},"tags":["x","y"]}' '{"user":{"id":"42"},"tags":["y"]}' \
		'{"user":{"id":7},"tags":[]}' '{"tags":["x"]}' '{"user":{"id":7.0},"tags":["z"]}' >e.ndjson
}

# same_keys OPTS... FILE: bftop's key for each line (bftop -q, which prints
# it) is bfgrep -o's, and the keys bftop lists (-n 0) are the keys of the
# lines bfuniq writes, with the same OPTS.
same_keys() {
	local in=${*: -1} top grep listed firsts a
	local -a unfolded=()
	set -- "${@:1:$#-1}"
	# bfgrep takes no -i: the filter says whether to fold
	for a in "$@"; do [ "$a" = -i ] || unfolded+=("$a"); done
	bfbuild --key "$KEY" -n 100 "$@" -o all.bf "$in"
	bftop "$@" -o s.top "$in"
	top=$(bftop -q -s s.top "$@" "$in" | sed 's/^ *[0-9]* //')
	grep=$(bfgrep -o -f all.bf "${unfolded[@]}" "$in")
	expect_eq "bftop $* $in: a line's key" "$grep" "$top" || return 1
	[ -n "$top" ] || { echo "no keys at all" >&2; return 1; }
	listed=$(bftop -n 0 "$@" "$in" | sed 's/^ *[0-9]* //' | LC_ALL=C sort)
	# the keys of bfuniq's lines, as bfgrep cuts them (--header: bfuniq writes the header first)
	firsts=$(bfuniq "$@" "$in" | bfgrep -o -f all.bf "${unfolded[@]}" | LC_ALL=C sort)
	expect_eq "bftop $* $in: the keys listed" "$firsts" "$listed"
}

@test "bftop: each key option cuts the keys bfuniq and bfgrep cut, line for line" {
	key_data
	same_keys --csv -k 1 m.csv
	same_keys --csv --header -k name m.csv
	same_keys --csv --header -k city,name m.csv
	same_keys -t , -k 2,3 m.csv
	same_keys --header -k host,path h.tsv
	same_keys -t '\t' -k 1-2 h.tsv
	same_keys --jsonl -k .user.id e.ndjson
	same_keys --jsonl -k '.user.id,.tags[0]' e.ndjson
	same_keys -i -k 2 h.tsv
	# the keys themselves, not only their agreement
	run --separate-stderr bftop --csv --header -k name m.csv
	expect_output "      2 Doe
      2 Smith, J
      1 Lee
Ann"
	run --separate-stderr bftop --jsonl -k .user.id e.ndjson
	expect_output "      2 42
      2 7"
}

@test "bftop: -t , -k 2 on CSV keys what the text holds; --csv --header keys the values, never the header" {
	key_data
	# without --csv the quotes are bytes of the field and the header a line
	run --separate-stderr bftop -t , -k 1 -n 0 m.csv
	case $output in *'"Smith'*) ;; *) expect_eq "plain -t ," '... "Smith ...' "$output" ;; esac
	case $output in *' name'*) ;; *) expect_eq "plain -t , counts the header" '... name ...' "$output" ;; esac
	run --separate-stderr bftop --csv --header -k 1 -n 0 m.csv
	expect_status 0
	case $output in *'"'* | *' name'*) expect_eq "--csv --header" "no quote, no header" "$output" ;; esac
}

@test "bftop: --jsonl --bad-line: a bad line stops the count after the lines before it, or has no key" {
	key_data
	{ head -n 3 e.ndjson; echo oops; tail -n 2 e.ndjson; } >bad.ndjson
	head -n 3 e.ndjson >pre.ndjson
	run --separate-stderr bftop --jsonl -k .user.id bad.ndjson
	expect_status 2
	expect_stderr "bftop: bad.ndjson:4: not JSON: not a JSON value"
	expect_eq "the lines before it" "$(bftop --jsonl -k .user.id pre.ndjson)" "$output"
	run --separate-stderr bftop --jsonl --bad-line=skip -k .user.id -n 0 bad.ndjson
	expect_status 0
	expect_output "$(bftop --jsonl -k .user.id -n 0 e.ndjson)"
	# skipped lines are counted under -v, as in bfuniq
	run --separate-stderr bftop -v --jsonl --bad-line=skip -k .user.id bad.ndjson
	case $stderr in *"lines not JSON, passed on without a key (--bad-line=skip): 1"*) ;;
	*) expect_eq "-v" "... lines not JSON ...: 1" "$stderr" ;; esac
}

@test "bftop: refuses the key options its siblings refuse, in their words" {
	key_data
	local opts msg
	while IFS='|' read -r opts msg; do
		# shellcheck disable=SC2086
		run --separate-stderr bfuniq $opts m.csv
		expect_usage_error bfuniq "$msg"
		# shellcheck disable=SC2086
		run --separate-stderr bftop $opts m.csv
		expect_usage_error bftop "$msg"
	done <<'CASES'
-k section|-k 'section': not a field number or range (field names need --header)
-k 1,city|-k 'city': not a field number or range (field names need --header)
--bad-line=skip|--bad-line is about JSON lines: it needs --jsonl
--jsonl --csv|--jsonl cannot be used with --csv or --header
--jsonl -k user|invalid path 'user': a path starts with '.'
-k 0|invalid field number '0': must be at least 1
--json -k .pkg|--json is JSON output now (the report); JSON Lines input is --jsonl
CASES
	# a field name with a space before it is a name too, and needs --header
	run --separate-stderr bftop -k ' 3' m.csv
	expect_usage_error bftop "-k ' 3': not a field number or range (field names need --header)"
	run --separate-stderr bftop --csv --header -k section m.csv
	expect_status 2
	expect_stderr "bftop: m.csv:1: no field named 'section' in its header"
}

@test "bftop: --no-decompress reads a compressed input as its bytes" {
	printf 'a\na\nb\n' | gzip -c >in.gz
	run --separate-stderr bftop in.gz
	expect_output "      2 a
      1 b"
	run --separate-stderr bftop --no-decompress -n 0 in.gz
	expect_status 0
	[ "$output" != "$(bftop in.gz)" ]
}

@test "bftop: -o saves, -s loads without reading standard input, and goes on with FILEs as if never stopped" {
	local z=$BATS_FILE_TMPDIR/z10.txt
	head -n 100000 "$z" >first.txt
	tail -n +100001 "$z" >second.txt
	bftop -e 1e-3 -n 0 -v -o whole.top "$z" >whole.txt 2>/dev/null
	bftop -e 1e-3 -o first.top first.txt >/dev/null
	bftop -s first.top -o both.top -n 0 -v second.txt >both.txt 2>/dev/null
	cmp whole.txt both.txt
	cmp whole.top both.top
	run --separate-stderr bftop -n 0 -v -s whole.top </dev/null
	expect_status 0
	expect_output "$(cat whole.txt)"
}

@test "bftop: -s twice merges: every interval holds for the two streams together" {
	local z=$BATS_FILE_TMPDIR/z08.txt
	head -n 100000 "$z" >first.txt
	tail -n +100001 "$z" >second.txt
	bftop -e 1e-3 -o a.top first.txt >/dev/null
	bftop -e 1e-3 -o b.top second.txt >/dev/null
	bftop -s a.top -s b.top -n 0 -v >merged.txt 2>report.txt
	intervals_hold "$BATS_FILE_TMPDIR/exact08.txt" merged.txt
	# merged: the error bound is at most 2 N / C = 2 * 200000 / 1000 = 400,
	# and -v lists every key above it
	floor=$(error_bound report.txt)
	[ -n "$floor" ] && [ "$floor" -le 400 ]
	marks_hold merged.txt "$floor"
	heavy_listed "$BATS_FILE_TMPDIR/exact08.txt" merged.txt "$floor"
	# without -v only the sure ones, none a false positive
	bftop -s a.top -s b.top -n 0 >top.txt
	sure_hold "$BATS_FILE_TMPDIR/exact08.txt" top.txt "$floor"
	[ "$(wc -l <top.txt)" -eq "$(grep -c ' + ' merged.txt)" ]
}

@test "bftop: -q prints each key's count from a summary, with bounds under -v" {
	printf 'b\na\nb\nc\nb\na\n' >in.txt
	bftop -o s.top in.txt >/dev/null
	printf 'a\nzzz\nb\n' >q.txt
	run --separate-stderr bftop -q -s s.top q.txt
	expect_status 0
	expect_output "      2 a
      0 zzz
      3 b"
	run --separate-stderr bftop -q -v -s s.top - <q.txt
	expect_output "      2       2 + a
      0       0 - zzz
      3       3 + b"
}

# 300 keys once each and h 50 times among them, in a summary of C = 100
# keys (-e 0.01): full, so a key evicted or never kept has only bounds;
# the error bound is at most N / C = 350 / 100 = 3, below h's 50.
@test "bftop -q: a count that is not exact is printed as its range, never as its upper bound" {
	awk 'BEGIN { for (i = 1; i <= 300; i++) { print i; if (i % 6 == 0) print "h" } }' >in.txt
	sort in.txt | uniq -c >exact.txt
	bftop -e 0.01 -o s.top in.txt >/dev/null
	{ echo h; seq 1 300; echo never; } >q.txt
	bftop -q -s s.top q.txt >counts.txt
	bftop -q -v -s s.top q.txt >bounds.txt
	[ "$(wc -l <counts.txt)" -eq 302 ]
	# each count: N where -v's bounds meet, else exactly LOWER-UPPER; the exact count within
	paste -d ' ' counts.txt bounds.txt | awk 'NR == FNR { c = $1; sub(/^ *[0-9]+ /, ""); exact[$0] = c; next }
		{ want = $3 == $4 ? $3 : $3 "-" $4; n = ($2 in exact) ? exact[$2] : 0
		  if ($1 != want || $2 != $6 || $3 > n || n > $4) { print "bad: " $0 " exact " n; bad = 1 } }
		END { exit bad }' exact.txt -
	# the summary is full, so some counts are ranges, and h is surely frequent
	grep -q '^ *[0-9]*-[0-9]* [0-9]*$' counts.txt
	grep -q '^ *50 *50 + h$' bounds.txt
	grep -Eq '^ *0(-[0-3])? never$' counts.txt
}

@test "bftop: bad inputs and summaries are errors naming the file, status 2" {
	run --separate-stderr bftop missing.txt
	expect_status 2
	expect_stderr "bftop: missing.txt: No such file or directory"
	echo hello >text.txt
	run --separate-stderr bftop -s text.txt
	expect_fail "bftop: text.txt: not a bftools summary (not gzip data)"
	printf 'a\n' | bftop -o good.top >/dev/null
	head -c 40 good.top >short.top
	run --separate-stderr bftop -s short.top
	expect_one_line_error "bftop: short.top: "
	printf 'a\n' | bfbuild -n 10 -o f.bf
	run --separate-stderr bftop -s f.bf
	expect_fail "bftop: f.bf: a bftools filter, not a summary"
	bftop -e 1e-2 -o small.top text.txt >/dev/null
	run --separate-stderr bftop -s good.top -s small.top
	expect_fail "bftop: small.top: cannot be merged with good.top: different capacity"
}

@test "bftop: usage errors" {
	run --separate-stderr bftop -q text.txt
	expect_usage_error bftop "-q needs -s SUMMARY, the summary to query"
	run --separate-stderr bftop -e 0 text.txt
	expect_any_usage_error bftop
	run --separate-stderr bftop -e 1e-3 -s x.top
	expect_usage_error bftop "-e and --confidence size a new summary, not one loaded with -s"
	run --separate-stderr bftop -o - text.txt
	expect_usage_error bftop "-o -: a summary does not go to standard output, which carries the keys"
	run --separate-stderr bftop --nonsense
	expect_any_usage_error bftop
}

@test "bftop: -e and --confidence are refused in one style, the range in words" {
	# issue 37: "bftop: error: 0.6 out of range 1e-06..0.5", and --confidence 1
	# and 0.4 spoke of two different ranges
	local eps="must be from 1e-6 to 0.5"
	local conf="must be at least 0.5 and below 1 (at most 0.999999999)"
	for e in 0.6 1 0 1e-7; do
		run --separate-stderr bftop -e "$e" </dev/null
		expect_usage_error bftop "invalid error bound '$e': $eps"
	done
	run --separate-stderr bftop -e x </dev/null
	expect_usage_error bftop "invalid error bound 'x': not a number"
	for c in 1 0.4 0 0.9999999999; do
		run --separate-stderr bftop --confidence "$c" </dev/null
		expect_usage_error bftop "invalid confidence '$c': $conf"
	done
}

@test "bftop: --help leaves out --key-file, which bftop refuses" {
	run --separate-stderr bftop --help
	expect_status 0
	case $output in *key-file*) expect_eq "--help" "no --key-file" "$output" ;; esac
	run --separate-stderr bftop --key-file k.key </dev/null
	expect_usage_error bftop "--key-file: bftop summaries are keyed with bftop's own key"
}

@test "bftop: a summary given where a filter or sketch goes is named a summary" {
	# issue 37: bfgrep -f mon.top said "bad magic"
	printf 'a\nb\na\n' | bftop -o mon.top
	local readers="bftop -s, bfmerge and bfinfo read summaries"
	for prog in bfgrep bfuniq bfbuild; do
		run --separate-stderr "$prog" -f mon.top </dev/null
		expect_fail "$prog: mon.top: a bftop summary, not a filter ($readers)"
	done
	run --separate-stderr bfcount -f mon.top
	expect_fail "bfcount: mon.top: a bftop summary, not a filter ($readers)"
	run --separate-stderr bfcount -s mon.top
	expect_fail "bfcount: mon.top: a bftop summary, not a sketch ($readers)"
	printf 'a\n' | bfcount -o s.hll >/dev/null
	run --separate-stderr bfmerge -o out.hll s.hll mon.top
	expect_fail "bfmerge: mon.top: a bftop summary, not a sketch: sketches and summaries cannot be merged"
}

@test "bftop: a key printed truncated is marked in text too, by ... after its 256 bytes" {
	# issue 37: only --json said "truncated": true
	local long short
	long=$(printf 'x%.0s' $(seq 300))
	short=$(printf 'y%.0s' $(seq 256))
	printf '%s\n' "$long" "$long" "$short" >in.txt
	run --separate-stderr bftop in.txt
	expect_status 0
	expect_output "$(printf '%7d %s...\n%7d %s' 2 "${long:0:256}" 1 "$short")"
	run --separate-stderr bftop --json in.txt
	case $output in *'"count": 2, "lower": 2, "upper": 2, "guaranteed": true, "truncated": true}'*) ;;
	*) expect_eq "--json" '... "truncated": true ...' "$output" ;; esac
}

@test "bftop: --help shows the synopsis and exits 0" {
	run --separate-stderr bftop --help
	expect_status 0
	[ "${lines[0]}" = "Usage: bftop [-n N] [-e EPS] [--confidence C] [-v] [--json] [-o SUMMARY] [-s SUMMARY...] [-k LIST] [-t C] [--header] [--csv] [--jsonl] [--bad-line error|skip] [-i] [-z] [-w] [--shard I/N --shard-key HEX] [FILE...]" ]
}

@test "bftop: --max-memory refuses a summary larger than the limit" {
	# the default summary (EPS 1e-4): 10000 keys of up to 256 bytes and 7 x 27183 cells, 4.7 MB
	run --separate-stderr bftop --max-memory 1M </dev/null
	expect_fail "bftop: summary needs 4.7 MB (4733464 bytes), over the memory limit of 1.0 MB"
	run --separate-stderr bftop --max-memory 5M <<<a
	expect_status 0
	expect_output "      1 a"
}

@test "bfmerge: merges summaries into the summary bftop -s -s makes, and refuses --intersect" {
	local z=$BATS_FILE_TMPDIR/z12.txt
	head -n 100000 "$z" >first.txt
	tail -n +100001 "$z" >second.txt
	bftop -e 1e-3 -o a.top first.txt >/dev/null
	bftop -e 1e-3 -o b.top second.txt >/dev/null
	run --separate-stderr bfmerge -o m.top a.top b.top
	expect_status 0
	expect_stderr ""
	bftop -s a.top -s b.top -o direct.top >/dev/null
	cmp m.top direct.top
	bftop -s m.top -n 0 -v >merged.txt 2>/dev/null
	intervals_hold "$BATS_FILE_TMPDIR/exact12.txt" merged.txt
	bfmerge a.top b.top >stdout.top
	cmp m.top stdout.top
	run --separate-stderr bfmerge --intersect -o x.top a.top b.top
	expect_fail "bfmerge: a.top: summaries cannot be intersected (--intersect)"
	printf 'a\n' | bfbuild -n 10 -o f.bf
	run --separate-stderr bfmerge -o x.top a.top f.bf
	expect_fail "bfmerge: f.bf: a bftools filter, not a summary"
	[ ! -e x.top ]
}

@test "bfinfo: describes a summary, as text and as JSON" {
	printf 'b\na\nb\nc\nb\na\n' | bftop -e 0.01 -o s.top >/dev/null
	run --separate-stderr bfinfo s.top
	expect_status 0
	expect_output "file:                 s.top
format version:       1 (summary)
kind:                 heavy-hitter summary (Space-Saving, count-min)
capacity:             100 keys (error 0.01 of the stream)
count-min:            7 rows of 272 counters
hash function:        SipHash-1-3-128
key fingerprint:      16c0f1fdbe5ef0ae
key:                  stored in the summary (bftop's default key, public)
key normalisation:    none
keys counted:         6
keys kept:            3
not kept: at most:    0 times each
size in memory:       47.2 kB (47200 bytes)
size on disk:         $(wc -c <s.top | tr -d ' ') B ($(wc -c <s.top | tr -d ' ') bytes)"
	run --separate-stderr bfinfo --json s.top
	expect_output "{\"file\":\"s.top\",\"format_version\":1,\"kind\":\"summary\",\"capacity\":100,\"width\":272,\"depth\":7,\"hash\":\"SipHash-1-3-128\",\"key_fingerprint\":\"16c0f1fdbe5ef0ae\",\"fold_case\":false,\"total\":6,\"kept\":3,\"floor\":0,\"bytes_in_memory\":47200,\"bytes_on_disk\":$(wc -c <s.top | tr -d ' ')}"
	head -c 30 s.top >bad.top
	run --separate-stderr bfinfo bad.top
	expect_one_line_error "bfinfo: bad.top: "
}

# A count window of N = 1000 keys in G = 5 generations of ceil(1000 / 4) =
# 250 keys: after 10000 keys the live generations are numbers 35 to 39,
# keys 8750 to 9999, the last 1250 = N G / (G - 1), the slack's end.
@test "bftop --window N: the intervals hold for the last N G/(G-1) keys at a generation's end" {
	head -n 10000 "$BATS_FILE_TMPDIR/z10.txt" >in.txt
	tail -n 1250 in.txt | sort | uniq -c | sort -k1,1nr -k2 >exact.txt
	run --separate-stderr bftop --window 1000keys --generations 5 -e 1e-2 -n 0 -v in.txt
	expect_status 0
	printf '%s\n' "$output" >bounds.txt
	printf '%s\n' "$stderr" >report.txt
	intervals_hold exact.txt bounds.txt
	# the error bound is at most 2 N' / C = 2 * 1250 / 100 = 25, and every key above it is listed
	floor=$(error_bound report.txt)
	[ -n "$floor" ] && [ "$floor" -le 25 ]
	marks_hold bounds.txt "$floor"
	heavy_listed exact.txt bounds.txt "$floor"
	expect_eq stderr "bftop: 1250 keys counted; 100 kept of 100;" "${stderr%% error bound*}"
	# without -v the sure ones, none a false positive
	bftop --window 1000keys --generations 5 -e 1e-2 -n 0 in.txt >top.txt
	sure_hold exact.txt top.txt "$floor"
	[ "$(wc -l <top.txt)" -eq "$(grep -c ' + ' bounds.txt)" ]
}

# One line a second for two hours, "SECONDS KEY"; a window of 1h in 5
# generations of 900 s: at the latest time, 7199 s, the present is
# generation 7 and the live ones 3 to 7, from 2700 s on.
@test "bftop --window DURATION --time-field: the top of the live generations, by the lines' times" {
	awk '{ print NR - 1, $0 }' "$BATS_FILE_TMPDIR/z12.txt" | head -n 7200 >timed.txt
	awk '$1 >= 2700 { print $2 }' timed.txt | sort | uniq -c | sort -k1,1nr -k2 >exact.txt
	bftop --window 1h --generations 5 --time-field 1 -k 2 -n 0 -v timed.txt >bounds.txt 2>/dev/null
	intervals_hold exact.txt bounds.txt
	[ "$(awk '{ s += $1 } END { print s }' exact.txt)" -eq 4500 ]
	head -n 3 exact.txt | sed 's/^ *//' >want.txt
	bftop --window 1h --generations 5 --time-field 1 -k 2 -n 3 timed.txt | sed 's/^ *//' >got.txt
	cmp want.txt got.txt
	# --now: without --time-field every line is at that time, so all are counted
	run --separate-stderr bftop --window 1h --now 2026-01-01T00:00:00Z -k 2 -n 1 -v timed.txt
	expect_status 0
	expect_eq "stderr" "bftop: 7200 keys counted" "${stderr%%;*}"
}

@test "bftop --window: the same output for -j 1, 2 and 4; bad times are errors or skipped" {
	head -n 20000 "$BATS_FILE_TMPDIR/z08.txt" >in.txt
	for j in 1 2 4; do
		bftop -j "$j" --window 3000keys -e 1e-2 -n 0 -v in.txt >"out$j.txt" 2>&1
	done
	cmp out1.txt out2.txt
	cmp out1.txt out4.txt
	printf '10 a\nnoon b\n20 a\n' >times.txt
	run --separate-stderr bftop --window 1h --time-field 1 -k 2 times.txt
	# a clean cut: the top of the lines before the bad one, then the error
	expect_status 2
	expect_output "      1 a"
	expect_stderr "bftop: times.txt:2: time field 1: not a time (Unix seconds or RFC 3339)"
	run --separate-stderr bftop --window 1h --time-field 1 --bad-time skip -k 2 times.txt
	expect_status 0
	expect_output "      2 a"
	expect_stderr "bftop: 0 keys before the window and 1 lines without a time were not counted"
}

@test "bftop --window: usage errors" {
	run --separate-stderr bftop --now 2026-01-01T00:00:00Z in.txt
	expect_usage_error bftop "--generations, --time-field, --bad-time and --now need --window"
	run --separate-stderr bftop --window 10keys -o s.top in.txt
	expect_usage_error bftop "--window: a windowed summary is not saved or loaded (-o, -s, -q)"
	run --separate-stderr bftop --window 10keys --time-field 1 in.txt
	expect_usage_error bftop "--time-field and --now need a time window (such as --window 10m)"
	run --separate-stderr bftop --max-memory 10M --window 10keys </dev/null
	expect_fail "bftop: the window's summaries need 42.6 MB (42601176 bytes), over the memory limit of 10.0 MB"
}

@test "bftop: a summary given where a filter is read is named a summary, and who reads one" {
	# issue 38: it was "not a bftools filter (bad magic)", where a sketch is named a sketch
	printf 'a\nb\na\n' | bftop -o t.top >/dev/null
	printf 'a\n' | bfbuild --key 000102030405060708090a0b0c0d0e0f -n 100 -o f.bf
	run --separate-stderr bfgrep -f t.top /dev/null
	expect_fail "bfgrep: t.top: a bftop summary, not a filter (bftop -s, bfmerge and bfinfo read summaries)"
	run --separate-stderr bfuniq -f t.top </dev/null
	expect_fail "bfuniq: t.top: a bftop summary, not a filter (bftop -s, bfmerge and bfinfo read summaries)"
	run --separate-stderr bfbuild -f t.top </dev/null
	expect_fail "bfbuild: t.top: a bftop summary, not a filter (bftop -s, bfmerge and bfinfo read summaries)"
	run --separate-stderr bfmerge f.bf t.top
	expect_fail "bfmerge: t.top: a bftop summary, not a filter: summaries and filters cannot be merged"
}
