#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# scaleout.bats - the README recipe "Scale-out: many cores, many machines",
# run as written: an empty template, shards built --like it by GNU parallel
# (over a file with --pipepart, over a stream with --pipe), then bfmerge.
# The merged filter must be the serial build, byte for byte.
#
# 200000 URLs (6.3 MB) in blocks of 1 MB give six or seven shards, so the
# merge really combines several; --block -1 and --round-robin with -j 3
# give three, and NUL-ended records (-z) are cut with --recend.
#
# GNU parallel is the Debian package `parallel` (installed by tests/deps.sh
# check); without it the tests are skipped, saying so. It runs with HOME in
# the test's directory and --will-cite, so it neither asks for a citation
# nor writes to the real home directory.

bats_require_minimum_version 1.5.0
load helpers

N=200000
P=1e-4

setup() {
	for prog in bfbuild bfmerge bfgrep; do
		if [ ! -x "$BFTOOLS_BIN/$prog" ]; then
			echo "$BFTOOLS_BIN/$prog is missing: build it (make) or set BFTOOLS_BIN" >&2
			return 1
		fi
	done
	command -v parallel >/dev/null 2>&1 ||
		skip "GNU parallel is not installed (apt-get install parallel): the recipe is not checked"
	export HOME="$BATS_TEST_TMPDIR"
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
	seq -f 'https://example.com/page/%g' 1 $N >urls.txt
	# the template: the shape and key every shard must share
	bfbuild -n $N -p $P --key "$KEY" -o template.bf </dev/null
	# the reference: the same keys added by one process
	bfbuild -n $N -p $P --key "$KEY" -o serial.bf urls.txt
}

# shard_count: how many shard files there are (at least 2 for a real test).
shard_count() {
	ls shard*.bf | wc -l | tr -d ' '
}

@test "scaleout: parallel --pipepart shards, merged, are the serial build byte for byte" {
	run --separate-stderr parallel --will-cite --pipepart -a urls.txt --block 1M \
		'bfbuild --like template.bf -o shard{#}.bf'
	expect_status 0
	expect_stderr ""
	[ "$(shard_count)" -ge 5 ] || expect_eq "shards" "5 or more" "$(shard_count)"
	run --separate-stderr bfmerge -o merged.bf shard*.bf
	expect_status 0
	expect_stderr ""
	cmp merged.bf serial.bf
	expect_eq insertions $N "$(header_uint merged.bf 96 8)"
}

@test "scaleout: cat FILE | parallel --pipe shards, merged, are the serial build byte for byte" {
	run --separate-stderr bash -c "cat urls.txt | parallel --will-cite --pipe --block 1M \
		'bfbuild --like template.bf -o shard{#}.bf'"
	expect_status 0
	expect_stderr ""
	[ "$(shard_count)" -ge 5 ] || expect_eq "shards" "5 or more" "$(shard_count)"
	run --separate-stderr bfmerge -o merged.bf shard*.bf
	expect_status 0
	expect_stderr ""
	cmp merged.bf serial.bf
}

@test "scaleout: --pipepart --block -1 makes one shard per job, merged to the serial build" {
	run --separate-stderr parallel --will-cite -j 3 --pipepart -a urls.txt --block -1 \
		'bfbuild --like template.bf -o shard{#}.bf'
	expect_status 0
	expect_eq "shards" 3 "$(shard_count)"
	bfmerge -o merged.bf shard*.bf
	cmp merged.bf serial.bf
}

@test "scaleout: --pipe --round-robin makes one shard per job, merged to the serial build" {
	run --separate-stderr bash -c "cat urls.txt | parallel --will-cite -j 3 --pipe --round-robin \
		--block 256k 'bfbuild --like template.bf -o shard{#}.bf'"
	expect_status 0
	expect_eq "shards" 3 "$(shard_count)"
	bfmerge -o merged.bf shard*.bf
	cmp merged.bf serial.bf
}

@test "scaleout: with -z, parallel --recend '\\0' cuts between records, merged to the serial build" {
	# records "key<newline>N" ended by NUL: a cut at a newline would split them
	seq -f 'key %g' 1 60000 | tr ' \n' '\n\000' >in.z
	bfbuild -z -n 60000 --key "$KEY" -o zserial.bf in.z
	bfbuild -n 60000 --key "$KEY" -o ztemplate.bf </dev/null
	parallel --will-cite -j 3 --pipepart --recend '\0' -a in.z --block -1 \
		'bfbuild -z --like ztemplate.bf -o shard{#}.bf'
	expect_eq "shards" 3 "$(shard_count)"
	bfmerge -o merged.bf shard*.bf
	cmp merged.bf zserial.bf
}

@test "scaleout: the merged filter finds every URL it was built from" {
	parallel --will-cite --pipepart -a urls.txt --block 1M 'bfbuild --like template.bf -o shard{#}.bf'
	bfmerge -o merged.bf shard*.bf
	run --separate-stderr bfgrep -c -f merged.bf urls.txt
	expect_status 0
	expect_output $N
}

@test "scaleout: shards from templates made apart without --key are refused by bfmerge" {
	# each bfbuild without --key draws a fresh random key: the bits of the
	# two halves would not line up, so bfmerge must not combine them
	bfbuild -n $N -p $P -o t1.bf </dev/null
	bfbuild -n $N -p $P -o t2.bf </dev/null
	head -n 100000 urls.txt | bfbuild --like t1.bf -o shard1.bf
	tail -n +100001 urls.txt | bfbuild --like t2.bf -o shard2.bf
	run --separate-stderr bfmerge -o merged.bf shard1.bf shard2.bf
	expect_fail "bfmerge: shard2.bf: cannot be merged with shard1.bf: different key"
	[ ! -e merged.bf ]
}
