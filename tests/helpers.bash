# SPDX-License-Identifier: MIT
# helpers.bash - what every bats file of bftools shares: the programs under
# test first on PATH, a fixed SipHash key so filters are reproducible, a
# scratch directory per test, and assertions that say what they expected
# and what they got. Loaded with `load helpers`.
#
# Deliberately plain bats-core (no bats-assert): `run --separate-stderr`
# fills $status, $output and $stderr, and the expect_* functions below check
# them exactly. Binary output (NULs, missing final newlines) is compared as
# files with cmp, because $output drops trailing newlines.

BFTOOLS_BIN=${BFTOOLS_BIN:-$BATS_TEST_DIRNAME/../cmd}
PATH="$BFTOOLS_BIN:$PATH"
LC_ALL=C
export PATH LC_ALL

# The SipHash key of every reproducible filter in the tests.
KEY=000102030405060708090a0b0c0d0e0f

# Every test works in a directory of its own inside $BATS_TEST_TMPDIR (a
# subdirectory, because bats keeps its --separate-stderr files in
# $BATS_TEST_TMPDIR itself and tests list their directory).
setup() {
	for prog in bfbuild bfgrep; do
		if [ ! -x "$BFTOOLS_BIN/$prog" ]; then
			echo "$BFTOOLS_BIN/$prog is missing: build it (make) or set BFTOOLS_BIN" >&2
			return 1
		fi
	done
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
}

# expect_eq WHAT EXPECTED GOT: the two strings are identical.
expect_eq() {
	[ "$2" = "$3" ] && return 0
	printf '%s differs\n--- expected:\n%s\n--- got:\n%s\n---\n' "$1" "$2" "$3" >&2
	return 1
}

# expect_status N: the last `run` exited with status N.
expect_status() {
	[ "$status" -eq "$1" ] && return 0
	printf 'expected exit status %s, got %s\n--- stdout:\n%s\n--- stderr:\n%s\n' \
		"$1" "$status" "$output" "${stderr-}" >&2
	return 1
}

# expect_output TEXT / expect_stderr TEXT: exact text (trailing newlines aside).
expect_output() { expect_eq stdout "$1" "$output"; }
expect_stderr() { expect_eq stderr "$1" "${stderr-}"; }

# expect_fail LINE: exit status 2, nothing on stdout, exactly LINE on stderr.
expect_fail() {
	expect_status 2
	expect_output ""
	expect_stderr "$1"
}

# expect_usage_error PROG MESSAGE: status 2, nothing on stdout, and on
# stderr exactly "PROG: MESSAGE" then the line pointing at --help.
expect_usage_error() {
	expect_fail "$1: $2
Try '$1 --help' for more information."
}

# expect_any_usage_error PROG: a usage error whatever its wording: status 2,
# nothing on stdout, two lines on stderr, "PROG: ..." then the --help hint.
expect_any_usage_error() {
	expect_status 2
	expect_output ""
	local first=${stderr%%$'\n'*}
	expect_eq "stderr" "$first
Try '$1 --help' for more information." "$stderr"
	case $first in "$1: "?*) ;; *) expect_eq "first stderr line" "$1: ..." "$first" ;; esac
}

# expect_one_line_error PREFIX: status 2, nothing on stdout, and stderr is
# one line starting with PREFIX and saying something after it.
expect_one_line_error() {
	expect_status 2
	expect_output ""
	case $stderr in
	*$'\n'* | "$1") expect_eq "stderr (one line after '$1')" "$1..." "$stderr" ;;
	"$1"*) ;;
	*) expect_eq "stderr (one line after '$1')" "$1..." "$stderr" ;;
	esac
}

# expect_file FILE FORMAT: FILE holds exactly the bytes printf FORMAT makes.
expect_file() {
	printf "$2" >"$BATS_TEST_TMPDIR/.expected"
	cmp -s "$BATS_TEST_TMPDIR/.expected" "$1" && return 0
	echo "$1 differs; expected bytes:" >&2
	od -A d -c "$BATS_TEST_TMPDIR/.expected" >&2
	echo "got:" >&2
	od -A d -c "$1" >&2
	return 1
}

# wait_for SECONDS WHAT COMMAND...: poll COMMAND every 0.05 s until it
# succeeds; after SECONDS, say what was awaited on stderr and fail. Waits
# end as soon as what they wait for is there, so a generous deadline (for
# a loaded machine) costs nothing when all is well.
wait_for() {
	local seconds=$1 what=$2 polls
	shift 2
	polls=$((seconds * 20))
	until "$@"; do
		polls=$((polls - 1))
		if [ "$polls" -le 0 ]; then
			echo "gave up after $seconds s waiting for $what" >&2
			return 1
		fi
		sleep 0.05
	done
}

# put_lines FILE LINE...: FILE holds the LINEs, each ended by a newline.
put_lines() {
	local file=$1
	shift
	printf '%s\n' "$@" >"$file"
}

# build OUT [OPTION...] [FILE...]: bfbuild with the fixed key into OUT.
build() {
	local out=$1
	shift
	bfbuild --key "$KEY" -o "$out" "$@"
}

# header_bytes FILTER OFFSET COUNT: decimal byte values of the decompressed
# filter (file header at 0, stage header at 64), one per line.
header_bytes() {
	gzip -dc "$1" | od -A n -v -t u1 -j "$2" -N "$3" | tr -s ' ' '\n' | sed '/^$/d'
}

# header_uint FILTER OFFSET SIZE: the little-endian unsigned integer there,
# computed byte by byte so the host's byte order does not matter.
header_uint() {
	local value=0 shift_by=0 b
	for b in $(header_bytes "$1" "$2" "$3"); do
		value=$((value + (b << shift_by)))
		shift_by=$((shift_by + 8))
	done
	echo "$value"
}

# header_hex FILTER OFFSET COUNT: those bytes as lower-case hex, no blanks.
header_hex() {
	gzip -dc "$1" | od -A n -v -t x1 -j "$2" -N "$3" | tr -d ' \n'
}

# is_valgrind_build: the programs are the valgrind wrappers of
# tests/valgrind.sh (shell scripts, 30 times slower than the programs).
is_valgrind_build() {
	[ "$(head -c 4 "$BFTOOLS_BIN/bfbuild" | od -A n -t x1 | tr -d ' ')" != 7f454c46 ]
}

# is_plain_build: ordinary executables, neither the valgrind wrappers nor
# built with AddressSanitizer or ThreadSanitizer (which map terabytes of
# shadow memory, so cannot start under a small `ulimit -v`, hold more
# memory, and run several times slower).
is_tsan_build() {
	! is_valgrind_build && grep -q -a __tsan_init "$BFTOOLS_BIN/bfbuild"
}

is_plain_build() {
	! is_valgrind_build && ! grep -q -a -e __asan_init -e __tsan_init "$BFTOOLS_BIN/bfbuild"
}
