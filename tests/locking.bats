#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# locking.bats - programs that update a filter in place take turns
# (bftools(7), CONCURRENCY): bfbuild -f, bfbuild -f --remove, bfuniq -f
# and bfmerge -o onto an input hold the lock file .NAME.lock from load to
# rename, so concurrent updates all land; a second updater waits, saying
# so, or fails at once with --no-wait; readers never wait.
#
# Concurrency without timing: the concurrent jobs are checked only on
# their result, which is the same in every interleaving once they take
# turns. A lock is held on purpose by a bfuniq -f reading a FIFO the test
# keeps open: once a line sent through it comes out, bfuniq is past its
# lock, and it keeps the lock until the test closes the FIFO. Waits are
# polls with a deadline of 30 s, long enough for a loaded machine, that
# end as soon as what they wait for is there.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	for prog in bfbuild bfgrep bfuniq bfmerge bfinfo bfcount; do
		if [ ! -x "$BFTOOLS_BIN/$prog" ]; then
			echo "$BFTOOLS_BIN/$prog is missing: build it (make) or set BFTOOLS_BIN" >&2
			return 1
		fi
	done
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
	HOLDER=
}

teardown() {
	# a test that failed half-way must not leave its lock holder running
	if [ -n "$HOLDER" ]; then
		exec 8>&- || true
		kill "$HOLDER" 2>/dev/null || true
		wait "$HOLDER" 2>/dev/null || true
	fi
}

# hold_lock TARGET: a bfuniq -f TARGET (PID in HOLDER) that has taken
# TARGET's lock and holds it, reading a FIFO the test keeps open on fd 8,
# until release_lock. Line "held" sent through the FIFO coming out of it
# shows it is past the lock.
hold_lock() {
	rm -f hold.fifo && mkfifo hold.fifo
	exec 8<>hold.fifo	# read-write: this open never blocks
	bfuniq --key "$KEY" -n 1000 --line-buffered -f "$1" hold.fifo \
		>holder.out 2>holder.err 3>&- 8>&- &
	HOLDER=$!
	echo held >&8
	wait_for 30 "the lock holder to read its input" grep -qx held holder.out
}

# release_lock: close the holder's input, so it saves and ends; exit 0.
release_lock() {
	exec 8>&-
	wait "$HOLDER"
	HOLDER=
}

# running PID: the process exists and has not ended.
running() {
	local state
	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ]
}

# found FILTER FILE: how many lines of FILE the filter holds.
found() {
	bfgrep -c -f "$1" "$2"
}

# job_lines I: job I's keys, lines "I-1" .. "I-20000".
job_lines() {
	seq 1 20000 | sed "s/^/$1-/"
}

# each_stderr_ok PREFIX N: the stderr of every job PREFIX1.err .. PREFIXN.err
# is empty or the one line saying it waited for the lock.
each_stderr_ok() {
	local i text
	for i in $(seq 1 "$2"); do
		text=$(cat "$1$i.err")
		case $text in
		"" | *": waiting for another bftools process to release it") ;;
		*) expect_eq "stderr of job $i" "(nothing, or the waiting line)" "$text" ;;
		esac
	done
}

# ---------------------------------------------------------------- concurrent updates

@test "locking: 5 concurrent bfbuild -f on one filter: every key of every job is in it" {
	local i pids=()
	bfbuild --key "$KEY" -n 1e6 -p 1e-4 -o cc.bf </dev/null
	for i in 1 2 3 4 5; do job_lines "$i" >"in$i.txt"; done
	for i in 1 2 3 4 5; do
		bfbuild -f cc.bf "in$i.txt" 2>"build$i.err" 3>&- &
		pids+=($!)
	done
	for i in 0 1 2 3 4; do wait "${pids[$i]}"; done
	each_stderr_ok build 5
	# no false negatives ever: each job's 20000 keys are all found
	for i in 1 2 3 4 5; do expect_eq "keys of job $i found" 20000 "$(found cc.bf "in$i.txt")"; done
	expect_eq insertions 100000 "$(header_uint cc.bf 96 8)"
	expect_eq "directory" "$(printf '%s\n' .cc.bf.lock build{1..5}.err cc.bf in{1..5}.txt)" "$(ls -A)"
}

@test "locking: 4 concurrent bfbuild -f --remove on one counting filter: every job's keys are gone" {
	local i pids=()
	for i in 1 2 3 4; do job_lines "$i" >"in$i.txt"; done
	cat in1.txt in2.txt in3.txt in4.txt >all.txt
	bfbuild --key "$KEY" --layout counting -n 200000 -p 1e-4 -o cc.bf all.txt
	for i in 1 2 3 4; do
		bfbuild -f cc.bf --remove "in$i.txt" 2>"rm$i.err" 3>&- &
		pids+=($!)
	done
	for i in 0 1 2 3; do wait "${pids[$i]}"; done
	each_stderr_ok rm 4
	# every key went in once and came out once: every counter is 0 again
	expect_eq "keys left" 0 "$(found cc.bf all.txt)"
}

# bfuniq at -n 1e6 -p 1e-9: about 43 Mbit and k = 30 (blocked, bfuniq -v
# says so). The 60000 distinct keys of these jobs set about 4% of the
# bits, so the chance that all 30 bits of one key are set by the others,
# in whatever order they arrive, is below 1e-30 per key; the key is fixed
# too. A first-seen line that is not written is therefore a lost update,
# never a false positive.
@test "locking: 5 concurrent bfuniq -f on one STATE (created by them): no line written twice, none lost" {
	local i pids=()
	# overlapping inputs: job I has keys (I-1)*10000+1 .. (I-1)*10000+20000
	for i in 1 2 3 4 5; do seq $(((i - 1) * 10000 + 1)) $(((i - 1) * 10000 + 20000)) >"in$i.txt"; done
	for i in 1 2 3 4 5; do
		bfuniq --key "$KEY" -n 1e6 -p 1e-9 -f state.bf "in$i.txt" >"out$i.txt" 2>"uniq$i.err" 3>&- &
		pids+=($!)
	done
	for i in 0 1 2 3 4; do wait "${pids[$i]}"; done
	each_stderr_ok uniq 5
	cat out{1..5}.txt | sort >written.txt
	expect_eq "lines written twice" "" "$(uniq -d written.txt | head -n 5)"
	expect_eq "lines written" "$(cat in{1..5}.txt | sort -u)" "$(cat written.txt)"
	# and the state remembers them all
	run --separate-stderr bfuniq -f state.bf in1.txt in2.txt in3.txt in4.txt in5.txt
	expect_status 0
	expect_output ""
}

@test "locking: 4 concurrent bfmerge -o a.bf a.bf SHARD: every shard's keys are in a.bf" {
	local i pids=()
	bfbuild --key "$KEY" -n 1e5 -p 1e-4 -o a.bf </dev/null
	for i in 1 2 3 4; do
		job_lines "$i" >"in$i.txt"
		bfbuild --like a.bf -o "shard$i.bf" "in$i.txt"
	done
	for i in 1 2 3 4; do
		bfmerge -o a.bf a.bf "shard$i.bf" 2>"merge$i.err" 3>&- &
		pids+=($!)
	done
	for i in 0 1 2 3; do wait "${pids[$i]}"; done
	each_stderr_ok merge 4
	for i in 1 2 3 4; do expect_eq "keys of shard $i found" 20000 "$(found a.bf "in$i.txt")"; done
}

# ---------------------------------------------------------------- waiting, --no-wait

@test "locking: --no-wait fails at once, exit 2, naming the file, while another process updates it" {
	bfuniq --key "$KEY" -n 1000 -f state.bf </dev/null
	bfbuild --like state.bf -o other.bf </dev/null
	put_lines in.txt alice
	hold_lock state.bf
	cp state.bf before.bf
	local busy="state.bf: another bftools process is updating it (--no-wait: not waiting)"
	run --separate-stderr timeout 20 bfbuild --no-wait -f state.bf in.txt
	expect_fail "bfbuild: $busy"
	run --separate-stderr timeout 20 bfbuild --no-wait -f state.bf --remove in.txt
	expect_fail "bfbuild: $busy"
	run --separate-stderr timeout 20 bfuniq --no-wait -f state.bf in.txt
	expect_fail "bfuniq: $busy"
	run --separate-stderr timeout 20 bfmerge --no-wait -o state.bf state.bf other.bf
	expect_fail "bfmerge: $busy"
	cmp state.bf before.bf
	release_lock
	# with the lock free, --no-wait changes nothing
	run --separate-stderr bfbuild --no-wait -f state.bf in.txt
	expect_status 0
	expect_stderr ""
	expect_eq "alice found" 1 "$(found state.bf in.txt)"
}

@test "locking: a waiting updater says so once on stderr, then goes on when the lock is released" {
	bfuniq --key "$KEY" -n 1000 -f state.bf </dev/null
	put_lines in.txt alice bob
	hold_lock state.bf
	bfbuild -f state.bf in.txt 2>waiter.err 3>&- 8>&- &
	local waiter=$!
	wait_for 30 "the waiting message" grep -q "waiting for another" waiter.err
	# it cannot have finished: the lock is still held
	running "$waiter"
	echo carol >&8
	release_lock
	local status=0
	wait "$waiter" || status=$?
	expect_eq "waiter's exit status" 0 "$status"
	expect_eq "waiter's stderr" "bfbuild: state.bf: waiting for another bftools process to release it" "$(cat waiter.err)"
	# both updates are in: the holder's lines and the waiter's
	put_lines all.txt held carol alice bob
	expect_eq "keys found" 4 "$(found state.bf all.txt)"
}

@test "locking: bfmerge -o onto an input waits for the lock, whatever the spelling of the path" {
	bfuniq --key "$KEY" -n 1000 -f a.bf </dev/null
	bfbuild --like a.bf -o b.bf </dev/null
	hold_lock a.bf
	run --separate-stderr timeout 20 bfmerge --no-wait -o ./a.bf b.bf a.bf
	expect_fail "bfmerge: ./a.bf: another bftools process is updating it (--no-wait: not waiting)"
	# an output that is not an input is not an update: no lock, no wait
	run --separate-stderr timeout 20 bfmerge --no-wait -o c.bf a.bf b.bf
	expect_status 0
	expect_stderr ""
	release_lock
}

# ---------------------------------------------------------------- readers, scope

@test "locking: readers and writers of other files never wait while a filter is being updated" {
	put_lines old.txt old
	bfuniq --key "$KEY" -n 1000 -f state.bf old.txt >/dev/null
	hold_lock state.bf
	# readers see the whole old filter: "held" is not in it until the holder ends
	put_lines q.txt old held nobody
	run --separate-stderr timeout 20 bfgrep -f state.bf q.txt
	expect_status 0
	expect_output old
	run --separate-stderr timeout 20 bfcount -f state.bf
	expect_status 0
	run --separate-stderr timeout 20 bfinfo state.bf
	expect_status 0
	# bfbuild -f elsewhere -o and --like only read it: they do not wait either
	run --separate-stderr timeout 20 bfbuild --no-wait -f state.bf -o copy.bf q.txt
	expect_status 0
	# (--no-wait cannot apply without -f: timeout says whether it waited)
	run --separate-stderr timeout 20 bfbuild --like state.bf -o like.bf q.txt
	expect_status 0
	release_lock
	expect_eq "held found after" 2 "$(found state.bf q.txt)"
	expect_eq "directory" "$(printf '%s\n' .state.bf.lock copy.bf hold.fifo holder.err holder.out like.bf old.txt q.txt state.bf)" "$(ls -A)"
}

@test "locking: the lock is released however its holder ends, even by SIGKILL" {
	bfuniq --key "$KEY" -n 1000 -f state.bf </dev/null
	put_lines in.txt alice
	hold_lock state.bf
	kill -KILL "$HOLDER"
	wait "$HOLDER" || true
	HOLDER=
	exec 8>&-
	run --separate-stderr timeout 20 bfbuild --no-wait -f state.bf in.txt
	expect_status 0
	expect_stderr ""
	expect_eq "alice found" 1 "$(found state.bf in.txt)"
}

@test "locking: the lock file is .NAME.lock beside the filter, kept; standard input needs none" {
	mkdir sub
	put_lines in.txt alice
	bfuniq --key "$KEY" -f sub/state.bf in.txt >/dev/null
	expect_eq "sub/" "$(printf '%s\n' .state.bf.lock state.bf)" "$(ls -A sub)"
	[ -f sub/.state.bf.lock ] && [ ! -s sub/.state.bf.lock ]
	# a plain -o, and -f - (nothing is renamed over standard input), take none
	bfbuild --key "$KEY" -n 100 -o new.bf in.txt
	bfbuild -f - -o fromstdin.bf in.txt <new.bf
	expect_eq "directory" "$(printf '%s\n' fromstdin.bf in.txt new.bf sub)" "$(ls -A)"
}

@test "locking: a lock file that cannot be used is an error naming it, exit 2, and nothing is changed" {
	bfuniq --key "$KEY" -n 1000 -f state.bf </dev/null
	cp state.bf before.bf
	rm .state.bf.lock
	ln -s elsewhere .state.bf.lock
	put_lines in.txt alice
	run --separate-stderr bfbuild -f state.bf in.txt
	expect_fail "bfbuild: state.bf: cannot lock it for updating: .state.bf.lock: the lock file is a symbolic link"
	cmp state.bf before.bf
	[ ! -e elsewhere ]
}

@test "locking: concurrent bfcount --add updates of one sketch in place take turns; every job's keys are counted" {
	bfcount --key "$KEY" -o s.hll </dev/null
	local j
	for j in 1 2 3 4; do
		seq $((j * 1000)) $((j * 1000 + 999)) >in$j.txt
	done
	for j in 1 2 3 4; do
		bfcount -s s.hll --add -o s.hll in$j.txt >/dev/null 3>&- &
	done
	wait
	# 4000 distinct keys: below 8192 a sketch counts exactly
	expect_eq "distinct keys" 4000 "$(bfcount -s s.hll </dev/null)"
}

# counted SUMMARY: the keys a bftop summary has counted (bfinfo).
counted() {
	bfinfo "$1" | sed -n 's/^keys counted: *//p'
}

@test "locking: bftop -s T -o T takes T's lock; concurrent updates of one summary all count" {
	# issue 38: three at once on 300k keys each counted 300,001, not 900,001
	seq 1 1000 | bftop -o t.top >/dev/null
	job_lines 1 >in1.txt
	# the lock held by hand (flock(1) takes the same flock(2) lock): the update must wait
	exec 9<>.t.top.lock
	flock -x 9
	bftop -s t.top -o t.top in1.txt >/dev/null 2>wait.err 3>&- 9>&- &
	local job=$!
	wait_for 30 "bftop to say it waits" grep -q "waiting for another bftools process to release it" wait.err ||
		expect_eq "bftop -s t.top -o t.top" "waiting for the lock" "$(running "$job" && echo running || echo ended): $(cat wait.err)"
	expect_eq "keys counted while it waits" 1000 "$(counted t.top)"
	exec 9>&-
	# 21000 distinct keys, once each, over a summary of 10000: no key is
	# surely frequent, so bftop's status is 1 (nothing selected), not 0
	local rc=0
	wait "$job" || rc=$?
	expect_eq "bftop's status" 1 "$rc"
	expect_eq "keys counted after it" 21000 "$(counted t.top)"
	# three at once take turns: every job's keys counted
	local i pids=()
	for i in 2 3 4; do
		job_lines "$i" | bftop -s t.top -o t.top - >/dev/null 2>"top$i.err" 3>&- &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		rc=0
		wait "$i" || rc=$?
		expect_eq "bftop's status" 1 "$rc"
	done
	expect_eq "keys counted after three more" 81000 "$(counted t.top)"
}
