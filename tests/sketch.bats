#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# sketch.bats - HyperLogLog sketch files end to end (bfcount(1) -o, -s,
# --add; bfmerge(1) and bfinfo(1) on sketches; the format in bf(5)): a
# sketch per day merged into the week, shards counted in parallel and
# merged, both equal, byte for byte, to the sketch of everything counted
# at once; in-place updates; keys, precisions and normalisation that must
# agree; damaged files, filters and sketches mixed up, usage errors.
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

@test "sketch: a week: seven daily sketches merged by bfmerge equal the week counted whole, byte for byte" {
	days 1 20000 3000
	for d in 1 2 3 4 5 6 7; do
		bfcount -o "day$d.hll" "day$d.txt" >/dev/null
	done
	bfcount -o whole.hll week.txt >/dev/null
	run --separate-stderr bfmerge -o week.hll day1.hll day2.hll day3.hll day4.hll day5.hll day6.hll day7.hll
	expect_status 0
	expect_stderr ""
	expect_output ""
	expect_same_file whole.hll week.hll
	run --separate-stderr bfcount -s week.hll
	expect_output "$(bfcount week.txt)"
}

@test "sketch: a quiet week: days exact, the week past 8192 keys, still byte for byte the whole" {
	days 1 1500 300
	for d in 1 2 3 4 5 6 7; do
		bfcount -o "day$d.hll" "day$d.txt" >/dev/null
		expect_eq "day $d phase" 0 "$(header_uint "day$d.hll" 20 1)"
	done
	bfcount -o whole.hll week.txt >/dev/null
	bfmerge -o week.hll day*.hll
	expect_eq "week phase" 1 "$(header_uint week.hll 20 1)"
	expect_same_file whole.hll week.hll
}

@test "sketch: shards counted in parallel and merged equal the whole counted at once" {
	seq 1 200000 | awk '{ print "user" ($1 * 7919 % 150001) }' >all.txt
	split -n l/4 all.txt shard.
	for s in shard.a?; do
		bfcount -o "$s.hll" "$s" >/dev/null &
	done
	wait
	bfcount -o whole.hll all.txt >/dev/null
	bfmerge -o merged.hll shard.a?.hll
	expect_same_file whole.hll merged.hll
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
	# the long spellings
	run --separate-stderr bfcount --sketch=a.hll --sketch b.hll --output=ab.hll c.txt
	expect_output 6000
	run --separate-stderr bfcount --sketch ab.hll
	expect_output 6000
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
	# nothing left beside it but the lock file of its updates (locking.bats):
	# the temporary file was renamed over it
	expect_eq "directory" "$(printf '%s\n' .run.hll.lock day1.txt day2.txt day3.txt day4.txt day5.txt day6.txt day7.txt run.hll week.txt whole.hll)" \
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

@test "sketch: sketches of different precision, key or normalisation are refused, naming the field" {
	seq 1 100 >in.txt
	bfcount -o p16.hll in.txt >/dev/null
	bfcount --precision 12 -o p12.hll in.txt >/dev/null
	bfcount --key "$KEY" -o keyed.hll in.txt >/dev/null
	bfcount -i -o folded.hll in.txt >/dev/null
	run --separate-stderr bfcount -s p16.hll -s p12.hll
	expect_fail "bfcount: p12.hll: cannot be combined with p16.hll: different precision (12 vs 16)"
	run --separate-stderr bfcount -s p16.hll -s keyed.hll
	expect_fail "bfcount: keyed.hll: cannot be combined with p16.hll: different key"
	run --separate-stderr bfcount -s p16.hll -s folded.hll
	expect_fail "bfcount: folded.hll: cannot be combined with p16.hll: different normalisation (case folded vs none)"
	run --separate-stderr bfmerge -o out.hll p16.hll p12.hll
	expect_fail "bfmerge: p12.hll: cannot be merged with p16.hll: different precision (12 vs 16)"
	[ ! -e out.hll ]
	run --separate-stderr bfmerge -o out.hll keyed.hll p16.hll
	expect_fail "bfmerge: p16.hll: cannot be merged with keyed.hll: different key"
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

@test "sketch: --like SKETCH starts an empty sketch with its key and precision" {
	seq 1 100 >a.txt
	seq 51 150 >b.txt
	# precision 12: exact up to 4096 / 8 = 512 keys
	bfcount --key "$KEY" --precision 12 -o a.hll a.txt >/dev/null
	run --separate-stderr bfcount --like a.hll -o b.hll b.txt
	expect_output 100
	expect_eq "precision" 12 "$(header_uint b.hll 17 1)"
	expect_eq "key" "$KEY" "$(header_hex b.hll 24 16)"
	run --separate-stderr bfmerge -o ab.hll a.hll b.hll
	expect_status 0
	run --separate-stderr bfcount -s ab.hll
	expect_output 150
}

@test "sketch: --key-file keeps the key outside: the file holds its fingerprint, adding needs the key file" {
	seq 1 100 >a.txt
	printf '%s\n' "$KEY" >k.key
	bfcount --key-file k.key -o ext.hll a.txt >/dev/null
	# key flag bit 1, the fingerprint of $KEY (bf(5)), then 8 bytes of 0
	expect_eq "flags" 2 "$(header_uint ext.hll 19 1)"
	expect_eq "fingerprint" "ba3e91053f7d950a0000000000000000" "$(header_hex ext.hll 24 16)"
	# counting and merging need no key ...
	run --separate-stderr bfcount -s ext.hll
	expect_output 100
	run --separate-stderr bfmerge -o copy.hll ext.hll
	expect_status 0
	# ... adding keys does
	run --separate-stderr bfcount -s ext.hll --add <a.txt
	expect_fail "bfcount: ext.hll: the sketch's key is kept in a key file: give it with --key-file"
	printf '%s\n' f0e0d0c0b0a090807060504030201000 >other.key
	run --separate-stderr bfcount -s ext.hll --add --key-file other.key <a.txt
	expect_fail "bfcount: ext.hll: the key in other.key is not this sketch's key"
	run --separate-stderr bfcount -s ext.hll --add --key-file k.key < <(seq 51 150)
	expect_output 150
	# the same key given with --key: the same sketch but for where the key is kept
	bfcount --key "$KEY" -o own.hll a.txt >/dev/null
	run --separate-stderr bfcount -s own.hll -s copy.hll
	expect_output 100
	run --separate-stderr bfcount -s own.hll --key-file other.key
	expect_fail "bfcount: own.hll: the sketch carries its own key, which is not the key in other.key"
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

@test "sketch: a filter where a sketch is wanted, and a sketch where a filter is, are refused by name" {
	seq 1 10 >a.txt
	bfcount -o a.hll a.txt >/dev/null
	build f.bf -n 100 a.txt
	run --separate-stderr bfcount -s f.bf
	expect_fail "bfcount: f.bf: a bftools filter, not a sketch (bfcount -f counts filters)"
	run --separate-stderr bfcount -f a.hll
	expect_fail "bfcount: a.hll: a bftools sketch, not a filter (bfcount -s, bfmerge and bfinfo read sketches)"
	run --separate-stderr bfgrep -f a.hll a.txt
	expect_fail "bfgrep: a.hll: a bftools sketch, not a filter (bfcount -s, bfmerge and bfinfo read sketches)"
	run --separate-stderr bfmerge -o out a.hll f.bf
	expect_fail "bfmerge: f.bf: a bftools filter, not a sketch: sketches and filters cannot be merged"
	run --separate-stderr bfmerge -o out f.bf a.hll
	expect_fail "bfmerge: a.hll: a bftools sketch, not a filter: sketches and filters cannot be merged"
	[ ! -e out ]
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

@test "sketch: a content byte changed (CRC and all) is refused: precision 19 and a register too high" {
	seq 1 50000 >a.txt
	bfcount -o good.hll a.txt >/dev/null
	gzip -dc good.hll >content
	# precision byte 17 set to 19 (0x13), gzipped again so the CRC is right
	{ head -c 17 content; printf '\023'; tail -c +19 content; } | gzip >p19.hll
	run --separate-stderr bfcount -s p19.hll
	expect_fail "bfcount: p19.hll: bad header: precision out of range 4..18"
	# register 0 (content byte 64) set to 50, above 65 - 16
	{ head -c 64 content; printf '\062'; tail -c +66 content; } | gzip >reg.hll
	run --separate-stderr bfinfo reg.hll
	expect_fail "bfinfo: reg.hll: bad payload: register above 65 - precision"
	# the low bit of a byte in the middle of the deflate data flipped: the
	# CRC (or inflate itself) catches it
	local off byte
	off=$(($(wc -c <good.hll) / 2))
	byte=$(od -A n -t u1 -j "$off" -N 1 good.hll | tr -d ' ')
	{ head -c "$off" good.hll; printf "\\$(printf '%03o' $((byte ^ 1)))"; tail -c +$((off + 2)) good.hll; } >flip.hll
	expect_eq "size" "$(wc -c <good.hll)" "$(wc -c <flip.hll)"
	run --separate-stderr bfcount -s flip.hll
	expect_one_line_error "bfcount: flip.hll: corrupt: "
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

# ---------------------------------------------------------------- bfmerge

@test "bfmerge: sketches: to standard output when it is not a terminal; from standard input once" {
	seq 1 100 >a.txt
	seq 51 150 >b.txt
	bfcount -o a.hll a.txt >/dev/null
	bfcount -o b.hll b.txt >/dev/null
	bfmerge a.hll b.hll >ab.hll
	run --separate-stderr bfcount -s ab.hll
	expect_output 150
	bfmerge a.hll - <b.hll >ab2.hll
	expect_same_file ab.hll ab2.hll
}

@test "bfmerge: -v on sketches reports precision, insertions and the count" {
	seq 1 100 >a.txt
	bfcount -o a.hll a.txt >/dev/null
	run --separate-stderr bfmerge -v -o two.hll a.hll a.hll
	expect_status 0
	expect_stderr "bfmerge: HyperLogLog sketch, precision 16, 200 insertions
bfmerge: 100 distinct keys, counted exactly"
}

@test "bfmerge: sketches have no intersection: --intersect is refused" {
	seq 1 100 >a.txt
	bfcount -o a.hll a.txt >/dev/null
	run --separate-stderr bfmerge --intersect -o out.hll a.hll a.hll
	expect_fail "bfmerge: a.hll: sketches cannot be intersected (--intersect): only their union is a sketch"
	[ ! -e out.hll ]
}

# ---------------------------------------------------------------- bfinfo

@test "bfinfo: describes a sketch: kind, precision, hash, key, insertions, registers, count, size" {
	seq 1 1000 >a.txt
	bfcount -o a.hll a.txt a.txt >/dev/null
	# 1000 hashes of 8 bytes are random: the file is over 1 kB
	[ "$(wc -c <a.hll)" -ge 1000 ]
	run --separate-stderr bfinfo a.hll
	expect_status 0
	expect_stderr ""
	expect_output "file:                 a.hll
format version:       1 (sketch)
kind:                 HyperLogLog sketch
precision:            16 (65536 registers)
hash function:        SipHash-1-3-128
key fingerprint:      d04f2387e0095c93
key:                  stored in the sketch (bfcount's default key, public)
key normalisation:    none
insertions:           2000
registers non-zero:   $(bfinfo --json a.hll | sed 's/.*"registers_nonzero":\([0-9]*\).*/\1/') of 65536 ($(bfinfo --json a.hll | awk -F'"registers_nonzero":' '{ split($2, a, ","); printf "%.2f", 100 * a[1] / 65536 }')%)
distinct keys:        1000 (exact)
size in memory:       196.7 kB (196744 bytes)
size on disk:         $(wc -c <a.hll | awk '{ printf "%.1f kB (%d bytes)", $1 / 1000, $1 }')"
}

@test "bfinfo: a sketch past the exact phase gives its standard error; a key file and -i are shown" {
	seq 1 100000 >a.txt
	printf '%s\n' "$KEY" >k.key
	bfcount -i --key-file k.key -o a.hll a.txt >/dev/null
	run --separate-stderr bfinfo a.hll
	expect_status 0
	expect_eq "key line" "key:                  kept in a key file (--key-file)" "$(grep '^key:' <<<"$output")"
	expect_eq "fingerprint" "key fingerprint:      0a957d3f05913eba" "$(grep '^key fingerprint:' <<<"$output")"
	expect_eq "normalisation" "key normalisation:    ASCII case folded" "$(grep '^key normalisation:' <<<"$output")"
	case $(grep '^distinct keys:' <<<"$output") in
	"distinct keys:        "[0-9]*" (standard error 0.41%, about "[0-9]*")") ;;
	*) expect_eq "count line" "distinct keys: N (standard error 0.41%, about N)" "$output" ;;
	esac
	printf '%s\n' f0e0d0c0b0a090807060504030201000 >other.key
	run --separate-stderr bfinfo --key-file other.key a.hll
	expect_fail "bfinfo: a.hll: the key in other.key is not this sketch's key"
}

@test "bfinfo --json: a sketch is one object of kind sketch, next to filters" {
	seq 1 1000 >a.txt
	bfcount -o a.hll a.txt >/dev/null
	build f.bf -n 1000 a.txt
	run --separate-stderr bfinfo --json a.hll f.bf - <a.hll
	expect_status 0
	expect_eq "lines" 3 "${#lines[@]}"
	local first=${lines[0]}
	case $first in '{"file":"a.hll","format_version":1,"kind":"sketch","precision":16,"registers":65536,"hash":"SipHash-1-3-128","key_fingerprint":"d04f2387e0095c93","key_external":false,"fold_case":false,"insertions":1000,"registers_nonzero":'[0-9]*',"exact":true,"distinct_keys":1e+03,"relative_error":0,"bytes_in_memory":196744,"bytes_on_disk":'[0-9]*'}') ;;
	*) expect_eq "JSON of a.hll" '{"file":"a.hll",...,"kind":"sketch",...}' "$first" ;;
	esac
	case ${lines[1]} in '{"file":"f.bf",'*'"kind":"fixed"'*) ;; *) expect_eq "JSON of f.bf" '{"file":"f.bf",...}' "${lines[1]}" ;; esac
	case ${lines[2]} in '{"file":"-",'*'"bytes_on_disk":null}') ;; *) expect_eq "JSON of -" '{"file":"-",...,"bytes_on_disk":null}' "${lines[2]}" ;; esac
}

@test "bfinfo: a damaged sketch among good files is reported, the others described, exit 2" {
	seq 1 100 >a.txt
	bfcount -o a.hll a.txt >/dev/null
	head -c 60 a.hll >cut.hll
	run --separate-stderr bfinfo a.hll cut.hll a.hll
	expect_status 2
	expect_stderr "bfinfo: cut.hll: truncated"
	expect_eq "files described" 2 "$(grep -c '^file:' <<<"$output")"
}
