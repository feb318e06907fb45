#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# window-damage.bats - a damaged windowed filter file is always refused,
# by every program that reads one, never half-read.
#
# damage.bats does this for plain filters through bfgrep; a windowed file
# (format version 2, bf(5)) has more to get wrong: the window block, the
# generation numbers against the clock, the generations' plan, growing
# generations of several stages. Two small victims, a count window of 3
# generations and a time window whose generations grew to 2 and 3 stages,
# are damaged three ways:
#   - the gzip file cut short and its bytes flipped (the CRC's work);
#   - inside a well-formed gzip member, one field at a time set to a value
#     the format forbids or that disagrees with another field (the
#     loader's checks): version, lengths, stage count, window fields,
#     generation numbers, clock, sizes, the plan;
# and each damaged file must make every reader
#   bfuniq -f FILE, bfgrep -f FILE, bfinfo --verify FILE, bfmerge -o OUT
#   GOOD FILE, bfcount -f FILE
# (bfinfo without --verify reads the headers alone: damage to the bits is
# found by the readers of bits, which include bfinfo --verify)
# exit with exactly 2 and print one line "PROG: FILE: why" on stderr,
# nothing on stdout, no sanitizer report, and leave no output file (bfmerge)
# and the state untouched (bfuniq). Files are edited with printf and dd, as
# damage.bats does without python.

bats_require_minimum_version 1.5.0
load helpers

READERS="bfuniq bfgrep bfinfo bfmerge bfcount"

# count_victim: a count window of 30 keys, G = 4 (10 keys a generation),
# after 25 keys: generations 0, 1, 2 of one stage each, clock 25.
count_victim() {
	UNIQ_CLOCK=""
	seq 1 25 | sed 's/^/key/' >in.txt
	bfuniq --key "$KEY" --window 30keys --generations 4 -p 0.01 -f victim.bf <in.txt >/dev/null
	victim_sound
}

# time_victim: a time window of 30 s, G = 4 (10 s a generation), 9 keys
# expected a window (3 to a generation's first stage): 10 keys at 5 s grow
# generation 0 to 3 stages (3 + 6), 4 at 15 s grow generation 1 to 2,
# one at 21 s: generations 0, 1, 2, clock 21000 ms.
time_victim() {
	UNIQ_CLOCK="--time-field 1"	# its clock (bf(5)): bfuniq must go on with it
	{
		for i in 1 2 3 4 5 6 7 8 9 10; do echo "5 a$i"; done
		for i in 1 2 3 4; do echo "15 b$i"; done
		echo "21 c1"
	} >in.txt
	bfuniq --key "$KEY" --window 30s --generations 4 -n 9 -p 0.01 --time-field 1 \
		-f victim.bf <in.txt >/dev/null
	victim_sound
	expect_eq "time victim stages" 6 "$(gzip -dc victim.bf | od -A n -j 16 -N 1 -t u1 | tr -d ' ')"
}

# victim_sound: every reader takes the undamaged victim, or the tests
# below prove nothing; content.bin is its decompressed content.
victim_sound() {
	local prog
	for prog in $READERS; do
		cp victim.bf good.bf
		run_reader "$prog" good.bf
		[ "$st" -le 1 ] || { echo "$prog refuses the undamaged victim: $(cat err.txt)" >&2; return 1; }
	done
	gzip -dc victim.bf >content.bin
	gzip -n -c content.bin >regzip.bf
	run_reader bfgrep regzip.bf
	[ "$st" -le 1 ] || { echo "bfgrep refuses the victim re-compressed by gzip(1): $(cat err.txt)" >&2; return 1; }
}

# run_reader PROG FILE: PROG reading FILE as its filter (bfmerge: as the
# second of two, after an undamaged copy); sets st, out.txt, err.txt.
run_reader() {
	st=0
	rm -f merged.bf
	case $1 in
	bfuniq) bfuniq $UNIQ_CLOCK -f "$2" <in.txt >out.txt 2>err.txt || st=$? ;;
	bfgrep) bfgrep -c -f "$2" <in.txt >out.txt 2>err.txt || st=$? ;;
	bfinfo) bfinfo --verify "$2" >out.txt 2>err.txt || st=$? ;;
	bfmerge) bfmerge -o merged.bf victim.bf "$2" >out.txt 2>err.txt || st=$? ;;
	bfcount) bfcount -f "$2" >out.txt 2>err.txt || st=$? ;;
	esac
}

FAILURES=""

# refused_by PROG FILE WHAT: PROG must refuse FILE as the header says;
# appends WHAT and what happened to FAILURES otherwise.
refused_by() {
	local err line why before
	before=$(cksum <"$2")
	run_reader "$1" "$2"
	mapfile -t err <err.txt
	line=${err[0]-}
	why=${line#"$1: $2: "}
	if [ "$st" -eq 2 ] && [ "${#err[@]}" -eq 1 ] && [ ! -s out.txt ] &&
		[ "$why" != "$line" ] && [ -n "$why" ] && [ ! -e merged.bf ] &&
		[ "$(cksum <"$2")" = "$before" ]; then
		case $line in *Sanitizer* | *"runtime error"*) ;; *) return 0 ;; esac
	fi
	FAILURES="$FAILURES
$1, $3: status $st, stdout '$(head -c 40 out.txt)', stderr '$(head -c 200 err.txt)'$([ -e merged.bf ] && echo ', left merged.bf')"
}

# refused FILE WHAT: by every reader.
refused() {
	local prog
	for prog in $READERS; do
		refused_by "$prog" "$1" "$2"
	done
}

no_failures() {
	[ -z "$FAILURES" ] && return 0
	local count
	count=$(printf '%s\n' "$FAILURES" | sed '/^$/d' | wc -l | tr -d ' ')
	echo "$count damaged files were not refused properly; the first ones:" >&2
	printf '%s\n' "$FAILURES" | sed '/^$/d' | head -n 20 >&2
	return 1
}

# edit OFFSET OCTAL...: content.bin with the bytes from OFFSET replaced
# (each OCTAL a \ooo escape), re-compressed into edit.bf, must be refused.
edit() {
	local off=$1 what
	shift
	what="bytes at $off set to $*"
	cp content.bin edit.bin
	printf "$(printf '%s' "$@")" | dd of=edit.bin bs=1 seek="$off" conv=notrunc 2>/dev/null
	gzip -n -c edit.bin >edit.bf
	refused edit.bf "$what"
}

# u64 VALUE: the eight \ooo escapes of VALUE, little-endian.
u64() {
	local v=$1 i out=""
	for ((i = 0; i < 8; i++)); do
		out="$out$(printf '\\%03o' $((v & 255)))"
		v=$((v >> 8))
	done
	printf '%s' "$out"
}

# edit_u64 OFFSET VALUE: edit with a little-endian u64.
edit_u64() {
	# word splitting makes the eight escapes eight arguments
	# shellcheck disable=SC2046
	edit "$1" $(u64 "$2" | sed 's/\\/ \\/g')
}

# positions SIZE: "OFFSET WHO" lines. Every reader at every position would
# take minutes under the sanitizers (five programs, some 400 bytes, two
# victims, two kinds of damage), and damage.bats covers the gzip layer
# byte by byte already: every reader takes the gzip header and trailer
# (the first 10 and last 8 bytes) and every 31st byte, bfgrep every 5th.
positions() {
	local size=$1 i
	for ((i = 0; i < size; i++)); do
		if [ "$i" -lt 10 ] || [ "$i" -ge $((size - 8)) ] || [ $((i % 31)) -eq 0 ]; then
			echo "$i all"
		elif [ $((i % 5)) -eq 0 ]; then
			echo "$i bfgrep"
		fi
	done
}

cut_everywhere() {
	local size i who prog
	size=$(wc -c <victim.bf | tr -d ' ')
	while read -r i who; do
		head -c "$i" victim.bf >cut.bf
		for prog in $READERS; do
			[ "$who" = all ] || [ "$prog" = "$who" ] || continue
			refused_by "$prog" cut.bf "cut at $i of $size bytes"
		done
	done < <(positions "$size")
}

flip_everywhere() {
	local size i who prog b
	size=$(wc -c <victim.bf | tr -d ' ')
	while read -r i who; do
		cp victim.bf flip.bf
		b=$(od -A n -j "$i" -N 1 -t u1 victim.bf | tr -d ' ')
		printf "$(printf '\\%03o' $((b ^ 255)))" | dd of=flip.bf bs=1 seek="$i" conv=notrunc 2>/dev/null
		for prog in $READERS; do
			[ "$who" = all ] || [ "$prog" = "$who" ] || continue
			refused_by "$prog" flip.bf "byte $i xor 255"
		done
	done < <(positions "$size")
}

@test "window damage: a count window cut at any length is refused by every reader" {
	count_victim
	cut_everywhere
	no_failures
}

@test "window damage: a time window cut at any length is refused by every reader" {
	time_victim
	cut_everywhere
	no_failures
}

@test "window damage: a count window with any byte flipped is refused by every reader" {
	count_victim
	flip_everywhere
	no_failures
}

@test "window damage: a time window with any byte flipped is refused by every reader" {
	time_victim
	flip_everywhere
	no_failures
}

# Offsets (bf(5)): file header 0-63, window block 64-127 (kind 64, G 65,
# flags 66, layout 67, size 72, expected 80, clock 88, rate 96), then a
# stage header of 64 bytes per stage from 128 (layout +0, k +4, m +8,
# capacity +16, rate +24, payload length +40, generation number +56).

@test "window damage: a wrong version or header length is refused by every reader" {
	count_victim
	edit 8 '\001'                  # version 1 with a window block
	edit 8 '\003'                  # version 3
	edit 8 '\000'                  # version 0
	edit 12 '\100'                 # header length 64
	edit 12 '\000' '\001'          # header length 256
	# a plain filter that calls itself version 2
	put_lines plain.txt alice bob
	bfbuild --key "$KEY" -n 10 -p 0.01 -o plain.bf plain.txt
	gzip -dc plain.bf >content.bin
	edit 8 '\002'
	no_failures
}

@test "window damage: a window block field out of range is refused by every reader" {
	count_victim
	edit 64 '\000'                 # kind 0
	edit 64 '\003'                 # kind 3
	edit 64 '\002'                 # a time window with a count window's plan
	edit 65 '\001'                 # G = 1
	edit 65 '\101'                 # G = 65
	edit 65 '\005'                 # G = 5: the plan is G = 4's
	edit 66 '\002'                 # unknown window flag
	edit 67 '\000'                 # layout 0
	edit 67 '\002'                 # classic, while the stages are blocked
	edit 67 '\003'                 # counting
	edit 68 '\001'                 # reserved
	edit 127 '\001'                # reserved, last byte
	edit_u64 72 0                  # window size 0
	edit_u64 72 31                 # size 31: the plan is 30's (capacity 11, not 10)
	edit_u64 80 29                 # a count window expecting other than its size
	edit_u64 96 0                  # rate 0
	edit_u64 96 4607182418800017408 # rate 1.0
	edit_u64 96 9221120237041090560 # rate NaN
	edit_u64 96 4581421828931458171 # rate 0.02: the plan is 0.01's
	no_failures
}

@test "window damage: generation numbers and a clock that disagree are refused by every reader" {
	count_victim
	edit_u64 88 0                  # clock 0: generations 1 and 2 are in the future
	edit_u64 88 19                 # clock 19: generation 2 is in the future
	edit_u64 88 40                 # clock 40: generation 0 is dead
	edit_u64 88 1000000000000      # clock far ahead: all dead
	edit_u64 248 0                 # generation 0 twice (one stage each)
	edit_u64 184 5                 # generation 5 before generation 2
	edit_u64 184 1                 # generation 1 twice
	edit_u64 312 3                 # generation 3 after the clock's 2
	edit_u64 120 1                 # reserved
	no_failures
}

@test "window damage: stage counts and sizes that disagree are refused by every reader" {
	count_victim
	edit 16 '\002'                 # 2 stages, 3 stored
	edit 16 '\004'                 # 4 stages, 3 stored
	edit 16 '\000'                 # no stage, 3 stored
	edit 16 '\000' '\001'          # 256 stages
	edit 16 '\001' '\001'          # 257 stages
	edit_u64 136 1024              # a stage's m doubled, its payload not
	edit_u64 168 128               # a payload length doubled
	cp content.bin keep.bin
	printf "$(u64 1024)" | dd of=content.bin bs=1 seek=136 conv=notrunc 2>/dev/null
	edit_u64 168 128               # m and length doubled, 64 bytes of payload
	cp keep.bin content.bin
	edit_u64 144 11                # a stage's capacity off the plan
	edit_u64 152 4581421828931458171 # a stage's rate off the plan (0.02)
	edit_u64 40 11                 # the plan's capacity
	edit 56 '\002'                 # a count window's generations growing
	edit 132 '\000'                # k 0
	edit 128 '\002'                # a classic stage in a blocked window
	no_failures
}

@test "window damage: a time window's generations that break their growth are refused by every reader" {
	time_victim
	# stages: 0, 1, 2 of generation 0; 3, 4 of generation 1; 5 of 2
	edit_u64 184 1                 # stage 0 as generation 1: the numbers decrease
	edit_u64 312 1                 # stage 2 as generation 1: it starts at twice the capacity
	edit_u64 400 3                 # stage 4's capacity not grown from stage 3's
	edit_u64 376 0                 # stage 3 as generation 0: a fourth stage at a first one's capacity
	edit_u64 504 3                 # generation 3 after the clock's 2
	edit_u64 88 9007199254740992   # clock 2^53 ms
	edit_u64 88 0                  # clock 0: generations 1 and 2 in the future
	edit_u64 72 0                  # window 0 s
	edit_u64 72 1099511627777      # window above 2^40 s
	edit 57 '\002'                 # tightening 2: the plan is 1
	edit 56 '\000'                 # fixed generations: the plan grows
	no_failures
}

@test "window damage: a damaged state is left as it was and nothing is printed" {
	count_victim
	head -c 200 victim.bf >state.bf
	cp state.bf before.bf
	run --separate-stderr bfuniq -f state.bf <in.txt
	expect_fail "bfuniq: state.bf: truncated"
	cmp state.bf before.bf
}
