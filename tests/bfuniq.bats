#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# bfuniq.bats - the command-line contract of bfuniq (bfuniq(1)): the first
# line per key in input order, -d for the repeats, fixed (-n) and growing
# filters, the state file (-f) across runs, fields, case folding, NUL
# records, --line-buffered on a live stream, the -v report, the capacity
# warning, every usage error and every kind of trouble.
#
# bfuniq is probabilistic in one direction only: a first-seen line may be
# dropped as a false positive. Every test fixes the SipHash key (--key),
# so its outcome is deterministic; where a test asserts that nothing was
# lost, the inputs are small enough at the default rate of 1e-6 (a dozen
# keys: odds of a loss about 1e-5 for any key we might have picked). The
# tests against awk bound the losses with the arithmetic in comments.

bats_require_minimum_version 1.5.0
load helpers

SYNOPSIS="Usage: bfuniq [-n N] [-p P] [-f STATE] [-d [--once]] [-k LIST] [-t C] [--header] [--csv] [--jsonl] [--bad-line error|skip] [--shard I/N --shard-key HEX] [-i] [-z] [-v] [--json] [--layout blocked|classic] [--key HEX] [--line-buffered] [--window W] [--generations G] [--refresh] [--time-field F] [--bad-time error|skip] [--now T] [--no-wait] [--checkpoint INTERVAL] [FILE...]"

# helpers.bash checks for bfbuild and bfgrep; these tests need bfuniq too.
setup() {
	for prog in bfbuild bfgrep bfuniq; do
		if [ ! -x "$BFTOOLS_BIN/$prog" ]; then
			echo "$BFTOOLS_BIN/$prog is missing: build it (make) or set BFTOOLS_BIN" >&2
			return 1
		fi
	done
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
}

# uniq_ [OPTION...] [FILE...]: bfuniq with the fixed key.
uniq_() {
	bfuniq --key "$KEY" "$@"
}

# in.txt: eight lines, four distinct, repeats out of order.
make_input() {
	put_lines in.txt banana apple banana cherry apple date banana cherry
}

# count FILE: its number of lines, digits only.
count() {
	wc -l <"$1" | tr -d ' '
}

# is_subsequence SUB SEQ: every line of SUB appears in SEQ in the same order
# (SEQ may have more lines in between). Greedy matching is exact here: taking
# the earliest possible match never rules out a later one. (FILENAME, not
# NR == FNR, tells the files apart, so an empty SUB works.)
is_subsequence() {
	awk 'FILENAME == ARGV[1] { sub_[++n] = $0; next }
	     i < n && $0 == sub_[i + 1] { i++ }
	     END { exit !(i == n) }' "$1" "$2" && return 0
	echo "$1 is not a subsequence of $2" >&2
	return 1
}

# expect_no_duplicates FILE: no line occurs twice in FILE.
expect_no_duplicates() {
	expect_eq "lines of $1 written twice" "" "$(sort "$1" | uniq -d | head -5)"
}

# loss_bound D P: the most lines a run may lose as false positives and pass.
# Each of D first-seen lines is lost with probability at most P, so the loss
# is a sum of D independent-enough Bernoulli trials with mean mu <= D*P and
# standard deviation <= sqrt(mu). mu + 6 sigma + 6 is beyond any tail a
# correct program reaches (the +6 covers mu near 0, where Poisson tails
# are fatter than a normal's: P(X > mu + 6 sqrt(mu) + 6) < 1e-6 for every
# mu). With the fixed key the outcome is deterministic anyway; the bound
# is what keeps the test honest for a key we did not try.
loss_bound() {
	awk -v d="$1" -v p="$2" 'BEGIN { mu = d * p; printf "%d\n", mu + 6 * sqrt(mu) + 6 }'
}

# expect_awk_first_seen INPUT OURS P: OURS (bfuniq INPUT at rate P) is
# awk '!seen[$0]++' less a few lines lost as false positives: no line
# twice, awk's order (a subsequence of awk's output), and the number lost
# within loss_bound of awk's distinct count.
expect_awk_first_seen() {
	local distinct lost bound
	awk '!seen[$0]++' "$1" >awk-first.txt
	expect_no_duplicates "$2"
	is_subsequence "$2" awk-first.txt
	distinct=$(count awk-first.txt)
	lost=$(($(count awk-first.txt) - $(count "$2")))
	bound=$(loss_bound "$distinct" "$3")
	if [ "$lost" -gt "$bound" ]; then
		echo "lost $lost of $distinct distinct lines at rate $3; bound $bound" >&2
		return 1
	fi
}

# ---------------------------------------------------------------- help, version

@test "bfuniq: -h prints the usage on stdout, starting with the synopsis, and exits 0" {
	run --separate-stderr bfuniq -h
	expect_status 0
	expect_stderr ""
	expect_eq "first line" "$SYNOPSIS" "${lines[0]}"
}

@test "bfuniq: --help prints the same usage as -h, naming every long option" {
	run --separate-stderr bfuniq -h
	local short=$output
	run --separate-stderr bfuniq --help
	expect_status 0
	expect_output "$short"
	for opt in --capacity --rate --state --repeated --once --field --separator --ignore-case \
		--null-data --verbose --layout --key --line-buffered --no-wait --help --version; do
		case $output in *"$opt"*) ;; *) expect_eq "help mentions" "$opt" "(missing)" ;; esac
	done
}

@test "bfuniq: -V prints 'bfuniq (bftools) 1.0.0' then the MIT licence, and exits 0" {
	run --separate-stderr bfuniq -V
	expect_status 0
	expect_stderr ""
	expect_eq "first line" "bfuniq (bftools) 1.0.0" "${lines[0]}"
	case $output in *MIT*) ;; *) expect_eq licence "MIT" "$output" ;; esac
	case $output in *"This is free software"*) ;; *) expect_eq licence "This is free software" "$output" ;; esac
}

@test "bfuniq: --version prints the same text as -V" {
	run --separate-stderr bfuniq -V
	local short=$output
	run --separate-stderr bfuniq --version
	expect_status 0
	expect_output "$short"
}

@test "bfuniq: --help and --version to a full disk are a write error, exit 2" {
	run --separate-stderr bash -c 'bfuniq --help >/dev/full'
	expect_fail "bfuniq: write error: No space left on device"
	run --separate-stderr bash -c 'bfuniq --version >/dev/full'
	expect_fail "bfuniq: write error: No space left on device"
}

# ---------------------------------------------------------------- usage errors

@test "bfuniq: -n rejects zero, junk, fractions, unknown suffixes and overflow" {
	make_input
	run --separate-stderr bfuniq -n 0 in.txt
	expect_usage_error bfuniq "invalid capacity '0': must be at least 1"
	run --separate-stderr bfuniq -n abc in.txt
	expect_usage_error bfuniq "invalid capacity 'abc': not a number"
	run --separate-stderr bfuniq --capacity=-5 in.txt
	expect_usage_error bfuniq "invalid capacity '-5': must not be negative"
	run --separate-stderr bfuniq --capacity 1.5 in.txt
	expect_usage_error bfuniq "invalid capacity '1.5': not a whole number"
	run --separate-stderr bfuniq -n 10X in.txt
	expect_usage_error bfuniq "invalid capacity '10X': unknown suffix (use k, M, G, T or P)"
	run --separate-stderr bfuniq -n 1e400 in.txt
	expect_usage_error bfuniq "invalid capacity '1e400': too large"
	run --separate-stderr bfuniq -n '' in.txt
	expect_usage_error bfuniq "invalid capacity '': empty"
}

@test "bfuniq: -n too large for any filter at the rate is a usage error" {
	make_input
	run --separate-stderr bfuniq -n 1e13 in.txt
	expect_usage_error bfuniq "cannot size a filter for 10000000000000 keys at rate 1e-06: filter would exceed the 2^46-bit limit"
}

@test "bfuniq: -p rejects 0, 1, more than 1, negatives, junk and underflow" {
	make_input
	run --separate-stderr bfuniq -p 0 in.txt
	expect_usage_error bfuniq "invalid rate '0': must be between 0 and 1 (exclusive)"
	run --separate-stderr bfuniq -p 1 in.txt
	expect_usage_error bfuniq "invalid rate '1': must be between 0 and 1 (exclusive)"
	run --separate-stderr bfuniq --rate=150% in.txt
	expect_usage_error bfuniq "invalid rate '150%': must be between 0 and 1 (exclusive)"
	run --separate-stderr bfuniq --rate -0.1 in.txt
	expect_usage_error bfuniq "invalid rate '-0.1': must be between 0 and 1 (exclusive)"
	run --separate-stderr bfuniq -p nan in.txt
	expect_usage_error bfuniq "invalid rate 'nan': not a number"
	run --separate-stderr bfuniq -p 1e-400 in.txt
	expect_usage_error bfuniq "invalid rate '1e-400': too small"
}

@test "bfuniq: -k rejects field 0, junk and fractions" {
	make_input
	run --separate-stderr bfuniq -k 0 in.txt
	expect_usage_error bfuniq "invalid field number '0': must be at least 1"
	run --separate-stderr bfuniq --field=x in.txt
	expect_usage_error bfuniq "-k 'x': not a field number or range (field names need --header)"
	run --separate-stderr bfuniq --field 1.5 in.txt
	expect_usage_error bfuniq "invalid field number '1.5': a field number is a plain integer (1, 2, 3, ...; no suffix, fraction or exponent)"
}

@test "bfuniq: -t with other than one character is a usage error" {
	make_input
	run --separate-stderr bfuniq -t ab in.txt
	expect_usage_error bfuniq "invalid separator 'ab': expected one character"
	run --separate-stderr bfuniq --separator= in.txt
	expect_usage_error bfuniq "invalid separator '': expected one character"
	run --separate-stderr bfuniq --separator :: in.txt
	expect_usage_error bfuniq "invalid separator '::': expected one character"
}

@test "bfuniq: --layout accepts only blocked and classic" {
	make_input
	run --separate-stderr bfuniq --layout=bloom in.txt
	expect_usage_error bfuniq "invalid layout 'bloom': expected 'blocked' or 'classic'"
	run --separate-stderr bfuniq --layout Blocked in.txt
	expect_usage_error bfuniq "invalid layout 'Blocked': expected 'blocked' or 'classic'"
}

@test "bfuniq: --key must be exactly 32 hex digits" {
	make_input
	run --separate-stderr bfuniq --key 0011 in.txt
	expect_usage_error bfuniq "invalid key '0011': must be 32 hexadecimal digits"
	run --separate-stderr bfuniq --key=000102030405060708090a0b0c0d0e0g in.txt
	expect_usage_error bfuniq "invalid key '000102030405060708090a0b0c0d0e0g': must be 32 hexadecimal digits"
	run --separate-stderr bfuniq --key "${KEY}00" in.txt
	expect_usage_error bfuniq "invalid key '${KEY}00': must be 32 hexadecimal digits"
}

@test "bfuniq: an unknown short option is a usage error naming it" {
	make_input
	run --separate-stderr bfuniq -x in.txt
	expect_usage_error bfuniq "invalid option -- 'x'"
	# -c and -u of uniq(1) are not bfuniq options
	run --separate-stderr bfuniq -c in.txt
	expect_usage_error bfuniq "invalid option -- 'c'"
}

@test "bfuniq: an unknown long option is a usage error naming it" {
	make_input
	run --separate-stderr bfuniq --no-such-option in.txt
	expect_usage_error bfuniq "unrecognized option '--no-such-option'"
}

@test "bfuniq: an option missing its argument is a usage error naming it" {
	run --separate-stderr bfuniq -n
	expect_usage_error bfuniq "option '-n' requires an argument"
	run --separate-stderr bfuniq --state
	expect_usage_error bfuniq "option '--state' requires an argument"
	run --separate-stderr bfuniq -f
	expect_usage_error bfuniq "option '-f' requires an argument"
	run --separate-stderr bfuniq --layout
	expect_usage_error bfuniq "option '--layout' requires an argument"
}

@test "bfuniq: -f - is refused: the state is written back, so it must be a file" {
	make_input
	run --separate-stderr bfuniq -f - in.txt
	expect_usage_error bfuniq "the state must be a file (it is written back at the end)"
	run --separate-stderr bfuniq --state=- in.txt
	expect_usage_error bfuniq "the state must be a file (it is written back at the end)"
	expect_eq "files left" "in.txt" "$(ls -A)"
}

# ---------------------------------------------------------------- first seen

@test "bfuniq: keeps the first occurrence of each line and preserves order" {
	make_input
	run --separate-stderr uniq_ in.txt
	expect_status 0
	expect_stderr ""
	expect_output $'banana\napple\ncherry\ndate'
}

@test "bfuniq: unlike uniq(1), repeats need not be adjacent; empty lines are a key too" {
	printf 'a\n\nb\na\n\nb\n\n' >in.txt
	uniq_ in.txt >out.txt
	expect_file out.txt 'a\n\nb\n'
}

@test "bfuniq: reads standard input when no FILE is named, and for -" {
	make_input
	run --separate-stderr uniq_ <in.txt
	expect_output $'banana\napple\ncherry\ndate'
	put_lines first.txt date fig
	run --separate-stderr uniq_ first.txt - <in.txt
	expect_status 0
	expect_output $'date\nfig\nbanana\napple\ncherry'
}

@test "bfuniq: one seen-set spans every FILE: a line seen in an earlier FILE is not written again" {
	make_input
	put_lines more.txt cherry elder banana fig elder
	run --separate-stderr uniq_ in.txt more.txt
	expect_status 0
	expect_output $'banana\napple\ncherry\ndate\nelder\nfig'
}

@test "bfuniq: empty input writes nothing and exits 0" {
	run --separate-stderr uniq_ </dev/null
	expect_status 0
	expect_output ""
	expect_stderr ""
}

@test "bfuniq: exits 0 even when every line is a repeat (no grep-style status 1)" {
	put_lines in.txt a a a
	put_lines seen.txt a
	build seen.bf -n 10 seen.txt
	run --separate-stderr bfuniq -f seen.bf in.txt
	expect_status 0
	expect_output ""
	expect_stderr ""
}

@test "bfuniq: a last line without a newline is written with one" {
	printf 'a\nb\na\nc' >in.txt
	uniq_ in.txt >out.txt
	expect_file out.txt 'a\nb\nc\n'
}

@test "bfuniq: lines are bytes: NUL, CR and bytes above 127 are kept, CRLF differs from LF" {
	printf 'a\0b\na\na\0b\nc\r\nc\n\377\376\nc\r\n\377\376\n' >in.txt
	uniq_ in.txt >out.txt
	expect_file out.txt 'a\0b\na\nc\r\nc\n\377\376\n'
}

@test "bfuniq: -n and -p size one filter: same output for a small input" {
	make_input
	run --separate-stderr uniq_ -n 100 -p 1e-4 in.txt
	expect_status 0
	expect_stderr ""
	expect_output $'banana\napple\ncherry\ndate'
	run --separate-stderr uniq_ --capacity=1k --rate=0.01% in.txt
	expect_output $'banana\napple\ncherry\ndate'
	run --separate-stderr uniq_ --capacity 1000 --rate 0.0001 in.txt
	expect_output $'banana\napple\ncherry\ndate'
}

@test "bfuniq: --layout classic and blocked give the same output" {
	make_input
	run --separate-stderr uniq_ --layout classic in.txt
	expect_status 0
	expect_output $'banana\napple\ncherry\ndate'
	run --separate-stderr uniq_ --layout=blocked -n 100 in.txt
	expect_output $'banana\napple\ncherry\ndate'
}

@test "bfuniq: without --key each run draws a fresh random key (seen in the state)" {
	make_input
	bfuniq -f a.bf in.txt >/dev/null
	bfuniq -f b.bf in.txt >/dev/null
	[ "$(header_hex a.bf 24 16)" != "$(header_hex b.bf 24 16)" ]
}

@test "bfuniq: --key makes the state reproducible byte for byte" {
	make_input
	uniq_ -f a.bf in.txt >/dev/null
	bfuniq --key="$KEY" -f b.bf in.txt >/dev/null
	cmp a.bf b.bf
	expect_eq "key in the state" "$KEY" "$(header_hex a.bf 24 16)"
}

# ---------------------------------------------------------------- -d

@test "bfuniq: -d prints every repeated occurrence, in order (as awk 'seen[\$0]++')" {
	make_input
	run --separate-stderr uniq_ -d in.txt
	expect_status 0
	expect_stderr ""
	expect_output $'banana\napple\nbanana\ncherry'
	expect_eq "awk" "$output" "$(awk 'seen[$0]++' in.txt)"
}

@test "bfuniq: --repeated is the long form of -d; no repeats print nothing, exit 0" {
	make_input
	run --separate-stderr uniq_ --repeated in.txt
	expect_output $'banana\napple\nbanana\ncherry'
	put_lines distinct.txt a b c
	run --separate-stderr uniq_ --repeated distinct.txt
	expect_status 0
	expect_output ""
}

@test "bfuniq: -d with -f prints the lines seen in an earlier run" {
	put_lines old.txt a b
	put_lines new.txt c a d b c
	uniq_ -f state.bf old.txt >/dev/null
	run --separate-stderr bfuniq -d -f state.bf new.txt
	expect_status 0
	expect_output $'a\nb\nc'
}

@test "bfuniq: -d --once prints each repeated key once, at its second sighting (uniq -d's question)" {
	# issue 37: -d printed every repeat. The answer is awk 'c[$0]++ == 1':
	# 40,000 keys at the default rate 1e-6 in both filters (seen and
	# printed) expect 0.04 errors; the fixed key makes the outcome certain,
	# and it is the same on one thread or four (a file over 512 KiB, read
	# in ranges)
	awk 'BEGIN { for (i = 0; i < 100000; i++) print "k" (i * 7919 % 40000) (i % 3 == 0 ? "x" i : "") }' >in.txt
	awk 'c[$0]++ == 1' in.txt >want.txt
	for j in 1 4; do
		uniq_ -j "$j" -d --once in.txt >"got$j.txt"
		cmp want.txt "got$j.txt"
	done
	# -i folds the keys of both filters alike: A repeats a
	put_lines case.txt a b A c a B
	run --separate-stderr uniq_ -d --once -i case.txt
	expect_status 0
	expect_output $'A\nB'
}

@test "bfuniq: --once without -d, or with a window, is refused" {
	run --separate-stderr bfuniq --once </dev/null
	expect_usage_error bfuniq "--once needs -d: it prints each repeated key once"
	run --separate-stderr bfuniq -d --once --window 10m </dev/null
	expect_usage_error bfuniq "--once cannot be used with --window: a key repeats again once forgotten"
	put_lines in.txt a
	uniq_ --window 100keys -f w.bf in.txt >/dev/null
	run --separate-stderr bfuniq -d --once -f w.bf in.txt
	expect_fail "bfuniq: w.bf: --once cannot be used with a windowed state"
}

# ---------------------------------------------------------------- fields, case, NUL

@test "bfuniq: -k N keeps the first line per value of field N, printing the whole line" {
	put_lines in.txt "1 alice x" "2 bob y" "3 alice z" "4  bob" "5 carol"
	run --separate-stderr uniq_ -k 2 in.txt
	expect_status 0
	expect_output $'1 alice x\n2 bob y\n5 carol'
	run --separate-stderr uniq_ --field=2 in.txt
	expect_output $'1 alice x\n2 bob y\n5 carol'
	run --separate-stderr uniq_ --field 2 -d in.txt
	expect_output $'3 alice z\n4  bob'
}

@test "bfuniq: -k splits at runs of blanks and skips leading blanks" {
	printf '  x \t alice  1\nalice x\n\talice\ny alice 2\n' >in.txt
	uniq_ -k 2 in.txt >out.txt
	expect_file out.txt '  x \t alice  1\nalice x\n'
}

@test "bfuniq: -t C -k N keys on a CSV column; an empty field is a key" {
	put_lines in.csv "1,alice,x" "2,bob,y" "3,alice,z" "4,,w" "5,,v" "6,bob"
	run --separate-stderr uniq_ -t , -k 2 in.csv
	expect_status 0
	expect_output $'1,alice,x\n2,bob,y\n4,,w'
	run --separate-stderr uniq_ --separator=, --field=2 in.csv
	expect_output $'1,alice,x\n2,bob,y\n4,,w'
	run --separate-stderr uniq_ --separator , --field 2 in.csv
	expect_output $'1,alice,x\n2,bob,y\n4,,w'
}

@test "bfuniq: -t '\\t' splits at tabs only, blanks being data" {
	printf '1\ta b\n2\ta\n3\ta b\n4\ta\tc\n' >in.tsv
	uniq_ -t '\t' -k 2 in.tsv >out.txt
	expect_file out.txt '1\ta b\n2\ta\n'
	uniq_ -t "$(printf '\t')" -k 2 in.tsv >out.txt
	expect_file out.txt '1\ta b\n2\ta\n'
}

@test "bfuniq: a line without field N has no key: never written, not counted as a repeat" {
	put_lines in.txt "1 alice" "alice" "" "2 alice" "3 bob" "bob"
	run --separate-stderr uniq_ -k 2 in.txt
	expect_status 0
	expect_output $'1 alice\n3 bob'
	# nor printed by -d: it is not a repeat either
	run --separate-stderr uniq_ -d -k 2 in.txt
	expect_output "2 alice"
	run --separate-stderr uniq_ -v -k 2 in.txt
	expect_eq "-v first line" "bfuniq: lines read: 6 (first seen 2, repeats 1, without a key 3); written: 2" "${stderr%%$'\n'*}"
	put_lines in.csv "a,x" "x" "b,x" "c,"
	run --separate-stderr uniq_ -t , -k 2 in.csv
	expect_output $'a,x\nc,'
}

@test "bfuniq: -i folds ASCII case: the first spelling is the one written" {
	put_lines in.txt Alice ALICE bob alice Bob BOB carol
	run --separate-stderr uniq_ -i in.txt
	expect_status 0
	expect_output $'Alice\nbob\ncarol'
	run --separate-stderr uniq_ --ignore-case -d in.txt
	expect_output $'ALICE\nalice\nBob\nBOB'
	run --separate-stderr uniq_ in.txt
	expect_output $'Alice\nALICE\nbob\nalice\nBob\nBOB\ncarol'
}

@test "bfuniq: -i folds ASCII only: bytes above 127 are compared as they are" {
	printf '\303\251\n\303\211\nE\ne\n' >in.txt
	uniq_ -i in.txt >out.txt
	expect_file out.txt '\303\251\n\303\211\nE\n'
}

@test "bfuniq: -i with -k folds the key field only, and prints the line unchanged" {
	put_lines in.txt "1 Alice" "2 ALICE" "3 bob"
	run --separate-stderr uniq_ -i -k 2 in.txt
	expect_output $'1 Alice\n3 bob'
}

@test "bfuniq: -z reads and writes NUL-terminated records; newlines are data" {
	printf 'a\0line\ntwo\0a\0b\0line\ntwo\0b' >in.bin
	uniq_ -z in.bin >out.bin
	expect_file out.bin 'a\0line\ntwo\0b\0'
	uniq_ --null-data -d in.bin >out.bin
	expect_file out.bin 'a\0line\ntwo\0b\0'
}

@test "bfuniq: -z with -k keys on a field of each NUL record" {
	printf '1 x\0002 y\0003 x\0' >in.bin
	uniq_ -z -k 2 in.bin >out.bin
	expect_file out.bin '1 x\0002 y\0'
}

# ---------------------------------------------------------------- -v

@test "bfuniq: -v reports lines read, written, repeats, keys, stages and expected losses" {
	make_input
	run --separate-stderr uniq_ -v in.txt
	expect_status 0
	expect_output $'banana\napple\ncherry\ndate'
	local -a report
	mapfile -t report <<<"$stderr"
	expect_eq "report lines" 3 "${#report[@]}"
	expect_eq "line 1" "bfuniq: lines read: 8 (first seen 4, repeats 4, without a key 0); written: 4" "${report[0]}"
	[[ ${report[1]} =~ ^"bfuniq: 4 new distinct keys, about 4 distinct keys in the filter (1 stage, "[0-9.]+" "(B|kB|MB)")"$ ]] ||
		expect_eq "line 2" "bfuniq: 4 new distinct keys, about 4 distinct keys in the filter (1 stage, SIZE)" "${report[1]}"
	expect_eq "line 3" "bfuniq: expected distinct lines lost to false positives: 0 (target rate 1e-06)" "${report[2]}"
}

@test "bfuniq: --verbose is the long form of -v; with -d 'written' counts the repeats printed" {
	make_input
	run --separate-stderr uniq_ --verbose -d -p 1e-3 in.txt
	expect_status 0
	expect_output $'banana\napple\nbanana\ncherry'
	expect_eq "line 1" "bfuniq: lines read: 8 (first seen 4, repeats 4, without a key 0); written: 4" "${stderr%%$'\n'*}"
	case $stderr in
	*"expected distinct lines lost to false positives: "*" (target rate 0.001)") ;;
	*) expect_eq "last line" "... (target rate 0.001)" "$stderr" ;;
	esac
}

@test "bfuniq: -v with -f counts only this run's new keys, and the state's keys too" {
	seq 1 100 >old.txt
	seq 51 150 >new.txt
	uniq_ -f state.bf old.txt >/dev/null
	run --separate-stderr bfuniq -v -f state.bf new.txt
	expect_status 0
	expect_eq "lines written" 50 "${#lines[@]}"
	local -a report
	mapfile -t report <<<"$stderr"
	expect_eq "line 1" "bfuniq: lines read: 100 (first seen 50, repeats 50, without a key 0); written: 50" "${report[0]}"
	[[ ${report[1]} =~ ^"bfuniq: 50 new distinct keys, about 1"(49|50|51)" distinct keys in the filter (1 stage, " ]] ||
		expect_eq "line 2" "bfuniq: 50 new distinct keys, about 150 distinct keys in the filter (1 stage, ...)" "${report[1]}"
}

# ---------------------------------------------------------------- proofs against awk

# With P = 1e-4: bfuniq at P loses each first-seen line with probability at
# most P, so with D distinct lines the expected loss is at most D*P and
# loss_bound D P is mu + 6 sqrt(mu) + 6 (mu = D*P).
@test "bfuniq: on the words of the common licences it writes awk '!seen[\$0]++' less at most the false positives" {
	cat /usr/share/common-licenses/* | tr -cs 'A-Za-z' '\n' >words.txt
	# heavy repetition: tens of thousands of words, a few thousand distinct
	[ "$(count words.txt)" -ge 20000 ]
	[ "$(sort -u words.txt | wc -l)" -le "$(($(count words.txt) / 5))" ]
	# D is about 2600: mu <= 0.26, bound 0.26 + 6 * 0.51 + 6 = 9
	uniq_ -p 1e-4 words.txt >ours.txt
	expect_awk_first_seen words.txt ours.txt 1e-4
	uniq_ -n 5000 -p 1e-4 --layout classic words.txt >ours.txt
	expect_awk_first_seen words.txt ours.txt 1e-4
}

@test "bfuniq: on a generated stream (200000 lines, 5000 distinct) it matches awk within the bound" {
	seq 1 200000 | awk '{ print $1 % 5000 }' >gen.txt
	# D = 5000: mu <= 0.5, bound 0.5 + 6 * 0.71 + 6 = 10
	uniq_ -p 1e-4 gen.txt >ours.txt
	expect_awk_first_seen gen.txt ours.txt 1e-4
	# a fixed filter sized for D holds the same rate
	uniq_ -n 5000 -p 1e-4 gen.txt >ours.txt
	expect_awk_first_seen gen.txt ours.txt 1e-4
	# at 1%: mu <= 50, bound 50 + 6 * 7.07 + 6 = 98
	uniq_ -n 5000 -p 0.01 gen.txt >ours.txt
	expect_awk_first_seen gen.txt ours.txt 0.01
}

# -d versus awk 'seen[$0]++'. A line is written by -d when its key tests
# present in the filter, by default when it tests absent; every line with a
# key is one or the other, so the two outputs partition the input. Bits are
# only ever set, so a key that tests present once tests present for the
# rest of the run. For each key, either
#   (a) its first occurrence tests absent: it is written by default, and
#       every later occurrence tests present (no false negatives) and is
#       printed by -d - exactly what awk does; or
#   (b) its first occurrence is a false positive: it is lost by default,
#       and every occurrence, the first included, is printed by -d.
# The filter evolves identically in both modes (same key, same input), so
# -d's output is awk's plus the first occurrence of each lost key, in
# place: awk's -d output is a subsequence of ours, and the extra lines are
# exactly the lines the default mode lost. At 5% with -n sized for D,
# losses are certain (mu is several dozen), so (b) is exercised.
@test "bfuniq: -d prints awk 'seen[\$0]++' plus exactly the first-seen lines lost as false positives" {
	seq 1 200000 | awk '{ print $1 % 5000 }' >gen.txt
	awk '!seen[$0]++' gen.txt | sort >awk-first.sorted
	awk 'seen[$0]++' gen.txt >awk-repeats.txt
	uniq_ -n 5000 -p 0.05 gen.txt >first.txt
	uniq_ -n 5000 -p 0.05 -d gen.txt >repeats.txt
	# the two modes partition the input
	expect_eq "first + repeats" "$(count gen.txt)" $(($(count first.txt) + $(count repeats.txt)))
	is_subsequence awk-repeats.txt repeats.txt
	sort first.txt >first.sorted
	comm -23 awk-first.sorted first.sorted >lost.txt
	sort awk-repeats.txt >awk-repeats.sorted
	sort repeats.txt | comm -13 awk-repeats.sorted - >extra.txt
	cmp lost.txt extra.txt
	# D = 5000 at 5%: mu <= 250, bound 250 + 6 * 15.8 + 6 = 350; and some loss
	[ "$(count lost.txt)" -ge 1 ]
	[ "$(count lost.txt)" -le "$(loss_bound 5000 0.05)" ]
	# and with the default rate, on real text, -d is awk exactly
	cat /usr/share/common-licenses/* | tr -cs 'A-Za-z' '\n' >words.txt
	uniq_ -d words.txt >repeats.txt
	awk 'seen[$0]++' words.txt >awk-repeats.txt
	cmp awk-repeats.txt repeats.txt
}

# ---------------------------------------------------------------- growing

# Without -n the filter grows: a first stage of 100000 keys, each further
# stage twice as large at half the rate. 1e7 distinct keys is 100 times
# the first stage and needs 7 stages: capacities sum to 1e5 (2^6 - 1) =
# 6.3e6 < 1e7 <= 1e5 (2^7 - 1) = 1.27e7. The compounded rate stays <= P =
# 1e-6, so at most 1e7 * 1e-6 = 10 lines are expected lost; the bound is
# 10 + 6 sqrt(10) + 6 = 35.
@test "bfuniq: growing mode keeps its rate over 100 times its first stage (1e7 distinct keys, 7 stages)" {
	local written
	written=$(seq 1 10000000 | uniq_ -v 2>report.txt | wc -l | tr -d ' ')
	[ "$written" -ge $((10000000 - $(loss_bound 10000000 1e-6))) ] ||
		expect_eq "lines written (at least)" $((10000000 - 35)) "$written"
	expect_eq "report line 1" "bfuniq: lines read: 10000000 (first seen $written, repeats $((10000000 - written)), without a key 0); written: $written" \
		"$(sed -n 1p report.txt)"
	case $(sed -n 2p report.txt) in
	"bfuniq: $written new distinct keys, about "*" distinct keys in the filter (7 stages, "*")") ;;
	*) expect_eq "report line 2" "... (7 stages, ...)" "$(sed -n 2p report.txt)" ;;
	esac
}

@test "bfuniq: a growing filter adds a stage past 100000 keys; -n keeps one" {
	seq 1 100001 >in.txt
	uniq_ -v in.txt 2>report.txt >/dev/null
	grep -q ' distinct keys in the filter (2 stages, ' report.txt
	uniq_ -v -n 100001 in.txt 2>report.txt >/dev/null
	grep -q ' distinct keys in the filter (1 stage, ' report.txt
}

# ---------------------------------------------------------------- capacity

@test "bfuniq: the over-capacity warning is the same from a pipe, a file and any thread count" {
	# issue 38: from a pipe the count was where a read happened to end
	seq 1 200000 >in.txt
	local want="bfuniq: warning: filter over capacity: line 100001 brought distinct key 100001, capacity 100000: from there the false-positive rate exceeds target 1e-06 and is rising"
	run --separate-stderr uniq_ -n 100000 in.txt
	expect_stderr "$want"
	local j
	for j in 1 2 3; do
		run --separate-stderr bash -c 'seq 1 200000 | bfuniq --key "$1" -j "$2" -n 100000 >/dev/null' _ "$KEY" "$j"
		expect_status 0
		expect_stderr "$want"
		# a pipe written in small pieces, so its reads end elsewhere
		run --separate-stderr bash -c 'seq 1 200000 | dd bs=3001 2>/dev/null | bfuniq --key "$1" -j "$2" -n 100000 >/dev/null' _ "$KEY" "$j"
		expect_stderr "$want"
	done
	# a state already holding keys counts on from them: 100 before, at line 99901
	seq 1 100 | uniq_ -n 100000 -f st.bf >/dev/null
	run --separate-stderr bash -c 'seq 1 200000 | bfuniq --key "$1" -n 100000 -f st.bf >/dev/null' _ "$KEY"
	expect_stderr "bfuniq: warning: filter over capacity: line 100001 brought distinct key 100001, capacity 100000: from there the false-positive rate exceeds target 1e-06 and is rising"
}

@test "bfuniq: past -n distinct keys it warns once with the rate reached, and keeps going" {
	seq 1 5000 >in.txt
	# three copies: several batches past capacity, still one warning
	run --separate-stderr uniq_ -n 1000 in.txt in.txt in.txt
	expect_status 0
	expect_stderr "bfuniq: warning: filter over capacity: line 1001 brought distinct key 1001, capacity 1000: from there the false-positive rate exceeds target 1e-06 and is rising"
	printf '%s\n' "$output" >out.txt
	# the first 1000 keys fit: at 1e-6 none is lost (fixed key)
	head -n 1000 out.txt | cmp - <(seq 1 1000)
	# output goes on past the first 4096-line batch, in input order, no repeats
	[ "$(awk '$1 > 4096' out.txt | wc -l)" -ge 1 ]
	is_subsequence out.txt in.txt
	expect_no_duplicates out.txt
}

@test "bfuniq: no warning at or below capacity, nor in growing mode" {
	seq 1 1000 >in.txt
	run --separate-stderr uniq_ -n 1000 in.txt
	expect_stderr ""
	expect_eq "lines" 1000 "${#lines[@]}"
	seq 1 150000 >big.txt
	run --separate-stderr uniq_ big.txt
	expect_status 0
	expect_stderr ""
}

# ---------------------------------------------------------------- state

@test "bfuniq: -f STATE: a second run of the same input writes nothing" {
	make_input
	run --separate-stderr uniq_ -f state.bf in.txt
	expect_status 0
	expect_output $'banana\napple\ncherry\ndate'
	[ -f state.bf ]
	run --separate-stderr bfuniq -f state.bf in.txt
	expect_status 0
	expect_stderr ""
	expect_output ""
}

@test "bfuniq: --state=STATE: a run with new and old lines writes only the new, once" {
	make_input
	uniq_ --state=state.bf in.txt >/dev/null
	put_lines more.txt apple elder cherry fig elder banana
	run --separate-stderr bfuniq --state state.bf more.txt
	expect_status 0
	expect_output $'elder\nfig'
	run --separate-stderr bfuniq --state state.bf more.txt in.txt
	expect_output ""
}

@test "bfuniq: -f STATE works across runs of a growing filter past its first stage" {
	seq 1 150000 >a.txt
	seq 100001 400000 >b.txt
	uniq_ -f state.bf a.txt >/dev/null
	expect_eq "stages after run 1" 2 "$(header_uint state.bf 16 4)"
	uniq_ -f state.bf b.txt >out.txt
	# 250000 new keys at 1e-6: mu <= 0.25, bound 0.25 + 6 * 0.5 + 6 = 9
	awk '$1 > 150000' b.txt >new.txt
	expect_no_duplicates out.txt
	is_subsequence out.txt new.txt
	[ "$(count out.txt)" -ge $((250000 - $(loss_bound 250000 1e-6))) ]
	expect_eq "stages after run 2" 3 "$(header_uint state.bf 16 4)"
	run --separate-stderr bfuniq -f state.bf a.txt b.txt
	expect_output ""
}

@test "bfuniq: a new STATE takes -n, -p, --layout and --key" {
	make_input
	uniq_ -n 5000 -p 1e-3 --layout classic -f state.bf in.txt >/dev/null
	expect_eq capacity 5000 "$(header_uint state.bf 40 8)"
	# 1e-3 as IEEE-754 binary64, little-endian
	expect_eq rate fca9f1d24d62503f "$(header_hex state.bf 48 8)"
	expect_eq "stages" 1 "$(header_uint state.bf 16 4)"
	expect_eq "layout (2 = classic)" 2 "$(header_uint state.bf 64 1)"
	expect_eq key "$KEY" "$(header_hex state.bf 24 16)"
}

@test "bfuniq: a new STATE without -n is a growing filter of first stage 100000 at rate P" {
	make_input
	uniq_ -f state.bf in.txt >/dev/null
	expect_eq "first stage capacity" 100000 "$(header_uint state.bf 40 8)"
	# 1e-6 as IEEE-754 binary64, little-endian
	expect_eq "rate" 8dedb5a0f7c6b03e "$(header_hex state.bf 48 8)"
	expect_eq "stages" 1 "$(header_uint state.bf 16 4)"
}

@test "bfuniq: an existing STATE keeps its own shape: -n, -p, --layout and --key that differ are refused, the same ones taken" {
	make_input
	uniq_ -n 5000 -p 1e-3 -f state.bf in.txt >/dev/null
	cp state.bf before.bf
	put_lines more.txt apple fig
	# each option that differs from the state cannot apply: one line, exit 2, the state untouched
	for opt in "-n 99:-n 99 cannot apply: the state's capacity is 5000" \
		"-p 0.5:-p 0.5 cannot apply: the state's rate is 0.001" \
		"--layout classic:--layout classic cannot apply: the state's layout is blocked" \
		"--key ffffffffffffffffffffffffffffffff:--key cannot apply: the state has another key"; do
		run --separate-stderr bfuniq ${opt%%:*} -f state.bf more.txt
		expect_fail "bfuniq: state.bf: ${opt#*:}"
		cmp before.bf state.bf
	done
	# the issue's command line: the first option that differs is named
	run --separate-stderr bfuniq -f state.bf -p 0.1 --layout classic -n 10 more.txt
	expect_fail "bfuniq: state.bf: -n 10 cannot apply: the state's capacity is 5000"
	# the command that made the state, run again, goes on with it
	run --separate-stderr bfuniq -n 5000 -p 1e-3 --layout blocked --key "$KEY" -f state.bf more.txt
	expect_status 0
	expect_stderr ""
	expect_output fig
	expect_eq capacity 5000 "$(header_uint state.bf 40 8)"
	expect_eq rate fca9f1d24d62503f "$(header_hex state.bf 48 8)"
	expect_eq "layout (1 = blocked)" 1 "$(header_uint state.bf 64 1)"
	expect_eq key "$KEY" "$(header_hex state.bf 24 16)"
}

@test "bfuniq: -n cannot apply to a growing STATE nor -p to a windowed one that differs, and says why" {
	make_input
	uniq_ -f grow.bf in.txt >/dev/null
	run --separate-stderr bfuniq -n 1000 -f grow.bf in.txt
	expect_fail "bfuniq: grow.bf: -n 1000 cannot apply: the state grows (it was made without -n)"
	uniq_ --window 10m -p 1e-4 --now 1000 -f win.bf in.txt >/dev/null
	run --separate-stderr bfuniq -p 1e-2 --now 1000 -f win.bf in.txt
	expect_fail "bfuniq: win.bf: -p 0.01 cannot apply: the state's rate is 0.0001"
	run --separate-stderr bfuniq -p 1e-4 --now 1000 -f win.bf in.txt
	expect_status 0
	expect_stderr ""
	expect_output ""
}

@test "bfuniq: a filter built by bfbuild is a STATE: its keys count as seen" {
	put_lines known.txt alice bob
	build known.bf -n 100 known.txt
	put_lines in.txt alice carol bob dave carol
	run --separate-stderr bfuniq -f known.bf in.txt
	expect_status 0
	expect_output $'carol\ndave'
	# and bfgrep reads the state bfuniq saved
	run --separate-stderr bfgrep -c -f known.bf in.txt
	expect_output 5
}

@test "bfuniq: a growing STATE of several stages can be searched with bfgrep" {
	seq 1 150000 >in.txt
	uniq_ -f state.bf in.txt >/dev/null
	printf '1\n150000\n150001\nx\n' >probe.txt
	run --separate-stderr bfgrep -f state.bf probe.txt
	expect_status 0
	expect_output $'1\n150000'
}

@test "bfuniq: a STATE built with -i keeps folding without -i" {
	put_lines a.txt Alice
	uniq_ -i -f state.bf a.txt >/dev/null
	put_lines b.txt ALICE alice Bob bob
	run --separate-stderr bfuniq -f state.bf b.txt
	expect_status 0
	expect_output Bob
}

@test "bfuniq: -i with a STATE built without -i is an error, and the STATE is untouched" {
	put_lines a.txt Alice
	uniq_ -f state.bf a.txt >/dev/null
	cp state.bf before.bf
	run --separate-stderr bfuniq -i -f state.bf a.txt
	expect_fail "bfuniq: state.bf: state was built without -i; its keys are case-sensitive"
	cmp before.bf state.bf
}

@test "bfuniq: a STATE that is not a filter is an error naming it, before any output, untouched" {
	make_input
	put_lines notes.txt "these are notes, not a filter"
	cp notes.txt before.txt
	run --separate-stderr bfuniq -f notes.txt in.txt
	expect_one_line_error "bfuniq: notes.txt: not a bftools filter"
	cmp before.txt notes.txt
	seq 1 2000 | gzip -c >wrong.bf
	run --separate-stderr bfuniq -f wrong.bf in.txt
	expect_fail "bfuniq: wrong.bf: not a bftools filter (bad magic)"
	: >empty.bf
	run --separate-stderr bfuniq -f empty.bf in.txt
	expect_one_line_error "bfuniq: empty.bf: "
	[ ! -s empty.bf ]
}

@test "bfuniq: a truncated STATE is an error, and is left as it was" {
	make_input
	uniq_ -f state.bf in.txt >/dev/null
	head -c $(($(wc -c <state.bf) - 1)) state.bf >short.bf
	cp short.bf before.bf
	run --separate-stderr bfuniq -f short.bf in.txt
	expect_one_line_error "bfuniq: short.bf: "
	cmp before.bf short.bf
}

@test "bfuniq: a directory as STATE is an error naming it" {
	make_input
	mkdir dir.bf
	run --separate-stderr bfuniq -f dir.bf in.txt
	expect_fail "bfuniq: dir.bf: Is a directory"
}

@test "bfuniq: STATE is replaced by rename: no temp files left, a hard link keeps the old one" {
	make_input
	uniq_ -f state.bf in.txt >/dev/null
	ln state.bf old-link.bf
	cp state.bf before.bf
	put_lines more.txt fig grape
	uniq_ -f state.bf more.txt >/dev/null
	# the old inode still holds the old state in full; the name has the new
	cmp before.bf old-link.bf
	if cmp -s before.bf state.bf; then
		echo "state.bf was not replaced" >&2
		return 1
	fi
	# the lock file (bfuniq(1), CONCURRENCY) stays; no temp file does
	expect_eq "files" "$(printf '%s\n' .state.bf.lock before.bf in.txt more.txt old-link.bf state.bf)" "$(ls -A)"
	run --separate-stderr bfuniq -f old-link.bf more.txt
	expect_output $'fig\ngrape'
	run --separate-stderr bfuniq -f state.bf more.txt
	expect_output ""
}

@test "bfuniq: a write error leaves the old STATE intact (the lines were not delivered)" {
	make_input
	uniq_ -f state.bf in.txt >/dev/null
	cp state.bf before.bf
	put_lines more.txt fig grape
	run --separate-stderr bash -c 'bfuniq -f state.bf more.txt >/dev/full'
	expect_fail "bfuniq: write error: No space left on device (state.bf not saved: it holds what it held before this run)"
	cmp before.bf state.bf
	expect_eq "files" "$(printf '%s\n' .state.bf.lock before.bf in.txt more.txt state.bf)" "$(ls -A)"
	# so the next run delivers them
	run --separate-stderr bfuniq -f state.bf more.txt
	expect_output $'fig\ngrape'
}

# A missing FILE contributed no lines and no keys, so a STATE holding the
# keys of the lines that were written is exactly right: the next run will
# write that FILE's lines when it can be read, and will not repeat the
# lines already written. (bfbuild, whose filter must hold every key,
# refuses to write one instead.)
@test "bfuniq: a missing FILE: the others are processed and saved to STATE, exit 2" {
	make_input
	run --separate-stderr uniq_ -f state.bf missing.txt in.txt
	expect_status 2
	expect_stderr "bfuniq: missing.txt: No such file or directory"
	expect_output $'banana\napple\ncherry\ndate'
	run --separate-stderr bfuniq -f state.bf in.txt
	expect_status 0
	expect_output ""
}

@test "bfuniq: a STATE that could not be saved is refused before any input is read" {
	make_input
	run --separate-stderr uniq_ -f nodir/state.bf in.txt
	expect_fail "bfuniq: nodir/state.bf: cannot write here: No such file or directory"
	[ ! -e nodir ]
}

# ---------------------------------------------------------------- line-buffered

@test "bfuniq: --line-buffered gives output identical to the default" {
	seq 1 20000 | awk '{ print $1 % 3000 }' >in.txt
	uniq_ in.txt >plain.txt
	uniq_ --line-buffered in.txt >lb.txt
	cmp plain.txt lb.txt
	expect_eq lines 3000 "$(count lb.txt)"
}

@test "bfuniq: --line-buffered writes each first-seen line before the input ends" {
	mkfifo in.fifo out.fifo
	# fd 3 belongs to bats: the background job must not hold it
	uniq_ --line-buffered <in.fifo >out.fifo 3>&- &
	local pid=$! first="" second=""
	exec 7>in.fifo 8<out.fifo
	printf 'a\na\nb\n' >&7
	# the writer is still open: the lines can only arrive if bfuniq flushed
	# them; the timeouts only turn a hang into a failure
	read -r -t 60 first <&8 || true
	read -r -t 60 second <&8 || true
	exec 7>&-
	wait "$pid" || true
	exec 8<&-
	expect_eq "lines, input still open" $'a\nb' "$first"$'\n'"$second"
}

@test "bfuniq: --line-buffered -d writes each repeat before the input ends" {
	mkfifo in.fifo out.fifo
	uniq_ --line-buffered -d <in.fifo >out.fifo 3>&- &
	local pid=$! line=""
	exec 7>in.fifo 8<out.fifo
	printf 'a\nb\na\n' >&7
	read -r -t 60 line <&8 || true
	exec 7>&-
	wait "$pid" || true
	exec 8<&-
	expect_eq "first line, input still open" a "$line"
}

# ---------------------------------------------------------------- trouble

@test "bfuniq: a missing FILE is reported, the others are processed, and the exit is 2" {
	make_input
	put_lines more.txt apple fig
	run --separate-stderr uniq_ in.txt missing.txt more.txt
	expect_status 2
	expect_stderr "bfuniq: missing.txt: No such file or directory"
	expect_output $'banana\napple\ncherry\ndate\nfig'
}

@test "bfuniq: a directory as FILE is reported, the others are processed, and the exit is 2" {
	make_input
	mkdir dir
	run --separate-stderr uniq_ dir in.txt
	expect_status 2
	expect_stderr "bfuniq: dir: Is a directory"
	expect_output $'banana\napple\ncherry\ndate'
}

@test "bfuniq: writing to a full disk is a write error, exit 2" {
	make_input
	run --separate-stderr bash -c 'bfuniq in.txt >/dev/full'
	expect_fail "bfuniq: write error: No space left on device"
}

@test "bfuniq: many lines to a full disk are one write error, exit 2" {
	seq 1 100000 >in.txt
	run --separate-stderr bash -c 'bfuniq in.txt >/dev/full'
	expect_fail "bfuniq: write error: No space left on device"
}

@test "bfuniq: --line-buffered, -d and -v to a full disk are a write error, exit 2" {
	make_input
	run --separate-stderr bash -c 'bfuniq --line-buffered in.txt >/dev/full'
	expect_fail "bfuniq: write error: No space left on device"
	run --separate-stderr bash -c 'bfuniq -d in.txt >/dev/full'
	expect_fail "bfuniq: write error: No space left on device"
	run --separate-stderr bash -c 'bfuniq -v in.txt >/dev/full'
	expect_fail "bfuniq: write error: No space left on device"
}

@test "bfuniq: -d with no repeats to a full disk writes nothing and exits 0" {
	put_lines in.txt a b c
	run --separate-stderr bash -c 'bfuniq -d in.txt >/dev/full'
	expect_status 0
	expect_stderr ""
}

@test "bfuniq(1): FILES says what SIGNALS and EXIT STATUS say: SIGINT, SIGTERM and SIGHUP save the state" {
	# issue 38: FILES said a state is not saved when bfuniq is killed by them
	local files
	files=$(sed -n '/^\.SH FILES/,/^\.SH CONCURRENCY/p' "$BATS_TEST_DIRNAME/../man/bfuniq.1" | tr '\n' ' ')
	case $files in
	*"killed (SIGINT"* | *"killed (SIGTERM"*) expect_eq "FILES" "saved on SIGINT, SIGTERM, SIGHUP" "not saved when killed by them" ;;
	esac
	[[ $files == *"also saved when \%bfuniq is stopped by SIGINT, SIGTERM or SIGHUP"* ]] ||
		expect_eq "FILES" "...also saved when bfuniq is stopped by SIGINT, SIGTERM or SIGHUP..." "$files"
	# and what SIGNALS says, the programs do (signals.bats): exit 143, state saved
	put_lines in.txt alice
	mkfifo in.fifo
	env --default-signal=TERM bfuniq --key "$KEY" -f state.bf --line-buffered in.txt - <in.fifo >out.txt 3>&- &
	local pid=$!
	exec 7>in.fifo
	local i
	for i in $(seq 300); do grep -qx alice out.txt && break; sleep 0.1; done
	kill -s TERM "$pid"
	local st=0
	wait "$pid" || st=$?
	exec 7>&-
	expect_eq "exit status" 143 "$st"
	expect_eq "alice saved" 1 "$(bfgrep -c -f state.bf in.txt)"
}

@test "bfuniq and bfbuild --report=json: the -v report as one JSON object on stderr" {
	# issue 37
	printf 'a\nb\na\n\n' >in.txt
	run --separate-stderr bfuniq --key "$KEY" -k 1 --report=json in.txt
	expect_status 0
	expect_output $'a\nb'
	case $stderr in '{"lines":4,"first_seen":2,"repeats":1,"keyless":1,"written":2,"new_keys":2,"estimated_keys":2,"stages":1,'*'"expected_lost":0,"target_rate":1e-06}') ;;
	*) expect_eq "bfuniq report" '{"lines":4,"first_seen":2,...}' "$stderr" ;; esac
	run --separate-stderr bfbuild --key "$KEY" -n 1000 -p 0.01 -k 1 --report=json -o f.bf in.txt
	expect_status 0
	case $stderr in '{"lines":4,"keys_added":3,"not_in_filter":0,"keyless":1,"estimated_keys":2,"capacity":1000,'*'"target_rate":0.01}') ;;
	*) expect_eq "bfbuild report" '{"lines":4,"keys_added":3,...}' "$stderr" ;; esac
}
