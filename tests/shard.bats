#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# shard.bats - --shard I/N and --shard-key: every key-taking program
# considers only the lines whose key is in partition I of N, the
# partition being bf(5)'s function, which tests/partition_ref.py computes
# again from its text, slowly, for every line. Each program's answer on
# partition I must be its answer on exactly the lines the reference puts
# there, and the same with -j 1 and -j 2 (with -j 2 a 1.5 MB file is read
# in ranges by both threads).

bats_require_minimum_version 1.5.0
load helpers

N=50000
PARTS=4
REF=$BATS_TEST_DIRNAME/partition_ref.py

setup_file() {
	local d=$BATS_FILE_TMPDIR
	# URLs, every third repeated later, some in capitals: 60000 lines
	seq -f 'https://example.com/page/%g' 1 $N >"$d/urls"
	seq -f 'HTTPS://EXAMPLE.COM/PAGE/%g' 1 3 $N >>"$d/urls"
	# the reference partition of each line, as a column beside it
	python3 "$REF" "$KEY" $PARTS <"$d/urls" | paste -d ' ' - "$d/urls" >"$d/ref"
	tr 'A-Z' 'a-z' <"$d/urls" | python3 "$REF" "$KEY" $PARTS | paste -d ' ' - "$d/urls" >"$d/ref_folded"
}

setup() {
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
	cp "$BATS_FILE_TMPDIR/urls" "$BATS_FILE_TMPDIR/ref" "$BATS_FILE_TMPDIR/ref_folded" .
}

# part I [REF]: the lines the reference (file ref, or REF) puts in partition I, in input order.
part() {
	awk -v i="$1" '$1 == i { sub(/^[0-9]+ /, ""); print }' "${2:-ref}"
}

@test "shard: bf(5)'s reference implementation agrees with the SipHash-2-4 vectors" {
	run python3 "$REF" --vectors "$BATS_TEST_DIRNAME/data/siphash-vectors.txt"
	expect_status 0
	expect_output "64 vectors agree"
}

@test "shard: bfuniq --shard I/N writes exactly partition I's first sightings, in input order; the union is the unsharded output" {
	local i
	bfuniq -p 1e-9 --key "$KEY" urls >all.txt
	for i in 0 1 2 3; do
		bfuniq -p 1e-9 --key "$KEY" --shard $i/$PARTS --shard-key "$KEY" urls >out$i.txt
		part $i | awk '!s[$0]++' | cmp - out$i.txt
		# every partition has some, none has most: 50000 keys into 4
		[ "$(wc -l <out$i.txt)" -gt 10000 ]
	done
	cat out0.txt out1.txt out2.txt out3.txt | sort | cmp - <(sort all.txt)
}

@test "shard: bfuniq -i partitions folded keys, so every case of a key meets in one partition" {
	local i
	for i in 0 1 2 3; do
		bfuniq -p 1e-9 -i --shard $i/$PARTS --shard-key "$KEY" urls >out$i.txt
		part $i ref_folded | awk '{ k = tolower($0) } !s[k]++' | cmp - out$i.txt
	done
}

@test "shard: bfgrep --shard partitions keys folded when its filters fold (-i), refuses filters that disagree" {
	bfbuild -n 100000 -p 1e-9 -i --key "$KEY" -o folded.bf urls
	part 1 ref_folded >mine.txt
	bfgrep -f folded.bf --shard 1/$PARTS --shard-key "$KEY" urls | cmp - mine.txt
	bfbuild -n 100000 -p 1e-9 --key "$KEY" -o plain.bf urls
	run --separate-stderr bfgrep -f folded.bf -f plain.bf --shard 1/$PARTS --shard-key "$KEY" urls
	expect_fail "bfgrep: --shard: some filters fold case (-i) and some do not: a key has no one partition"
}

@test "shard: bfbuild --shard with -j 1 and -j 2 builds the filter of exactly partition I's lines" {
	local i j
	for i in 0 3; do
		part $i >mine.txt
		bfbuild -n $N -p 1e-4 --key "$KEY" -o want.bf mine.txt
		for j in 1 2; do
			bfbuild -n $N -p 1e-4 --key "$KEY" -j $j --shard $i/$PARTS --shard-key "$KEY" -o got.bf urls
			cmp want.bf got.bf
		done
	done
}

@test "shard: bfgrep --shard selects and counts only partition I's lines, with -j 1 and -j 2" {
	local j
	bfbuild -n $N -p 1e-9 --key "$KEY" -o all.bf urls
	part 2 >mine.txt
	for j in 1 2; do
		run --separate-stderr bfgrep -j $j -f all.bf --shard 2/$PARTS --shard-key "$KEY" -c urls
		expect_status 0
		expect_output "$(wc -l <mine.txt | tr -d ' ')"
	done
	bfgrep -f all.bf --shard 2/$PARTS --shard-key "$KEY" urls | cmp - mine.txt
	# -v: a line of another partition is not considered, so not written either
	run --separate-stderr bfgrep -v -f all.bf --shard 2/$PARTS --shard-key "$KEY" urls
	expect_status 1
	expect_output ""
}

@test "shard: bfcount and bftop --shard count exactly partition I's lines, with -j 1 and -j 2" {
	local j
	part 1 >mine.txt
	bfcount --key "$KEY" -o want.hll mine.txt
	# -v: the keys that may be frequent too, with bounds (no URL is surely
	# frequent here: bftop's status is 1 both ways, and its summary the same)
	run --separate-stderr bftop -v -n 5 mine.txt
	local want=$output want_status=$status
	[ -n "$want" ]
	for j in 1 2; do
		bfcount --key "$KEY" -j $j --shard 1/$PARTS --shard-key "$KEY" -o got.hll urls
		cmp want.hll got.hll
		run --separate-stderr bftop -v -n 5 -j $j --shard 1/$PARTS --shard-key "$KEY" urls
		expect_status "$want_status"
		expect_output "$want"
	done
}

@test "shard: -k and -t cut the key a line is partitioned by; a line without the field is partition 0's" {
	local i
	awk '{ print NR "," $0 ",x" }' urls >fields.csv
	echo "no-field-here" >>fields.csv
	cut -d , -f 2 fields.csv | python3 "$REF" "$KEY" $PARTS | paste -d ' ' - fields.csv >ref_fields
	# the keyless line: partition 0 in the reference column too
	sed -i '$ s/^[0-9]* /0 /' ref_fields
	bfbuild -n 1 --key "$KEY" -o empty.bf </dev/null
	for i in 0 1 2 3; do
		bfgrep -v -f empty.bf -k 2 -t , --shard $i/$PARTS --shard-key "$KEY" fields.csv >out$i.txt
		part $i ref_fields | cmp - out$i.txt
	done
	tail -n 1 out0.txt | grep -qx no-field-here
}

@test "shard: --jsonl partitions the value at the path, as the program keys it" {
	local i
	awk '{ printf "{\"n\":%d,\"url\":\"%s\"}\n", NR, $0 }' urls >lines.json
	bfbuild -n 1 --key "$KEY" -o empty.bf </dev/null
	for i in 0 2; do
		bfgrep -v -f empty.bf --jsonl -k .url --shard $i/$PARTS --shard-key "$KEY" lines.json >out$i.json
		sed 's/.*"url":"\(.*\)"}$/\1/' out$i.json | cmp - <(part $i)
	done
}

@test "shard: bfgrep -w tests each word in its own partition only" {
	local i
	# two words a line (-w breaks URLs at ':'); the filter holds partition 1's words alone
	seq -f 'w%g' 1 $N >w.txt
	paste -d ' ' w.txt <(tac w.txt) >words.txt
	python3 "$REF" "$KEY" $PARTS <w.txt | paste -d ' ' - w.txt >ref_words
	part 1 ref_words >mine.txt
	bfbuild -n $N -p 1e-9 --key "$KEY" -o mine.bf mine.txt
	bfgrep -w -f mine.bf --shard 1/$PARTS --shard-key "$KEY" words.txt >out1.txt
	# the lines with a word in partition 1: all of them, from partition 1
	awk 'NR == FNR { in1[$0] = 1; next } ($1 in in1) || ($2 in in1)' mine.txt words.txt | cmp - out1.txt
	# other partitions test none of partition 1's words, so select nothing
	for i in 0 2 3; do
		run --separate-stderr bfgrep -w -f mine.bf --shard $i/$PARTS --shard-key "$KEY" words.txt
		expect_status 1
		expect_output ""
	done
}

@test "shard: --shard without --shard-key, --shard-key alone, and a partition out of range are refused" {
	run --separate-stderr bfuniq --shard 1/4 urls
	expect_usage_error bfuniq "--shard needs --shard-key: every machine must partition with the same key"
	run --separate-stderr bfbuild -o x.bf --shard-key "$KEY" urls
	expect_usage_error bfbuild "--shard-key partitions for --shard: give --shard I/N too"
	run --separate-stderr bfcount --shard 4/4 --shard-key "$KEY" urls
	expect_usage_error bfcount "invalid --shard '4/4': partitions are numbered 0 to 3"
	run --separate-stderr bftop --shard 1/ --shard-key "$KEY" urls
	expect_usage_error bftop "invalid --shard '1/': expected I/N, such as 3/16 (I from 0 to N-1)"
	run --separate-stderr bfuniq --shard 0/0 --shard-key "$KEY" urls
	expect_usage_error bfuniq "invalid --shard '0/0': N, the number of partitions, is at least 1"
	run --separate-stderr bfgrep -f x.bf --shard 1/4 --shard-key nothex urls
	expect_any_usage_error bfgrep
	[ ! -e x.bf ]
}

@test "shard: line numbers count every line of the input, those of other partitions too (bfgrep -n, messages; file, pipe, -j)" {
	local shard j want
	seq 1 3000 >nums
	bfbuild --key "$KEY" -o nums.bf nums
	for shard in 0/3 1/3 2/3; do
		# the true line number of each line of partition shard is the line itself
		want=$(bfgrep -f nums.bf --shard $shard --shard-key "$KEY" nums | awk '{ print $0 ":" $0 }')
		[ -n "$want" ]
		run --separate-stderr bfgrep -n -f nums.bf --shard $shard --shard-key "$KEY" nums
		expect_output "$want"
		run --separate-stderr bash -c 'cat nums | bfgrep -n -f nums.bf --shard "$1" --shard-key "$2"' _ $shard "$KEY"
		expect_output "$want"
	done
	# a line that is not JSON, line 250001 of a file big enough to be read in
	# ranges: named at its own line by partition 0, on every way in
	seq 1 300000 | awk '{ if (NR == 250001) print "oops"; else printf "{\"k\":\"%d\"}\n", $0 }' >big.json
	for j in 1 2; do
		run --separate-stderr bfuniq -j $j --jsonl -k .k --shard 0/3 --shard-key "$KEY" big.json
		expect_status 2
		expect_stderr "bfuniq: big.json:250001: not JSON: not a JSON value"
		run --separate-stderr bash -c 'cat big.json | bfuniq -j "$1" --jsonl -k .k --shard 0/3 --shard-key "$2"' _ $j "$KEY"
		expect_status 2
		expect_stderr "bfuniq: (standard input):250001: not JSON: not a JSON value"
	done
}
