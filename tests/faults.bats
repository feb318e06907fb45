#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# faults.bats - what the programs do when the world goes wrong around them:
# standard output that cannot be written, a disk that fills up while a
# filter is saved, a signal in the middle of a save, memory that cannot be
# had, and inputs at the edges (empty, unterminated, huge, binary, 1e8
# empty lines).
#
# What must hold (issue "Reliability and security", section Faults):
#  - output that cannot be written is "PROG: write error: ..." and exit 2,
#    or silent death by SIGPIPE; never a hang, never exit 0 with output lost;
#  - a filter file is the complete old one or the complete new one, whatever
#    happens during the save, and no temporary file (".NAME.PID.XXXXXX" beside
#    it) outlives the program, except after SIGKILL, which nothing can catch;
#  - a filter that does not fit in memory is refused with the bytes it needs.
#
# The machinery (FIFOs, bounded waits, the tmpfs, the LD_PRELOAD shim that
# fails write(2) with ENOSPC) is in faults/faults.bash and faults/enospc.c.
# Every wait is bounded (timeout(1), or a polling loop with a deadline that
# ends in SIGKILL and a failed test). Only the tmpfs test needs root; it is
# skipped without (the shim test covers the same ground). The whole file
# takes about 45 s on an idle two-core machine, 85 s on a busy one; ulimit and
# 1e8-line tests are skipped under ASan, and the slowest under valgrind.

bats_require_minimum_version 1.5.0
load helpers
load faults/faults

# Size of the filters in the signal tests: 4e8 bits is 50 MB in memory,
# 50 kB (old, 2 keys) to 1.3 MB (new, 1e5 keys) on disk. How long a save
# lasts no longer rests on the size: the savers run under the shim's
# SLOW_WRITE_MS (tests/faults/enospc.c), 128 KiB a write and a pause after
# each, so the temporary file is there to be seen, half written, on any
# machine. (Sized by time alone, 2e8 and then 4e8 bits each stopped being
# enough as saves got faster: the save of bfmerge -o, then of bfbuild -o,
# ended unseen in CI runs.)
SIG_BITS=4e8
# bfuniq's STATE of about the same size: 2e7 keys at 1% (9.9 bits per key).
SIG_UNIQ_CAPACITY=2e7

setup() {
	for prog in bfbuild bfgrep bfuniq bfcount bfmerge bfinfo; do
		if [ ! -x "$BFTOOLS_BIN/$prog" ]; then
			echo "$BFTOOLS_BIN/$prog is missing: build it (make) or set BFTOOLS_BIN" >&2
			return 1
		fi
	done
	F=$BATS_FILE_TMPDIR
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
}

# Shared inputs, made once: 200000 numbered lines (1.3 MB, far more than a
# pipe holds), and a filter of them.
setup_file() {
	local F=$BATS_FILE_TMPDIR
	seq 1 200000 >"$F/keys.txt"
	bfbuild --key "$KEY" -n 1e6 -o "$F/keys.bf" "$F/keys.txt"
}

# ================================================================ stdout

@test "bfgrep: stdout full, closed or a pipe nobody reads: write error and exit 2, or SIGPIPE; never a hang" {
	every_stdout_fault bfgrep -f "$F/keys.bf" "$F/keys.txt"
	every_stdout_fault bfgrep -c -f "$F/keys.bf" "$F/keys.txt"
	every_stdout_fault bfgrep --line-buffered -f "$F/keys.bf" "$F/keys.txt"
	check_failures
}

@test "bfuniq: stdout full, closed or a pipe nobody reads: write error and exit 2, or SIGPIPE; never a hang" {
	every_stdout_fault bfuniq --key "$KEY" "$F/keys.txt"
	every_stdout_fault bfuniq --key "$KEY" --line-buffered "$F/keys.txt"
	check_failures
}

@test "bfuniq -f STATE: a write error on stdout is exit 2 and leaves STATE untouched, no temp file" {
	bfuniq --key "$KEY" -n 1e6 -f state.bf <<<"seen" >/dev/null
	cp state.bf saved.bf
	every_stdout_fault bfuniq -f state.bf "$F/keys.txt"
	old_untouched_no_temp . state.bf saved.bf "bfuniq -f state.bf, stdout unwritable"
	check_failures
}

@test "bfcount: stdout full, closed or a pipe nobody reads: write error and exit 2, or SIGPIPE; never a hang" {
	every_stdout_fault bfcount "$F/keys.txt"
	every_stdout_fault bfcount -f "$F/keys.bf"
	check_failures
}

@test "bfbuild to stdout: full, closed or a pipe nobody reads: write error and exit 2, or SIGPIPE; never a hang" {
	every_stdout_fault bfbuild --key "$KEY" -n 1e6 "$F/keys.txt"
	check_failures
}

@test "bfmerge to stdout: full, closed or a pipe nobody reads: write error and exit 2, or SIGPIPE; never a hang" {
	every_stdout_fault bfmerge "$F/keys.bf" "$F/keys.bf"
	check_failures
}

@test "bfinfo: stdout full, closed or a pipe nobody reads: write error and exit 2, or SIGPIPE; never a hang" {
	every_stdout_fault bfinfo "$F/keys.bf"
	every_stdout_fault bfinfo --json "$F/keys.bf"
	check_failures
}

@test "a reader that exits early (| head -n 1) ends every big output with SIGPIPE or exit 2, never exit 0" {
	early_reader_ok bfgrep -f "$F/keys.bf" "$F/keys.txt"
	early_reader_ok bfgrep --line-buffered -f "$F/keys.bf" "$F/keys.txt"
	early_reader_ok bfuniq --key "$KEY" "$F/keys.txt"
	early_reader_ok bfuniq --key "$KEY" --line-buffered "$F/keys.txt"
	# binary filters (1.9 MB): head's "first line" is whatever precedes
	# the first newline byte; what matters is the writer's end
	early_reader_ok bfbuild --key "$KEY" -n 1e6 "$F/keys.txt"
	early_reader_ok bfmerge "$F/keys.bf" "$F/keys.bf"
	check_failures
}

# ================================================================ a full disk
#
# The disk: a 1 MB tmpfs, or the ENOSPC shim. The old filter is small on
# disk (2 keys in 1e6 capacity: its 1.9 MB of bits deflate to 2 kB); the
# new one holds 500000 keys, a quarter of its bits set, which deflate
# little: 1.6 MB, more than the tmpfs has.

# full_disk_inputs: few.txt (2 keys), many.txt (500000), many.bf (from
# many.txt, on the big disk: an input of bfmerge).
full_disk_inputs() {
	put_lines few.txt old1 old2
	seq 1 500000 >many.txt
	bfbuild --key "$KEY" -n 1e6 -o many.bf many.txt
}

# full_disk_cases DIR [VAR=VALUE...]: run the four savers against
# DIR/out.bf and DIR/state.bf, each starting from a small old file on an
# otherwise empty DIR, with the VARs in their environment (the shim's),
# and check that each fails with "PROG: DIR/NAME: No space left on
# device", exit 2, the old file byte for byte, no temp file.
full_disk_cases() {
	local d=$1
	shift
	# bfbuild -o over an old filter
	full_disk_old "$d" out.bf bfbuild --key "$KEY" -n 1e6 -o "$d/out.bf" few.txt
	full_disk_case "$d" out.bf "$@" bfbuild --key "$KEY" -n 1e6 -o "$d/out.bf" many.txt
	# bfbuild -f adding to it in place
	full_disk_old "$d" out.bf bfbuild --key "$KEY" -n 1e6 -o "$d/out.bf" few.txt
	full_disk_case "$d" out.bf "$@" bfbuild -f "$d/out.bf" many.txt
	# bfmerge -o over it
	full_disk_old "$d" out.bf bfbuild --key "$KEY" -n 1e6 -o "$d/out.bf" few.txt
	full_disk_case "$d" out.bf "$@" bfmerge -o "$d/out.bf" many.bf saved.bf
	# bfuniq -f STATE
	full_disk_old "$d" state.bf bfuniq --key "$KEY" -n 1e6 -p 1e-3 -f "$d/state.bf" few.txt
	full_disk_case "$d" state.bf "$@" bfuniq -f "$d/state.bf" many.txt
}

# full_disk_old DIR NAME COMMAND...: empty DIR, make DIR/NAME with
# COMMAND (no shim), and keep a copy of it in saved.bf.
full_disk_old() {
	local d=$1 name=$2
	shift 2
	rm -rf "${d:?}"/* "$d"/.[!.]*
	"$@" >/dev/null
	cp "$d/$name" saved.bf
}

# full_disk_case DIR NAME [VAR=VALUE...] PROG ARG...: one saver, whose
# old file is in saved.bf.
full_disk_case() {
	local d=$1 name=$2 st=0 err prog word
	shift 2
	for word in "$@"; do	# the first word that is not VAR=VALUE
		case $word in *=*) ;; *) prog=$word && break ;; esac
	done
	timeout -k 5 60 env "$@" >out.txt 2>err.txt 3>&- || st=$?
	err=$(cat err.txt)
	[ "$st" -eq 2 ] || note_failure "$*: exit status $st, expected 2 (stderr '$err')"
	[ "$err" = "$prog: $d/$name: No space left on device" ] ||
		note_failure "$*: stderr '$err', expected '$prog: $d/$name: No space left on device'"
	old_untouched_no_temp "$d" "$name" saved.bf "$*"
}

@test "a full disk (1 MB tmpfs) while saving: bfbuild -o/-f, bfmerge -o, bfuniq -f exit 2, old file intact, no temp" {
	mount_small_tmpfs disk 1m
	full_disk_inputs
	full_disk_cases disk
	check_failures
}

@test "a full disk (ENOSPC shim) at any point of the save: bfbuild -o/-f, bfmerge -o, bfuniq -f exit 2, old file intact, no temp" {
	enospc_shim
	full_disk_inputs
	mkdir disk
	# the shim itself changes nothing when there is room enough
	enospc_env 100000000
	env "${ENOSPC_ENV[@]}" bfbuild --key "$KEY" -n 1e6 -o disk/probe.bf many.txt
	cmp disk/probe.bf many.bf
	rm disk/probe.bf
	# full before the first byte, after one byte, after 4 kB, after 1 MB
	# (inside the first 1 MiB write, which is cut short there), and one
	# byte short of the whole file
	local size
	size=$(wc -c <many.bf)
	for after in 0 1 4096 1000000 $((size - 1)); do
		enospc_env "$after"
		full_disk_cases disk "${ENOSPC_ENV[@]}"
	done
	check_failures
}

# ================================================================ signals
#
# Each test starts the saver on a big filter (SIG_BITS) reading its input
# from a FIFO, and signals it at four points, told apart by what is on
# disk rather than by the clock:
#   input    while it is still reading (the input is written into the FIFO,
#            which blocks until the program has taken all but a pipeful,
#            and the FIFO is left open): the file must be the old one;
#   created  once the input has ended and the temporary file appears;
#   half     once the temporary file holds half of the new file's bytes;
#   written  once it holds all of them (fsync, rename, directory fsync:
#            the signal may come before or after the rename, or too late).
# A change to the file itself also counts as "the save is under way", so
# that a program that wrongly wrote in place would be caught in the act.
# After each, the file must be the complete old one or the complete new
# one (cmp against both, made beforehand), and after SIGINT and SIGTERM no
# temporary file may be left. After SIGKILL one may be (nothing can clean
# up after SIGKILL); it is removed, and only the file itself is judged.
# The program may exit 0 only if the new file is in place.
# bfbuild -f and bfuniq -f keep state: SIGINT and SIGTERM make them finish
# what they read and save (signals.bats). For them, signalled during the
# input, the file must load and hold the old keys, with exit 128 + signal;
# signalled during the save, it is the new file (the save goes on). The point
# "created" must be caught (the save outlasts a 5 ms poll); the later
# ones are signalled when seen, else the program is left to finish, and
# must then succeed with the new file.

# signal_refs: in the file tmpdir, made once: sig-in.txt (the new keys,
# 590 kB), sig-old.bf (2 keys, SIG_BITS), sig-new-o.bf (bfbuild -o of
# sig-in.txt), sig-new-f.bf (bfbuild -f of sig-old.bf with sig-in.txt),
# sig-new-m.bf (bfmerge of sig-new-o.bf and sig-old.bf), sig-state-old.bf
# and sig-state-new.bf (bfuniq -f before and after sig-in.txt).
signal_refs() {
	[ -e "$F/sig-state-new.bf" ] && return 0
	seq 1 100000 >"$F/sig-in.txt"
	put_lines "$F/sig-few.txt" old1 old2
	bfbuild --key "$KEY" -m "$SIG_BITS" -o "$F/sig-old.bf" "$F/sig-few.txt"
	bfbuild --key "$KEY" -m "$SIG_BITS" -o "$F/sig-new-o.bf" "$F/sig-in.txt"
	cp "$F/sig-old.bf" "$F/sig-new-f.bf"
	bfbuild -f "$F/sig-new-f.bf" "$F/sig-in.txt"
	bfmerge -o "$F/sig-new-m.bf" "$F/sig-new-o.bf" "$F/sig-old.bf"
	bfuniq --key "$KEY" -n "$SIG_UNIQ_CAPACITY" -p 0.01 -f "$F/sig-state-old.bf" "$F/sig-few.txt" >/dev/null
	cp "$F/sig-state-old.bf" "$F/sig-state-new.bf.tmp"
	bfuniq -f "$F/sig-state-new.bf.tmp" "$F/sig-in.txt" >/dev/null
	mv "$F/sig-state-new.bf.tmp" "$F/sig-state-new.bf"
}

# signal_saver KIND SIG: all four points for one saver and one signal.
# KIND: build-o, build-f, merge-o or uniq-f.
signal_saver() {
	local kind=$1 sig=$2 phase name old new feed size oldsize bytes caught=0 signalled
	signal_refs
	enospc_shim
	slow_env
	case $kind in
	build-o) name=out.bf old=$F/sig-old.bf new=$F/sig-new-o.bf feed=$F/sig-in.txt ;;
	build-f) name=out.bf old=$F/sig-old.bf new=$F/sig-new-f.bf feed=$F/sig-in.txt ;;
	merge-o) name=out.bf old=$F/sig-old.bf new=$F/sig-new-m.bf feed=$F/sig-new-o.bf ;;
	uniq-f) name=state.bf old=$F/sig-state-old.bf new=$F/sig-state-new.bf feed=$F/sig-in.txt ;;
	esac
	size=$(stat -c %s "$new")
	oldsize=$(stat -c %s "$old")
	for phase in input created half written; do
		cp "$old" "$name"
		rm -f feed.fifo && mkfifo feed.fifo
		# read-write, so that neither side's open blocks; cat is bounded
		# because a program that died early would leave it blocked
		exec 7<>feed.fifo
		case $kind in
		build-o) start_bg feed.fifo "${SLOW_ENV[@]}" bfbuild --key "$KEY" -m "$SIG_BITS" -o "$name" ;;
		build-f) start_bg feed.fifo "${SLOW_ENV[@]}" bfbuild -f "$name" ;;
		merge-o) start_bg /dev/null "${SLOW_ENV[@]}" bfmerge -o "$name" feed.fifo "$F/sig-old.bf" ;;
		uniq-f) start_bg feed.fifo "${SLOW_ENV[@]}" bfuniq -f "$name" ;;
		esac
		if ! timeout -k 5 30 cat "$feed" >&7; then
			note_failure "$kind $sig $phase: the program did not read its input ($(head -c 300 bg-err.txt))"
		fi
		signalled=no
		case $phase in
		input) kill -"$sig" "$BG_PID" 2>/dev/null && signalled=yes ;;
		created) bytes=0 ;;
		half) bytes=$((size / 2)) ;;
		written) bytes=$size ;;
		esac
		exec 7>&-
		if [ "$phase" != input ] && wait_for_save . "$name" "$bytes" "$oldsize" 30; then
			# it may have ended since: then it is judged as it is
			kill -"$sig" "$BG_PID" 2>/dev/null && signalled=yes
			if [ "$phase" = created ]; then caught=1; fi
		fi
		if ! wait_bg 30; then
			note_failure "$kind $sig $phase: still running 30 s after SIG$sig (killed)"
			continue
		fi
		judge_signal "$kind" "$sig" "$phase" "$name" "$old" "$new" "$signalled"
	done
	[ "$caught" -eq 1 ] || note_failure "$kind $sig: the save ended before it was seen (no temporary file, no change to $name) though its writes were slowed"
	check_failures
}

# saves_on_signal KIND SIG: the program saves its state on SIG.
saves_on_signal() {
	case $1:$2 in build-f:INT | build-f:TERM | uniq-f:INT | uniq-f:TERM) return 0 ;; esac
	return 1
}

# judge_saved_on_signal KIND SIG PHASE NAME OLD NEW SIGNALLED WHAT LEFT
judge_saved_on_signal() {
	local kind=$1 sig=$2 phase=$3 name=$4 what=$8 left=$9 want held
	want=$((128 + $(kill -l "$sig")))
	if [ "$phase" = input ]; then
		held=$(bfgrep -c -f "$name" "$F/sig-few.txt" 2>&1)
		[ "$BG_STATUS" -eq "$want" ] ||
			note_failure "$kind $sig input: exit $BG_STATUS, not $want ($(head -c 300 bg-err.txt))"
		[ "$held" = 2 ] ||
			note_failure "$kind $sig input: $name does not hold the old keys ($held)"
	else
		[ "$what" = new ] ||
			note_failure "$kind $sig $phase: $name is '$what', not the new file, exit $BG_STATUS"
		[ "$BG_STATUS" -eq 0 ] || [ "$BG_STATUS" -eq "$want" ] ||
			note_failure "$kind $sig $phase: exit $BG_STATUS ($(head -c 300 bg-err.txt))"
	fi
	[ -z "$left" ] || note_failure "$kind $sig $phase: temporary files left after SIG$sig: $left"
	rm -f -- ."$name".*
}

# judge_signal KIND SIG PHASE NAME OLD NEW SIGNALLED: the file after one
# run. SIGNALLED is "no" when the program ended before it could be sent
# the signal: then it must have succeeded, and the file be the new one.
judge_signal() {
	local kind=$1 sig=$2 phase=$3 name=$4 what left
	what=$(old_or_new "$name" "$5" "$6")
	left=$(temp_files . "$name")
	if saves_on_signal "$kind" "$sig"; then
		judge_saved_on_signal "$@" "$what" "$left"
		return
	fi
	if [ "$7" = no ] && { [ "$BG_STATUS" -ne 0 ] || [ "$what" != new ]; }; then
		note_failure "$kind $phase: ended unsignalled with exit $BG_STATUS and the $what file ($(head -c 300 bg-err.txt))"
	fi
	case $what in
	old) [ "$BG_STATUS" -ne 0 ] ||
		note_failure "$kind $sig $phase: exit 0 but $name is still the old file" ;;
	new) ;;
	*) note_failure "$kind $sig $phase: $name is neither the old nor the new file ($(ls -l "$name" 2>&1)), exit $BG_STATUS" ;;
	esac
	if [ "$phase" = input ] && [ "$what" != old ]; then
		note_failure "$kind $sig $phase: signalled before the end of input, yet $name is '$what', not the old file"
	fi
	if [ -n "$left" ] && [ "$sig" != KILL ]; then
		note_failure "$kind $sig $phase: temporary files left after SIG$sig: $left"
	fi
	rm -f -- ."$name".*
}

@test "bfbuild -o: SIGINT while reading or saving leaves the old FILE or the new one, complete, and no temp file" {
	skip_if_valgrind "a save under valgrind is too slow to time"
	signal_saver build-o INT
}

@test "bfbuild -o: SIGTERM while reading or saving leaves the old FILE or the new one, complete, and no temp file" {
	skip_if_valgrind "a save under valgrind is too slow to time"
	signal_saver build-o TERM
}

@test "bfbuild -o: SIGKILL while reading or saving leaves the old FILE or the new one, complete (a temp file may remain)" {
	skip_if_valgrind "a save under valgrind is too slow to time"
	signal_saver build-o KILL
}

@test "bfbuild -f: SIGINT while reading saves what was read; while saving the new FILTER lands; no temp file" {
	skip_if_valgrind "a save under valgrind is too slow to time"
	signal_saver build-f INT
}

@test "bfbuild -f: SIGTERM while reading saves what was read; while saving the new FILTER lands; no temp file" {
	skip_if_valgrind "a save under valgrind is too slow to time"
	signal_saver build-f TERM
}

@test "bfbuild -f: SIGKILL while reading or saving leaves the old FILTER or the new one, complete (a temp file may remain)" {
	skip_if_valgrind "a save under valgrind is too slow to time"
	signal_saver build-f KILL
}

@test "bfmerge -o: SIGINT while reading or saving leaves the old FILE or the new one, complete, and no temp file" {
	skip_if_valgrind "a save under valgrind is too slow to time"
	signal_saver merge-o INT
}

@test "bfmerge -o: SIGTERM while reading or saving leaves the old FILE or the new one, complete, and no temp file" {
	skip_if_valgrind "a save under valgrind is too slow to time"
	signal_saver merge-o TERM
}

@test "bfmerge -o: SIGKILL while reading or saving leaves the old FILE or the new one, complete (a temp file may remain)" {
	skip_if_valgrind "a save under valgrind is too slow to time"
	signal_saver merge-o KILL
}

@test "bfuniq -f STATE: SIGINT while reading saves what was read; while saving the new STATE lands; no temp file" {
	skip_if_valgrind "a save under valgrind is too slow to time"
	signal_saver uniq-f INT
}

@test "bfuniq -f STATE: SIGTERM while reading saves what was read; while saving the new STATE lands; no temp file" {
	skip_if_valgrind "a save under valgrind is too slow to time"
	signal_saver uniq-f TERM
}

@test "bfuniq -f STATE: SIGKILL while reading or saving leaves the old STATE or the new one, complete (a temp file may remain)" {
	skip_if_valgrind "a save under valgrind is too slow to time"
	signal_saver uniq-f KILL
}

# ================================================================ memory
#
# `ulimit -v` caps the address space, so mapping the filter fails however
# lazily its pages would be touched. The message must say how much was
# asked for, so that the user knows what limit (or -n/-p) would do.
# Sizes, from the sizing formulas (bfinfo shows the same):
#   -n 1e9 -p 1e-4, blocked: 22030217728 bits = 2753777216 bytes (2.8 GB)
#   -n 1e8 -p 1e-2, blocked:   991799296 bits =  123974912 bytes (124 MB)

# refused_for_memory BYTES PROG: the last `run` exited 2, printed nothing,
# and said on one stderr line, starting "PROG: ", that it needed BYTES bytes.
refused_for_memory() {
	expect_status 2
	expect_output ""
	expect_one_line_error "$2: "
	case $stderr in
	*"$1 bytes"*) ;;
	*) expect_eq "stderr names the bytes needed" "$2: ... $1 bytes ..." "$stderr" ;;
	esac
}

@test "bfbuild: a filter bigger than ulimit -v allows is refused naming the bytes it needs, exit 2, no file" {
	skip_unless_plain "ulimit -v"
	run --separate-stderr bash -c 'ulimit -v 1000000 && exec bfbuild -n 1e9 -p 1e-4 -o big.bf </dev/null'
	refused_for_memory 2753777216 bfbuild
	expect_eq "directory" "" "$(ls -A)"
}

@test "bfuniq: a filter bigger than ulimit -v allows is refused naming the bytes it needs, exit 2" {
	skip_unless_plain "ulimit -v"
	run --separate-stderr bash -c 'ulimit -v 1000000 && exec bfuniq -n 1e9 -p 1e-4 </dev/null'
	refused_for_memory 2753777216 bfuniq
}

@test "every program refuses to load a filter bigger than ulimit -v allows, naming the bytes, exit 2" {
	skip_unless_plain "ulimit -v"
	bfbuild --key "$KEY" -n 1e8 -p 1e-2 -o mid.bf </dev/null
	expect_eq "bytes in memory (bfinfo)" 123974912 \
		"$(bfinfo --json mid.bf | sed 's/.*"bytes_in_memory":\([0-9]*\).*/\1/')"
	cp mid.bf saved.bf
	local cmd
	for cmd in "bfgrep -f mid.bf" "bfcount -f mid.bf" "bfmerge mid.bf mid.bf" \
		"bfbuild -f mid.bf" "bfbuild --like mid.bf -o like.bf" "bfuniq -f mid.bf"; do
		run --separate-stderr bash -c "ulimit -v 100000 && exec $cmd </dev/null"
		refused_for_memory 123974912 "${cmd%% *}"
	done
	# bfinfo may count bits without holding them all; if it does load
	# the filter, it must be refused in the same words
	run --separate-stderr bash -c "ulimit -v 100000 && exec bfinfo mid.bf"
	if [ "$status" -ne 0 ]; then
		refused_for_memory 123974912 bfinfo
	fi
	cmp mid.bf saved.bf
	# bfbuild -f and bfuniq -f took the lock before loading; it stays
	expect_eq "directory" ".mid.bf.lock
mid.bf
saved.bf" "$(ls -A)"
}

# ================================================================ input edges
#
# Each edge goes through bfbuild then bfgrep, through bfuniq, and through
# bfcount. All keys are fixed (--key), every filter has a rate of 1e-6 or
# less and a handful of keys, so "not selected" is deterministic.

@test "empty input: bfbuild makes an empty filter, bfgrep selects nothing, bfuniq writes nothing, bfcount says 0" {
	bfbuild --key "$KEY" -n 100 -p 1e-6 -o e.bf </dev/null
	run --separate-stderr bfgrep -f e.bf </dev/null
	expect_status 1
	expect_output ""
	put_lines q.txt "" a
	run --separate-stderr bfgrep -f e.bf q.txt
	expect_status 1
	expect_output ""
	run --separate-stderr bfuniq --key "$KEY" </dev/null
	expect_status 0
	expect_output ""
	expect_stderr ""
	run --separate-stderr bfcount </dev/null
	expect_status 0
	expect_output 0
}

@test "no final newline: the last line is a key like the others, and is written with a newline" {
	printf 'a\nb' >in.txt
	bfbuild --key "$KEY" -n 100 -p 1e-6 -o f.bf in.txt
	printf 'b' >q.txt
	bfgrep -f f.bf q.txt >out.txt
	expect_file out.txt 'b\n'
	printf 'a\nb\nb' >in.txt
	bfuniq --key "$KEY" in.txt >out.txt
	expect_file out.txt 'a\nb\n'
	printf 'a\nb\nc' >in.txt
	bfuniq --key "$KEY" in.txt >out.txt
	expect_file out.txt 'a\nb\nc\n'
	run --separate-stderr bfcount in.txt
	expect_output 3
	printf 'a\nb\nb' >in.txt
	run --separate-stderr bfcount in.txt
	expect_output 2
}

@test "a 100 MB line is one key: selected and written whole, told apart from its one-byte variant" {
	skip_if_valgrind "100 MB lines under valgrind take minutes"
	head -c 100000000 /dev/zero | tr '\0' x >long.txt
	cp long.txt long-y.txt
	echo >>long.txt
	printf 'y\n' >>long-y.txt	# the same line with one more byte
	printf 'short\n' >short.txt
	cat long.txt short.txt >in.txt
	timeout -k 5 60 bfbuild --key "$KEY" -n 100 -p 1e-6 -o f.bf in.txt
	timeout -k 5 60 bfgrep -f f.bf in.txt >out.txt
	cmp out.txt in.txt
	run --separate-stderr timeout -k 5 60 bfgrep -c -f f.bf long-y.txt
	expect_status 1
	expect_output 0
	cat long.txt short.txt long.txt long-y.txt short.txt >in2.txt
	timeout -k 5 60 bfuniq --key "$KEY" in2.txt >out.txt
	cat long.txt short.txt long-y.txt >want.txt
	cmp out.txt want.txt
	run --separate-stderr timeout -k 5 60 bfcount in2.txt
	expect_output 3
}

@test "a 100 MB last line without a newline is one key, written with one" {
	skip_if_valgrind "100 MB lines under valgrind take minutes"
	head -c 100000000 /dev/zero | tr '\0' x >long.txt
	timeout -k 5 60 bfbuild --key "$KEY" -n 100 -p 1e-6 -o f.bf long.txt
	timeout -k 5 60 bfgrep -f f.bf long.txt >out.txt
	cp long.txt want.txt && echo >>want.txt
	cmp out.txt want.txt
	timeout -k 5 60 bfuniq --key "$KEY" long.txt >out.txt
	cmp out.txt want.txt
}

@test "NUL bytes are ordinary bytes of a line: kept in output, part of the key" {
	printf 'a\0b\na\0c\na\0b\n\0\n' >in.txt
	printf 'a\0b\n' >built.txt
	bfbuild --key "$KEY" -n 100 -p 1e-6 -o f.bf built.txt
	bfgrep -f f.bf in.txt >out.txt
	expect_file out.txt 'a\0b\na\0b\n'
	printf 'a\nab\na\0\n' >q.txt
	run --separate-stderr bfgrep -c -f f.bf q.txt
	expect_status 1
	expect_output 0
	bfuniq --key "$KEY" in.txt >out.txt
	expect_file out.txt 'a\0b\na\0c\n\0\n'
	printf 'a\nab\n' >>in.txt
	run --separate-stderr bfcount in.txt
	expect_output 5
}

@test "CRLF lines keep their CR: a different key from the LF line, written back unchanged" {
	printf 'a\r\nb\n' >built.txt
	bfbuild --key "$KEY" -n 100 -p 1e-6 -o f.bf built.txt
	printf 'a\na\r\nb\r\nb\n' >in.txt
	bfgrep -f f.bf in.txt >out.txt
	expect_file out.txt 'a\r\nb\n'
	printf 'a\r\na\na\r\n\r\n\n' >in.txt
	bfuniq --key "$KEY" in.txt >out.txt
	expect_file out.txt 'a\r\na\n\r\n\n'
	run --separate-stderr bfcount in.txt
	expect_output 4
}

@test "invalid UTF-8 (bytes 0x80-0xff, overlong forms, surrogates) is bytes: kept, keyed, never folded" {
	local i
	for i in $(seq 128 255); do
		printf "\\$(printf %03o "$i")\\n"
	done >high.txt
	# overlong "/" (C0 AF, E0 80 AF), overlong NUL (C0 80), a UTF-16
	# surrogate (ED A0 80), a 5-byte form (F8 88 80 80 80), a lone
	# continuation byte after ASCII, a truncated sequence at the end
	printf '\300\257\n\340\200\257\n\300\200\n\355\240\200\n\370\210\200\200\200\nx\200\n\342\202' >bad.txt
	cat high.txt bad.txt >built.txt
	bfbuild --key "$KEY" -n 1000 -p 1e-9 -o f.bf built.txt
	bfgrep -f f.bf built.txt >out.txt
	{ cat built.txt; echo; } >want.txt	# the last line comes back ended
	cmp out.txt want.txt
	# "/" is not its overlong forms, "x" is not "x\200", a whole euro
	# sign is not its truncated start; and the bytes above 127 never fold
	# (-i is ASCII only: \304 and \344 stay two keys, so 135 with -i)
	printf '/\n\0\nx\n\342\202\254\n' >q.txt
	run --separate-stderr bfgrep -c -f f.bf q.txt
	expect_status 1
	expect_output 0
	cat want.txt want.txt >twice.txt
	bfuniq --key "$KEY" twice.txt >out.txt
	cmp out.txt want.txt
	bfuniq --key "$KEY" -i twice.txt >out.txt
	cmp out.txt want.txt
	run --separate-stderr bfcount twice.txt
	expect_output 135
	run --separate-stderr bfcount -i twice.txt
	expect_output 135
}

# 1e8 empty lines take about 5 s per program on an idle two-core machine
# (measured: bfuniq 5 s, bfcount 2 s, bfbuild 4 s, bfgrep -c 4 s). The
# timeouts (60 s) only turn a hang into a failure; they are not a speed
# test, so a loaded machine does not fail them.

@test "1e8 empty lines: bfuniq writes exactly one empty line" {
	skip_if_slow_build "1e8 lines: the plain build only, to keep make asan quick"
	yes '' | head -n 100000000 | timeout -k 5 60 bfuniq --key "$KEY" >out.txt
	expect_eq "bfuniq's exit status" 0 "${PIPESTATUS[2]}"
	expect_file out.txt '\n'
}

@test "1e8 empty lines: bfcount prints 1" {
	skip_if_slow_build "1e8 lines: the plain build only, to keep make asan quick"
	run --separate-stderr bash -c "yes '' | head -n 100000000 | timeout -k 5 60 bfcount"
	expect_status 0
	expect_output 1
}

@test "1e8 empty lines: bfbuild adds one key 1e8 times, and bfgrep selects all 1e8" {
	skip_if_slow_build "1e8 lines: the plain build only, to keep make asan quick"
	yes '' | head -n 100000000 | timeout -k 5 60 bfbuild --key "$KEY" -n 100 -p 1e-6 -o f.bf
	# insertions count repeats (bf(5)); the bits hold one element
	expect_eq "insertions" 100000000 "$(bfinfo --json f.bf | sed 's/.*"insertions":\([0-9]*\).*/\1/')"
	expect_eq "elements (bfcount -f)" 1 "$(bfcount -f f.bf)"
	run --separate-stderr bash -c "yes '' | head -n 100000000 | timeout -k 5 60 bfgrep -c -f f.bf"
	expect_status 0
	expect_output 100000000
}
