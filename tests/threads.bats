#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# threads.bats - the N-thread input pipeline (lib/io/pipeline.c) changes
# nothing but speed: every program gives byte-identical output, messages,
# exit status and written filters and sketches with -j 1 (all on one
# thread), 2 (a reader thread beside it), 3, 4 and 8 (workers besides:
# more threads than this machine's CPUs, so threads are descheduled while
# holding work), on inputs long enough for many batches with the reader
# working ahead; an early stop does not wait for input that never comes;
# regular files that bfbuild and bfgrep -c/-l/-L/-q read in ranges on
# every thread (lib/io/ranges.c) give what -j 1's one stream gives, as do
# those that bfuniq and bfbuild's ordered path read in ranges and consume
# in file order (cmd/cli/inorder.c) against a pipe's one stream; and -j
# and BFTOOLS_THREADS take only 1..256.

load helpers
bats_require_minimum_version 1.5.0

# A stream with repeats, mixed case, fields and words, long enough that
# the reader fills every slot of the ring many times over.
make_stream() {
	awk 'BEGIN {
		srand(7)
		for (i = 0; i < 300000; i++) {
			k = int(rand() * 40000)
			printf "%s%d field%d Word%d\n", (k % 3 ? "key" : "KEY"), k, k % 97, k % 13
		}
	}' >stream.txt
}

# The thread counts every comparison runs with.
THREADS="1 2 3 4 8"

# run_both NAME PROG ARGS...: run PROG -j N ARGS... for every N of
# $THREADS; stdout, stderr and exit status must be those of -j 1. Leaves
# them in NAME.N.{out,err,st}.
run_both() {
	local name=$1 prog=$2 t
	shift 2
	for t in $THREADS; do
		local st=0
		"$prog" -j "$t" "$@" >"$name.$t.out" 2>"$name.$t.err" || st=$?
		echo "$st" >"$name.$t.st"
		cmp "$name.1.out" "$name.$t.out"
		cmp "$name.1.err" "$name.$t.err"
		cmp "$name.1.st" "$name.$t.st"
	done
}

# same_file_for_all NAME PROG ARGS...: PROG -j N ARGS... -o NAME.N.bf for
# every N writes the same bytes.
same_file_for_all() {
	local name=$1 prog=$2 t
	shift 2
	for t in $THREADS; do
		"$prog" -j "$t" "$@" -o "$name.$t.bf"
		cmp "$name.1.bf" "$name.$t.bf"
	done
}

@test "threads: bfuniq output is identical on every thread count (plain, -k, -w, -i, -d, -v)" {
	make_stream
	run_both plain bfuniq -n 1e5 -p 1e-4 --key "$KEY" stream.txt
	run_both field bfuniq -n 1e5 --key "$KEY" -k 2 stream.txt
	run_both words bfuniq -n 1e5 --key "$KEY" -w stream.txt
	run_both fold bfuniq -n 1e5 --key "$KEY" -i stream.txt
	run_both dups bfuniq -n 1e5 --key "$KEY" -d stream.txt
	run_both verbose bfuniq -n 1e5 --key "$KEY" -v stream.txt
	# and the output is really the first copy of each line, in order
	[ "$(wc -l <plain.1.out)" -gt 30000 ]
	awk '!s[$0]++' stream.txt >awk.txt
	expect_eq "lines bfuniq lost against awk (at most a few at 1e-4)" "yes" \
		"$([ "$(($(wc -l <awk.txt) - $(wc -l <plain.2.out)))" -le 5 ] && echo yes || echo no)"
}

# 250,000 distinct lines among 400,000: a growing filter (first stage
# 100,000 keys) adds stages while the reader works ahead.
make_growing_stream() {
	awk 'BEGIN { srand(11); for (i = 0; i < 400000; i++) printf "line%d\n", int(rand() * 250000) }' >grow.txt
}

# The same stream as NDJSON and as CSV with quoted fields (one in nine
# records spanning two lines), some lines not JSON.
make_formats() {
	awk 'BEGIN {
		srand(11)
		for (i = 0; i < 200000; i++) {
			k = int(rand() * 30000)
			if (i % 997 == 5) print "not json " i
			else printf "{\"n\":%d,\"u\":{\"id\":\"k%d\"},\"t\":[%d]}\n", i, k, k % 7
		}
	}' >stream.json
	awk 'BEGIN {
		srand(12)
		print "n,name,x"
		for (i = 0; i < 200000; i++) {
			k = int(rand() * 30000)
			if (k % 9 == 0) printf "%d,\"Smith, %d\nJr\",x\n", i, k
			else printf "%d,\"Smith, %d\",x\n", i, k
		}
	}' >stream.csv
}

@test "threads: keys cut on the workers (--jsonl, --csv, field lists, -i) give the -j 1 lines and files" {
	make_formats
	make_stream
	run_both json bfuniq -n 1e5 --key "$KEY" --jsonl -k .u.id,.t[0] --bad-line=skip -v stream.json
	run_both csv bfuniq -n 1e5 --key "$KEY" --csv --header -k name stream.csv
	run_both list bfuniq -n 1e5 --key "$KEY" -k 2,4 -i stream.txt
	run_both jsonwin bfuniq --window 20000keys --key "$KEY" --jsonl -k .u.id --bad-line=skip stream.json
	same_file_for_all csvbuild bfbuild -n 1e5 --key "$KEY" --csv --header -k name stream.csv
	[ "$(wc -l <json.1.out)" -gt 20000 ]
	grep -q 'not json' json.1.out
}

@test "threads: a growing bfuniq (new stages mid-stream) is identical on every thread count" {
	make_growing_stream
	run_both grow bfuniq --key "$KEY" -v grow.txt
	grep -q '(2 stages' grow.2.err
}

# From -j 3 up bfuniq shares a blocked seen-set's test-and-add out to one
# thread per region of blocks (lib/owners.c); every key must still see
# the bits it sees on one thread. -j 16 gives 16 regions of a 1e5 filter.
@test "threads: bfuniq's region owners write the -j 1 lines and state on 1, 2, 3, 4, 8 and 16 threads (fixed, growing, -f twice, windows, classic; bfbuild windows)" {
	make_growing_stream
	head -n 150000 grow.txt >first.txt
	tail -n 250000 grow.txt >second.txt
	local THREADS="1 2 3 4 8 16" t
	run_both fixed bfuniq -n 1e5 -p 1e-4 --key "$KEY" -v grow.txt
	run_both growing bfuniq -p 1e-4 --key "$KEY" -v grow.txt
	grep -q '(2 stages' growing.16.err
	run_both window bfuniq --window 50000keys --key "$KEY" grow.txt
	run_both refresh bfuniq --window 50000keys --refresh -v --key "$KEY" grow.txt
	run_both timed bfuniq --window 10m --now 2026-11-26T12:00:00Z --key "$KEY" grow.txt
	run_both classic bfuniq -n 3e5 --layout classic --key "$KEY" grow.txt
	for t in $THREADS; do
		# a new state, then a second run adding to it (its first stage read-only)
		bfuniq -j "$t" -p 1e-3 --key "$KEY" -f "state.$t.bf" first.txt >"first.$t.out"
		bfuniq -j "$t" -f "state.$t.bf" second.txt >"second.$t.out"
		cmp first.1.out "first.$t.out"
		cmp second.1.out "second.$t.out"
		cmp state.1.bf "state.$t.bf"
		bfuniq -j "$t" --window 50000keys --key "$KEY" -f "wstate.$t.bf" grow.txt >"w.$t.out"
		cmp wstate.1.bf "wstate.$t.bf"
		bfbuild -j "$t" --window 50000keys --key "$KEY" -o "bw.$t.bf" grow.txt
		cmp bw.1.bf "bw.$t.bf"
	done
	# the first run already made a second stage: the second tested the first read-only
	bfinfo state.16.bf | grep -Eq '^stages: +2$'
}

@test "threads: bfgrep with filters of both foldings, -v and -c is identical on every thread count" {
	make_stream
	awk 'NR % 7 == 0 { print $1 }' stream.txt | bfbuild -n 1e5 --key "$KEY" -o plain.bf
	awk 'NR % 11 == 0 { print $1 }' stream.txt | bfbuild -n 1e5 -i --key "$KEY" -o folded.bf
	run_both both bfgrep -k 1 -f plain.bf -f folded.bf stream.txt
	run_both invert bfgrep -v -k 1 -f plain.bf -f folded.bf stream.txt
	run_both count bfgrep -c -k 1 -f folded.bf stream.txt
	[ "$(wc -l <both.2.out)" -gt 40000 ]
}

@test "threads: bfgrep's grep options over several files (-n -H -l -L -m -o -Z) are identical on every thread count" {
	make_stream
	awk 'NR % 7 == 0 { print $1 }' stream.txt | bfbuild -n 1e5 --key "$KEY" -o plain.bf
	split -l 70000 stream.txt part.
	run_both lines bfgrep -n -k 1 -f plain.bf part.aa part.ab part.ac
	run_both counts bfgrep -c -k 1 -f plain.bf part.aa part.ab part.ac
	run_both max bfgrep -m 5000 -H -n -k 1 -f plain.bf part.aa part.ab
	run_both files bfgrep -l -Z -k 1 -f plain.bf part.aa part.ab part.ac
	printf 'nothing here\n' >none.txt
	run_both without bfgrep -L -k 1 -f plain.bf part.aa none.txt part.ab
	run_both words bfgrep -o -w -f plain.bf part.ab
	# each file's lines are numbered from 1, and -m stops each file at 5000
	first=$(grep -m 1 '^part.ab:' max.2.out | cut -d: -f2)
	[ "$first" -lt 1000 ]
	expect_eq "-m per file" 10000 "$(wc -l <max.2.out)"
	expect_eq "-L" "none.txt" "$(cat without.2.out)"
	[ "$(wc -l <lines.2.out)" -gt 40000 ]
}

@test "threads: bfbuild writes byte-identical files on every thread count (each layout, growing, --remove)" {
	make_stream
	# blocked and classic: every thread sets bits (an OR); counting: in order
	same_file_for_all blocked bfbuild -n 1e5 --key "$KEY" stream.txt
	same_file_for_all classic bfbuild -n 1e5 --layout classic --key "$KEY" stream.txt
	same_file_for_all counting bfbuild -n 1e5 --layout counting --key "$KEY" stream.txt
	same_file_for_all fields bfbuild -n 1e5 -k 2 -i --key "$KEY" stream.txt
	# the filter is the one a single thread makes, not just the same each time
	cmp blocked.1.bf blocked.8.bf
	head -n 100000 stream.txt | bfbuild -j 1 -n 1e5 --layout counting --key "$KEY" -o part.bf
	for t in $THREADS; do
		cp counting.1.bf "removed.$t.bf"
		head -n 50000 stream.txt | bfbuild -j "$t" --remove -f "removed.$t.bf"
		cmp removed.1.bf "removed.$t.bf"
	done
	# a growing filter (bfuniq's state) that bfbuild -f adds stages to
	make_growing_stream
	head -n 1000 grow.txt | bfuniq --key "$KEY" -f start.bf >/dev/null
	for t in $THREADS; do
		cp start.bf "grown.$t.bf"
		bfbuild -j "$t" -f "grown.$t.bf" grow.txt
		cmp grown.1.bf "grown.$t.bf"
	done
	[ "$(bfinfo grown.8.bf | grep -c '^stage')" -ge 2 ] || bfinfo grown.8.bf >&2
	# and -v's report (keys, bits set, fill) agrees
	run_both report bfbuild -v -n 1e5 --key "$KEY" -o /dev/null stream.txt
}

# bfbuild's ordered adds (growing filters, checkpoints) go to region
# owners from -j 3 up, as bfuniq's do.
@test "threads: bfbuild's region owners write the -j 1 file on 1, 2, 3, 4, 8 and 16 threads (-f growing, --like growing, --checkpoint)" {
	make_growing_stream
	local THREADS="1 2 3 4 8 16" t
	head -n 1000 grow.txt | bfuniq --key "$KEY" -f start.bf >/dev/null
	bfbuild -j 1 -n 3e5 --key "$KEY" -o fixed.bf </dev/null
	for t in $THREADS; do
		cp start.bf "grown.$t.bf"
		bfbuild -j "$t" -f "grown.$t.bf" grow.txt
		cmp grown.1.bf "grown.$t.bf"
		bfbuild -j "$t" --like start.bf -o "like.$t.bf" grow.txt
		cmp like.1.bf "like.$t.bf"
		cp fixed.bf "ckpt.$t.bf"
		bfbuild -j "$t" -f "ckpt.$t.bf" --checkpoint 50000 grow.txt
		cmp ckpt.1.bf "ckpt.$t.bf"
	done
	[ "$(bfinfo like.16.bf | grep -c '^stage')" -ge 2 ]
}

@test "threads: bfcount gives the same estimate and sketch on every thread count" {
	make_stream
	run_both stream bfcount -v stream.txt
	run_both words bfcount -w stream.txt
	run_both field bfcount -k 2 -i stream.txt
	for t in $THREADS; do
		bfcount -j "$t" --key "$KEY" -o "sketch.$t.hll" stream.txt >/dev/null
		cmp sketch.1.hll "sketch.$t.hll"
	done
}

# make_limit_stream N FILE: N distinct keys ten times over, shuffled:
# about ten batches, so that every thread's partial counter (bfcount
# counts on every thread, sketch.h's sketch_shards) holds some of them
# and only their union reaches N. At precision 16 the exact phase holds
# 8192 distinct keys: 8192 stay exact, 8193 switch when the partials merge.
make_limit_stream() {
	awk -v n="$1" 'BEGIN { srand(3); for (r = 0; r < 10; r++) for (i = 0; i < n; i++) printf "%.9f key%d\n", rand(), i }' |
		sort | cut -d ' ' -f 2 >"$2"
}

# same_sketch_for_all NAME ARGS...: bfcount -j N -v ARGS... -o NAME.hll
# for every N: the count, the messages (-v: the phase, the insertions)
# and the sketch's bytes of -j 1. Leaves NAME.N.{out,err,hll}.
same_sketch_for_all() {
	local name=$1 t
	shift
	for t in $THREADS; do
		bfcount -j "$t" -v "$@" -o "$name.hll" >"$name.$t.out" 2>"$name.$t.err"
		mv "$name.hll" "$name.$t.hll"
		cmp "$name.1.out" "$name.$t.out"
		cmp "$name.1.err" "$name.$t.err"
		cmp "$name.1.hll" "$name.$t.hll"
	done
}

# added_for_all NAME BASE ARGS...: a copy of sketch BASE, with ARGS...
# added to it in place (-s --add) by bfcount -j N -v, for every N: the
# output, messages and bytes of -j 1. Leaves NAME.N.{out,err,hll}.
added_for_all() {
	local name=$1 base=$2 t
	shift 2
	for t in $THREADS; do
		cp "$base" "$name.hll"
		bfcount -j "$t" -v -s "$name.hll" --add "$@" >"$name.$t.out" 2>"$name.$t.err"
		mv "$name.hll" "$name.$t.hll"
		cmp "$name.1.out" "$name.$t.out"
		cmp "$name.1.err" "$name.$t.err"
		cmp "$name.1.hll" "$name.$t.hll"
	done
}

@test "threads: bfcount sketches are identical on every thread count in either phase and at the switch" {
	make_limit_stream 8192 limit.txt
	make_limit_stream 8193 over.txt
	make_stream
	same_sketch_for_all limit limit.txt
	expect_eq "count at the limit" 8192 "$(cat limit.1.out)"
	grep -q 'exact count' limit.1.err
	grep -q '81920 keys added' limit.1.err
	same_sketch_for_all over over.txt
	grep -q 'HyperLogLog estimate' over.1.err
	# precision 18 holds 32768: over.txt stays exact, stream.txt (40000) does not
	same_sketch_for_all p18exact --precision 18 over.txt
	expect_eq "count at precision 18" 8193 "$(cat p18exact.1.out)"
	same_sketch_for_all p18 --precision 18 stream.txt
	grep -q 'HyperLogLog estimate' p18.1.err
	same_sketch_for_all p4 --precision 4 -k 3 stream.txt
}

@test "threads: bfcount adds to an exact or estimating sketch (-s, --add) identically on every thread count" {
	make_limit_stream 8192 limit.txt
	make_stream
	# 5000 other keys: an exact sketch, which limit.txt's keys push past 8192
	seq 5000 | sed 's/^/other/' >other.txt
	bfcount -j 1 -o exact.hll other.txt >/dev/null
	bfcount -j 1 -o dense.hll stream.txt >/dev/null
	added_for_all to_exact exact.hll limit.txt
	grep -q 'HyperLogLog estimate' to_exact.1.err
	grep -q '86920 keys added' to_exact.1.err
	added_for_all to_dense dense.hll other.txt
	same_sketch_for_all union -s exact.hll -s dense.hll limit.txt
	# an exact sketch and input that stay exact together
	head -n 3000 other.txt >few.txt
	added_for_all stays_exact exact.hll few.txt
	expect_eq "count" 5000 "$(cat stays_exact.1.out)"
	grep -q 'exact count' stays_exact.1.err
}

@test "threads: bfinfo reports the same on every thread count" {
	make_stream
	bfbuild -j 1 -n 1e5 --key "$KEY" -o a.bf stream.txt
	bfcount -j 1 --key "$KEY" -o a.hll stream.txt >/dev/null
	run_both info bfinfo a.bf a.hll
	run_both json bfinfo --json a.bf
}

@test "threads: an unreadable input in the middle is reported and skipped alike on every thread count" {
	make_stream
	head -n 1000 stream.txt >a.txt
	tail -n 1000 stream.txt >b.txt
	run_both uniq bfuniq --key "$KEY" a.txt missing.txt b.txt
	expect_eq "exit status" 2 "$(cat uniq.2.st)"
	grep -q 'missing.txt' uniq.2.err
	cat a.txt b.txt | bfuniq --key "$KEY" >joined.txt
	cmp joined.txt uniq.2.out
	bfbuild --key "$KEY" -o a.bf a.txt
	run_both grep bfgrep -c -f a.bf a.txt . b.txt
	expect_eq "exit status" 2 "$(cat grep.2.st)"
}

# Start `bfgrep -q` on a FIFO whose writer stays open after one selected
# line: the reader thread is then blocked in read(2) when the match is
# found, and only cancelling it lets bfgrep exit.
quiet_on_stalled_input() {
	printf 'alice\nbob\n' | bfbuild --key "$KEY" -o names.bf
	mkfifo in.fifo
	bfgrep -j "$1" -q -f names.bf <in.fifo 3>&- &
	local pid=$! waited=0
	exec 7>in.fifo
	printf 'carol\nalice\n' >&7
	while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 200 ]; do
		sleep 0.1
		waited=$((waited + 1))
	done
	local alive=no st=0
	kill -0 "$pid" 2>/dev/null && alive=yes
	exec 7>&-
	wait "$pid" || st=$?
	expect_eq "bfgrep still waiting for input after a selected line" no "$alive"
	expect_eq "exit status" 0 "$st"
}

@test "threads: bfgrep -q exits at a selected line while the input stays open (two threads)" {
	quiet_on_stalled_input 2
}

@test "threads: bfgrep -q exits at a selected line while the input stays open (one thread)" {
	quiet_on_stalled_input 1
}

@test "threads: bfgrep -q exits at a selected line while the input stays open (four threads)" {
	quiet_on_stalled_input 4
}

@test "threads: BFTOOLS_THREADS=N is -j N, and -j overrides it" {
	make_stream
	bfuniq -j 3 --key "$KEY" stream.txt >j3.txt
	BFTOOLS_THREADS=3 bfuniq --key "$KEY" stream.txt >env3.txt
	cmp j3.txt env3.txt
	BFTOOLS_THREADS=junk bfuniq -j 2 --key "$KEY" stream.txt >j2.txt
	cmp j3.txt j2.txt
	# an empty BFTOOLS_THREADS is unset
	BFTOOLS_THREADS= bfuniq --key "$KEY" stream.txt >empty.txt
	cmp j3.txt empty.txt
}

@test "threads: -j and --threads take 1..256 only, in every program" {
	local prog arg why
	for prog in bfbuild bfgrep bfuniq bfcount bfmerge bfinfo; do
		for arg in 0:'must be at least 1' -1:'must be at least 1' abc:'not a number' \
			2x:'not a number' '':'not a number' 257:'too many (at most 256)' \
			99999999999999999999:'too many (at most 256)'; do
			why=${arg#*:}
			arg=${arg%%:*}
			run --separate-stderr "$prog" -j "$arg" --help
			expect_usage_error "$prog" "invalid thread count '$arg': $why"
			run --separate-stderr "$prog" --threads="$arg" --help
			expect_usage_error "$prog" "invalid thread count '$arg': $why"
		done
		run --separate-stderr "$prog" -j
		expect_usage_error "$prog" "option '-j' requires an argument"
		run --separate-stderr "$prog" -j 256 --version
		expect_status 0
	done
}

@test "threads: a bad BFTOOLS_THREADS is a usage error, in every program" {
	local prog
	printf 'a\n' >in.txt
	for prog in bfbuild bfgrep bfuniq bfcount bfmerge bfinfo; do
		BFTOOLS_THREADS=0 run --separate-stderr "$prog" in.txt
		expect_usage_error "$prog" "invalid BFTOOLS_THREADS '0': must be at least 1"
		BFTOOLS_THREADS=lots run --separate-stderr "$prog" in.txt
		expect_usage_error "$prog" "invalid BFTOOLS_THREADS 'lots': not a number"
	done
}

@test "threads: saved filters are byte-identical on every thread count (bfmerge, bfuniq -f; compressed on up to two)" {
	make_growing_stream
	head -n 200000 grow.txt | bfbuild -n 3e5 --key "$KEY" -o a.bf
	tail -n 200000 grow.txt | bfbuild -n 3e5 --key "$KEY" -o b.bf
	for t in $THREADS; do
		bfmerge -j "$t" -o "merged.$t.bf" a.bf b.bf
		cmp merged.1.bf "merged.$t.bf"
		bfuniq -j "$t" --key "$KEY" -f "state.$t.bf" grow.txt >"uniq.$t.txt"
		cmp state.1.bf "state.$t.bf"
		cmp uniq.1.txt "uniq.$t.txt"
	done
	# the state (two stages, 1.6 MB of bits) spans several 1 MiB chunks,
	# so both threads had pieces to compress
	[ "$(wc -c <state.8.bf)" -gt 1048576 ]
}

# Regular files big enough to be read in ranges by every thread (over
# 512 KiB a range, lib/io/ranges.c; stream.txt is 9 MB, so -j 8 gets 8):
# the same file as stream.txt with no final newline, NUL-delimited, with
# lines longer than a range among short ones, and one huge line alone.
make_ranged_inputs() {
	make_stream
	head -c -1 stream.txt >open.txt
	tr '\n' '\0' <stream.txt >nul.txt
	local long
	long=$(head -c 1500000 /dev/zero | tr '\0' x)
	{
		head -n 100000 stream.txt
		printf 'long1%s\nlong2%s\n' "$long" "$long"
		sed -n '100001,200000p' stream.txt
		printf 'long3%s\n' "$long"
		sed -n '200001,$p' stream.txt
	} >long.txt
	{ printf 'huge'; head -c 3000000 /dev/zero | tr '\0' y; } >huge.txt
	: >empty.txt
}

@test "threads: bfbuild reading regular files in ranges writes the -j 1 file (no final newline, -z, long lines, one huge line, several files, stdin)" {
	make_ranged_inputs
	same_file_for_all plain bfbuild -n 1e5 --key "$KEY" stream.txt
	same_file_for_all open bfbuild -n 1e5 --key "$KEY" open.txt
	same_file_for_all nul bfbuild -z -n 1e5 --key "$KEY" nul.txt
	same_file_for_all long bfbuild -n 1e5 --key "$KEY" long.txt
	same_file_for_all huge bfbuild -n 1e5 --key "$KEY" huge.txt
	same_file_for_all several bfbuild -n 3e5 --key "$KEY" open.txt empty.txt long.txt huge.txt
	same_file_for_all fields bfbuild -n 1e5 -k 2 -i --layout classic --key "$KEY" stream.txt
	for t in $THREADS; do
		bfbuild -j "$t" -n 1e5 --key "$KEY" -o "stdin.$t.bf" <stream.txt
		cmp plain.1.bf "stdin.$t.bf"
		cat stream.txt | bfbuild -j "$t" -n 1e5 --key "$KEY" -o "pipe.$t.bf"
		cmp plain.1.bf "pipe.$t.bf"
	done
	# the ranges' counts are summed: -v says the same lines and keys
	run_both report bfbuild -v -n 3e5 --key "$KEY" -o /dev/null stream.txt long.txt huge.txt
	expect_eq "lines of stream, long and huge" \
		"bfbuild: 600004 lines read, 600004 keys added, 0 lines without a key" \
		"$(head -n 1 report.8.err)"
	# the long lines are in the filter as whole lines
	printf 'long2%s\n' "$(head -c 1500000 /dev/zero | tr '\0' x)" >probe.txt
	expect_eq "a long line found" 1 "$(bfgrep -c -f long.8.bf probe.txt)"
}

@test "threads: bfgrep -c, -l, -L and -q reading regular files in ranges answer as -j 1 (no final newline, -z, long lines, several files, stdin)" {
	make_ranged_inputs
	awk 'NR % 7 == 0 { print $1 }' stream.txt | bfbuild -n 1e5 --key "$KEY" -o plain.bf
	{ grep '^long' long.txt | sed -n '1p;3p'; cat stream.txt; } | bfbuild -n 1e5 --key "$KEY" -o long.bf
	run_both count bfgrep -c -k 1 -f plain.bf stream.txt
	run_both open bfgrep -c -f long.bf open.txt
	run_both nul bfgrep -z -c -f long.bf nul.txt
	run_both long bfgrep -c -v -f long.bf long.txt huge.txt
	run_both words bfgrep -c -w -f plain.bf stream.txt
	run_both several bfgrep -c -k 1 -f plain.bf open.txt empty.txt missing.txt long.txt huge.txt
	run_both listed bfgrep -l -f long.bf huge.txt long.txt empty.txt stream.txt
	run_both unlisted bfgrep -L -f long.bf huge.txt long.txt empty.txt stream.txt
	run_both quiet bfgrep -q -f long.bf huge.txt long.txt
	run_both none bfgrep -q -f long.bf huge.txt empty.txt
	for t in $THREADS; do
		bfgrep -j "$t" -c -f long.bf - <long.txt >"stdin.$t.out"
		cmp stdin.1.out "stdin.$t.out"
	done
	# and the answers are right, not just the same: long.bf holds every
	# line of stream.txt, long1 and long3, and not long2 or the huge line
	expect_eq "-c -v" "long.txt:1
huge.txt:1" "$(cat long.8.out)"
	n=$(cat count.1.out)
	expect_eq "-c per file" "open.txt:$n
empty.txt:0
long.txt:$n
huge.txt:0" "$(cat several.8.out)"
	expect_eq "missing" 2 "$(cat several.8.st)"
	expect_eq "-l" "long.txt
stream.txt" "$(cat listed.8.out)"
	expect_eq "-L" "huge.txt
empty.txt" "$(cat unlisted.8.out)"
	expect_eq "-q selected" 0 "$(cat quiet.8.st)"
	expect_eq "-q none" 1 "$(cat none.8.st)"
	expect_eq "stdin" "$(cat long.txt | bfgrep -c -f long.bf)" "$(cat stdin.8.out)"
}

@test "threads: bfcount reading regular files in ranges counts and saves as -j 1 (no final newline, -z, long lines, several files, stdin)" {
	make_ranged_inputs
	run_both plain bfcount -v stream.txt
	run_both open bfcount -v open.txt
	run_both nul bfcount -z -v nul.txt
	run_both fields bfcount -k 2 -i -v stream.txt
	run_both several bfcount -v open.txt empty.txt missing.txt long.txt huge.txt
	same_file_for_all sketch bfcount --precision 12 long.txt huge.txt stream.txt
	# a sketch saved counts every key added (a record read twice or lost
	# would change its bytes); stream.txt has about 40,000 distinct lines
	local n
	n=$(cat plain.1.out)
	[ "$n" -gt 39000 ] && [ "$n" -lt 41000 ]
	for t in $THREADS; do
		bfcount -j "$t" - <long.txt >"stdin.$t.out"
		cmp "stdin.1.out" "stdin.$t.out"
	done
	expect_eq "stdin from a file, as from a pipe" "$(cat long.txt | bfcount)" "$(cat stdin.8.out)"
}

# bfuniq, bfbuild's ordered path (--checkpoint, -f) and the window adder
# read a big regular file in fixed ranges on every thread, consumed in
# file order (cmd/cli/inorder.c), with -j 1 too: so each must also give
# what the one stream of a pipe gives, where nothing is read in ranges.
# same_as_pipe NAME PROG ARGS... FILE: PROG ARGS... FILE for every N, and
# PROG -j 2 ARGS... reading FILE from a pipe, write the same stdout and
# exit status.
same_as_pipe() {
	local name=$1 prog=$2
	shift 2
	local file=${*: -1} st=0
	run_both "$name" "$prog" "$@"
	set -- "${@:1:$#-1}"
	cat "$file" | "$prog" -j 2 "$@" >"$name.pipe.out" 2>/dev/null || st=$?
	cmp "$name.1.out" "$name.pipe.out"
	expect_eq "$name: exit status from a pipe" "$(cat "$name.1.st")" "$st"
}

@test "threads: bfuniq reading regular files in ranges writes the lines of one stream (no final newline, -z, long lines, one huge line, several files, stdin)" {
	make_ranged_inputs
	same_as_pipe plain bfuniq -n 1e5 -p 1e-4 --key "$KEY" -v stream.txt
	same_as_pipe open bfuniq -n 1e5 --key "$KEY" open.txt
	same_as_pipe nul bfuniq -z -n 1e5 --key "$KEY" nul.txt
	same_as_pipe long bfuniq -n 1e5 --key "$KEY" long.txt
	same_as_pipe huge bfuniq -n 1e5 --key "$KEY" huge.txt
	same_as_pipe dups bfuniq -d -k 2 -i -n 1e5 --key "$KEY" long.txt
	same_as_pipe window bfuniq --window 30000keys --key "$KEY" long.txt
	run_both several bfuniq -n 3e5 --key "$KEY" -v open.txt empty.txt missing.txt long.txt huge.txt stream.txt
	# open.txt and huge.txt end without a newline: a stream of them needs one
	{ cat open.txt; echo; cat empty.txt long.txt huge.txt; echo; cat stream.txt; } |
		bfuniq -n 3e5 --key "$KEY" >several.pipe.out
	cmp several.1.out several.pipe.out
	grep -q 'missing.txt: No such file' several.8.err
	# the last line of open.txt and huge.txt lack a newline: they are lines all the same
	expect_eq "the lines of one huge line" 1 "$(wc -l <huge.8.out)"
	[ "$(head -c 3000004 huge.8.out | tail -c 4)" = yyyy ]
	grep -c '^long[123]x' long.4.out | grep -qx 3
	# the whole file read once: -v counts every line, as awk does
	expect_eq "lines read" "bfuniq: lines read: 300000 (first seen $(awk '!s[$0]++' stream.txt | wc -l | tr -d ' ')," \
		"$(head -n 1 plain.8.err | cut -d ' ' -f 1-7)"
	for t in $THREADS; do
		bfuniq -j "$t" -n 1e5 -p 1e-4 --key "$KEY" <stream.txt >"stdin.$t.out"
		cmp plain.1.out "stdin.$t.out"
		# standard input from where it stands: the lines after the first 1000
		{ head -n 1000 >/dev/null; bfuniq -j "$t" -n 1e5 --key "$KEY"; } <stream.txt >"rest.$t.out"
		cmp rest.1.out "rest.$t.out"
	done
	tail -n +1001 stream.txt | bfuniq -n 1e5 --key "$KEY" >rest.pipe.out
	cmp rest.1.out rest.pipe.out
}

@test "threads: bfuniq and bfbuild's ordered path in ranges save the filter one stream saves (-f, --checkpoint, --window)" {
	make_ranged_inputs
	local t
	cat stream.txt | bfuniq -j 1 -p 1e-3 --key "$KEY" -f pipe.state.bf >/dev/null
	bfbuild -n 1e5 --key "$KEY" -o fixed.bf </dev/null
	cp fixed.bf pipe.ck.bf
	cat long.txt | bfbuild -j 1 --checkpoint 1h -f pipe.ck.bf
	cat long.txt | bfbuild -j 1 --window 30000keys --key "$KEY" -o pipe.win.bf
	for t in $THREADS; do
		bfuniq -j "$t" -p 1e-3 --key "$KEY" -f "state.$t.bf" stream.txt >/dev/null
		cmp pipe.state.bf "state.$t.bf"
		cp fixed.bf "ck.$t.bf"
		bfbuild -j "$t" --checkpoint 1h -f "ck.$t.bf" long.txt
		cmp pipe.ck.bf "ck.$t.bf"
		bfbuild -j "$t" --window 30000keys --key "$KEY" -o "win.$t.bf" long.txt
		cmp pipe.win.bf "win.$t.bf"
	done
}

@test "threads: a bad JSON line deep in a file read in ranges is named by its line number, as from a pipe" {
	make_formats
	run_both bad bfuniq -n 1e5 --key "$KEY" --jsonl -k .u.id stream.json
	cat stream.json | bfuniq -j 2 -n 1e5 --key "$KEY" --jsonl -k .u.id - 2>pipe.err >pipe.out || true
	# the first bad line is line 6 ("not json 5"); a later one with --bad-line=error on
	# a file whose first 150,000 lines are good: its number counts every range before
	awk 'NR <= 150000 && /not json/ { next } { print }' stream.json >late.json
	run_both late bfuniq -n 1e5 --key "$KEY" --jsonl -k .u.id late.json
	expect_eq "exit status" 2 "$(cat late.8.st)"
	local n
	n=$(awk '/not json/ { print NR; exit }' late.json)
	[ "$n" -gt 149000 ]
	grep -q "late.json:$n: not JSON" late.8.err
	expect_eq "stdin from a file, named as from a pipe" "$(cat pipe.err)" \
		"$(bfuniq -j 4 -n 1e5 --key "$KEY" --jsonl -k .u.id 2>&1 >/dev/null <stream.json)"
}

# live_first_seen THREADS ARGS...: bfuniq --line-buffered -j THREADS ARGS
# on a stream that stays open writes each first-seen line at once: the
# region owners take each batch as the pipe delivers it, however short.
live_first_seen() {
	local threads=$1 first="" second="" third=""
	shift
	rm -f in.fifo out.fifo
	mkfifo in.fifo out.fifo
	# fd 3 belongs to bats: the background job must not hold it
	bfuniq --key "$KEY" -j "$threads" --line-buffered "$@" <in.fifo >out.fifo 3>&- &
	local pid=$!
	exec 7>in.fifo 8<out.fifo
	printf 'a\na\nb\n' >&7
	# the writer is still open: the lines can only arrive if bfuniq flushed them
	read -r -t 60 first <&8 || true
	read -r -t 60 second <&8 || true
	printf 'b\nc\n' >&7
	read -r -t 60 third <&8 || true
	exec 7>&-
	wait "$pid" || true
	exec 8<&-
	expect_eq "lines on $threads threads ($*), input still open" $'a\nb\nc' \
		"$first"$'\n'"$second"$'\n'"$third"
}

@test "threads: bfuniq --line-buffered on a live stream keeps its threads and writes each first-seen line at once (-j 4 and 8, fixed and growing)" {
	live_first_seen 4 -n 1000 -p 1e-4
	live_first_seen 8 -n 1000 -p 1e-4
	live_first_seen 4
}
