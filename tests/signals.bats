#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# signals.bats - state that survives: bfuniq -f and bfbuild -f on SIGTERM,
# SIGINT and SIGHUP finish what they read, save, and exit 128 + signal;
# --checkpoint saves while the stream goes on.
#
# The programs read from a fifo whose writer the test keeps open, as from
# `tail -f`: they are blocked in a read when the signal comes. The test
# waits for their output (or a checkpoint file) before signalling, so
# nothing depends on timing; the timeouts only turn a hang into a failure.
#
# Every program signalled here starts through `env --default-signal`
# (DEFAULT_SIGNALS): a background job of a non-interactive shell inherits
# SIGINT ignored, and nohup or a CI runner may ignore SIGHUP too, so the
# test sets the dispositions it relies on rather than take the suite's.
# startup.bats runs this file again with INT and HUP ignored.

bats_require_minimum_version 1.5.0
load helpers

DEFAULT_SIGNALS=(env --default-signal=INT,TERM,HUP)

# start_uniq ARGS...: bfuniq -f state.bf --line-buffered ARGS on in.fifo,
# its output on out.fifo; fd 7 writes its input, fd 8 reads its output.
start_uniq() {
	mkfifo in.fifo out.fifo
	# fd 3 belongs to bats: the background job must not hold it
	"${DEFAULT_SIGNALS[@]}" bfuniq --key "$KEY" -f state.bf --line-buffered "$@" <in.fifo >out.fifo 3>&- &
	pid=$!
	exec 7>in.fifo 8<out.fifo
}

# read_lines N: the next N output lines, one per line.
read_lines() {
	local i line
	for i in $(seq "$1"); do
		read -r -t 60 line <&8 || return 1
		echo "$line"
	done
}

# stop_with SIGNAL: send it, then the exit status of bfuniq in $status.
stop_with() {
	kill -s "$1" "$pid"
	status=0
	wait "$pid" || status=$?
	exec 7>&- 8<&-
}

@test "bfuniq -f: SIGTERM while blocked on input saves STATE and exits 143; a restart writes no line twice" {
	start_uniq
	printf 'a\nb\na\nc\n' >&7
	expect_eq "output before the signal" $'a\nb\nc' "$(read_lines 3)"
	stop_with TERM
	expect_eq "exit status" 143 "$status"
	run --separate-stderr bfuniq -f state.bf <<<$'c\nd\na\nb\ne'
	expect_status 0
	expect_output $'d\ne'
}

@test "bfuniq -f: SIGTERM while a gzip input waits for its next member saves STATE and exits 143" {
	start_uniq
	# one whole member: decoded and written, then the reader waits for the next
	printf 'a\nb\na\nc\n' | gzip -c >&7
	expect_eq "output before the signal" $'a\nb\nc' "$(read_lines 3)"
	stop_with TERM
	expect_eq "exit status" 143 "$status"
	run --separate-stderr bfuniq -f state.bf <<<$'c\nd\na'
	expect_status 0
	expect_output "d"
}

@test "bfuniq -f: SIGINT exits 130 and SIGHUP 129, each with STATE saved" {
	for sig in INT:130 HUP:129; do
		rm -f state.bf in.fifo out.fifo
		start_uniq
		printf 'x-%s\n' "${sig%%:*}" >&7
		expect_eq "output" "x-${sig%%:*}" "$(read_lines 1)"
		stop_with "${sig%%:*}"
		expect_eq "exit status on SIG${sig%%:*}" "${sig##*:}" "$status"
		expect_eq "saved" "" "$(printf 'x-%s\n' "${sig%%:*}" | bfuniq -f state.bf)"
	done
}

@test "bfuniq -f: a SIGHUP ignored when it starts (nohup) stays ignored; SIGTERM still saves" {
	mkfifo in.fifo out.fifo
	env --default-signal=TERM --ignore-signal=HUP bfuniq --key "$KEY" -f state.bf --line-buffered \
		<in.fifo >out.fifo 3>&- &
	pid=$!
	exec 7>in.fifo 8<out.fifo
	printf 'a\nb\n' >&7
	# a line out: the handlers are in place, so SIGHUP now meets them
	expect_eq "output before SIGHUP" $'a\nb' "$(read_lines 2)"
	kill -s HUP "$pid"
	# still reading: a line after SIGHUP is read and written
	printf 'c\n' >&7
	expect_eq "output after SIGHUP" "c" "$(read_lines 1)"
	stop_with TERM
	expect_eq "exit status" 143 "$status"
	expect_eq "saved" "" "$(printf 'a\nb\nc\n' | bfuniq -f state.bf)"
}

@test "bfuniq -f: on one thread too, a signal ends a blocked read and the state is saved" {
	export BFTOOLS_THREADS=1
	start_uniq
	printf 'one\ntwo\n' >&7
	expect_eq "output" $'one\ntwo' "$(read_lines 2)"
	stop_with TERM
	expect_eq "exit status" 143 "$status"
	expect_eq "saved" "three" "$(printf 'one\ntwo\nthree\n' | bfuniq -f state.bf)"
}

@test "bfuniq -f: after a signal the FILEs not yet opened are left alone" {
	put_lines later.txt later
	mkfifo in.fifo out.fifo
	"${DEFAULT_SIGNALS[@]}" bfuniq -f state.bf --line-buffered in.fifo later.txt >out.fifo 3>&- &
	pid=$!
	# bfuniq opens out.fifo (its shell does) before in.fifo (it does)
	exec 8<out.fifo 7>in.fifo
	printf 'first\n' >&7
	expect_eq "output" first "$(read_lines 1)"
	stop_with TERM
	expect_eq "exit status" 143 "$status"
	expect_eq "later.txt is still new" later "$(bfuniq -f state.bf later.txt)"
}

@test "bfbuild -f: SIGTERM saves every key read so far and exits 143" {
	bfbuild --key "$KEY" -n 1000 -o f.bf </dev/null
	seq 1 50 >keys.txt
	mkfifo in.fifo
	# --checkpoint 1 saves after each batch: the file changing says the keys were read
	"${DEFAULT_SIGNALS[@]}" bfbuild -f f.bf --checkpoint 1 <in.fifo 3>&- &
	pid=$!
	exec 7>in.fifo
	cp f.bf before.bf
	cat keys.txt >&7
	local i
	for i in $(seq 600); do
		cmp -s f.bf before.bf || break
		sleep 0.1
	done
	kill -s TERM "$pid"
	status=0
	wait "$pid" || status=$?
	exec 7>&-
	expect_eq "exit status" 143 "$status"
	expect_eq "keys found" 50 "$(bfgrep -c -f f.bf keys.txt)"
}

@test "bfuniq --checkpoint N: STATE is saved while the input goes on, and holds only keys already written" {
	start_uniq --checkpoint 100
	seq 1 1000 >&7
	read_lines 1000 >first.txt
	wait_for 60 "state.bf" test -e state.bf
	# a snapshot may lag the output, never lead it: every key it holds was written
	kill -s KILL "$pid"
	wait "$pid" || true
	exec 7>&- 8<&-
	run --separate-stderr bfuniq -f state.bf first.txt
	expect_status 0
	local held=$((1000 - $(printf '%s' "$output" | grep -c .)))
	[ "$held" -ge 100 ] || expect_eq "keys in the checkpoint (at least one snapshot)" ">= 100" "$held"
	expect_eq "what it did not hold is what it did not save" "$output" \
		"$(grep -vxF -f <(bfgrep -f state.bf first.txt) first.txt)"
}

@test "bfuniq --checkpoint 1s: a duration works as well, and -v counts the snapshots" {
	start_uniq --checkpoint 1s -v 2>err.txt
	printf 'a\n' >&7
	expect_eq "output" a "$(read_lines 1)"
	# the first batch starts the clock; a batch 1 s later is saved
	local n=0
	until [ -e state.bf ] || [ "$n" -ge 200 ]; do
		sleep 0.3
		n=$((n + 1))
		printf 'k%d\n' "$n" >&7
		read_lines 1 >/dev/null
	done
	stop_with TERM
	expect_eq "exit status" 143 "$status"
	grep -q '^bfuniq: checkpoints: [1-9][0-9]* saved, 0 failed$' err.txt ||
		expect_eq "-v" "bfuniq: checkpoints: N saved, 0 failed" "$(cat err.txt)"
}

# holds_all FILTER KEYS: every line of KEYS tests present in FILTER (which exists).
holds_all() {
	[ -e "$1" ] && [ "$(bfgrep -c -f "$1" "$2" 2>/dev/null)" = "$(grep -c '' "$2")" ]
}

# wait_until_holds FILTER KEYS: wait (up to 30 s) until holds_all.
wait_until_holds() {
	wait_for 30 "$1 to hold every key of $2" holds_all "$1" "$2"
}

# A burst, then a quiet input that stays open: the 1 s checkpoint must come
# while the program waits for more (before, it came with the next line
# only). 30 s is the margin: the old behaviour never saves here at all.
# Then kill -9 (nothing saved at exit) and a restart: the burst is known.
burst_then_quiet() {
	seq 1 500 | sed 's/^/burst-/' >burst.txt
	start_uniq --checkpoint 1s
	cat burst.txt >&7
	read_lines 500 >out.txt
	expect_eq "the burst written" "$(cat burst.txt)" "$(cat out.txt)"
	wait_until_holds state.bf burst.txt || expect_eq "state.bf after 30 s of quiet" "every burst key" \
		"$(ls -l state.bf 2>&1; bfgrep -c -f state.bf burst.txt 2>&1)"
	kill -0 "$pid" || expect_eq "bfuniq" "still running, waiting for input" "ended"
	# quiet since: no new line, so no new snapshot (a new file each time)
	local inode
	inode=$(stat -c %i state.bf)
	sleep 2.5
	expect_eq "state.bf rewritten while nothing came" "$inode" "$(stat -c %i state.bf)"
	kill -s KILL "$pid"
	wait "$pid" || true
	exec 7>&- 8<&-
	run --separate-stderr bfuniq -f state.bf burst.txt
	expect_status 0
	expect_output ""
}

@test "bfuniq --checkpoint 1s: a burst then quiet is saved on time while it waits; kill -9 and a restart write none of it again" {
	burst_then_quiet
}

@test "bfuniq --checkpoint 1s: on one thread too, a quiet input does not hold the checkpoint back" {
	export BFTOOLS_THREADS=1
	burst_then_quiet
}

@test "bfbuild -f --checkpoint 1s: a burst then quiet is saved on time while it waits" {
	bfbuild --key "$KEY" -n 1000 -o f.bf </dev/null
	seq 1 300 >keys.txt
	mkfifo in.fifo
	"${DEFAULT_SIGNALS[@]}" bfbuild -f f.bf --checkpoint 1s <in.fifo 3>&- &
	pid=$!
	exec 7>in.fifo
	cat keys.txt >&7
	wait_until_holds f.bf keys.txt || expect_eq "f.bf after 30 s of quiet" "every key" \
		"$(bfgrep -c -f f.bf keys.txt 2>&1)"
	kill -0 "$pid" || expect_eq "bfbuild" "still running, waiting for input" "ended"
	kill -s KILL "$pid"
	wait "$pid" || true
	exec 7>&-
	expect_eq "keys found after kill -9" 300 "$(bfgrep -c -f f.bf keys.txt)"
}

@test "--checkpoint needs -f and an interval: usage errors, exit 2" {
	run --separate-stderr bfuniq --checkpoint 10s </dev/null
	expect_usage_error bfuniq "--checkpoint saves the state: it needs -f STATE"
	run --separate-stderr bfbuild --checkpoint 10s -o f.bf </dev/null
	expect_usage_error bfbuild "--checkpoint saves the filter in place: it needs -f FILTER, a file"
	run --separate-stderr bfuniq -f s.bf --checkpoint 10x </dev/null
	expect_usage_error bfuniq "invalid --checkpoint '10x': not a duration (30s, 10m, 1h) or a line count"
	run --separate-stderr bfuniq -f s.bf --checkpoint 0 </dev/null
	expect_usage_error bfuniq "invalid --checkpoint '0': not a duration (30s, 10m, 1h) or a line count"
}

@test "bfuniq --window -f: SIGTERM saves the window with its clock; --checkpoint snapshots it too" {
	start_uniq --window 1000keys --checkpoint 1
	printf 'w1\nw2\nw1\n' >&7
	expect_eq "output" $'w1\nw2' "$(read_lines 2)"
	wait_for 60 "state.bf" test -e state.bf
	bfinfo state.bf | grep -q '^kind: *window (count)$' || expect_eq "snapshot" "a window" "$(bfinfo state.bf)"
	stop_with TERM
	expect_eq "exit status" 143 "$status"
	bfinfo state.bf | grep -q '^clock: *3 keys$' || expect_eq "clock (keys offered)" "3 keys" "$(bfinfo state.bf)"
	expect_eq "a restart" "w3" "$(printf 'w2\nw3\nw1\n' | bfuniq --window 1000keys -f state.bf)"
}

# A regular file of 2e6 lines (15 MB) is read in ranges on every thread
# and consumed in file order (cmd/cli/inorder.c). Its output goes to a
# fifo nobody reads until the signal, so bfuniq is blocked writing, far
# from the end (a pipe holds 1 MiB); once signalled it finishes the
# ranges in hand and saves. What it wrote and what it saved must be the
# same lines, a prefix of the file: no range skipped or half read.
@test "bfuniq -f: SIGINT while a big file is read in ranges saves a prefix of it, all of it written" {
	local t
	seq 1 2000000 >big.txt
	for t in 1 4; do
		rm -f state.bf out.fifo
		mkfifo out.fifo
		"${DEFAULT_SIGNALS[@]}" bfuniq -j "$t" -n 3e6 -p 1e-9 --key "$KEY" -f state.bf \
			--line-buffered big.txt >out.fifo 3>&- &
		pid=$!
		exec 8<out.fifo
		read -r -t 60 first <&8
		expect_eq "first line" 1 "$first"
		kill -s INT "$pid"
		{ echo "$first"; cat <&8; } >"written.$t"
		status=0
		wait "$pid" || status=$?
		exec 8<&-
		expect_eq "exit status" 130 "$status"
		local n
		n=$(wc -l <"written.$t")
		[ "$n" -lt 2000000 ]
		head -n "$n" big.txt | cmp - "written.$t"
		# the state holds exactly those lines: a second run writes the rest
		bfuniq -j "$t" -f state.bf big.txt >"rest.$t"
		tail -n +"$((n + 1))" big.txt | cmp - "rest.$t"
	done
}

# ---------------------------------------------------------------- delivered, not just written

# take N: the next N lines of standard input to standard output, then exit.
# GNU sed -u reads a pipe one byte at a time, so what it printed is exactly
# what it read: nothing is left in its own buffer when it goes. (A loop of
# bash's read did the same at 500 lines a second: a minute of the suite.)
take() {
	sed -u "${1}q"
}

# Issue 38: the output pipe (widened to 1 MiB) held some 64,000 lines the
# reader never got, and the checkpoint recorded their keys. The reader
# here takes 30,000 lines, slowly, and leaves, as if killed; bfuniq dies of
# SIGPIPE. Whatever the timing, no key in the state may be one of a line
# the reader did not get. flock waits for a snapshot child still writing
# (it holds the lock too).
@test "bfuniq -f --checkpoint: a slow reader that leaves mid-run got every line whose key the state holds" {
	seq 1 200000 | sed 's/^/line-/' >in.txt
	local t
	for t in 1 2; do
		rm -f state.bf
		"${DEFAULT_SIGNALS[@]}" env --default-signal=PIPE bfuniq -j "$t" --key "$KEY" -p 1e-9 -f state.bf \
			--checkpoint 1000 in.txt 2>err.txt 3>&- | take 30000 >got.txt || true
		flock .state.bf.lock true
		expect_eq "lines the reader got" 30000 "$(wc -l <got.txt)"
		head -n 30000 in.txt | cmp - got.txt
		[ -f state.bf ] || expect_eq "state.bf" "saved by a checkpoint before the reader left" "missing"
		tail -n +30001 in.txt >not-got.txt
		expect_eq "keys in the state of lines the reader never got (-j $t)" 0 \
			"$(bfgrep -c -f state.bf not-got.txt)"
		# and it holds some: the snapshots before the reader left
		[ "$(bfgrep -c -f state.bf got.txt)" -gt 0 ]
	done
}

@test "bfuniq -f: the final save waits for a slow reader: one that leaves with lines unread leaves the state unsaved" {
	# the whole input fits in the pipe: write(2) returned for every line,
	# but the reader takes 20,000 and goes; saving now would record 30,000
	# keys nobody got, so bfuniq meets SIGPIPE as a write would
	seq 1 50000 | sed 's/^/line-/' >in.txt
	local st
	"${DEFAULT_SIGNALS[@]}" env --default-signal=PIPE bfuniq --key "$KEY" -p 1e-9 -f state.bf \
		in.txt 2>err.txt 3>&- | take 20000 >got.txt
	st=${PIPESTATUS[0]}
	flock .state.bf.lock true
	expect_eq "lines the reader got" 20000 "$(wc -l <got.txt)"
	expect_eq "exit status (SIGPIPE)" 141 "$st"
	[ ! -e state.bf ] || expect_eq "state.bf" "not saved" "saved, $(bfgrep -c -f state.bf in.txt) keys"
	expect_eq "stderr" "" "$(cat err.txt)"
	# a reader that takes everything, however slowly, gets the state saved
	"${DEFAULT_SIGNALS[@]}" bfuniq --key "$KEY" -p 1e-9 -f state.bf in.txt 3>&- | take 50000 >got.txt
	expect_eq "keys saved" 50000 "$(bfgrep -c -f state.bf in.txt)"
}

# ---------------------------------------------------------------- checkpoints that cannot be saved

@test "bfuniq --checkpoint: a DCSO state is snapshot as DCSO; kill -9 keeps what was written" {
	bfbuild --format dcso -n 10000 -p 0.001 -o s.bloom </dev/null
	mkfifo in.fifo out.fifo
	"${DEFAULT_SIGNALS[@]}" bfuniq -f s.bloom --line-buffered --checkpoint 1s <in.fifo >out.fifo 2>err.txt 3>&- &
	pid=$!
	exec 7>in.fifo 8<out.fifo
	seq 1 300 >keys.txt
	cat keys.txt >&7
	read_lines 300 >out.txt
	wait_until_holds s.bloom keys.txt || expect_eq "s.bloom after 30 s" "every key (a DCSO snapshot)" \
		"$(bfgrep -c -f s.bloom keys.txt 2>&1; cat err.txt)"
	kill -s KILL "$pid"
	wait "$pid" || true
	exec 7>&- 8<&-
	expect_eq "stderr" "" "$(cat err.txt)"
	expect_eq "keys found after kill -9" 300 "$(bfgrep -c -f s.bloom keys.txt)"
	bfinfo s.bloom | grep -q DCSO
}

@test "bfbuild -f --checkpoint: a DCSO filter is snapshot as DCSO, and -v counts no failure" {
	bfbuild --format dcso -n 10000 -p 0.001 -o s.bloom </dev/null
	seq 1 3000 >keys.txt
	run --separate-stderr bfbuild -v -f s.bloom --checkpoint 1000 keys.txt
	expect_status 0
	case $stderr in *"checkpoint failed"*) expect_eq "stderr" "no failed checkpoint" "$stderr" ;; esac
	expect_eq "keys found" 3000 "$(bfgrep -c -f s.bloom keys.txt)"
}

# A checkpoint that fails (its directory gone) ends the run at once, exit
# 2, with the reason on one line, instead of counting failures to the end.
@test "bfuniq --checkpoint: the first snapshot that fails ends the run with exit 2" {
	mkdir d
	mkfifo in.fifo out.fifo
	"${DEFAULT_SIGNALS[@]}" bfuniq --key "$KEY" -f d/state.bf --line-buffered --checkpoint 1s \
		<in.fifo >out.fifo 2>err.txt 3>&- &
	pid=$!
	exec 7>in.fifo 8<out.fifo
	printf 'a\n' >&7
	expect_eq "output" a "$(read_lines 1)"
	wait_for 60 "d/state.bf" test -e d/state.bf
	rm -rf d
	printf 'b\n' >&7
	expect_eq "output" b "$(read_lines 1)"
	# input still open: it must end by itself
	local i
	for i in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && { kill -s KILL "$pid"; expect_eq "bfuniq" "ended by the failed checkpoint" "still running after 30 s"; }
	status=0
	wait "$pid" || status=$?
	exec 7>&- 8<&-
	expect_eq "exit status" 2 "$status"
	expect_eq "stderr" "bfuniq: d/state.bf: checkpoint failed: No such file or directory" "$(cat err.txt)"
}

# ---------------------------------------------------------------- waits that end on a signal

@test "bfuniq -f: SIGTERM while a FIFO input has no writer yet ends the run, 143, state saved" {
	mkfifo in.fifo
	"${DEFAULT_SIGNALS[@]}" bfuniq --key "$KEY" -f state.bf in.fifo >out.txt 2>err.txt 3>&- &
	pid=$!
	# past the lock: the input is being opened
	local i
	for i in $(seq 300); do
		flock -n .state.bf.lock true 2>/dev/null || break
		sleep 0.1
	done
	sleep 0.3
	kill -s TERM "$pid"
	for i in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && { kill -s KILL "$pid"; expect_eq "bfuniq" "ended by SIGTERM" "still waiting for a writer after 10 s"; }
	status=0
	wait "$pid" || status=$?
	expect_eq "exit status" 143 "$status"
	[ -f state.bf ]
	expect_eq "stderr" "" "$(cat err.txt)"
}

@test "bfuniq -f /dev/fd/1: refused at once, not a wait reading its own output" {
	run --separate-stderr bash -c 'set -o pipefail; timeout -k 5 10 bfuniq --key "$1" -f /dev/fd/1 </dev/null | cat' _ "$KEY"
	expect_fail "bfuniq: /dev/fd/1: not a regular file: a state is read, then replaced, which a device, a FIFO or a descriptor cannot be"
}
