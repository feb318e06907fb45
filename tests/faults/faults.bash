# SPDX-License-Identifier: MIT
# faults.bash - the machinery of tests/faults.bats: output that cannot be
# written, a disk that fills up, signals in the middle of a save, and how to
# tell "the old file or the new one" from anything else. Loaded after
# helpers.bash with `load faults/faults`.
#
# Nothing here waits without a bound: every wait for a program polls with a
# deadline, kills the program with SIGKILL when the deadline passes, and
# fails the test saying so, because a hang is one of the faults we look for.

# Background programs started by start_bg, killed (by PID) in teardown.
FAULTS_PIDS=()
# A tmpfs mounted by mount_small_tmpfs, unmounted in teardown.
FAULTS_MOUNT=

# Only our own children are killed: a PID whose process has ended may have
# been given to someone else's since.
teardown() {
	local pid
	for pid in "${FAULTS_PIDS[@]}"; do
		if [ "$(awk '{ print $4 }' "/proc/$pid/stat" 2>/dev/null)" = "$BASHPID" ]; then
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	exec 7>&- 2>/dev/null || true
	if [ -n "$FAULTS_MOUNT" ]; then
		cd /
		umount "$FAULTS_MOUNT" 2>/dev/null || umount -l "$FAULTS_MOUNT" 2>/dev/null || true
	fi
}

# ---------------------------------------------------------------- the build

# is_valgrind_build and is_plain_build live in tests/helpers.bash.

# skip_unless_plain WHY / skip_if_valgrind WHY: skip the test, saying why.
skip_unless_plain() {
	is_plain_build || skip "$1 (not with sanitizer or valgrind builds)"
}

# skip_if_slow_build WHY: skip_unless_plain, and skip make coverage's
# build too, whose gcov counters make the busiest loops 7 times slower.
skip_if_slow_build() {
	skip_unless_plain "$1"
	! grep -q -a __gcov_init "$BFTOOLS_BIN/bfbuild" || skip "$1 (not with the coverage build)"
}

skip_if_valgrind() {
	! is_valgrind_build || skip "$1"
}

# ---------------------------------------------------------------- stdout faults

# EXPECT_FAILURES collects every way the programs went wrong in one test,
# so that one run shows the whole pattern; check_failures ends the test.
EXPECT_FAILURES=""

note_failure() {
	EXPECT_FAILURES="$EXPECT_FAILURES
$1"
}

check_failures() {
	[ -z "$EXPECT_FAILURES" ] && return 0
	printf 'failures:%s\n' "$EXPECT_FAILURES" >&2
	return 1
}

# write_failure_ok PROG STATUS ERRFILE REASON: the program either died of
# SIGPIPE without a word (REASON "Broken pipe" only), or exited 2 with
# exactly "PROG: write error: REASON" on stderr, perhaps followed by what
# it kept ("(STATE not saved: ...)"). Anything else, exit 0 above all
# (output lost without a word), is not.
write_failure_ok() {
	local prog=$1 st=$2 err
	err=$(cat "$3")
	if [ "$4" = "Broken pipe" ] && [ "$st" -eq 141 ] && [ -z "$err" ]; then
		return 0
	fi
	[ "$st" -eq 2 ] && [[ $err == "$prog: write error: $4" || $err == "$prog: write error: $4 ("*")" ]]
}

# stdout_fault WHAT REASON PROG ARG...: run the program with stdout as set
# up by WHAT and check the outcome with write_failure_ok.
#   full      stdout is /dev/full                 (No space left on device)
#   closed    stdout is closed                    (Bad file descriptor)
#   pipe      a pipe nobody reads any more, SIGPIPE at its default
#   pipe-ign  the same with SIGPIPE ignored, as under some daemons
#             (Broken pipe: exit 2 and the message, no signal to die of)
# "Nobody reads" is made without timing: the reader closes its end and
# only then lets the writer start (through the FIFO sync.fifo).
stdout_fault() {
	local what=$1 reason=$2 st=0 also=
	shift 2
	case $what in
	full) timeout -k 5 20 "$@" >/dev/full 2>err.txt 3>&- || st=$? ;;
	closed) timeout -k 5 20 "$@" >&- 2>err.txt 3>&- || st=$? ;;
	pipe | pipe-ign)
		rm -f sync.fifo && mkfifo sync.fifo
		{
			read -r _ <sync.fifo
			if [ "$what" = pipe ]; then
				exec timeout -k 5 20 env --default-signal=PIPE "$@" 2>err.txt
			fi
			trap '' PIPE
			exec timeout -k 5 20 "$@" 2>err.txt
		} 3>&- | { exec 0<&-; echo >sync.fifo; }
		st=${PIPESTATUS[0]}
		;;
	esac
	[ "$what" = pipe ] && also=" or silent death by SIGPIPE (141)"
	if [ "$st" -eq 124 ] || [ "$st" -eq 137 ]; then
		note_failure "$* ($what): hung (killed after 20 s)"
	elif ! write_failure_ok "$1" "$st" err.txt "$reason"; then
		note_failure "$* ($what): status $st, stderr '$(head -c 300 err.txt)'; expected exit 2 and '$1: write error: $reason'$also"
	fi
	return 0
}

# every_stdout_fault PROG ARG...: /dev/full, closed, and a pipe nobody
# reads with SIGPIPE at its default and ignored.
every_stdout_fault() {
	stdout_fault full "No space left on device" "$@"
	stdout_fault closed "Bad file descriptor" "$@"
	stdout_fault pipe "Broken pipe" "$@"
	stdout_fault pipe-ign "Broken pipe" "$@"
}

# early_reader_ok PROG ARG...: `PROG ARG... | head -n 1` on an output far
# bigger than a pipe holds: head gets the first line of the whole output
# (made beforehand into full.out; binary output is compared with cmp), and
# the program dies of SIGPIPE or reports the write error, never exit 0.
early_reader_ok() {
	local st
	timeout -k 5 20 "$@" >full.out 2>/dev/null 3>&-
	head -n 1 full.out >want-head.out
	env --default-signal=PIPE timeout -k 5 20 "$@" 2>err.txt 3>&- | head -n 1 >head.out
	st=${PIPESTATUS[0]}
	if [ "$st" -eq 124 ] || [ "$st" -eq 137 ]; then
		note_failure "$* | head -n 1: hung (killed after 20 s)"
		return 0
	fi
	cmp -s head.out want-head.out || note_failure "$* | head -n 1: head did not get the first line"
	write_failure_ok "$1" "$st" err.txt "Broken pipe" ||
		note_failure "$* | head -n 1: status $st, stderr '$(head -c 300 err.txt)', expected 141 (SIGPIPE) or exit 2 and '$1: write error: Broken pipe'"
	return 0
}

# ---------------------------------------------------------------- a full disk

# mount_small_tmpfs DIR SIZE: a tmpfs of SIZE at DIR (made), unmounted in
# teardown; the test is skipped when mounting is not permitted.
mount_small_tmpfs() {
	mkdir -p "$1"
	if ! mount -t tmpfs -o "size=$2" tmpfs "$1" 2>/dev/null; then
		skip "cannot mount a tmpfs here (needs root); the LD_PRELOAD shim test covers a full disk"
	fi
	FAULTS_MOUNT=$(cd "$1" && pwd)
}

# enospc_shim: SHIM is the path of tests/faults/enospc.c built as a shared
# library, built once per run with the C compiler; the test is skipped
# when there is none. (Not in a subshell: skip must reach the test.)
enospc_shim() {
	local cc=${CC:-cc}
	SHIM=$BATS_FILE_TMPDIR/enospc.so
	[ -e "$SHIM" ] && return 0
	command -v "$cc" >/dev/null 2>&1 || skip "no C compiler ($cc) to build the ENOSPC shim"
	"$cc" -shared -fPIC -o "$SHIM" "$BATS_TEST_DIRNAME/faults/enospc.c" -ldl
}

# enospc_env BYTES: ENOSPC_ENV is the environment (VAR=VALUE words, for
# env(1)) in which write(2) to a program's files fails with ENOSPC after
# BYTES bytes (tests/faults/enospc.c). SHIM is the shim's path (from
# enospc_shim). ASan insists on being the first library loaded; here the
# shim must be, so ASan is told not to check.
enospc_env() {
	ENOSPC_ENV=("ENOSPC_AFTER=$1" "LD_PRELOAD=$SHIM"
		"ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0")
}

# slow_env: SLOW_ENV is the environment (VAR=VALUE words, for env(1)) in
# which a program's saves are slowed by the shim (SHIM, from enospc_shim):
# 128 KiB a write(2) and 10 ms after each, with no limit on the bytes.
slow_env() {
	SLOW_ENV=("SLOW_WRITE_MS=10" "LD_PRELOAD=$SHIM"
		"ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0")
}

# temp_files DIR NAME: the temporary files of target NAME in DIR, if any:
# mkstemp's ".NAME.PID.XXXXXX" (lib/base/atomic.c), which the lock file
# ".NAME.lock" (lib/base/lock.c, kept for good) does not match.
temp_files() {
	(cd "$1" && compgen -G ".$2.[0-9]*.??????") || true
}

# old_untouched_no_temp DIR NAME SAVED WHAT: DIR/NAME is byte for byte
# SAVED and no temporary file of it is left; notes a failure otherwise.
old_untouched_no_temp() {
	cmp -s "$1/$2" "$3" || note_failure "$4: $1/$2 changed (expected the old file, byte for byte)"
	local left
	left=$(temp_files "$1" "$2")
	[ -z "$left" ] || note_failure "$4: temporary files left behind: $left"
}

# ---------------------------------------------------------------- signals

# start_bg INPUT [VAR=VALUE...] PROG ARG...: start the program (in that
# environment, env(1)'s words) in the background with
# SIGINT, SIGTERM and SIGPIPE at their defaults (a shell without job
# control starts background jobs with SIGINT ignored, and an ignored
# signal stays ignored), stdin from INPUT, stdout to /dev/null, stderr to
# bg-err.txt. Its PID is BG_PID. It must not inherit fd 3 (bats waits for
# every holder of it) nor fd 7 (the test's end of the input FIFO: holding
# it, the program would never see the end of its own input).
start_bg() {
	local input=$1
	shift
	env --default-signal=INT,TERM,PIPE "$@" <"$input" >/dev/null 2>bg-err.txt 3>&- 7>&- &
	BG_PID=$!
	FAULTS_PIDS+=("$BG_PID")
}

# alive PID: the process exists and is not a zombie.
alive() {
	local state
	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ]
}

# wait_bg SECONDS: wait for BG_PID to end, at most SECONDS; its exit status
# is BG_STATUS. Past the deadline: SIGKILL, and the test fails (a hang).
wait_bg() {
	local polls=$(($1 * 50))
	while alive "$BG_PID" && [ "$polls" -gt 0 ]; do
		sleep 0.02
		polls=$((polls - 1))
	done
	if alive "$BG_PID"; then
		kill -KILL "$BG_PID" 2>/dev/null || true
		wait "$BG_PID" 2>/dev/null || true
		echo "process $BG_PID still running after $1 s: killed" >&2
		return 1
	fi
	BG_STATUS=0
	wait "$BG_PID" 2>/dev/null || BG_STATUS=$?
}

# temp_size DIR NAME: the size of NAME's temporary file, or -1 if none.
temp_size() {
	local t
	t=$(temp_files "$1" "$2")
	if [ -z "$t" ]; then
		echo -1
		return 0
	fi
	stat -c %s -- "$1/${t%%$'\n'*}" 2>/dev/null || echo -1
}

# wait_for_save DIR NAME BYTES OLDSIZE SECONDS: poll until a temporary
# file of NAME with at least BYTES bytes exists in DIR (the save has begun,
# and got that far), or NAME itself no longer has OLDSIZE bytes (it was
# renamed into place, or, wrongly, is being written in place), or BG_PID
# ends. Returns 0 if one of the first two was seen with the program running.
wait_for_save() {
	local n=$(($5 * 200)) now
	while [ "$n" -gt 0 ] && alive "$BG_PID"; do
		if [ "$(temp_size "$1" "$2")" -ge "$3" ]; then
			return 0
		fi
		now=$(stat -c %s -- "$1/$2" 2>/dev/null || echo -1)
		if [ "$now" != "$4" ]; then
			return 0
		fi
		sleep 0.005
		n=$((n - 1))
	done
	return 1
}

# old_or_new FILE OLD NEW: print "old" or "new" for what FILE is, byte for
# byte, or "neither" (also for a missing FILE).
old_or_new() {
	if cmp -s "$1" "$2"; then
		echo old
	elif cmp -s "$1" "$3"; then
		echo new
	else
		echo neither
	fi
}

# signal_number NAME: INT -> 2, TERM -> 15, KILL -> 9.
signal_number() {
	kill -l "$1"
}
