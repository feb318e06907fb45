#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# bfcount.bats - the command-line contract of bfcount (bfcount(1)): exact
# counts of small streams, what -k/-t/-i/-z make a key, several inputs,
# the accuracy and memory of the HyperLogLog counter on large streams, the
# element counts of filters and of their union, intersection and Jaccard
# index, usage errors, bad or incompatible filters and output errors.
#
# Every probabilistic assertion uses fixed inputs, and filters built with
# the fixed key of helpers.bash (bfcount hashes streams with a fixed key of
# its own), so each outcome is deterministic; the bounds are nonetheless
# chosen ~5 standard errors wide, with the arithmetic in a comment, so that
# they would hold for almost any key or input we might have picked.

bats_require_minimum_version 1.5.0
load helpers

SYNOPSIS1="Usage: bfcount [-k LIST] [-t C] [--header] [--csv] [--jsonl] [--bad-line error|skip] [--shard I/N --shard-key HEX] [-i] [-z] [-v] [--json] [FILE...]"
SYNOPSIS2="   or: bfcount -f FILTER [-f FILTER...] [-v] [--json] [FILTER...]"
SYNOPSIS3="   or: bfcount --union|--intersection|--jaccard [-v] [--json] [-f FILTER...] FILTER..."

setup() {
	for prog in bfbuild bfcount; do
		if [ ! -x "$BFTOOLS_BIN/$prog" ]; then
			echo "$BFTOOLS_BIN/$prog is missing: build it (make) or set BFTOOLS_BIN" >&2
			return 1
		fi
	done
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
}

# within WHAT GOT WANT TOL: |GOT - WANT| <= TOL (decimals allowed).
within() {
	awk -v got="$2" -v want="$3" -v tol="$4" 'BEGIN {
		d = got - want; if (d < 0) d = -d
		exit !(got != "" && d <= tol) }' && return 0
	printf '%s: got %s, expected %s +- %s\n' "$1" "$2" "$3" "$4" >&2
	return 1
}

# url_keys N: N distinct URL-like keys, each line printed twice over (as
# key i, then key i/2 + 1 again), so there are 2N lines and N distinct keys.
url_keys() {
	awk -v n="$1" '
	function url(i) {
		return sprintf("https://www%d.example.com/shop/item/%d/view.html?ref=%d&page=%d", \
			i % 97, i, (i * 7919) % 100003, i % 13)
	}
	BEGIN { for (i = 1; i <= n; i++) { print url(i); print url(int(i / 2) + 1) } }'
}

# reported_sd ARG...: the "standard error about N" that bfcount -v ARG...
# reports on stderr (the first one, if it reports several).
reported_sd() {
	bfcount -v "$@" 2>&1 >/dev/null | sed -n 's/.*standard error about \([0-9.]*\).*/\1/p' | head -n 1
}

# Two overlapping sets and their filters, built with the same shape and key:
# A = 1..60000, B = 40001..100000: |A| = |B| = 60000, |A u B| = 100000,
# |A n B| = 20000, Jaccard 0.2.
make_ab() {
	seq 1 60000 >a.txt
	seq 40001 100000 >b.txt
	build a.bf -n 100000 "$@" a.txt
	build b.bf -n 100000 "$@" b.txt
}

# ---------------------------------------------------------------- help, version

@test "bfcount: -h prints the usage on stdout, starting with the three synopsis lines, and exits 0" {
	run --separate-stderr bfcount -h
	expect_status 0
	expect_stderr ""
	expect_eq "first line" "$SYNOPSIS1" "${lines[0]}"
	expect_eq "second line" "$SYNOPSIS2" "${lines[1]}"
	expect_eq "third line" "$SYNOPSIS3" "${lines[2]}"
}

@test "bfcount: --help prints the same usage as -h, naming every long option" {
	run --separate-stderr bfcount -h
	local short=$output
	run --separate-stderr bfcount --help
	expect_status 0
	expect_output "$short"
	for opt in --field --separator --ignore-case --null-data --filter --union \
		--intersection --jaccard --verbose --help --version; do
		case $output in *"$opt"*) ;; *) expect_eq "help mentions" "$opt" "(missing)" ;; esac
	done
}

@test "bfcount: -V prints 'bfcount (bftools) 1.0.0' then the MIT licence, and exits 0" {
	run --separate-stderr bfcount -V
	expect_status 0
	expect_stderr ""
	expect_eq "first line" "bfcount (bftools) 1.0.0" "${lines[0]}"
	case $output in *MIT*) ;; *) expect_eq licence "MIT" "$output" ;; esac
	case $output in *"This is free software"*) ;; *) expect_eq licence "This is free software" "$output" ;; esac
	run --separate-stderr bfcount --version
	expect_status 0
	expect_eq "--version" "bfcount (bftools) 1.0.0" "${lines[0]}"
}

@test "bfcount: --help to a full disk is a write error, exit 2" {
	run --separate-stderr bash -c 'bfcount --help >/dev/full'
	expect_fail "bfcount: write error: No space left on device"
}

# ---------------------------------------------------------------- usage errors

@test "bfcount: an unknown option is a usage error pointing at --help" {
	run --separate-stderr bfcount -x </dev/null
	expect_any_usage_error bfcount
	run --separate-stderr bfcount --no-such-option </dev/null
	expect_any_usage_error bfcount
}

@test "bfcount: -k rejects field 0 and junk; -t rejects two characters" {
	run --separate-stderr bfcount -k 0 </dev/null
	expect_usage_error bfcount "invalid field number '0': must be at least 1"
	run --separate-stderr bfcount --field=x </dev/null
	expect_usage_error bfcount "-k 'x': not a field number or range (field names need --header)"
	run --separate-stderr bfcount -t ab </dev/null
	expect_usage_error bfcount "invalid separator 'ab': expected one character"
}

@test "bfcount: -f missing its argument is a usage error" {
	run --separate-stderr bfcount -f
	expect_any_usage_error bfcount
}

@test "bfcount: --union, --intersection or --jaccard with one filter is a usage error" {
	make_ab
	for op in --union --intersection --jaccard; do
		run --separate-stderr bfcount "$op" -f a.bf
		expect_usage_error bfcount "--union, --intersection and --jaccard need two or more filters"
	done
}

@test "bfcount: two of --union, --intersection and --jaccard are a usage error" {
	make_ab
	run --separate-stderr bfcount --union --jaccard -f a.bf -f b.bf
	expect_usage_error bfcount "choose one of --union, --intersection and --jaccard"
	run --separate-stderr bfcount --intersection -f a.bf --union -f b.bf
	expect_usage_error bfcount "choose one of --union, --intersection and --jaccard"
}

@test "bfcount: --union repeated is the same as --union once" {
	make_ab
	run --separate-stderr bfcount --union --union -f a.bf -f b.bf
	expect_status 0
	local twice=$output
	run --separate-stderr bfcount --union -f a.bf -f b.bf
	expect_output "$twice"
}

@test "bfcount: --union, --intersection and --jaccard take filters as operands, -f or not" {
	make_ab
	local op with without
	for op in --union --intersection --jaccard; do
		run --separate-stderr bfcount "$op" -f a.bf -f b.bf
		with=$output
		run --separate-stderr bfcount "$op" a.bf b.bf
		expect_status 0
		expect_stderr ""
		expect_output "$with"
		run --separate-stderr bfcount "$op" -f a.bf b.bf
		expect_output "$with"
	done
	# so a line file there is a filter that is not one
	seq 1 10 >in.txt
	run --separate-stderr bfcount --union in.txt a.bf
	expect_one_line_error "bfcount: in.txt: not a bftools filter"
	run --separate-stderr bfcount --union a.bf
	expect_usage_error bfcount "--union, --intersection and --jaccard need two or more filters"
	run --separate-stderr bfcount -k 2 --union a.bf b.bf
	expect_usage_error bfcount "the key options (-k, -t, -i, -z, --header, --csv, --jsonl, --bad-line) and --no-decompress apply to streams, not to filters (-f)"
}

@test "bfcount: -k, -t, -i, -z, --header, --csv, --jsonl and --no-decompress with -f are a usage error (they shape stream keys)" {
	make_ab
	for opt in "-k 2" "-t ," "-i" "-z" "--field=2" "--ignore-case" "--header" "--csv" "--jsonl" "--no-decompress"; do
		# shellcheck disable=SC2086
		run --separate-stderr bfcount $opt -f a.bf
		expect_usage_error bfcount "the key options (-k, -t, -i, -z, --header, --csv, --jsonl, --bad-line) and --no-decompress apply to streams, not to filters (-f)"
	done
}

@test "bfcount: standard input can be read only once in filter mode" {
	make_ab
	run --separate-stderr bfcount -f - - <a.bf
	expect_usage_error bfcount "standard input can be read only once"
}

@test "bfcount: --intersection of more than 12 filters is a usage error" {
	make_ab
	run --separate-stderr bfcount --intersection -f a.bf a.bf a.bf a.bf a.bf a.bf a.bf \
		a.bf a.bf a.bf a.bf a.bf b.bf
	expect_usage_error bfcount "--intersection and --jaccard take at most 12 filters"
}

# ---------------------------------------------------------------- small streams: exact

@test "bfcount: an empty input counts 0" {
	run --separate-stderr bfcount </dev/null
	expect_status 0
	expect_stderr ""
	expect_output 0
}

@test "bfcount: one line counts 1, however often it is repeated" {
	run --separate-stderr bfcount <<<"alice"
	expect_output 1
	yes alice 2>/dev/null | head -n 100000 >in.txt
	run --separate-stderr bfcount in.txt
	expect_status 0
	expect_output 1
}

@test "bfcount: 1000 distinct keys with heavy repeats count exactly 1000" {
	# every key 1..1000 appears 1 to 50 times, in an order that is not sorted
	awk 'BEGIN { for (r = 1; r <= 50; r++) for (i = 1; i <= 1000; i++)
		if ((i * 31 + r * 17) % 50 >= r - 1) print (i * 7919) % 1000 }' >in.txt
	expect_eq "distinct keys (sort -u)" 1000 "$(sort -u in.txt | wc -l | tr -d ' ')"
	run --separate-stderr bfcount in.txt
	expect_status 0
	expect_stderr ""
	expect_output 1000
}

@test "bfcount: counts of a few thousand keys are exact, and -v says so" {
	seq 1 5000 >in.txt
	seq 2500 5000 >>in.txt
	run --separate-stderr bfcount -v in.txt
	expect_status 0
	expect_output 5000
	case $stderr in "bfcount: "*exact*) ;; *) expect_eq "-v stderr" "bfcount: ...exact..." "$stderr" ;; esac
}

@test "bfcount: an empty line is a key like any other (counted once)" {
	printf '\n\n\n' >in.txt
	run --separate-stderr bfcount in.txt
	expect_output 1
	printf 'a\n\nb\n\na\n' >in.txt
	run --separate-stderr bfcount in.txt
	expect_output 3
}

@test "bfcount: a final line without a newline is the same key as with one" {
	printf 'a\nb\na' >in.txt
	run --separate-stderr bfcount in.txt
	expect_output 2
}

@test "bfcount: keys are bytes: no case folding and no locale without -i" {
	printf 'Alice\nalice\nALICE\n\303\251\n\303\211\n' >in.txt
	run --separate-stderr bfcount in.txt
	expect_output 5
}

@test "bfcount: -i folds ASCII case before counting, and only ASCII" {
	printf 'Alice\nalice\nALICE\nbob\n\303\251\n\303\211\n' >in.txt
	run --separate-stderr bfcount -i in.txt
	expect_status 0
	expect_output 4
	run --separate-stderr bfcount --ignore-case in.txt
	expect_output 4
}

@test "bfcount: -k N counts the Nth blank-separated field; records without it have no key" {
	printf 'x alice 1\ny  bob 2\n  z\talice 3\nonlyone\n\n' >in.txt
	run --separate-stderr bfcount -k 2 in.txt
	expect_status 0
	expect_output 2
	run --separate-stderr bfcount --field=3 in.txt
	expect_output 3
	run --separate-stderr bfcount -k 4 in.txt
	expect_output 0
}

@test "bfcount: -t C splits fields at every C, so empty fields are keys" {
	printf '1,alice,x\n2,,y\n3,bob,z\n4,,w\n5,alice\n' >in.csv
	run --separate-stderr bfcount -t , -k 2 in.csv
	expect_status 0
	expect_output 3
	run --separate-stderr bfcount --separator=, --field=3 in.csv
	expect_output 4
}

@test "bfcount: -t '\\t' splits at tabs only" {
	printf 'a b\tk1\nc d\tk2\ne\tk1\n' >in.tsv
	run --separate-stderr bfcount -t '\t' -k 2 in.tsv
	expect_output 2
	run --separate-stderr bfcount -t '\t' -k 1 in.tsv
	expect_output 3
}

@test "bfcount: -z counts NUL-terminated records, in which newlines are ordinary bytes" {
	printf 'a\nb\000a\nb\000c\000' >in.bin
	run --separate-stderr bfcount -z in.bin
	expect_status 0
	expect_output 2
	run --separate-stderr bfcount --null-data in.bin
	expect_output 2
	# without -z the same bytes are three lines: "a", "b<NUL>a", "b<NUL>c<NUL>"
	run --separate-stderr bfcount in.bin
	expect_output 3
}

@test "bfcount: counts the distinct keys over all FILEs together" {
	put_lines a.txt alice bob carol
	put_lines b.txt carol dave alice
	run --separate-stderr bfcount a.txt b.txt
	expect_status 0
	expect_output 4
}

@test "bfcount: reads standard input when no FILE is named, and for -" {
	put_lines a.txt alice bob
	run --separate-stderr bfcount <a.txt
	expect_output 2
	run --separate-stderr bash -c 'printf "carol\nalice\n" | bfcount a.txt -'
	expect_status 0
	expect_output 3
}

@test "bfcount: a missing FILE is reported, the others are counted, and the exit is 2" {
	put_lines a.txt alice bob
	run --separate-stderr bfcount a.txt missing.txt
	expect_status 2
	expect_stderr "bfcount: missing.txt: No such file or directory"
	expect_output 2
}

@test "bfcount: when no FILE could be read, no count is printed beside the error" {
	# issue 37: bfcount nosuch.txt printed 0 and exited 2; grep -c prints
	# counts only for files it read
	run --separate-stderr bfcount nosuch.txt
	expect_fail "bfcount: nosuch.txt: No such file or directory"
	run --separate-stderr bfcount -j 2 -v nosuch.txt other.txt
	expect_fail "bfcount: nosuch.txt: No such file or directory
bfcount: other.txt: No such file or directory"
	mkdir dir
	run --separate-stderr bfcount dir
	expect_fail "bfcount: dir: Is a directory"
	# an empty FILE was read: its count is 0
	: >empty.txt
	run --separate-stderr bfcount empty.txt nosuch.txt
	expect_status 2
	expect_output 0
}

@test "bfcount: writing the count to a full disk is a write error, exit 2" {
	seq 1 10 >in.txt
	run --separate-stderr bash -c 'bfcount in.txt >/dev/full'
	expect_fail "bfcount: write error: No space left on device"
}

# ---------------------------------------------------------------- large streams: accuracy, memory

# HyperLogLog at precision 16 has 2^16 registers and a relative standard
# error of 1.04 / sqrt(65536) = 0.406%. The promise is 2% at the 95th
# percentile; 2% is 2 / 0.406 = 4.9 standard errors, which a normal
# estimate exceeds with probability ~1e-6, so ten fixed counts all pass
# for all but ~1 in 100000 choices of input or key.

@test "bfcount: counts 1e4 to 1e6 sequential numbers within 2%" {
	for n in 10000 50000 100000 300000 1000000; do
		run --separate-stderr bash -c "seq 1 $n | bfcount"
		expect_status 0
		expect_stderr ""
		within "bfcount of seq 1 $n" "$output" "$n" "$(awk -v n="$n" 'BEGIN { print 0.02 * n }')"
	done
}

@test "bfcount: counts 1e4 to 1e6 URL-like keys, each seen twice, within 2%" {
	local n
	url_keys 10 >few.txt
	expect_eq "distinct keys in url_keys 10 (sort -u)" 10 "$(sort -u few.txt | wc -l | tr -d ' ')"
	for n in 10000 50000 100000 300000 1000000; do
		url_keys "$n" >urls.txt
		run --separate-stderr bfcount urls.txt
		expect_status 0
		within "bfcount of $n URLs" "$output" "$n" "$(awk -v n="$n" 'BEGIN { print 0.02 * n }')"
	done
}

@test "bfcount: -v gives the HyperLogLog standard error (0.41%) on stderr and nothing extra on stdout" {
	seq 1 100000 >in.txt
	run --separate-stderr bfcount in.txt
	local plain=$output
	run --separate-stderr bfcount -v in.txt
	expect_status 0
	expect_output "$plain"
	case $stderr in
	*$'\n'*) expect_eq "-v stderr (one line)" "bfcount: ...0.41%..." "$stderr" ;;
	"bfcount: "*0.41%*) ;;
	*) expect_eq "-v stderr" "bfcount: ...0.41%..." "$stderr" ;;
	esac
	run --separate-stderr bfcount --verbose in.txt
	expect_output "$plain"
}

@test "bfcount: memory does not grow with the count: RSS on 1e6 keys is < 1 MiB above RSS on 1e5, and < 16 MiB" {
	[ -x /usr/bin/time ] || skip "/usr/bin/time is missing (Debian package 'time'): memory not measured"
	seq 1 100000 >small.txt
	seq 1 1000000 >large.txt
	# one thread for the comparison: with more, a regular file is read in
	# ranges, each thread filling a line buffer of up to 1 MiB as far as
	# its ranges reach, which a 0.6 MB file does not (bounded by the
	# threads, not the count; the absolute check below runs them)
	/usr/bin/time -f %M -o small.rss bfcount -j 1 small.txt >/dev/null
	/usr/bin/time -f %M -o large.rss bfcount -j 1 large.txt >/dev/null
	/usr/bin/time -f %M -o threads.rss bfcount large.txt >/dev/null
	local small large threads
	small=$(tail -n 1 small.rss)
	large=$(tail -n 1 large.rss)
	threads=$(tail -n 1 threads.rss)
	# %M is the peak resident set in KiB. 1e5 short lines already fill every
	# batch buffer of the reading pipeline (slots of 128 KiB reads, their
	# keys and hashes) and the 192 KiB counter, so from there on the count
	# must cost nothing more.
	# (ThreadSanitizer's shadow memory grows with every allocation it sees)
	if [ $((large - small)) -ge 1024 ] && ! is_tsan_build; then
		expect_eq "RSS growth in KiB (1e5 -> 1e6 keys)" "< 1024" "$((large - small)) ($small -> $large)"
	fi
	# the absolute figure only for ordinary executables: sanitizers add their own
	if is_plain_build && [ "$large" -ge 16384 ]; then
		expect_eq "peak RSS in KiB at 1e6 keys" "< 16384" "$large"
	fi
	if is_plain_build && [ "$threads" -ge 16384 ]; then
		expect_eq "peak RSS in KiB at 1e6 keys, default threads" "< 16384" "$threads"
	fi
}

# ---------------------------------------------------------------- filters: counts

@test "bfcount: -f FILTER prints a bare estimate within 5 standard errors of the true count" {
	make_ab
	run --separate-stderr bfcount -f a.bf
	expect_status 0
	expect_stderr ""
	local est=$output sd
	sd=$(reported_sd -f a.bf)
	# sd is about 39 for 60000 keys in this filter (1549312 bits, k = 9)
	within "bfcount -f a.bf" "$est" 60000 "$(awk -v s="$sd" 'BEGIN { print 5 * s }')"
}

@test "bfcount: -v's standard error for a filter agrees with the occupancy formula" {
	make_ab
	build ac.bf -n 100000 --layout classic a.txt
	local f m k sd classic
	for f in a.bf ac.bf; do
		m=$(header_uint "$f" 72 8)
		k=$(header_uint "$f" 68 4)
		sd=$(reported_sd -f "$f")
		# classic occupancy: with t = k n / m, the estimate from the clear
		# bits has sd = sqrt(m (e^t - 1 - t)) / k (delta method); here
		# sqrt(1549312 * 0.0685) / 9 = 36 for the classic filter. Blocked
		# adds the spread of block loads, a few percent at this fill.
		classic=$(awk -v m="$m" -v k="$k" 'BEGIN { t = k * 60000 / m
			print sqrt(m * (exp(t) - 1 - t)) / k }')
		within "$f: reported sd" "$sd" "$classic" "$(awk -v c="$classic" 'BEGIN { print 0.25 * c }')"
	done
}

@test "bfcount: both layouts and an empty filter are counted" {
	seq 1 60000 >a.txt
	build c.bf -n 100000 --layout classic a.txt
	run --separate-stderr bfcount -f c.bf
	expect_status 0
	# classic sd at 60000 keys is 36 (see above); 5 sd is 180
	within "classic filter" "$output" 60000 180
	build empty.bf -n 1000 </dev/null
	run --separate-stderr bfcount -f empty.bf
	expect_status 0
	expect_output 0
}

@test "bfcount: several filters print COUNT<TAB>FILE lines in order; operands are filters too" {
	make_ab
	seq 1 10 >ten.txt
	build ten.bf -n 1000 ten.txt
	run --separate-stderr bfcount -f ten.bf -f a.bf
	expect_status 0
	expect_stderr ""
	expect_eq "lines" 2 "${#lines[@]}"
	expect_eq "first line" $'10\tten.bf' "${lines[0]}"
	case ${lines[1]} in *$'\t'a.bf) ;; *) expect_eq "second line" $'N\ta.bf' "${lines[1]}" ;; esac
	within "a.bf" "${lines[1]%%$'\t'*}" 60000 200
	local flags=$output
	run --separate-stderr bfcount -f ten.bf a.bf
	expect_output "$flags"
	run --separate-stderr bfcount --filter=ten.bf --filter a.bf
	expect_output "$flags"
}

@test "bfcount: -f - reads a filter from standard input" {
	seq 1 10 >ten.txt
	build ten.bf -n 1000 ten.txt
	run --separate-stderr bfcount -f - <ten.bf
	expect_status 0
	expect_output 10
}

@test "bfcount: -v on a filter reports its standard error on stderr and nothing extra on stdout" {
	make_ab
	run --separate-stderr bfcount -f a.bf -f b.bf
	local plain=$output
	run --separate-stderr bfcount -v -f a.bf -f b.bf
	expect_status 0
	expect_output "$plain"
	expect_eq "stderr lines" 2 "$(printf '%s\n' "$stderr" | grep -c '^bfcount: [ab]\.bf: standard error about [0-9]')"
}

# ---------------------------------------------------------------- filters: union, intersection, Jaccard

# The union's estimate comes from the OR of the bits: the filter of A u B,
# bit for bit, so its error is that of one filter of 100000 keys (sd ~67).
# The intersection is |A| + |B| - |A u B|, a difference of three estimates
# that are correlated; whatever the correlation, its sd is at most
# sd_A + sd_B + sd_U (Cauchy-Schwarz), 39 + 39 + 67 = 145 here, so 5 of
# those is 725 (3.6% of 20000). Every bound below is 5 times the sum of the
# standard errors bfcount -v reports for the terms involved.

@test "bfcount: --union of filters of 1..60000 and 40001..100000 is 100000 within 5 sd" {
	make_ab
	run --separate-stderr bfcount --union -f a.bf -f b.bf
	expect_status 0
	expect_stderr ""
	local sd
	sd=$(reported_sd --union -f a.bf -f b.bf)
	within "--union" "$output" 100000 "$(awk -v s="$sd" 'BEGIN { print 5 * s }')"
}

@test "bfcount: --union of a filter with itself is its own count" {
	make_ab
	run --separate-stderr bfcount -f a.bf
	local alone=$output
	run --separate-stderr bfcount --union -f a.bf -f a.bf
	expect_status 0
	expect_output "$alone"
}

@test "bfcount: --intersection of 1..60000 and 40001..100000 is 20000 within 5 (sd_A + sd_B + sd_U)" {
	make_ab
	run --separate-stderr bfcount --intersection -f a.bf -f b.bf
	expect_status 0
	expect_stderr ""
	local est=$output sda sdb sdu
	sda=$(reported_sd -f a.bf)
	sdb=$(reported_sd -f b.bf)
	sdu=$(reported_sd --union -f a.bf -f b.bf)
	within "--intersection" "$est" 20000 "$(awk -v a="$sda" -v b="$sdb" -v u="$sdu" 'BEGIN { print 5 * (a + b + u) }')"
}

@test "bfcount: --intersection works on classic filters too" {
	make_ab --layout classic
	run --separate-stderr bfcount --intersection -f a.bf -f b.bf
	expect_status 0
	local est=$output sda sdb sdu
	sda=$(reported_sd -f a.bf)
	sdb=$(reported_sd -f b.bf)
	sdu=$(reported_sd --union -f a.bf -f b.bf)
	within "--intersection (classic)" "$est" 20000 "$(awk -v a="$sda" -v b="$sdb" -v u="$sdu" 'BEGIN { print 5 * (a + b + u) }')"
}

@test "bfcount: --jaccard of 1..60000 and 40001..100000 is 0.2 within the bounds of its terms" {
	make_ab
	run --separate-stderr bfcount --jaccard -f a.bf -f b.bf
	expect_status 0
	expect_stderr ""
	case $output in 0.[0-9][0-9][0-9][0-9]) ;; *) expect_eq "format" "0.DDDD" "$output" ;; esac
	local sda sdb sdu lo hi
	sda=$(reported_sd -f a.bf)
	sdb=$(reported_sd -f b.bf)
	sdu=$(reported_sd --union -f a.bf -f b.bf)
	# J = I / U with I within 20000 +- 5 (sd_A + sd_B + sd_U) and U within
	# 100000 +- 5 sd_U: about 0.192 .. 0.208 here (and 0.00005 of rounding)
	lo=$(awk -v a="$sda" -v b="$sdb" -v u="$sdu" 'BEGIN { t = 5 * (a + b + u)
		print (20000 - t) / (100000 + 5 * u) - 0.00005 }')
	hi=$(awk -v a="$sda" -v b="$sdb" -v u="$sdu" 'BEGIN { t = 5 * (a + b + u)
		print (20000 + t) / (100000 - 5 * u) + 0.00005 }')
	awk -v j="$output" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(j >= lo && j <= hi) }' ||
		expect_eq "--jaccard" "$lo .. $hi" "$output"
}

@test "bfcount: --jaccard of a filter with itself is 1.0000, of disjoint sets 0.0000" {
	make_ab
	seq 200001 260000 >d.txt
	build d.bf -n 100000 d.txt
	run --separate-stderr bfcount --jaccard -f a.bf -f a.bf
	expect_status 0
	expect_output 1.0000
	# disjoint: the estimated intersection is 0 +- 5 * (39 + 39 + 67), at
	# most 725 / 120000 = 0.006 of the union; it is clamped at 0 below
	run --separate-stderr bfcount --jaccard -f a.bf -f d.bf
	expect_status 0
	within "--jaccard of disjoint sets" "$output" 0 0.006
}

@test "bfcount: --intersection of disjoint sets is never negative" {
	make_ab
	seq 200001 260000 >d.txt
	build d.bf -n 100000 d.txt
	run --separate-stderr bfcount --intersection -f a.bf -f d.bf
	expect_status 0
	case $output in [0-9] | [0-9]*[0-9]) ;; *) expect_eq "a count" "N >= 0" "$output" ;; esac
	within "--intersection of disjoint sets" "$output" 0 725
}

@test "bfcount: --intersection of three filters (inclusion-exclusion over 7 unions)" {
	seq 1 60000 >a.txt
	seq 40001 100000 >b.txt
	seq 50001 120000 >c.txt
	# A n B n C = 50001..60000: 10000 keys; the filters are sized for the
	# largest union, A u B u C = 1..120000
	build a.bf -n 200000 a.txt
	build b.bf -n 200000 b.txt
	build c.bf -n 200000 c.txt
	run --separate-stderr bfcount --intersection -f a.bf -f b.bf -f c.bf
	expect_status 0
	expect_stderr ""
	# the estimate is a signed sum of the 7 union estimates: its sd is at
	# most the sum of theirs (about 7 * 60 here), and we allow 5 of those
	local est=$output tol=0 s
	for s in "-f a.bf" "-f b.bf" "-f c.bf" "--union -f a.bf b.bf" "--union -f a.bf c.bf" \
		"--union -f b.bf c.bf" "--union -f a.bf b.bf c.bf"; do
		# shellcheck disable=SC2086
		tol=$(awk -v t="$tol" -v s="$(reported_sd $s)" 'BEGIN { print t + 5 * s }')
	done
	within "--intersection of three" "$est" 10000 "$tol"
}

@test "bfcount: -v with --union reports a standard error on stderr and nothing extra on stdout" {
	make_ab
	run --separate-stderr bfcount --union -f a.bf -f b.bf
	local plain=$output
	run --separate-stderr bfcount -v --union -f a.bf -f b.bf
	expect_status 0
	expect_output "$plain"
	case $stderr in "bfcount: "*"standard error"*) ;; *) expect_eq "-v stderr" "bfcount: ...standard error..." "$stderr" ;; esac
}

@test "bfcount: -v with --intersection and --jaccard reports an error bound on stderr and nothing extra on stdout" {
	make_ab
	local op plain
	for op in --intersection --jaccard; do
		run --separate-stderr bfcount "$op" -f a.bf -f b.bf
		plain=$output
		run --separate-stderr bfcount -v "$op" -f a.bf -f b.bf
		expect_status 0
		expect_output "$plain"
		case $stderr in "bfcount: "?*) ;; *) expect_eq "$op -v stderr" "bfcount: ...(an error bound)" "$stderr" ;; esac
	done
}

# ---------------------------------------------------------------- filters: trouble

@test "bfcount: filters with different keys cannot be combined: exit 2 naming both files and the difference" {
	seq 1 100 >a.txt
	build a.bf -n 1000 a.txt
	bfbuild --key ffeeddccbbaa99887766554433221100 -n 1000 -o other.bf a.txt
	run --separate-stderr bfcount --union -f a.bf -f other.bf
	expect_fail "bfcount: other.bf: cannot be combined with a.bf: different key"
}

@test "bfcount: filters of different sizes or layouts cannot be combined" {
	seq 1 100 >a.txt
	build a.bf -n 1000 a.txt
	build big.bf -n 100000 a.txt
	build classic.bf -n 1000 --layout classic a.txt
	run --separate-stderr bfcount --intersection -f a.bf -f big.bf
	expect_fail "bfcount: big.bf: cannot be combined with a.bf: different size"
	run --separate-stderr bfcount --jaccard -f a.bf -f classic.bf
	expect_fail "bfcount: classic.bf: cannot be combined with a.bf: different layout"
}

@test "bfcount: filters of different shapes can still be counted one by one" {
	seq 1 100 >a.txt
	build a.bf -n 1000 a.txt
	build big.bf -n 100000 --layout classic a.txt
	run --separate-stderr bfcount -f a.bf -f big.bf
	expect_status 0
	expect_stderr ""
	# 100 keys in 14848 or more bits: sd ~ 100 / sqrt(2 m) < 1
	case ${lines[0]}/${lines[1]} in *$'\t'a.bf/*$'\t'big.bf) ;; *) expect_eq "names" "a.bf, big.bf" "$output" ;; esac
	within "a.bf" "${lines[0]%%$'\t'*}" 100 5
	within "big.bf" "${lines[1]%%$'\t'*}" 100 5
}

@test "bfcount: a growing filter (a bfuniq state) is counted stage by stage" {
	# 350000 keys fill stages of 100000 and 200000 and part of a third
	seq 1 350000 | bfuniq --key "$KEY" -f grow.bf >/dev/null
	run --separate-stderr bfcount -f grow.bf
	expect_status 0
	local sd
	sd=$(reported_sd -f grow.bf)
	within "growing filter" "$output" 350000 "$(awk -v s="$sd" 'BEGIN { print 5 * s }')"
}

@test "bfcount: --union, --intersection and --jaccard refuse growing filters with keys in several stages, saying why" {
	# Growing filters OR stage by stage, but a key sits in the stage that
	# was newest when it arrived: 300001..350000 are in stage 3 of g1.bf
	# and stage 1 of g2.bf, so the OR counts them twice (union 550000, not
	# 500000) and inclusion-exclusion finds no intersection (0, not 50000).
	seq 1 350000 | bfuniq --key "$KEY" -f g1.bf >/dev/null
	seq 300001 500000 | bfuniq --key "$KEY" -f g2.bf >/dev/null
	local op
	for op in --union --intersection --jaccard; do
		run --separate-stderr bfcount "$op" g1.bf g2.bf
		expect_fail "bfcount: g1.bf: its keys sit in stages of different sizes (a growing filter past its first stage, or a window whose generations grew): a key it shares with another filter may sit in a stage of another size there, and stages of different sizes cannot be compared bit by bit, so no union or intersection can be estimated"
	done
}

@test "bfcount: growing filters whose keys sit in one stage combine as that stage" {
	# two bfuniq states of 60000 keys each: both within their first stage
	# of 100000, so each is one filter of the same shape and key; the
	# bounds are those of the fixed filters of make_ab (5 sd)
	seq 1 60000 | bfuniq --key "$KEY" -f g1.bf >/dev/null
	seq 40001 100000 | bfuniq --key "$KEY" -f g2.bf >/dev/null
	run --separate-stderr bfcount --union g1.bf g2.bf
	expect_status 0
	expect_stderr ""
	within "--union" "$output" 100000 335
	run --separate-stderr bfcount --intersection g1.bf g2.bf
	within "--intersection" "$output" 20000 725
	run --separate-stderr bfcount --jaccard g1.bf g2.bf
	within "--jaccard" "$output" 0.2 0.008
	# and with a fixed filter of that stage's shape and key
	local m k
	m=$(bfinfo --json g1.bf | sed 's/.*"stages":\[{"layout":"blocked","bits":\([0-9]*\),"hashes":\([0-9]*\),.*/\1/')
	k=$(bfinfo --json g1.bf | sed 's/.*"stages":\[{"layout":"blocked","bits":\([0-9]*\),"hashes":\([0-9]*\),.*/\2/')
	seq 40001 100000 | bfbuild --key "$KEY" -m "$m" -K "$k" -o fixed.bf
	run --separate-stderr bfcount --intersection g1.bf fixed.bf
	expect_status 0
	within "--intersection with a fixed filter" "$output" 20000 725
	# a fixed filter of another shape is refused as for two fixed ones
	seq 1 10 | build other.bf -n 1000
	run --separate-stderr bfcount --union g1.bf other.bf
	expect_fail "bfcount: other.bf: cannot be combined with g1.bf: different size"
}

@test "bfcount: a missing filter is an error, exit 2" {
	run --separate-stderr bfcount -f nofilter.bf
	expect_fail "bfcount: nofilter.bf: No such file or directory"
}

@test "bfcount: a file that is not a filter is an error, exit 2" {
	put_lines notes.txt "these are notes, not a filter"
	run --separate-stderr bfcount -f notes.txt
	expect_one_line_error "bfcount: notes.txt: not a bftools filter"
	seq 1 2000 | gzip -c >wrong.bf
	run --separate-stderr bfcount -f wrong.bf
	expect_fail "bfcount: wrong.bf: not a bftools filter (bad magic)"
}

@test "bfcount: a truncated filter is an error, exit 2, even among good ones" {
	seq 1 100 >a.txt
	build a.bf -n 1000 a.txt
	head -c 100 a.bf >short.bf
	run --separate-stderr bfcount -f short.bf
	expect_one_line_error "bfcount: short.bf: "
	run --separate-stderr bfcount --union -f a.bf -f short.bf
	expect_one_line_error "bfcount: short.bf: "
}

@test "bfcount: a filter with every bit set is an error naming it, exit 2" {
	seq 1 1000 >many.txt
	build full.bf -m 512 -K 4 many.txt
	run --separate-stderr bfcount -f full.bf
	# the warning every over-full filter gets as it is loaded, then the error
	expect_fail "bfcount: full.bf: warning: filter over-full: false-positive rate 1 at its fill, over 10 times its target 0.001 (every bit set: too many keys to estimate, capacity 23)
bfcount: full.bf: every bit is set: too many keys to estimate"
}

@test "bfcount: filter counts, unions and Jaccard indexes to a full disk are a write error, exit 2" {
	make_ab
	run --separate-stderr bash -c 'bfcount -f a.bf >/dev/full'
	expect_fail "bfcount: write error: No space left on device"
	run --separate-stderr bash -c 'bfcount -f a.bf b.bf >/dev/full'
	expect_fail "bfcount: write error: No space left on device"
	run --separate-stderr bash -c 'bfcount --union -f a.bf b.bf >/dev/full'
	expect_fail "bfcount: write error: No space left on device"
	run --separate-stderr bash -c 'bfcount --jaccard -f a.bf b.bf >/dev/full'
	expect_fail "bfcount: write error: No space left on device"
}

@test "bfcount: windowed filters combine as the OR of their live generations" {
	# two count windows of 2000 keys hold all of their 1000 keys each, in
	# generations of one shape: the OR of those is one filter of the keys
	# within the window, so the union is 1500 and the intersection 500,
	# each within 5 of the standard errors -v reports
	seq 1 1000 | bfbuild --key "$KEY" --window 2000keys -o w1.bf
	seq 501 1500 | bfbuild --key "$KEY" --window 2000keys -o w2.bf
	local sd
	run --separate-stderr bfcount --union w1.bf w2.bf
	expect_status 0
	expect_stderr ""
	sd=$(reported_sd --union w1.bf w2.bf)
	within "--union" "$output" 1500 "$(awk -v s="$sd" 'BEGIN { print 5 * s }')"
	run --separate-stderr bfcount --intersection w1.bf w2.bf
	expect_status 0
	sd=$(reported_sd --intersection w1.bf w2.bf)
	within "--intersection" "$output" 500 "$(awk -v s="$sd" 'BEGIN { print 5 * s }')"
	# a window and a fixed filter of another size do not combine
	seq 1 10 | bfbuild --key "$KEY" -n 1000 -o f.bf
	run --separate-stderr bfcount --union w1.bf f.bf
	expect_fail "bfcount: f.bf: cannot be combined with w1.bf: different size"
}

@test "bfcount --report=json: the count as a JSON object, per file for several filters" {
	# issue 32: --json is the report as JSON, also spelled --report=json; JSON Lines input is --jsonl
	run --separate-stderr bash -c 'seq 1 100 | bfcount --report=json'
	expect_status 0
	expect_output '{"count":100,"exact":true,"relative_error":0}'
	seq 1 100 | bfbuild --key "$KEY" -n 1000 -o a.bf
	seq 1 100 | bfbuild --key "$KEY" -n 1000 -o b.bf
	run --separate-stderr bfcount --report=json -f a.bf
	expect_output "{\"count\":$(bfcount -f a.bf)}"
	run --separate-stderr bfcount --report=json -f a.bf -f b.bf
	expect_output "{\"file\":\"a.bf\",\"count\":$(bfcount -f a.bf)}
{\"file\":\"b.bf\",\"count\":$(bfcount -f b.bf)}"
	run --separate-stderr bfcount --report=json --jaccard a.bf b.bf
	expect_output '{"jaccard":1.0000}'
	# --jsonl reads JSON Lines
	run --separate-stderr bash -c 'printf "{\"a\":1}\n{\"a\":1.0}\n" | bfcount --jsonl -k .a --report=json'
	expect_output '{"count":1,"exact":true,"relative_error":0}'
}
