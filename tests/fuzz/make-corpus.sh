#!/bin/sh
# SPDX-License-Identifier: MIT
# make-corpus.sh [BIN_DIR] - regenerate the seed corpora in tests/fuzz/corpus/
# from the programs in BIN_DIR (default cmd/, so run `make` first) and from
# seedgen.c. Not part of any build: run it when the file format or the
# harnesses' input layout changes, and commit the result. Regression
# inputs (crash-*, and anything not made here) are left alone.
#
#   corpus/format/    filter and sketch files of every kind, fixed key,
#                     tiny sizes; damaged copies; uncompressed contents
#                     (raw-*)
#   corpus/lines/     5 option bytes (see fuzz_lines.c), then the input
#   corpus/numparse/  strings as users type them
#   corpus/topk/      bftop summaries: small ones, folded, long keys, a
#                     merge; truncated and damaged copies
#   corpus/instream/  2 option bytes (see fuzz_instream.c), then gzip and
#                     zstd streams (with gzip and zstd): whole, several
#                     members or frames, cut, with trailing bytes; plain
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=${1:-$top/cmd}
case $bin in /*) ;; *) bin="$top/$bin" ;; esac
key=000102030405060708090a0b0c0d0e0f
fmt="$here/corpus/format"
lin="$here/corpus/lines"
num="$here/corpus/numparse"
tpk="$here/corpus/topk"
ins="$here/corpus/instream"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$fmt" "$lin" "$num" "$tpk" "$ins"
CC=${CC:-cc}
export LC_ALL=C

# ---- filter files from the programs -------------------------------------
words() { printf 'alpha\nBeta\ngamma\nDELTA\nepsilon\n'; }
words | "$bin/bfbuild" -n 10 -p 0.1 --key $key -o "$fmt/fixed-blocked-s13.bf"
words | "$bin/bfbuild" -n 20 -p 0.01 --layout classic --hash siphash24 -i \
	--key $key -o "$fmt/fixed-classic-s24-i.bf"
"$bin/bfbuild" -m 512 -K 1 --key $key -o "$fmt/fixed-empty-m512-k1.bf" </dev/null
# dense: about half the bits set, so the payload is stored, not compressed
seq 1 60 | "$bin/bfbuild" -m 512 -K 6 --layout classic --key $key \
	-o "$fmt/fixed-dense-stored.bf"
seq 1 3 | "$bin/bfbuild" -m 1024 -K 64 --hash siphash24 --key $key -o "$fmt/fixed-k64.bf"
# (bfuniq's growing filters start at a million keys: megabytes a load, too
# slow to fuzz; seedgen's small growing ones below stand for them)
words | "$bin/bfbuild" --layout counting -m 512 --key $key -o "$fmt/fixed-counting-m512.bf"
seq 1 40 | "$bin/bfbuild" --layout counting -m 256 -K 3 --key $key -o "$fmt/fixed-counting-full.bf"

# ---- windowed filters (format version 2) ---------------------------------
words | "$bin/bfbuild" --window 64keys --generations 4 --key $key -o "$fmt/window-count-g4.bf"
words | "$bin/bfbuild" --window 10m -n 16 --generations 3 --refresh --now 1764074096 \
	--key $key -o "$fmt/window-time-g3-refresh.bf"
printf '1764074000 a\n1764074100 b\n1764074700 c\n1764075300 d\n' |
	"$bin/bfbuild" --window 10m -n 8 --time-field 1 -k 2 --layout classic --key $key \
	-o "$fmt/window-time-fields-classic.bf"
seq 1 100 | "$bin/bfuniq" --window 32keys --generations 2 -i --key $key \
	-f "$fmt/window-count-g2-turned-i.bf" >/dev/null
rm -f "$fmt"/.*.lock

# ---- sketch files (bfcount -o) -------------------------------------------
printf '%s\n' $key >"$work/seed.key"
words | "$bin/bfcount" --precision 6 -o "$fmt/sketch-exact.hll" >/dev/null
"$bin/bfcount" --precision 4 -o "$fmt/sketch-empty.hll" </dev/null >/dev/null
seq 1 100 | "$bin/bfcount" --precision 4 -o "$fmt/sketch-registers-p4.hll" >/dev/null
words | "$bin/bfcount" -i --key-file "$work/seed.key" --precision 8 \
	-o "$fmt/sketch-extkey-i-p8.hll" >/dev/null
seq 1 3000 | "$bin/bfcount" --key $key --precision 12 -o "$fmt/sketch-registers-p12.hll" >/dev/null

# ---- multi-stage growing ones and hand-made headers ---------------------
libinc=$(for d in "$top"/lib "$top"/lib/*/; do printf -- "-I%s " "${d%/}"; done)
# shellcheck disable=SC2086 # $libinc is a list of words
$CC -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $libinc -o "$work/seedgen" \
	"$here/seedgen.c" "$top"/lib/*/*.c -lz -lm
"$work/seedgen" "$fmt"

# ---- contents of good files, for the fuzzer to mutate with valid CRCs ---
for f in fixed-blocked-s13 fixed-classic-s24-i grow-blocked-s13-g2t1 grow-classic-s24-g2t1-i; do
	gzip -dc <"$fmt/$f.bf" >"$fmt/raw-ok-$f"
done
for f in sketch-exact sketch-registers-p4 sketch-extkey-i-p8; do
	gzip -dc <"$fmt/$f.hll" >"$fmt/raw-ok-$f"
done
for f in fixed-counting-m512 window-count-g4 window-time-g3-refresh window-count-g2-turned-i; do
	gzip -dc <"$fmt/$f.bf" >"$fmt/raw-ok-$f"
done

# ---- damaged files ------------------------------------------------------
good="$fmt/fixed-blocked-s13.bf"
size=$(wc -c <"$good")
head -c 1 "$good" >"$fmt/damaged-1-byte.bf"
head -c 30 "$good" >"$fmt/damaged-truncated-header.bf"
head -c $((size - 20)) "$good" >"$fmt/damaged-truncated-payload.bf"
head -c $((size - 4)) "$good" >"$fmt/damaged-truncated-trailer.bf"
cp "$good" "$fmt/damaged-trailing-garbage.bf"
printf 'x' >>"$fmt/damaged-trailing-garbage.bf"
cat "$good" "$good" >"$fmt/damaged-two-members.bf"
flip() {	# flip FILE OFFSET OUT: the byte at OFFSET inverted
	cp "$1" "$3"
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	# shellcheck disable=SC2059 # the format is the octal escape of the byte
	printf "\\$(printf %03o $((255 - b)))" | dd of="$3" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
flip "$good" 10 "$fmt/damaged-gzip-header-crc.bf"
flip "$good" $((size - 12)) "$fmt/damaged-payload-bit.bf"
flip "$good" $((size - 6)) "$fmt/damaged-crc.bf"
flip "$good" $((size - 2)) "$fmt/damaged-length.bf"
sketch="$fmt/sketch-registers-p12.hll"
ssize=$(wc -c <"$sketch")
head -c $((ssize - 30)) "$sketch" >"$fmt/damaged-sketch-truncated.hll"
flip "$sketch" $((ssize - 6)) "$fmt/damaged-sketch-crc.hll"
printf 'plain text, not a filter\n' >"$fmt/damaged-not-gzip"
: | gzip -n >"$fmt/damaged-gzip-empty.bf"
printf 'hello\n' | gzip -n >"$fmt/damaged-gzip-not-ours.bf"
: >"$fmt/damaged-empty"
# a gzip header, then a deflate block of the reserved type 3
printf '\037\213\010\000\000\000\000\000\000\003\007\000' >"$fmt/damaged-deflate-block-type"

# ---- line reader: flags, field, separator, batch, chunk; then the input --
# flags: 1 NUL-delimited, 2 words, 4 fold case, 8/16 feed (0 file, 8 pipe,
# 16 and 24 short reads), 32 separator is the third byte (else blanks),
# 64 with a fifth byte 0xa5: a record over 1 MiB first
# shellcheck disable=SC2059 # the seeds are printf formats, escapes and all
seed() { name=$1; shift; printf "$@" >"$lin/$name"; }
seed plain '\010\000\000\003\000a\nb\n\nccc\n'
seed no-final-newline '\020\000\000\000\002x\nyy\nzzz'
seed crlf-words-fold '\036\000\000\010\005From: <Alice@Example.COM>\r\nTo: "Bob" <bob@x.org>, (c=d);\r\n'
seed nul-records '\031\000\000\002\003a\000b\000\000c'
seed field2-blanks '\020\002\000\001\001  a  b\tc\n\t\tx y\n \n\n'
seed field3-comma '\040\003,\004\000a,,b,c\na,\n\n,,,\n'
seed field1-sep-nul '\050\001\000\377\004a\000b\nc\n'
seed z-field2-sep-newline '\041\002\n\005\006a\nb\000c\nd\000'
seed fold-8-bytes '\004\000\000\040\000ABCDEFG\nABCDEFGH\nAbCdEfGhI\n\300\333ZZZZZZZZZZZZZZZZ\n@[`{AZaz\n'
seed invalid-utf8 '\026\000\000\001\001\377\376\303( \342\202\254 caf\303\251\n'
seed only-delimiters '\030\000\000\000\000\n\n\n\n'
seed empty '\000\000\000\000\000'
# more records in one batch than the key arrays first hold (64, then 128)
{ printf '\001\000\000\377\000'; head -c 300 /dev/zero; } >"$lin/many-records"
seed words-fields '\042\002:\007\011k:v:w\nA <b> [c] {d} e=f;g,h\n'
awk 'BEGIN { printf "\030\000\000\002\001"; for (i = 0; i < 700; i++) printf "Ab "; }' >"$lin/long-record"
# flag 64 and 0xa5: a record of 1.3 MiB, then the input's own records
seed amplified-one-record '\104\000\000\100\245AbCdEfGh '
seed amplified-records '\140\002,\007\245x,Y\tz,<a@b.c>\n'

# ---- numbers --------------------------------------------------------------
n=0
for s in 1000000 1e9 10M 2.5G 1.5e3k 0.0001 1e-4 0.01% 99.9% 0.5 .5 5. 0 1 \
	18446744073709551615 18446744073709551616 1e19 1.8446744073709551615e19 \
	1e400 1e-400 0e999999 -1 +1 1e 1e+ 1.5 1.5k 2P 1T 3m 1x 0x10 inf nan \
	000102030405060708090a0b0c0d0e0f 000102030405060708090A0B0C0D0E0F \
	000102030405060708090a0b0c0d0e0 000102030405060708090a0b0c0d0e0f0 \
	4.9406564584124654e-324 2.2250738585072014e-308 0.99999999999999999 \
	12345678901234567890123e-3 100000000000000000000000000e-7 19e19 4e-76; do
	n=$((n + 1))
	printf '%s' "$s" >"$num/$(printf %02d $n)-$(printf %s "$s" | tr -c 'A-Za-z0-9.+-' _ | cut -c1-40)"
done
# durations and times (numparse_duration, numparse_time)
for s in 90s 10m 24h 7d 0s 1 5x 10mm 18446744073709551615s 1844674407370955161s \
	213503982334601d 1764074096 1764074096.25 1764074096.123456 0 0.5 1. .5 9007199254740.991 \
	9007199254740.992 2026-11-25T12:34:56Z 2026-11-25t13:34:56.5+01:00 1970-01-01T00:00:00Z \
	1969-12-31T23:59:59-01:00 2024-02-29T23:59:60z 2023-02-29T00:00:00Z 2026-11-25T12:34:56 \
	2026-11-25T24:00:00Z 2026-11-25T12:34:56+24:00 2026-11-25T12:34:56.Z 9999-12-31T23:59:59.999-23:59 \
	2255-06-05T23:47:34.740Z 2255-06-05T23:47:34.741Z; do
	n=$((n + 1))
	printf '%s' "$s" >"$num/$(printf %02d $n)-$(printf %s "$s" | tr -c 'A-Za-z0-9.+-' _ | cut -c1-40)"
done
printf '' >"$num/empty"
printf '1 ' >"$num/trailing-blank"
printf '1\0002' >"$num/embedded-nul"
# ---- heavy-hitter summaries (bftop -o) ------------------------------------
# -e 0.2: 5 keys kept, 7 rows of 14 counters, files of a few hundred bytes
words | "$bin/bftop" -e 0.2 -o "$tpk/words.top" >/dev/null
words | "$bin/bftop" -e 0.2 -i -o "$tpk/folded.top" >/dev/null
seq 1 40 | awk '{ for (i = 0; i < $1 % 7; i++) print $1 }' | "$bin/bftop" -e 0.2 -o "$tpk/evicted.top" >/dev/null
awk 'BEGIN { for (i = 0; i < 3; i++) { s = ""; for (j = 0; j < 300; j++) s = s "k"; print s i } }' |
	"$bin/bftop" -e 0.2 -o "$tpk/long-keys.top" >/dev/null
"$bin/bftop" -e 0.2 -o "$tpk/empty.top" </dev/null >/dev/null
"$bin/bfmerge" -o "$tpk/merged.top" "$tpk/words.top" "$tpk/evicted.top"
head -c 40 "$tpk/words.top" >"$tpk/truncated-header.top"
size=$(wc -c <"$tpk/evicted.top")
head -c $((size - 9)) "$tpk/evicted.top" >"$tpk/truncated-trailer.top"
gzip -dc "$tpk/words.top" >"$tpk/raw-words"
# ---- compressed streams ---------------------------------------------------
# istream NAME OPTIONS: corpus/instream/NAME is the option bytes, then stdin.
istream() { { printf "$2"; cat; } >"$ins/$1"; }
seq 1 300 >"$work/s.txt"
printf 'a\nb\n' >"$work/s2.txt"
gzip -c <"$work/s.txt" | istream gzip-file '\000\000'
gzip -c <"$work/s.txt" | istream gzip-socket '\004\007'
{ gzip -c <"$work/s.txt"; gzip -c <"$work/s2.txt"; } | istream gzip-members-pipe '\002\020'
gzip -c <"$work/s.txt" | head -c 500 | istream gzip-truncated '\000\003'
{ gzip -c <"$work/s2.txt"; printf 'junk'; } | istream gzip-trailing '\000\000'
gzip -c <"$work/s.txt" | istream gzip-raw '\001\000'
zstd -q -c <"$work/s.txt" | istream zstd-file '\000\000'
{ zstd -q -c <"$work/s.txt"; zstd -q -c <"$work/s2.txt"; } | istream zstd-frames-socket '\006\001'
zstd -q -c <"$work/s.txt" | head -c 300 | istream zstd-truncated '\002\000'
printf 'plain\n\037\n' | istream plain '\000\000'
printf '\050\265\057' | istream zstd-prefix '\004\000'

count() { find "$1" -type f | wc -l; }
echo "corpus: $(count "$fmt") format, $(count "$lin") lines, $(count "$num") numparse, $(count "$tpk") topk, $(count "$ins") instream"
