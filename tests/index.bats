#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# index.bats - filters of four 1 MiB pieces or more, saved to a regular
# file, carry an index of their pieces in the gzip header (lib/io/gzindex.h)
# and load on every thread: gzip still reads them, the content is the same
# as without the index (a pipe gets none), every thread count loads the
# same filter, and a damaged index is a damaged header.

load helpers
bats_require_minimum_version 1.5.0

# big.bf: 3e6 keys at 1e-2, 3.6 MB of bits (four pieces and a head), key fixed.
make_big() {
	seq 1 3000000 >keys.txt
	bfbuild -n 3e6 -p 1e-2 --key "$KEY" -o big.bf keys.txt
}

# The gzip header's flag byte and the first subfield's id, as hex.
header_of() {
	od -A n -t x1 -j 3 -N 1 "$1" | tr -d ' '
	od -A n -c -j 12 -N 2 "$1" | tr -d ' '
}

@test "index: a big filter saved to a file carries an index that gzip passes over" {
	make_big
	expect_eq "flags (FHCRC, FEXTRA) and subfield" "06
BI" "$(header_of big.bf)"
	gzip -t big.bf
	run bfinfo big.bf
	expect_status 0
	printf '%s\n' "$output" | grep -q '^insertions: *3000000$'
}

@test "index: a small filter, or one written to a pipe, has none (its statistics only) and the same content" {
	make_big
	head -1000 keys.txt | bfbuild -n 1000 -p 1e-2 --key "$KEY" -o small.bf
	# no index: the extra field holds the statistics alone (bf(5))
	expect_eq "small filter's flags and subfield" "06
BS" "$(header_of small.bf)"
	bfbuild -n 3e6 -p 1e-2 --key "$KEY" keys.txt | cat >piped.bf
	expect_eq "piped filter's flags and subfield" "06
BS" "$(header_of piped.bf)"
	gzip -dc big.bf >big.content
	gzip -dc piped.bf >piped.content
	cmp big.content piped.content
	# stdout redirected to a regular file gets the index: the same bytes as -o
	bfbuild -n 3e6 -p 1e-2 --key "$KEY" keys.txt >stdout.bf
	cmp big.bf stdout.bf
}

@test "index: every thread count loads an indexed filter to the same answers" {
	make_big
	seq 2900000 3100000 >probe.txt
	bfgrep -j 1 -c -f big.bf probe.txt >want.txt
	# every key of the filter found, and ~1% of the 99,999 others (sd ~31)
	count=$(cat want.txt)
	[ "$count" -ge $((100001 + 850)) ] && [ "$count" -le $((100001 + 1150)) ]
	for n in 2 3 4 8; do
		bfgrep -j "$n" -c -f big.bf probe.txt >got.txt
		cmp want.txt got.txt
	done
	bfbuild -n 3e6 -p 1e-2 --key "$KEY" keys.txt | cat >piped.bf
	bfgrep -j 4 -c -f piped.bf probe.txt >got.txt
	cmp want.txt got.txt
}

@test "index: shards built and merged with indexes equal a serial build" {
	make_big
	split -l 1000000 keys.txt shard.
	for s in shard.*; do
		bfbuild -j 2 --like big.bf -o "$s.bf" "$s"
	done
	bfmerge -o merged.bf shard.*.bf
	cmp big.bf merged.bf
}

@test "index: a damaged index is a damaged header" {
	make_big
	cp big.bf bad.bf
	# the second entry's content length, low byte
	printf '\377' | dd of=bad.bf bs=1 seek=32 conv=notrunc 2>/dev/null
	run --separate-stderr bfgrep -c -f bad.bf keys.txt
	expect_status 2
	expect_eq "stdout" "" "$output"
	expect_eq "stderr" "bfgrep: bad.bf: corrupt: header checksum mismatch" "$stderr"
}
