#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# sparse.bats - a filter sized far beyond what it holds costs what it holds
# (issue 33): the empty `-n 1e9 -p 1e-4` template (2.75 GB of bits) is
# created, saved, loaded, asked and described without backing its zeros;
# its empty chunks are marked in the file's index and skipped on load;
# a thousand keys into it cost about a page each. Memory is the peak
# resident size from time(1) (%M, KiB): deterministic enough for bounds
# far from both sides (2.7 GB before, a few MB now), with no timing.

load helpers
bats_require_minimum_version 1.5.0

# under_kib KIB PEAK WHAT: PEAK (KiB) is under KIB, where memory means something:
# sanitizers map shadow memory in proportion to what the program touches.
under_kib() {
	is_plain_build || return 0
	[ "$2" -lt "$1" ] && return 0
	echo "$3 peaked at $2 KiB, over $1" >&2
	return 1
}

# peak_kib CMD...: run CMD (its output to files out and err), print its peak RSS in KiB.
peak_kib() {
	/usr/bin/time -f '%M' -o peak.txt "$@" >out 2>err || true
	tail -n 1 peak.txt	# after time's own "Command exited with non-zero status" line
}

make_template() {
	bfbuild -n 1e9 -p 1e-4 --key "$KEY" -o tpl.bf </dev/null
}

@test "sparse: the empty -n 1e9 -p 1e-4 template is saved without backing its 2.75 GB" {
	local kib
	kib=$(peak_kib bfbuild -n 1e9 -p 1e-4 --key "$KEY" -o tpl.bf </dev/null)
	under_kib 51200 "$kib" bfbuild
	# mostly zero chunks, marked: flags word 1 in the index
	expect_eq "index flags" "1" "$(od -A n -t u4 -j 20 -N 4 tpl.bf | tr -d ' ')"
	# and gzip reads the marked chunks as the zeros they are; on a template
	# a tenth the size, as gzip -t takes 10 s to inflate 2.75 GB
	bfbuild -n 1e8 -p 1e-4 --key "$KEY" -o small.bf </dev/null
	expect_eq "small template's index flags" "1" "$(od -A n -t u4 -j 20 -N 4 small.bf | tr -d ' ')"
	gzip -t small.bf
}

@test "sparse: one lookup and bfinfo on the empty template read no zeros" {
	local kib
	make_template
	kib=$(echo x | peak_kib bfgrep -c -f tpl.bf)
	expect_eq "bfgrep -c" "0" "$(cat out)"
	under_kib 51200 "$kib" bfgrep
	kib=$(peak_kib bfinfo tpl.bf)
	grep -q '^total bits set: *0$' out
	under_kib 51200 "$kib" bfinfo
}

@test "sparse: 1000 keys into -n 1e9 cost about a page each, and the state keeps them" {
	local kib
	seq 1000 >keys.txt
	kib=$(peak_kib bfuniq -n 1e9 -p 1e-4 --key "$KEY" -f state.bf keys.txt)
	under_kib 65536 "$kib" bfuniq
	expect_eq "lines written" "1000" "$(wc -l <out | tr -d ' ')"
	# the state loads sparse too, and every key is in it
	kib=$(peak_kib bfgrep -c -f state.bf keys.txt)
	expect_eq "found" "1000" "$(cat out)"
	under_kib 65536 "$kib" bfgrep
}

@test "sparse: a sparse filter's bits and answers are those of the same filter saved without marks" {
	# -n 1e8: 240 MB of bits in 229 chunks of 1 MiB, 100 keys: most chunks empty
	bfbuild -n 1e8 -p 1e-4 --key "$KEY" -o tpl.bf </dev/null
	seq 100 | bfbuild --like tpl.bf -o some.bf
	expect_eq "index flags" "1" "$(od -A n -t u4 -j 20 -N 4 some.bf | tr -d ' ')"
	# gzip's own copy of it has no index at all: read the long way, the same bits
	gzip -dc some.bf | gzip -1 >plain.bf
	seq 90 110 >ask.txt
	run --separate-stderr bfgrep -f some.bf ask.txt
	expect_status 0
	local marked=$output
	run --separate-stderr bfgrep -f plain.bf ask.txt
	expect_status 0
	expect_eq "answers" "$marked" "$output"
	expect_eq "bits" "$(bfinfo some.bf | grep 'bits set')" "$(bfinfo plain.bf | grep 'bits set')"
}

# minor_faults CMD...: run CMD (its output to out), print the page faults it took.
minor_faults() {
	/usr/bin/time -f '%R' -o faults.txt "$@" >out 2>err || true
	tail -n 1 faults.txt
}

@test "sparse: input files that will fill a big filter make it dense from the start; a pipe stages its first keys" {
	is_plain_build || skip "sanitizers fault in their own shadow memory"
	local file pipe
	# -n 3e7: 83 MB of bits in 40 spans, dense on its own after 40 x 512 = 20,480 adds
	seq 30000 >keys.txt
	file=$(minor_faults bfuniq -n 3e7 -p 1e-4 --key "$KEY" keys.txt)
	cp out from-file.txt
	pipe=$(minor_faults sh -c "cat keys.txt | bfuniq -n 3e7 -p 1e-4 --key $KEY")
	cmp from-file.txt out
	expect_eq "lines" "30000" "$(wc -l <out | tr -d ' ')"
	# a 4 KiB page where each of the pipe's first 20,480 keys lands would be
	# about 13,000 faults (15,000-17,000 for the whole run, as it was before
	# the table); staged, they are a table's few MB, then the spans whole
	# (about 3,300, sh and cat included); the file, a span at a time (1,100)
	[ "$pipe" -lt 8000 ] || { echo "the pipe took $pipe faults" >&2; false; }
	[ "$file" -lt "$pipe" ] || { echo "the file took $file faults, the pipe $pipe" >&2; false; }
}

@test "sparse: 100,000 keys through bfuniq -n 1e9 cost a table's bytes, not a page each" {
	local kib
	seq 100000 >keys.txt
	# a page each was 380 MB; their blocks in a table, under 19 MB of it
	kib=$(peak_kib sh -c "cat keys.txt | bfuniq -n 1e9 -p 1e-4 --key $KEY")
	under_kib 65536 "$kib" bfuniq
	expect_eq "lines written" "100000" "$(wc -l <out | tr -d ' ')"
	# and with every third a repeat, the same answers as the saved filter gives
	awk '{ print; if (NR % 3 == 0) print NR / 3 }' keys.txt >mixed.txt
	bfuniq -n 1e9 -p 1e-4 --key "$KEY" <mixed.txt >once.txt
	bfbuild -n 1e9 -p 1e-4 --key "$KEY" -o all.bf <mixed.txt
	expect_eq "distinct" "100000" "$(wc -l <once.txt | tr -d ' ')"
	expect_eq "found" "133333" "$(bfgrep -c -f all.bf mixed.txt)"
	cmp keys.txt once.txt
}

@test "sparse: a thousand keys repeated a thousand times through a pipe stay a thousand blocks" {
	local kib
	awk 'BEGIN { for (r = 0; r < 1000; r++) for (k = 1; k <= 1000; k++) print k }' >repeats.txt
	# counted by adds, a million lines turned -n 1e9 dense (672,000): 1.4 GB
	# of huge pages for the thousand keys' spans; counted by blocks, never
	kib=$(peak_kib sh -c "cat repeats.txt | bfuniq -n 1e9 -p 1e-4 --key $KEY")
	under_kib 65536 "$kib" bfuniq
	seq 1000 | cmp - out
}

@test "sparse: bfmerge of two shards of -n 2e8 with 1,000 keys each costs what they hold" {
	local kib
	seq 1000 | bfbuild -n 2e8 -p 1e-4 --key "$KEY" -o s1.bf
	seq 1001 2000 | bfbuild -n 2e8 -p 1e-4 --key "$KEY" -o s2.bf
	seq 2000 | bfbuild -n 2e8 -p 1e-4 --key "$KEY" -o both.bf
	# an OR of whole arrays touched all 550 MB of the result (as of 2.75 GB at -n 1e9)
	kib=$(peak_kib bfmerge -o merged.bf s1.bf s2.bf)
	under_kib 65536 "$kib" "bfmerge (OR)"
	cmp both.bf merged.bf
	kib=$(peak_kib bfmerge --intersect -o common.bf s1.bf both.bf)
	under_kib 65536 "$kib" "bfmerge --intersect"
	expect_eq "found in the intersection" "1000" "$(seq 2000 | bfgrep -c -f common.bf)"
}
