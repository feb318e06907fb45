#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# threads.bats - the two-thread input pipeline (lib/pipeline.c) changes
# nothing but speed: every program gives byte-identical output, messages
# and exit status with BFTOOLS_THREADS=1 (all on one thread) and 2 (a
# reader thread beside it), on inputs long enough for many batches with
# the reader working ahead; and an early stop does not wait for input that
# never comes.

load helpers

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

# run_both NAME CMD...: run CMD under both settings; their stdout, stderr
# and exit status must agree. Leaves them in NAME.{1,2}.{out,err,st}.
run_both() {
	local name=$1 t
	shift
	for t in 1 2; do
		local st=0
		BFTOOLS_THREADS=$t "$@" >"$name.$t.out" 2>"$name.$t.err" || st=$?
		echo "$st" >"$name.$t.st"
	done
	cmp "$name.1.out" "$name.2.out"
	cmp "$name.1.err" "$name.2.err"
	cmp "$name.1.st" "$name.2.st"
}

@test "threads: bfuniq output is identical on one thread and on two (plain, -k, -w, -i, -d, -v)" {
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

@test "threads: a growing bfuniq (new stages mid-stream) is identical on one thread and on two" {
	make_growing_stream
	run_both grow bfuniq --key "$KEY" -v grow.txt
	grep -q '(2 stages' grow.2.err
}

@test "threads: bfgrep with filters of both foldings, -v and -c is identical on one thread and on two" {
	make_stream
	awk 'NR % 7 == 0 { print $1 }' stream.txt | bfbuild -n 1e5 --key "$KEY" -o plain.bf
	awk 'NR % 11 == 0 { print $1 }' stream.txt | bfbuild -n 1e5 -i --key "$KEY" -o folded.bf
	run_both both bfgrep -k 1 -f plain.bf -f folded.bf stream.txt
	run_both invert bfgrep -v -k 1 -f plain.bf -f folded.bf stream.txt
	run_both count bfgrep -c -k 1 -f folded.bf stream.txt
	[ "$(wc -l <both.2.out)" -gt 40000 ]
}

@test "threads: bfbuild writes byte-identical files on one thread and on two (fixed, growing)" {
	make_stream
	BFTOOLS_THREADS=1 bfbuild -n 1e5 --key "$KEY" -o one.bf stream.txt
	BFTOOLS_THREADS=2 bfbuild -n 1e5 --key "$KEY" -o two.bf stream.txt
	cmp one.bf two.bf
	# a growing filter (bfuniq's state) that bfbuild -f adds stages to
	make_growing_stream
	head -n 1000 grow.txt | bfuniq --key "$KEY" -f start.bf >/dev/null
	cp start.bf one-g.bf
	cp start.bf two-g.bf
	BFTOOLS_THREADS=1 bfbuild -f one-g.bf grow.txt
	BFTOOLS_THREADS=2 bfbuild -f two-g.bf grow.txt
	cmp one-g.bf two-g.bf
	[ "$(bfinfo two-g.bf | grep -c '^stage')" -ge 2 ] || bfinfo two-g.bf >&2
}

@test "threads: bfcount gives the same estimate on one thread and on two" {
	make_stream
	run_both stream bfcount stream.txt
	run_both words bfcount -w stream.txt
}

@test "threads: an unreadable input in the middle is reported and skipped alike on one thread and two" {
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
	BFTOOLS_THREADS=$1 bfgrep -q -f names.bf <in.fifo 3>&- &
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

@test "threads: BFTOOLS_THREADS other than 1 or 2 is ignored (the default is used)" {
	make_stream
	BFTOOLS_THREADS=1 bfcount stream.txt >one.txt
	BFTOOLS_THREADS=7 bfcount stream.txt >seven.txt
	BFTOOLS_THREADS=abc bfcount stream.txt >abc.txt
	cmp one.txt seven.txt
	cmp one.txt abc.txt
}

@test "threads: saved filters are byte-identical whether compressed on one thread or two (bfmerge, bfuniq -f)" {
	make_growing_stream
	head -n 200000 grow.txt | bfbuild -n 3e5 --key "$KEY" -o a.bf
	tail -n 200000 grow.txt | bfbuild -n 3e5 --key "$KEY" -o b.bf
	BFTOOLS_THREADS=1 bfmerge -o one.bf a.bf b.bf
	BFTOOLS_THREADS=2 bfmerge -o two.bf a.bf b.bf
	cmp one.bf two.bf
	BFTOOLS_THREADS=1 bfuniq --key "$KEY" -f one-state.bf grow.txt >/dev/null
	BFTOOLS_THREADS=2 bfuniq --key "$KEY" -f two-state.bf grow.txt >/dev/null
	cmp one-state.bf two-state.bf
	# the state (two stages, 1.6 MB of bits) spans several 1 MiB chunks,
	# so both threads had pieces to compress
	[ "$(wc -c <two-state.bf)" -gt 1048576 ]
}
