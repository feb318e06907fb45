#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# paths.bats - where a file the programs write ends up, whatever its name
# leads to (bftools(7), FILES; issue 38): a symbolic link is followed and
# its file updated under that file's lock; a device, a FIFO or a name of a
# descriptor is an output written as a stream, and a state refused; a
# temporary left by a killed save is removed by the next save.
#
# No test writes to /dev/stdout itself: on a tree that renamed over it
# (the bug), as root, that would replace the machine's /dev/stdout. The
# same kind of name is tried where a mistake stays in the test's
# directory (a link of its own to /proc/self/fd/1) or fails harmlessly
# (/dev/fd/1: nothing can be created in /proc).

bats_require_minimum_version 1.5.0
load helpers

teardown() {
	if [ -n "${HOLDER-}" ]; then
		exec 8>&- || true
		kill "$HOLDER" 2>/dev/null || true
		wait "$HOLDER" 2>/dev/null || true
	fi
}

# ---------------------------------------------------------------- symbolic links

@test "paths: bfuniq -f LINK updates the file the link leads to; the link stays a link" {
	put_lines a.txt alice bob
	put_lines b.txt bob carol
	mkdir real
	ln -s real/seen.bf link.bf
	run --separate-stderr bfuniq --key "$KEY" -f link.bf a.txt
	expect_status 0
	expect_output "alice
bob"
	[ -L link.bf ] || expect_eq "link.bf" "a symbolic link" "$(ls -l link.bf)"
	[ -f real/seen.bf ] || expect_eq "real/seen.bf" "the state, created where the link leads" "missing"
	run --separate-stderr bfuniq --key "$KEY" -f link.bf b.txt
	expect_output carol
	[ -L link.bf ]
	# the file itself holds all three
	expect_eq "keys in real/seen.bf" 3 "$(cat a.txt b.txt | sort -u | bfgrep -c -f real/seen.bf)"
	# the temporary and the lock are beside the file, not the link
	expect_eq "real/" "$(printf '%s\n' .seen.bf.lock seen.bf)" "$(ls -A real)"
}

@test "paths: bfbuild -f LINK and a relative link in another directory update the file" {
	put_lines a.txt alice
	put_lines b.txt bob
	bfbuild --key "$KEY" -n 1000 -o real.bf a.txt
	mkdir d
	ln -s ../real.bf d/link.bf
	run --separate-stderr bfbuild -f d/link.bf b.txt
	expect_status 0
	[ -L d/link.bf ] || expect_eq "d/link.bf" "a symbolic link" "$(ls -l d/link.bf)"
	expect_eq "keys in real.bf" 2 "$(cat a.txt b.txt | bfgrep -c -f real.bf)"
	# bfmerge -o LINK onto its own input: the same
	bfbuild --like real.bf -o c.bf <(echo carol)
	run --separate-stderr bfmerge -o d/link.bf d/link.bf c.bf
	expect_status 0
	[ -L d/link.bf ]
	expect_eq "keys in real.bf" 1 "$(echo carol | bfgrep -c -f real.bf)"
}

# A bfuniq -f on the file holds its lock (reading a FIFO kept open); a run
# through the link must find the same lock taken.
@test "paths: a run through a link and a run on its file take the same lock" {
	put_lines in.txt alice
	bfuniq --key "$KEY" -n 1000 -f real.bf </dev/null
	ln -s real.bf link.bf
	mkfifo hold.fifo
	exec 8<>hold.fifo
	bfuniq --key "$KEY" --line-buffered -f real.bf hold.fifo >holder.out 2>holder.err 3>&- 8>&- &
	HOLDER=$!
	echo held >&8
	wait_for 30 "the holder to read" grep -qx held holder.out
	run --separate-stderr timeout 20 bfuniq --no-wait -f link.bf in.txt
	expect_fail "bfuniq: link.bf: another bftools process is updating it (--no-wait: not waiting)"
	[ ! -e .link.bf.lock ] || expect_eq ".link.bf.lock" "absent (the lock is the file's)" "made"
	run --separate-stderr timeout 20 bfbuild --no-wait -f link.bf in.txt
	expect_fail "bfbuild: link.bf: another bftools process is updating it (--no-wait: not waiting)"
	exec 8>&-
	wait "$HOLDER"
	HOLDER=
}

# ---------------------------------------------------------------- devices, FIFOs, descriptors

@test "paths: -o naming standard output's descriptor writes standard output, renames nothing" {
	put_lines in.txt alice bob
	bfbuild --key "$KEY" -n 1000 -o want.bf in.txt
	# /dev/fd/1 and /proc/self/fd/1, as /dev/stdout leads to
	run --separate-stderr bash -c 'bfbuild --key "$1" -n 1000 -o /dev/fd/1 in.txt >x.bf' _ "$KEY"
	expect_status 0
	expect_stderr ""
	cmp want.bf x.bf
	run --separate-stderr bash -c 'bfbuild --key "$1" -n 1000 -o /proc/self/fd/1 in.txt >y.bf' _ "$KEY"
	expect_status 0
	cmp want.bf y.bf
	# a link of one's own to it, as /dev/stdout is: the link stays, the output gets it
	ln -s /proc/self/fd/1 mystdout
	run --separate-stderr bash -c 'bfbuild --key "$1" -n 1000 -o mystdout in.txt >z.bf' _ "$KEY"
	expect_status 0
	[ -L mystdout ] || expect_eq "mystdout" "still a link" "$(ls -l mystdout)"
	cmp want.bf z.bf
	# appended where standard output appends
	cp want.bf twice.bf
	bash -c 'bfbuild --key "$1" -n 1000 -o /dev/fd/1 in.txt >>twice.bf' _ "$KEY"
	cat want.bf want.bf | cmp - twice.bf
	# bfmerge and bftop the same
	run --separate-stderr bash -c 'bfmerge -o /dev/fd/1 want.bf >m.bf' _
	expect_status 0
	cmp want.bf m.bf
	run --separate-stderr bash -c 'bftop -o /proc/self/fd/3 in.txt 3>t.top >/dev/null' _
	expect_status 0
	bfinfo t.top | grep -q 'keys counted: *2$'
	expect_eq "directory" "$(printf '%s\n' in.txt m.bf mystdout t.top twice.bf want.bf x.bf y.bf z.bf)" "$(ls -A)"
}

@test "paths: -o to a FIFO or /dev/null is a stream; nothing is made beside it" {
	put_lines in.txt alice bob
	bfbuild --key "$KEY" -n 1000 -o want.bf in.txt
	mkdir d
	mkfifo d/out.fifo
	cat d/out.fifo >got.bf &
	local reader=$!
	run --separate-stderr timeout 20 bfbuild --key "$KEY" -n 1000 -o d/out.fifo in.txt
	expect_status 0
	wait "$reader"
	cmp want.bf got.bf
	expect_eq "d/" out.fifo "$(ls -A d)"
	run --separate-stderr bfbuild --key "$KEY" -n 1000 -o /dev/null in.txt
	expect_status 0
	[ -c /dev/null ]
}

# As a user who may not write /dev: the directory of a device is none of
# an output's business (it was "cannot write here: Permission denied").
@test "paths: a user who may write /dev/null and standard output can use them as -o" {
	put_lines in.txt alice bob
	local as=() gcov_dir=
	if [ "$(id -u)" -eq 0 ]; then
		command -v setpriv >/dev/null || skip "setpriv is needed to run as another user"
		# a coverage build writes nobody's counters in a directory of their
		# own that nobody may write in, not beside root's build (no message)
		gcov_dir=$(mktemp -d /tmp/bftools-gcov.XXXXXX) && chmod 0777 "$gcov_dir"
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups env GCOV_PREFIX="$gcov_dir")
		"${as[@]}" test -x "$BFTOOLS_BIN/bfbuild" || skip "the programs cannot be run as nobody here"
	fi
	chmod 0755 "$BATS_TEST_TMPDIR" . 2>/dev/null || true
	chmod 0644 in.txt
	run --separate-stderr "${as[@]}" bfbuild --key "$KEY" -n 1000 -o /dev/null in.txt
	expect_status 0
	expect_stderr ""
	run --separate-stderr bash -c '"${@:2}" bfbuild --key "$1" -n 1000 -o /dev/fd/1 in.txt | gzip -t' _ "$KEY" "${as[@]}"
	[ -z "$gcov_dir" ] || rm -rf "$gcov_dir"
	expect_status 0
	expect_stderr ""
}

@test "paths: a state that is a device, a FIFO or a descriptor is refused, exit 2, nothing opened" {
	mkfifo st.fifo
	local why="not a regular file: a state is read, then replaced, which a device, a FIFO or a descriptor cannot be"
	run --separate-stderr timeout -k 5 10 bfuniq --key "$KEY" -f /dev/null </dev/null
	expect_fail "bfuniq: /dev/null: $why"
	run --separate-stderr timeout -k 5 10 bfuniq --key "$KEY" -f st.fifo </dev/null
	expect_fail "bfuniq: st.fifo: $why"
	run --separate-stderr timeout -k 5 10 bfbuild -f st.fifo </dev/null
	expect_fail "bfbuild: st.fifo: $why"
	# what would have appended to the state it was given as standard output
	bfuniq --key "$KEY" -f state.bf </dev/null
	cp state.bf before.bf
	run --separate-stderr bash -c 'printf "x\n" | timeout -k 5 10 bfuniq --key "$1" -f /dev/fd/1 >>state.bf' _ "$KEY"
	expect_fail "bfuniq: /dev/fd/1: $why"
	cmp before.bf state.bf
	expect_eq "directory" "$(printf '%s\n' .state.bf.lock before.bf st.fifo state.bf)" "$(ls -A)"
}

# ---------------------------------------------------------------- temporaries of killed runs

# temps NAME: the temporaries of NAME in this directory, if any.
temps() {
	compgen -G ".$1.*" | grep -vx "\.$1\.lock" || true
}

# A save killed mid-write: SIGXFSZ past `ulimit -f`, whose default action
# ends the program on the spot, as SIGKILL would, with the temporary made.
@test "paths: a temporary left by a killed save is removed by the next save of that file" {
	seq 1 30000 | bfbuild --key "$KEY" -n 60000 -p 0.01 -o a.bf
	seq 30001 40000 | bfbuild --like a.bf -o b.bf
	cp a.bf before.bf
	local st=0
	(ulimit -f 8 && exec bfmerge -o a.bf a.bf b.bf) 2>/dev/null || st=$?
	[ "$st" -ne 0 ] || expect_eq "the killed bfmerge" "killed by SIGXFSZ" "exit 0"
	cmp before.bf a.bf
	[ -n "$(temps a.bf)" ] || expect_eq "temporaries after the kill" "one" "none: the kill missed the save"
	run --separate-stderr bfmerge -o a.bf a.bf b.bf
	expect_status 0
	expect_eq "temporaries after the next save" "" "$(temps a.bf)"
	expect_eq "keys" 40000 "$(seq 1 40000 | bfgrep -c -f a.bf)"
	# bfuniq -f and bftop -o the same
	seq 1 100000 >in.txt
	(ulimit -f 8 && exec bfuniq --key "$KEY" -f s.bf in.txt >/dev/null) 2>/dev/null || true
	[ -n "$(temps s.bf)" ]
	bfuniq --key "$KEY" -f s.bf </dev/null
	expect_eq "temporaries of s.bf" "" "$(temps s.bf)"
	(ulimit -f 8 && exec bftop -o t.top in.txt >/dev/null) 2>/dev/null || true
	[ -n "$(temps t.top)" ]
	# one key: an empty stream has no frequent key, exit status 1
	bftop -o t.top <<<a >/dev/null
	expect_eq "temporaries of t.top" "" "$(temps t.top)"
}

@test "paths: a live process's temporary is never taken for a dead one's" {
	put_lines in.txt alice
	sleep 60 &
	local live=$!
	: >".a.bf.$live.AbCdEf"
	# a dead PID: one that has ended, and that no process has taken since
	bash -c 'exit 0' &
	local dead=$!
	wait "$dead"
	kill -0 "$dead" 2>/dev/null && skip "PID $dead was reused at once"
	: >".a.bf.$dead.XyZ123"
	# not a temporary of a.bf: another file's, the lock, odd names
	: >.a.bf.lock
	: >".b.bf.$dead.XyZ123"
	: >".a.bf.$dead.toolong7"
	bfbuild --key "$KEY" -n 100 -o a.bf in.txt
	kill "$live"
	wait "$live" 2>/dev/null || true
	expect_eq "left" "$(printf '%s\n' ".a.bf.$dead.toolong7" ".a.bf.$live.AbCdEf" .a.bf.lock ".b.bf.$dead.XyZ123" | LC_ALL=C sort)" \
		"$(ls -A | grep '^\.' | LC_ALL=C sort)"
}
