#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# bfsplit.bats - one pass over the input, N outputs by the partition of
# each line's key (bf(5) PARTITIONS), each in input order, written
# atomically. The partitions are checked against tests/partition_ref.py,
# the function written again from bf(5)'s text, and against the programs'
# own --shard, so that bfsplit then bfuniq is bfuniq --shard.

bats_require_minimum_version 1.5.0
load helpers

REF=$BATS_TEST_DIRNAME/partition_ref.py

# keys.txt: 30000 URLs, every fourth again later; ref: "PARTITION LINE" for each.
make_input() {
	seq 1 20000 | sed 's|^|https://example.com/page/|' >keys.txt
	seq 1 4 40000 | sed 's|^|https://example.com/page/|' >>keys.txt
	python3 "$REF" "$KEY" "$1" <keys.txt | paste -d ' ' - keys.txt >ref
}

# part I [REF]: the lines the reference puts in partition I, in input order.
part() {
	awk -v i="$1" '$1 == i { sub(/^[0-9]+ /, ""); print }' "${2:-ref}"
}

@test "bfsplit: each output holds exactly its partition's lines, in input order, and all N are written" {
	local i
	make_input 16
	run --separate-stderr bfsplit -N 16 --shard-key "$KEY" keys.txt
	expect_status 0
	expect_stderr ""
	expect_output ""
	[ "$(ls part-* | wc -l)" -eq 16 ]
	for i in $(seq 0 15); do
		part $i | cmp - "$(printf 'part-%03d' $i)"
		# 30000 lines into 16: about 1875 each
		[ "$(wc -l <"$(printf 'part-%03d' $i)")" -gt 1500 ]
	done
	cat part-* | sort | cmp - <(sort keys.txt)
}

@test "bfsplit: an empty partition is an empty file; an empty input gives N empty files" {
	run --separate-stderr bfsplit -N 3 --shard-key "$KEY" -o 'e%d' </dev/null
	expect_status 0
	[ -f e0 ] && [ -f e1 ] && [ -f e2 ] && [ ! -s e0 ] && [ ! -s e1 ] && [ ! -s e2 ]
	put_lines one.txt hello
	bfsplit -N 16 --shard-key "$KEY" -o 'o%02d' one.txt
	# the reference (and bf(5)) put hello in partition 8 of 16
	expect_file o08 'hello\n'
	[ "$(cat o[0-9]* | wc -l)" -eq 1 ]
}

@test "bfsplit: bfuniq of output I is bfuniq --shard I/N of the whole input, for -j 1 and -j 2" {
	local i j
	make_input 4
	for j in 1 2; do
		mkdir j$j
		(cd j$j && bfsplit -j $j -N 4 --shard-key "$KEY" ../keys.txt)
	done
	for i in 0 1 2 3; do
		cmp j1/part-00$i j2/part-00$i
		bfuniq -p 1e-9 j1/part-00$i >split$i.txt
		bfuniq -p 1e-9 --shard $i/4 --shard-key "$KEY" keys.txt | cmp - split$i.txt
	done
	# the union of the partitions' first sightings is the whole input's
	cat split0.txt split1.txt split2.txt split3.txt | sort | cmp - <(awk '!s[$0]++' keys.txt | sort)
}

@test "bfsplit: -k, -t and -i cut and fold the key; a line without the field goes to partition 0" {
	local i
	awk '{ print NR "\t" toupper($0) }' "$BATS_TEST_DIRNAME/../README.md" | head -n 3000 >t.tsv
	printf 'no-tab-here\n' >>t.tsv
	cut -f 2 t.tsv | tr 'A-Z' 'a-z' | python3 "$REF" "$KEY" 4 | paste -d ' ' - t.tsv >ref_t
	sed -i '$ s/^[0-9]* /0 /' ref_t	# the keyless line: partition 0
	bfsplit -N 4 --shard-key "$KEY" -k 2 -t "$(printf '\t')" -i -o 't%d' t.tsv
	for i in 0 1 2 3; do
		part $i ref_t | cmp - t$i
	done
	tail -n 1 t0 | grep -qx no-tab-here
}

@test "bfsplit: --header is written at the top of every output, and -k may name a field" {
	local i
	printf 'id,url\n' >h.csv
	seq 1 500 | awk '{ print $1 ",https://example.com/" ($1 % 97) }' >>h.csv
	bfsplit -N 3 --shard-key "$KEY" --header -k url -t , -o 'h%d.csv' h.csv
	for i in 0 1 2; do
		[ "$(head -n 1 h$i.csv)" = "id,url" ]
	done
	tail -n +2 h.csv | cut -d , -f 2 | python3 "$REF" "$KEY" 3 | paste -d ' ' - <(tail -n +2 h.csv) >ref_h
	for i in 0 1 2; do
		tail -n +2 h$i.csv | cmp - <(part $i ref_h)
	done
}

@test "bfsplit: -z splits NUL-ended records and ends each with NUL" {
	# the reference puts b in partition 15 of 16, hello in 8
	printf 'b\0hello\0' >z.bin
	bfsplit -z -N 16 --shard-key "$KEY" -o 'z%d' z.bin
	expect_file z8 'hello\0'
	expect_file z15 'b\0'
	[ "$(cat z[0-9]* | tr -cd '\0' | wc -c)" -eq 2 ]
}

@test "bfsplit: --jsonl keys on the path; a line not JSON stops the run (no output) or, with skip, goes to 0" {
	printf '{"u":"hello"}\n{"u":"b"}\nnot json\n' >l.json
	run --separate-stderr bfsplit -N 16 --shard-key "$KEY" --jsonl -k .u -o 'j%d' l.json
	expect_one_line_error "bfsplit: l.json"
	[ -z "$(ls j* 2>/dev/null)" ]
	bfsplit -N 16 --shard-key "$KEY" --jsonl -k .u --bad-line=skip -o 'j%d' l.json
	expect_file j8 '{"u":"hello"}\n'
	grep -qx 'not json' j0
}

@test "bfsplit: -o takes one %d or %0Wd and %% for a percent sign; other patterns are refused" {
	put_lines in.txt hello
	bfsplit -N 16 --shard-key "$KEY" -o 'p%%-%05d.txt' in.txt
	expect_file 'p%-00008.txt' 'hello\n'
	run --separate-stderr bfsplit -N 2 --shard-key "$KEY" -o 'x' in.txt
	expect_usage_error bfsplit "invalid -o 'x': it needs a %d for the partition (part-%03d)"
	run --separate-stderr bfsplit -N 2 --shard-key "$KEY" -o 'x%d%d' in.txt
	expect_usage_error bfsplit "invalid -o 'x%d%d': it must have one %d, not more"
	run --separate-stderr bfsplit -N 2 --shard-key "$KEY" -o 'x%s' in.txt
	expect_usage_error bfsplit "invalid -o 'x%s': the partition is %d or %0Wd (such as %03d)"
	run --separate-stderr bfsplit -N 2 --shard-key "$KEY" -o 'x%099d' in.txt
	expect_usage_error bfsplit "invalid -o 'x%099d': the width of %0Wd is 1 to 20"
	# a '%' at the very end: refused, not read past (it was)
	run --separate-stderr bfsplit -N 2 --shard-key "$KEY" -o 'x%' in.txt
	expect_usage_error bfsplit "invalid -o 'x%': the partition is %d or %0Wd (such as %03d)"
	run --separate-stderr bfsplit -N 2 --shard-key "$KEY" -o 'x%d%' in.txt
	expect_usage_error bfsplit "invalid -o 'x%d%': it must have one %d, not more"
}

@test "bfsplit: -N and --shard-key are needed; --shard and --key-file are refused" {
	put_lines in.txt a
	run --separate-stderr bfsplit --shard-key "$KEY" in.txt
	expect_usage_error bfsplit "-N is needed: how many partitions to split into"
	run --separate-stderr bfsplit -N 2 in.txt
	expect_usage_error bfsplit "--shard-key is needed: every machine must partition with the same key"
	run --separate-stderr bfsplit -N 2 --shard 1/2 --shard-key "$KEY" in.txt
	expect_usage_error bfsplit "--shard picks one partition; bfsplit writes them all (-N)"
	run --separate-stderr bfsplit -N 2 --shard-key "$KEY" --key-file k in.txt
	expect_usage_error bfsplit "--key-file: bfsplit builds no filter; its key is --shard-key"
	run --separate-stderr bfsplit -N 0 --shard-key "$KEY" in.txt
	expect_any_usage_error bfsplit
	run --separate-stderr bfsplit -N 65537 --shard-key "$KEY" in.txt
	expect_any_usage_error bfsplit
	[ -z "$(ls part-* 2>/dev/null)" ]
}

@test "bfsplit: an input that cannot be read writes no output and leaves older outputs as they were" {
	put_lines in.txt a b c
	bfsplit -N 2 --shard-key "$KEY" -o 'o%d' in.txt
	cp o0 was0
	cp o1 was1
	put_lines new.txt d e f
	run --separate-stderr bfsplit -N 2 --shard-key "$KEY" -o 'o%d' new.txt missing.txt
	expect_status 2
	expect_stderr "bfsplit: missing.txt: No such file or directory"
	cmp o0 was0
	cmp o1 was1
	# no temporary file left behind
	[ "$(ls -A | grep -c '^\.')" -eq 0 ]
}

@test "bfsplit: an output that cannot be created is one line naming it, exit 2, and no other is left" {
	put_lines in.txt a
	mkdir ro && chmod 555 ro
	if touch ro/probe 2>/dev/null; then
		skip "running as a user who may write anywhere"
	fi
	run --separate-stderr bfsplit -N 2 --shard-key "$KEY" -o 'ro/o%d' in.txt
	expect_one_line_error "bfsplit: ro/o0: "
	[ -z "$(ls -A ro)" ]
}

@test "bfsplit: the README's GNU parallel recipe, one bfuniq --shard per core, equals awk's first sightings" {
	command -v parallel >/dev/null 2>&1 || skip "GNU parallel is not installed (apt-get install parallel)"
	export HOME="$BATS_TEST_TMPDIR"
	make_input 4
	run --separate-stderr parallel --will-cite -j 4 "bfuniq -p 1e-9 --key $KEY -f seen-{}.bf --shard {}/4 \
		--shard-key $KEY keys.txt >new-{}.txt" ::: 0 1 2 3
	expect_status 0
	cat new-0.txt new-1.txt new-2.txt new-3.txt | sort | cmp - <(awk '!s[$0]++' keys.txt | sort)
	# a second pass over the same lines: every key is in its partition's state
	parallel --will-cite -j 4 "bfuniq -f seen-{}.bf --shard {}/4 --shard-key $KEY keys.txt >again-{}.txt" ::: 0 1 2 3
	[ "$(cat again-*.txt | wc -l)" -eq 0 ]
}

@test "bfsplit: numbered lines split, de-duplicated and merged come back in input order (README)" {
	local i
	make_input 4
	awk '{ print NR "\t" $0 }' keys.txt >numbered.txt
	bfsplit -N 4 --shard-key "$KEY" -t "$(printf '\t')" -k 2- -o 'n%d' numbered.txt
	for i in 0 1 2 3; do
		bfuniq -p 1e-9 -t "$(printf '\t')" -k 2- n$i >u$i
	done
	sort -n -m u0 u1 u2 u3 | cut -f 2- | cmp - <(awk '!s[$0]++' keys.txt)
}
