#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# compressed.bats - compressed inputs (lib/instream.h, COMPRESSED INPUT in
# the man pages): gzip (one member or several) and zstd (one frame or
# several) are told by their first bytes, on files, standard input and the
# files of -r, and read as zcat and zstdcat would deliver them; a damaged
# one is one message and status 2 after the lines before the damage;
# --no-decompress reads the bytes as they are.
#
# The reference is always the real tool: `zcat F | PROG` and
# `zstdcat F | PROG` must give what `PROG F` gives. Filters are built with
# the fixed key at 1e-6, so which lines bfgrep selects is deterministic.
# gzip files are made from standard input (`gzip -c <F`: no name in the
# header, so a member's deflate data begins at its byte 10).

bats_require_minimum_version 1.5.0
load helpers

setup() {
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work" || return 1
	command -v zstd >/dev/null || skip "zstd is not installed (tests/deps.sh check installs it)"
	# keys key1 .. key20000, and a filter of every seventh (key1, key8, ...)
	seq 1 20000 | sed 's/^/key/' >in.txt
	seq 1 7 20000 | sed 's/^/key/' >some.txt
	build some.bf -n 3000 -p 1e-6 some.txt
	head -n 1000 in.txt >first.txt
	tail -n +1001 in.txt >rest.txt
}

# gz OUT IN...: OUT is one gzip member per IN, one after another.
gz() {
	local out=$1
	shift
	: >"$out"
	for f in "$@"; do gzip -c <"$f" >>"$out"; done
}

# zst OUT IN...: OUT is one zstd frame per IN (with its checksum), one after another.
zst() {
	local out=$1
	shift
	: >"$out"
	for f in "$@"; do zstd -q -c <"$f" >>"$out"; done
}

# cut_at FILE N: FILE keeps only its first N bytes.
cut_at() {
	head -c "$2" "$1" >"$1.cut" && mv "$1.cut" "$1"
}

# set_byte FILE OFFSET OCTAL: the byte at OFFSET becomes \OCTAL.
set_byte() {
	printf "\\$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# whole_lines FILE: FILE without a last line that lacks its newline.
whole_lines() {
	if [ -n "$(tail -c 1 "$1")" ]; then sed '$d' "$1"; else cat "$1"; fi
}

# ------------------------------------------------------------ gzip and zstd

@test "compressed: bfgrep over a gzip file selects what zcat FILE | bfgrep selects" {
	gz in.gz in.txt
	zcat in.gz | bfgrep -f some.bf >expected
	[ "$(wc -l <expected)" -eq 2858 ]	# 20000 / 7, rounded up: no false positive at 1e-6
	run --separate-stderr bfgrep -f some.bf in.gz
	expect_status 0
	expect_stderr ""
	expect_output "$(cat expected)"
}

@test "compressed: gzip members one after another are one input, as zcat reads them" {
	gz in.gz first.txt rest.txt
	zcat in.gz | bfgrep -n -f some.bf >expected
	cmp -s <(bfgrep -n -f some.bf in.txt) expected
	run --separate-stderr bfgrep -n -f some.bf in.gz
	expect_status 0
	expect_stderr ""
	expect_output "$(cat expected)"
}

@test "compressed: bfgrep over a zstd file, one frame or several, selects what zstdcat FILE | bfgrep selects" {
	zst one.zst in.txt
	zst two.zst first.txt rest.txt
	zstdcat one.zst | bfgrep -f some.bf >expected
	cmp -s <(zstdcat two.zst | bfgrep -f some.bf) expected
	for f in one.zst two.zst; do
		run --separate-stderr bfgrep -f some.bf "$f"
		expect_status 0
		expect_stderr ""
		expect_output "$(cat expected)"
	done
}

@test "compressed: standard input is decompressed too, from a file or a pipe" {
	gz in.gz first.txt rest.txt
	zst in.zst in.txt
	bfgrep -f some.bf in.txt >expected
	run --separate-stderr bfgrep -f some.bf <in.gz
	expect_status 0
	expect_output "$(cat expected)"
	run --separate-stderr bash -c 'cat in.zst | bfgrep -f some.bf'
	expect_status 0
	expect_stderr ""
	expect_output "$(cat expected)"
	run --separate-stderr bash -c 'cat in.gz | bfgrep -f some.bf -'
	expect_status 0
	expect_output "$(cat expected)"
}

@test "compressed: the format is told by the bytes, not the name" {
	gz logfile in.txt
	cp in.txt plain.gz
	bfgrep -c -f some.bf in.txt >expected
	run --separate-stderr bfgrep -c -f some.bf logfile
	expect_status 0
	expect_output "$(cat expected)"
	run --separate-stderr bfgrep -c -f some.bf plain.gz
	expect_status 0
	expect_output "$(cat expected)"
}

@test "compressed: plain input that begins like a magic is read as it is, whatever the pipe delivers when" {
	# 1f with a newline, 28 b5 2f (three of zstd's four bytes), 1f alone at the end
	printf '\037\n' >a
	bfuniq a >out
	cmp a out
	printf '\050\265\057\nx\n' >c
	bfuniq c >out
	cmp c out
	printf '\037' >b
	bfuniq b >out
	expect_file out '\037\n'
	# the first byte alone cannot tell: the reader waits for the next one
	{ printf '\037'; sleep 0.2; printf 'x\n'; } | bfuniq >out
	expect_file out '\037x\n'
}

@test "compressed: an empty gzip member or zstd frame is an input without lines" {
	: >empty
	gz empty.gz empty
	zst empty.zst empty
	for f in empty.gz empty.zst; do
		run --separate-stderr bfgrep -c -f some.bf "$f"
		expect_status 1
		expect_stderr ""
		expect_output "0"
	done
}

@test "compressed: a compressed file large enough to read in ranges is read as a stream, on any -j" {
	# ~3 MB of lines that compress to ~1.5 MB: over two ranges' worth
	# (RANGES_MIN, 512 KiB), so a plain file this size is read in ranges
	awk 'BEGIN { x = 12345; for (i = 0; i < 200000; i++) { x = (x * 1103515245 + 12345) % 2147483648; printf "%08x%d\n", x, i } }' >big.txt
	gz big.gz big.txt
	[ "$(wc -c <big.gz)" -gt 1048576 ]
	build big.bf -n 200000 -p 1e-6 big.txt
	for j in 1 2 4; do
		run --separate-stderr bfgrep -j "$j" -c -f big.bf big.gz
		expect_status 0
		expect_stderr ""
		expect_output "200000"
		run --separate-stderr bfcount -j "$j" big.gz
		expect_status 0
		expect_output "$(bfcount -j 1 big.txt)"
	done
}

# ------------------------------------------------------------ damage

@test "compressed: a truncated gzip input is one error line and status 2, after the lines zcat delivers whole" {
	gz t.gz first.txt rest.txt
	cut_at t.gz $(($(wc -c <t.gz) - 20000))
	zcat t.gz >zcat.out 2>/dev/null || true
	whole_lines zcat.out >expected
	[ "$(wc -l <expected)" -gt 1000 ]	# the first member, and some of the second
	run --separate-stderr bfuniq t.gz
	expect_status 2
	# the message names the line being read when the damage came: the first not written
	expect_stderr "bfuniq: t.gz:$(($(wc -l <expected) + 1)): truncated gzip input"
	expect_output "$(cat expected)"
}

@test "compressed: a truncated zstd input is one error line and status 2, after the lines before the cut" {
	zst t.zst first.txt rest.txt
	cut_at t.zst $(($(wc -c <t.zst) - 1000))
	run --separate-stderr bfuniq t.zst
	expect_status 2
	expect_stderr "bfuniq: t.zst:$((${#lines[@]} + 1)): truncated zstd input"
	# whole lines, the first frame's among them: a prefix of the content
	[ "${#lines[@]}" -ge 1000 ]
	expect_eq "the lines written" "$(head -n "${#lines[@]}" in.txt)" "$output"
}

@test "compressed: a gzip member that is corrupt is reported in zlib's words, after the members before it" {
	gzip -c <first.txt >a.gz
	gzip -c <rest.txt >b.gz
	set_byte b.gz 10 377	# the first deflate block: BTYPE 11, which does not exist
	cat a.gz b.gz >c.gz
	run --separate-stderr bfuniq c.gz
	expect_status 2
	expect_stderr "bfuniq: c.gz:$(($(wc -l <first.txt) + 1)): corrupt gzip input: invalid block type"
	expect_output "$(cat first.txt)"
}

@test "compressed: a gzip checksum mismatch is reported after all the lines (zcat writes them too)" {
	gz c.gz in.txt
	size=$(wc -c <c.gz)
	set_byte c.gz $((size - 8)) 0	# the CRC-32's low byte; the content is intact
	set_byte c.gz $((size - 7)) 0
	run --separate-stderr bfuniq c.gz
	expect_status 2
	expect_stderr "bfuniq: c.gz:$(($(wc -l <in.txt) + 1)): corrupt gzip input: incorrect data check"
	expect_output "$(cat in.txt)"
}

@test "compressed: a zstd checksum mismatch is reported in libzstd's words" {
	zst c.zst in.txt
	size=$(wc -c <c.zst)
	# the frame's last 4 bytes are its content checksum; invert one
	byte=$(od -A n -t o1 -j $((size - 1)) -N 1 c.zst | tr -d ' ')
	set_byte c.zst $((size - 1)) "$(printf '%o' $((8#$byte ^ 255)))"
	run --separate-stderr bfuniq c.zst
	expect_status 2
	expect_stderr "bfuniq: c.zst:$(($(wc -l <in.txt) + 1)): corrupt zstd input: Restored data doesn't match checksum"
	expect_output "$(cat in.txt)"
}

@test "compressed: bytes after the last gzip member are trailing garbage, reported after every line" {
	gz g.gz in.txt
	printf 'not gzip\n' >>g.gz
	run --separate-stderr bfuniq g.gz
	expect_status 2
	expect_stderr "bfuniq: g.gz:$(($(wc -l <in.txt) + 1)): trailing garbage after gzip data"
	expect_output "$(cat in.txt)"
}

@test "compressed: a damaged input is a clean cut: the inputs after it are not read, and each program reports the line" {
	gz t.gz in.txt
	cut_at t.gz 1000
	zcat t.gz 2>/dev/null | sed '$d' >whole	# the lines zcat delivers whole
	cut=$(($(wc -l <whole) + 1))
	run --separate-stderr bfgrep -c -f some.bf t.gz in.txt
	expect_status 2
	expect_stderr "bfgrep: t.gz:$cut: truncated gzip input"
	expect_eq "t.gz's count, of the lines before the cut" "t.gz:$(bfgrep -c -f some.bf whole)" "${lines[0]}"
	expect_eq "nothing of in.txt" 1 "${#lines[@]}"
	run --separate-stderr bfcount t.gz
	expect_status 2
	expect_stderr "bfcount: t.gz:$cut: truncated gzip input"
	expect_output "$(bfcount whole)"
	run --separate-stderr bfbuild --key "$KEY" -o t.bf t.gz
	expect_status 2
	expect_stderr "bfbuild: t.gz:$cut: truncated gzip input"
	bfbuild --key "$KEY" -o whole.bf whole
	cmp t.bf whole.bf	# the filter of the lines before the cut
}

# ------------------------------------------------------------ every program

@test "compressed: bfbuild, bfuniq and bfcount read gzip and zstd inputs as their lines" {
	gz in.gz first.txt rest.txt
	zst in.zst in.txt
	build plain.bf -n 20000 in.txt
	for f in in.gz in.zst; do
		build "$f.bf" -n 20000 "$f"
		cmp plain.bf "$f.bf"
		bfuniq "$f" >uniq.out
		cmp in.txt uniq.out
		expect_eq "bfcount $f" "$(bfcount in.txt)" "$(bfcount "$f")"
	done
}

@test "compressed: bfgrep -r searches compressed files in the tree as their lines" {
	mkdir -p logs/old
	cp in.txt logs/current.log
	gz logs/old/mail.log.1.gz first.txt rest.txt
	zst logs/old/mail.log.2.zst in.txt
	run --separate-stderr bfgrep -r -c -f some.bf logs
	expect_status 0
	expect_stderr ""
	expect_output "logs/current.log:2858
logs/old/mail.log.1.gz:2858
logs/old/mail.log.2.zst:2858"
}

# ------------------------------------------------------------ --no-decompress

@test "compressed: --no-decompress reads the compressed bytes as they are, in every program" {
	gz in.gz in.txt
	# the records of in.gz's own bytes, newline-separated (the last unterminated)
	records=$(($(tr -cd '\n' <in.gz | wc -c) + 1))
	run --separate-stderr bfgrep --no-decompress -c -f some.bf in.gz
	expect_status 1
	expect_output "0"
	run --separate-stderr bfgrep --no-decompress -v -c -f some.bf in.gz
	expect_status 0
	expect_output "$records"
	run --separate-stderr bfgrep --no-decompress -c -f some.bf <in.gz
	expect_output "0"
	bfuniq --no-decompress in.gz >raw.out
	expect_eq "bfuniq's first bytes" " 1f 8b" "$(head -c 2 raw.out | od -A n -t x1)"
	bfbuild --no-decompress --key "$KEY" -o raw.bf in.gz
	run --separate-stderr bfgrep -c -f raw.bf in.txt
	expect_output "0"
	run --separate-stderr bfcount --no-decompress in.gz
	expect_status 0
	[ "$output" != "$(bfcount in.gz)" ]
}

# ------------------------------------------------------------ xz, bzip2, lz4

# the reference tools of the other formats logrotate writes
need_tools() {
	for t in xz bzip2 lz4; do
		command -v "$t" >/dev/null || skip "$t is not installed (tests/deps.sh check installs it)"
	done
}

# packed FORMAT OUT IN...: OUT is one xz stream, bzip2 stream or lz4 frame
# per IN, one after another, as `cat a.xz b.xz` makes.
packed() {
	local format=$1 out=$2
	shift 2
	: >"$out"
	for f in "$@"; do "$format" -q -c <"$f" >>"$out"; done
}

@test "compressed: xz, bzip2 and lz4 inputs, one stream or several, give every program the plain input's answers, at -j 1 and -j 4" {
	need_tools
	# some keys twice, for bftop and bfuniq to have repeats to see
	cat in.txt first.txt >dup.txt
	head -n 3000 dup.txt >a.txt
	tail -n +3001 dup.txt >b.txt
	build plain.bf -n 30000 dup.txt
	for fmt in xz bzip2 lz4; do
		packed "$fmt" one.$fmt dup.txt
		packed "$fmt" two.$fmt a.txt b.txt
		"$fmt" -dc two.$fmt | cmp - dup.txt	# the reference tool reads both streams too
		for f in one.$fmt two.$fmt; do
			for j in 1 4; do
				expect_eq "bfcount -j $j $f" "$(bfcount -j $j dup.txt)" "$(bfcount -j $j "$f")"
				expect_eq "bfcount -j $j <$f" "$(bfcount -j $j dup.txt)" "$(bfcount -j $j <"$f")"
				expect_eq "bfgrep -j $j $f" "$(bfgrep -j $j -n -f some.bf dup.txt)" "$(bfgrep -j $j -n -f some.bf "$f")"
				expect_eq "bfgrep -j $j <$f" "$(bfgrep -j $j -c -f some.bf dup.txt)" "$(cat "$f" | bfgrep -j $j -c -f some.bf)"
				bfuniq -j $j "$f" >uniq.out
				cmp uniq.out in.txt
				bfuniq -j $j <"$f" >uniq.out
				cmp uniq.out in.txt
				expect_eq "bftop -j $j $f" "$(bftop -j $j -n 5 dup.txt)" "$(bftop -j $j -n 5 "$f")"
				build "$f.bf" -j $j -n 30000 "$f"
				cmp plain.bf "$f.bf"
				build "$f.bf" -j $j -n 30000 <"$f"
				cmp plain.bf "$f.bf"
			done
		done
	done
}

@test "compressed: bfgrep -r reads xz, bzip2 and lz4 files in the tree as their lines" {
	need_tools
	mkdir -p logs
	packed xz logs/mail.log.1.xz first.txt rest.txt
	packed bzip2 logs/mail.log.2.bz2 in.txt
	packed lz4 logs/mail.log.3.lz4 first.txt rest.txt
	run --separate-stderr bfgrep -r -c -f some.bf logs
	expect_status 0
	expect_stderr ""
	expect_output "logs/mail.log.1.xz:2858
logs/mail.log.2.bz2:2858
logs/mail.log.3.lz4:2858"
}

# expect_cut LINE PROG NAME WHAT: LINE is "PROG: NAME:N: WHAT", N the line where the input broke (a clean cut).
expect_cut() {
	local re="^$2: $3:[0-9]+: $4\$"
	[[ $1 =~ $re ]] && return 0
	printf 'expected "%s: %s:N: %s", got:\n%s\n' "$2" "$3" "$4" "$1" >&2
	return 1
}

@test "compressed: a truncated xz, bzip2 or lz4 input is one error line and status 2, in every program" {
	need_tools
	for fmt in xz bzip2 lz4; do
		packed "$fmt" t.$fmt first.txt rest.txt
		cut_at t.$fmt $(($(wc -c <t.$fmt) - 100))
		for prog in bfuniq bfcount "bfgrep -f some.bf" "bftop"; do
			run --separate-stderr $prog t.$fmt
			expect_status 2
			expect_cut "$stderr" "${prog%% *}" "t\.$fmt" "truncated $fmt input"
		done
		# bfbuild saves the filter of the lines before the cut (a clean cut)
		run --separate-stderr bfbuild --key "$KEY" -o t.bf t.$fmt
		expect_status 2
		bfinfo t.bf >/dev/null
		expect_cut "${stderr%%$'\n'*}" bfbuild "t\.$fmt" "truncated $fmt input"
		run --separate-stderr bfcount <t.$fmt
		expect_status 2
		expect_cut "$stderr" bfcount "\(standard input\)" "truncated $fmt input"
		# the lines before the cut, whole, as the reference tool delivers them
		run --separate-stderr bfuniq t.$fmt
		[ "${#lines[@]}" -ge 1000 ]
		expect_eq "$fmt: the lines written" "$(head -n "${#lines[@]}" in.txt)" "$output"
	done
}

@test "compressed: a corrupt xz, bzip2 or lz4 input is one error line and status 2, in the library's words" {
	need_tools
	for fmt in xz bzip2 lz4; do
		packed "$fmt" c.$fmt in.txt
		# four bytes in the middle of the compressed data made 0xff: a check
		# (xz's CRC64, bzip2's block CRC, lz4's content checksum) or the
		# decoding itself fails
		for i in 0 1 2 3; do set_byte c.$fmt $(($(wc -c <c.$fmt) / 2 + i)) 377; done
		run --separate-stderr bfuniq c.$fmt
		expect_status 2
		case $stderr in
		"bfuniq: c.$fmt:"[0-9]*": corrupt $fmt input: "?*) ;;
		*) expect_eq "stderr" "bfuniq: c.$fmt:N: corrupt $fmt input: ..." "$stderr" ;;
		esac
		run --separate-stderr bfcount -j 4 c.$fmt
		expect_status 2
		[ "${stderr%%:*}" = bfcount ] && [ "${stderr#*$'\n'}" = "$stderr" ]	# one line
	done
	# bytes after the last stream
	packed xz g.xz in.txt
	packed bzip2 g.bz2 in.txt
	for f in g.xz g.bz2; do
		printf 'not compressed\n' >>"$f"
		run --separate-stderr bfuniq "$f"
		expect_status 2
		expect_eq "$f: the lines" "$(cat in.txt)" "$output"
	done
	expect_cut "$stderr" bfuniq "g\.bz2" "trailing garbage after bzip2 data"
}

@test "compressed: xz stream padding between and after streams is read as xzcat reads it" {
	need_tools
	xz -q -c <first.txt >p.xz
	printf '\0\0\0\0' >>p.xz
	xz -q -c <rest.txt >>p.xz
	printf '\0\0\0\0\0\0\0\0' >>p.xz
	xzcat p.xz | cmp - in.txt
	run --separate-stderr bfuniq p.xz
	expect_status 0
	expect_stderr ""
	expect_output "$(cat in.txt)"
}

@test "compressed: --no-decompress reads xz, bzip2 and lz4 bytes as they are" {
	need_tools
	for fmt in xz bzip2 lz4; do
		packed "$fmt" in.$fmt in.txt
		bfuniq --no-decompress in.$fmt >raw.out
		expect_eq "$fmt: bfuniq's first bytes" "$(head -c 3 in.$fmt | od -A n -t x1)" "$(head -c 3 raw.out | od -A n -t x1)"
		run --separate-stderr bfcount --no-decompress in.$fmt
		expect_status 0
		[ "$output" != "$(bfcount in.$fmt)" ]
	done
}

@test "compressed: a compressed format that is recognised but not decoded is refused, never read as text" {
	need_tools
	lz4 -q -l -c <in.txt >legacy.lz4
	run --separate-stderr bfcount legacy.lz4
	expect_status 2
	expect_stderr "bfcount: legacy.lz4:1: lz4 legacy input cannot be decoded (--no-decompress reads it as it is)"
	run --separate-stderr bfgrep -c -f some.bf <legacy.lz4
	expect_status 2
	expect_stderr "bfgrep: (standard input):1: lz4 legacy input cannot be decoded (--no-decompress reads it as it is)"
	printf 'LZIP\001\014' >x.lz
	run --separate-stderr bfuniq x.lz
	expect_fail "bfuniq: x.lz:1: lzip input cannot be decoded (--no-decompress reads it as it is)"
	bfuniq --no-decompress x.lz >raw.out
	expect_file raw.out 'LZIP\001\014\n'
}

@test "compressed: text that begins like bzip2's magic is read as text" {
	printf 'BZh9 is not a stream\nBZh\n' >t.txt
	run --separate-stderr bfuniq t.txt
	expect_status 0
	expect_output "$(cat t.txt)"
	printf 'BZh' | bfuniq >out
	expect_file out 'BZh\n'
}

@test "compressed: a bftools filter, sketch or summary given as an input is refused, not read as lines" {
	bfcount -o counts.hll <in.txt >/dev/null
	run bftop -o top.sum in.txt	# 1: no key surely frequent; the summary is saved
	[ -s top.sum ]
	run --separate-stderr bfcount some.bf
	expect_status 2
	expect_stderr "bfcount: some.bf:1: a bftools filter, not text"
	run --separate-stderr bfuniq counts.hll
	expect_fail "bfuniq: counts.hll:1: a bftools sketch, not text"
	run --separate-stderr bfgrep -f some.bf top.sum
	expect_fail "bfgrep: top.sum:1: a bftop summary, not text"
	run --separate-stderr bftop some.bf
	expect_fail "bftop: some.bf:1: a bftools filter, not text"
	run --separate-stderr bfsplit -N 2 --shard-key 000102030405060708090a0b0c0d0e0f -o 'part%d' some.bf
	expect_fail "bfsplit: some.bf:1: a bftools filter, not text"
	[ ! -e part0 ] && [ ! -e part1 ]
	# decompressed, on standard input, and a plain file that -j would cut in ranges
	gzip -dc some.bf >raw.bin
	run --separate-stderr bfbuild -n 100 -o new.bf - <raw.bin
	expect_status 2
	expect_stderr "bfbuild: (standard input):1: a bftools filter, not text"
	run --separate-stderr bfuniq -j 2 raw.bin
	expect_fail "bfuniq: raw.bin:1: a bftools filter, not text"
	zstd -q -c <raw.bin >raw.zst
	run --separate-stderr bfcount -j 2 raw.zst
	expect_status 2
	expect_stderr "bfcount: raw.zst:1: a bftools filter, not text"
	# as any failure mid-input: the lines before it, then no more input
	run --separate-stderr bfuniq first.txt some.bf rest.txt
	expect_status 2
	expect_output "$(cat first.txt)"
	expect_stderr "bfuniq: some.bf:1: a bftools filter, not text"
	# where it belongs, and as the bytes it holds when asked
	run --separate-stderr bfcount -f some.bf
	expect_status 0
	run --separate-stderr bfcount --no-decompress raw.bin
	expect_status 0
}
