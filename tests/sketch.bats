#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# sketch.bats - HyperLogLog sketch files end to end (bfcount(1) -o, -s,
# --add; the format in bf(5)): a week of daily sketches counted together,
# and in-place updates, equal byte for byte to the sketch of everything
# counted at once; keys, precisions and normalisation that must agree;
# damaged files, filters and sketches mixed up, usage errors.
#
# Counts use bfcount's default key (public and fixed) or the fixed key of
# helpers.bash, so every sketch is the same bytes on every run. The one
# probabilistic bound is 3 standard errors, its arithmetic in a comment.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	for prog in bfbuild bfcount bfmerge bfinfo; do
		if [ ! -x "$BFTOOLS_BIN/$prog" ]; then
			echo "$BFTOOLS_BIN/$prog is missing: build it (make) or set BFTOOLS_BIN" >&2
			return 1
		fi
	done
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
}

# days FROM PER OVERLAP: day1.txt .. day7.txt, day d holding the numbers
# FROM + (d-1)*PER up to PER + OVERLAP of them (each day shares OVERLAP
# keys with the next), and week.txt all seven days one after the other.
days() {
	local d
	for d in 1 2 3 4 5 6 7; do
		seq $(($1 + (d - 1) * $2)) $(($1 + d * $2 + $3 - 1)) >"day$d.txt"
	done
	cat day1.txt day2.txt day3.txt day4.txt day5.txt day6.txt day7.txt >week.txt
}

# expect_same_file A B: the two files hold the same bytes.
expect_same_file() {
	cmp "$1" "$2" >/dev/null && return 0
	echo "$1 and $2 differ" >&2
	cmp "$1" "$2" >&2
	return 1
}

# ---------------------------------------------------------------- bfcount -o

@test "sketch: bfcount -o saves the sketch and prints the count it prints without -o" {
	seq 1 20000 >in.txt
	run --separate-stderr bfcount in.txt
	local plain=$output
	run --separate-stderr bfcount -o in.hll in.txt
	expect_status 0
	expect_stderr ""
	expect_output "$plain"
	gzip -t in.hll
	run --separate-stderr bfcount -s in.hll
	expect_status 0
	expect_output "$plain"
}

@test "sketch: the header: magic, version 1, length 64, HyperLogLog, precision 16, SipHash-1-3, the default key" {
	seq 1 20000 >in.txt
	bfcount -o in.hll in.txt >/dev/null
	expect_eq magic "89424653 0d0a1a0a" "$(header_hex in.hll 0 4) $(header_hex in.hll 4 4)"
	expect_eq "version, header length" "1 64" "$(header_uint in.hll 8 4) $(header_uint in.hll 12 4)"
	# kind 1, precision 16, hash 2 (SipHash-1-3-128), flags 0, phase 1 (registers), reserved
	expect_eq "bytes 16..23" "0110020001000000" "$(header_hex in.hll 16 8)"
	expect_eq key "$(printf bfcount-hll-key1 | od -A n -t x1 | tr -d ' \n')" "$(header_hex in.hll 24 16)"
	expect_eq "insertions, entries, payload" "20000 65536 65536" \
		"$(header_uint in.hll 40 8) $(header_uint in.hll 48 8) $(header_uint in.hll 56 8)"
	expect_eq "content length" 65600 "$(gzip -dc in.hll | wc -c | tr -d ' ')"
}

@test "sketch: a small count stays exact: its distinct hashes are saved, not registers" {
	seq 1 3000 >in.txt
	seq 1 1000 >>in.txt
	run --separate-stderr bfcount -v -o in.hll in.txt
	expect_output 3000
	# phase 0 (exact), 3000 hashes of 8 bytes; 4000 lines added
	expect_eq phase 0 "$(header_uint in.hll 20 1)"
	expect_eq "insertions, entries, payload" "4000 3000 24000" \
		"$(header_uint in.hll 40 8) $(header_uint in.hll 48 8) $(header_uint in.hll 56 8)"
	run --separate-stderr bfcount -v -s in.hll
	expect_status 0
	expect_output 3000
	expect_stderr "bfcount: exact count (below the HyperLogLog threshold)"
}

@test "sketch: an empty input saves an empty sketch that counts 0" {
	run --separate-stderr bfcount -o empty.hll </dev/null
	expect_output 0
	expect_eq "content length" 64 "$(gzip -dc empty.hll | wc -c | tr -d ' ')"
	run --separate-stderr bfcount -s empty.hll
	expect_output 0
}

# 10^6 distinct keys at precision 16: the relative standard error is
# 1.04 / sqrt(65536) = 0.40625%; 3 of them are 1.21875%, 12188 keys. The
# input is fixed, so the outcome is the same every run; the bound would
# hold for all but 0.3% of inputs.
@test "sketch: 1e6 keys saved and counted again are within 3 standard errors (12188)" {
	seq 1 1000000 | bfcount -o million.hll >/dev/null
	run --separate-stderr bfcount -s million.hll
	expect_status 0
	local got=$output
	[ "$got" -ge $((1000000 - 12188)) ] && [ "$got" -le $((1000000 + 12188)) ] ||
		expect_eq "estimate of 1e6 (+- 12188)" 1000000 "$got"
}

@test "sketch: -v says where the sketch went and how many keys it has taken in all" {
	seq 1 20000 >in.txt
	run --separate-stderr bfcount -v -o in.hll in.txt
	expect_status 0
	expect_eq "second stderr line" "bfcount: in.hll: sketch saved: precision 16, 20000 keys added in all" \
		"${stderr#*$'\n'}"
	case $stderr in "bfcount: HyperLogLog estimate: standard error 0.41% "*) ;;
	*) expect_eq "first stderr line" "bfcount: HyperLogLog estimate: standard error 0.41% ..." "$stderr" ;;
	esac
}

@test "sketch: --precision P makes 2^P registers; 4 and 18 are the limits" {
	seq 1 50000 >in.txt
	bfcount --precision 12 -o p12.hll in.txt >/dev/null
	expect_eq "precision, entries" "12 4096" "$(header_uint p12.hll 17 1) $(header_uint p12.hll 48 8)"
	run --separate-stderr bfcount -v --precision 4 in.txt
	expect_status 0
	case $stderr in *"standard error 26.00%"*) ;; *) expect_eq "p=4 error" "...26.00%..." "$stderr" ;; esac
	run --separate-stderr bfcount --precision 3 in.txt
	expect_usage_error bfcount "invalid precision '3': too small"
	run --separate-stderr bfcount --precision 19 in.txt
	expect_usage_error bfcount "invalid precision '19': too large"
}

@test "sketch: the example of bf(5): four lines, three distinct, give the bytes shown there" {
	run --separate-stderr bash -c "printf 'alice\nbob\ncarol\nbob\n' | bfcount -o users.hll"
	expect_output 3
	expect_eq content "$(printf '%s' \
		89424653 0d0a1a0a 01000000 40000000 01100200 00000000 \
		6266636f 756e742d 686c6c2d 6b657931 04000000 00000000 \
		03000000 00000000 18000000 00000000 \
		b83a6a3c 72867d2e df7fe1c3 db1f69ca fa2b4f79 0acacde3)" "$(header_hex users.hll 0 88)"
	expect_eq "content length" 88 "$(gzip -dc users.hll | wc -c | tr -d ' ')"
}

# ---------------------------------------------------------------- combining

@test "sketch: a week: seven daily sketches counted together with -s give the week counted whole" {
	days 1 20000 3000
	for d in 1 2 3 4 5 6 7; do
		bfcount -o "day$d.hll" "day$d.txt" >/dev/null
	done
	bfcount -o whole.hll week.txt >/dev/null
	run --separate-stderr bfcount -s day1.hll -s day2.hll -s day3.hll -s day4.hll -s day5.hll \
		-s day6.hll -s day7.hll -o week.hll
	expect_status 0
	expect_stderr ""
	expect_output "$(bfcount week.txt)"
	expect_same_file whole.hll week.hll
}

@test "sketch: bfcount -s A -s B FILE counts the union of the sketches and FILE" {
	seq 1 3000 >a.txt
	seq 2001 5000 >b.txt
	seq 4001 6000 >c.txt
	bfcount -o a.hll a.txt >/dev/null
	bfcount -o b.hll b.txt >/dev/null
	run --separate-stderr bfcount -s a.hll -s b.hll
	expect_output 5000
	run --separate-stderr bfcount -s a.hll -s b.hll c.txt
	expect_output 6000
	# with -s and no FILE, standard input is not read without --add
	run --separate-stderr bfcount -s a.hll <c.txt
	expect_output 3000
}

@test "sketch: -s SKETCH --add adds standard input and replaces the sketch, as if counted at once" {
	days 1 1000 0
	bfcount -o run.hll day1.txt >/dev/null
	for d in 2 3 4 5 6 7; do
		run --separate-stderr bfcount -s run.hll --add <"day$d.txt"
		expect_status 0
		expect_stderr ""
	done
	expect_output 7000
	bfcount -o whole.hll week.txt >/dev/null
	expect_same_file whole.hll run.hll
	# nothing left beside it: the temporary file was renamed over it
	expect_eq "directory" "$(printf '%s\n' day1.txt day2.txt day3.txt day4.txt day5.txt day6.txt day7.txt run.hll week.txt whole.hll)" \
		"$(ls -A)"
}

@test "sketch: --add with -o writes the result elsewhere and leaves the sketch as it was" {
	seq 1 100 >a.txt
	bfcount -o a.hll a.txt >/dev/null
	cp a.hll before.hll
	run --separate-stderr bfcount -s a.hll --add -o more.hll < <(seq 51 150)
	expect_output 150
	expect_same_file before.hll a.hll
	run --separate-stderr bfcount -s more.hll
	expect_output 150
	# FILEs name the input instead of standard input
	run --separate-stderr bfcount -s a.hll --add a.txt </dev/null
	expect_output 100
	expect_eq insertions 200 "$(header_uint a.hll 40 8)"
}

@test "sketch: --key HEX is stored in the sketch; sketches of one key combine" {
	seq 1 100 >a.txt
	seq 51 150 >b.txt
	bfcount --key "$KEY" -o a.hll a.txt >/dev/null
	bfcount --key "$KEY" -o b.hll b.txt >/dev/null
	expect_eq key "$KEY" "$(header_hex a.hll 24 16)"
	run --separate-stderr bfcount -s a.hll -s b.hll
	expect_output 150
	run --separate-stderr bfcount --key 0011 a.txt
	expect_any_usage_error bfcount
}

@test "sketch: -i is recorded; keys added to a folded sketch are folded; -i on a sketch made without it is refused" {
	printf '%s\n' Alice alice BOB >a.txt
	run --separate-stderr bfcount -i -o folded.hll a.txt
	expect_output 2
	expect_eq flags 1 "$(header_uint folded.hll 19 1)"
	run --separate-stderr bfcount -s folded.hll --add < <(printf '%s\n' bob CAROL)
	expect_output 3
	bfcount -o plain.hll a.txt >/dev/null
	run --separate-stderr bfcount -i -s plain.hll --add <a.txt
	expect_fail "bfcount: plain.hll: the sketch was made without -i: its keys are case-sensitive"
}

@test "sketch: bfcount -s - reads a sketch from standard input" {
	seq 1 100 >a.txt
	bfcount -o a.hll a.txt >/dev/null
	run --separate-stderr bfcount -s - <a.hll
	expect_status 0
	expect_output 100
	run --separate-stderr bfcount -s - < <(cat a.hll)
	expect_output 100
}

# ---------------------------------------------------------------- refusals

@test "sketch: bfcount usage errors: what --add, -s, --like, --key and -o cannot go with" {
	seq 1 10 >a.txt
	bfcount -o a.hll a.txt >/dev/null
	build f.bf -n 100 a.txt
	run --separate-stderr bfcount --add a.txt
	expect_usage_error bfcount "--add needs -s SKETCH, the sketch to add to"
	run --separate-stderr bfcount -s a.hll -s a.hll --add a.txt
	expect_usage_error bfcount "--add with several sketches needs -o FILE, where the result goes"
	run --separate-stderr bfcount -s a.hll --like a.hll
	expect_usage_error bfcount "--like cannot be used with -s: the sketches are the model"
	run --separate-stderr bfcount -s a.hll --key "$KEY"
	expect_usage_error bfcount "--key cannot be used with -s: the sketch's key and precision are fixed"
	run --separate-stderr bfcount --like a.hll --precision 12 a.txt
	expect_usage_error bfcount "--precision cannot be used with --like: the sketch's key and precision are fixed"
	run --separate-stderr bfcount --key "$KEY" --key-file k.key a.txt
	expect_usage_error bfcount "--key and --key-file cannot be used together"
	[ ! -e k.key ]
	run --separate-stderr bfcount -o - a.txt
	expect_usage_error bfcount "-o -: a sketch does not go to standard output, which carries the count"
	run --separate-stderr bfcount -f f.bf -o out.hll
	expect_usage_error bfcount "-o works on streams and sketches, not with filters (-f)"
	run --separate-stderr bfcount -s a.hll -f f.bf
	expect_usage_error bfcount "-s works on streams and sketches, not with filters (-f)"
	run --separate-stderr bfcount -s - -s - </dev/null
	expect_usage_error bfcount "standard input can be read only once"
	run --separate-stderr bfcount -s - --add -o out.hll </dev/null
	expect_usage_error bfcount "standard input cannot be both a sketch and the input"
	run --separate-stderr bfcount -s - --add a.txt </dev/null
	expect_usage_error bfcount "--add with -s - needs -o FILE, where the result goes"
	[ ! -e out.hll ]
}

@test "sketch: damaged sketches are refused in one line, exit 2; --add leaves the file as it was" {
	seq 1 50000 >a.txt
	bfcount -o good.hll a.txt >/dev/null
	head -c 100 good.hll >cut.hll
	cp cut.hll cut-before.hll
	run --separate-stderr bfcount -s cut.hll
	expect_fail "bfcount: cut.hll: truncated"
	run --separate-stderr bfcount -s cut.hll --add <a.txt
	expect_fail "bfcount: cut.hll: truncated"
	expect_same_file cut-before.hll cut.hll
	cat good.hll good.hll >two.hll
	run --separate-stderr bfcount -s two.hll
	expect_fail "bfcount: two.hll: trailing data after the sketch"
	printf 'hello\n' >text.hll
	run --separate-stderr bfcount -s text.hll
	expect_fail "bfcount: text.hll: not a bftools sketch (not gzip data)"
	gzip -c a.txt >gz.hll
	run --separate-stderr bfcount -s gz.hll
	expect_fail "bfcount: gz.hll: not a bftools sketch (bad magic)"
	: >empty.hll
	run --separate-stderr bfcount -s empty.hll
	expect_fail "bfcount: empty.hll: empty file"
	run --separate-stderr bfcount -s missing.hll
	expect_fail "bfcount: missing.hll: No such file or directory"
}

@test "sketch: an input that cannot be read: the count of the others, no sketch written, exit 2" {
	seq 1 100 >a.txt
	run --separate-stderr bfcount -o out.hll a.txt missing.txt
	expect_status 2
	expect_output 100
	expect_stderr "bfcount: missing.txt: No such file or directory
bfcount: no sketch written: an input could not be read"
	[ ! -e out.hll ]
}

@test "sketch: -o into a directory that does not exist fails before reading the input" {
	run --separate-stderr bfcount -o nowhere/out.hll < <(echo a)
	expect_fail "bfcount: nowhere/out.hll: cannot write here: No such file or directory"
}
