#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# failcall.bats - every allocation and every save's system call that can
# fail, made to fail one at a time (tests/faults/failcall.c, an LD_PRELOAD
# shim): the 1st, then the 2nd, ..., until the command makes fewer. Each
# run must end one of two ways:
#  - exit 2 with exactly one line on stderr, "PROG: ...", and the output
#    file absent or complete (once renamed into place, the new file can
#    still fail to be made durable, which is reported: lib/base/atomic.c);
#  - exit 0 with the same standard output as the undisturbed run (an
#    allocation may be optional: a cache, a faster path), and any file
#    written a complete filter;
# and never leave a temporary file (".NAME.PID.XXXXXX") behind. A crash, a
# hang, another status or a second line is a failure.
#
# The shim interposes malloc, so it cannot be used with ASan or valgrind,
# which replace it themselves: plain builds only (make check, make coverage).

bats_require_minimum_version 1.5.0
load helpers
load faults/faults

setup_file() {
	local F=$BATS_FILE_TMPDIR
	seq 1 3000 >"$F/keys.txt"
	bfbuild --key "$KEY" -n 5000 -o "$F/f.bf" "$F/keys.txt"
	bfbuild -n 5000 --format dcso-gzip -o "$F/d.bf" "$F/keys.txt"
	seq 2000 4000 | bfbuild --key "$KEY" -n 5000 -o "$F/g.bf"
	bfcount -o "$F/s.hll" --key "$KEY" "$F/keys.txt" >/dev/null
	# 1.9 MB: with -j 2 and more, read in ranges by every thread (lib/io/ranges.c)
	seq 1 250000 >"$F/big.txt"
	awk '{ printf "{\"n\":%d}\n", $1 % 1000 } NR % 500 == 0 { print "not JSON" }' \
		"$F/keys.txt" >"$F/keys.json"
}

setup() {
	is_plain_build || skip "the shim replaces malloc: not with sanitizer or valgrind builds"
	F=$BATS_FILE_TMPDIR
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
	SHIM=$BATS_FILE_TMPDIR/failcall.so
	if [ ! -e "$SHIM" ]; then
		command -v "${CC:-cc}" >/dev/null 2>&1 || skip "no C compiler to build the shim"
		"${CC:-cc}" -shared -fPIC -o "$SHIM" "$BATS_TEST_DIRNAME/faults/failcall.c" -ldl
	fi
}

# every_failure WHAT OUT PROG ARG...: run the command once undisturbed,
# then with the 1st, 2nd, ... call of WHAT failing, until no failure was
# made (at most 500 runs). WHAT is "alloc" or NAME:ERRNO (a system call of
# failcall.c). OUT is the file the command writes ("-" for none); it and
# the files named in ALSO_REMOVE are removed before each run. Failures are
# collected with note_failure.
every_failure() {
	local what=$1 out=$2 prog=$3 st n want
	shift 2
	[ "$out" = - ] || rm -f "$out"
	rm -f ${ALSO_REMOVE:-}
	"$@" >want.out 2>want.err || note_failure "$*: fails undisturbed: $(cat want.err)"
	for ((n = 1; n <= 500; n++)); do
		[ "$out" = - ] || rm -f "$out"
		rm -f made.log ${ALSO_REMOVE:-}
		st=0
		if [ "$what" = alloc ]; then
			FAIL_ALLOC=$n FAIL_LOG=made.log LD_PRELOAD=$SHIM timeout -k 5 60 "$@" >got.out 2>got.err || st=$?
		else
			FAIL_CALL=${what%%:*}:$n:${what#*:} FAIL_LOG=made.log LD_PRELOAD=$SHIM \
				timeout -k 5 60 "$@" >got.out 2>got.err || st=$?
		fi
		[ -e made.log ] || break
		check_outcome "$* ($what #$n)" "$st" "$out" "$prog"
	done
	[ "$n" -le 500 ] || note_failure "$*: still failing calls of $what after 500 runs"
	# a command that makes no such call tests nothing: the list is wrong
	[ "$n" -gt 1 ] || note_failure "$*: makes no call of $what (or the shim is not working)"
}

# check_outcome WHAT STATUS OUT PROG: one of the two endings, no temp file.
check_outcome() {
	local left
	left=$(compgen -G '.*.??????' || true)
	[ -z "$left" ] || note_failure "$1: temporary file left: $left"
	rm -f -- $left
	case $2 in
	0)
		cmp -s got.out want.out || note_failure "$1: exit 0 but stdout differs"
		if [ "$3" != - ] && ! bfinfo "$3" >/dev/null 2>&1; then
			note_failure "$1: exit 0 but $3 is not a complete filter"
		fi
		;;
	2)
		[ "$(wc -l <got.err)" -eq 1 ] && [ "$(head -c $((${#4} + 2)) got.err)" = "$4: " ] ||
			note_failure "$1: exit 2 but stderr is not one '$4: ' line: $(head -c 300 got.err)"
		if [ "$3" != - ] && [ -e "$3" ] && ! bfinfo "$3" >/dev/null 2>&1; then
			note_failure "$1: exit 2 and $3 is there, incomplete"
		fi
		;;
	*) note_failure "$1: status $2, stderr: $(head -c 300 got.err)" ;;
	esac
}

@test "failcall: bfbuild, every allocation failing in turn: a clean error or the same filter" {
	every_failure alloc out.bf bfbuild --key "$KEY" -n 5000 -o out.bf "$F/keys.txt"
	every_failure alloc out.bf bfbuild --key "$KEY" -n 5000 --layout classic -o out.bf "$F/keys.txt"
	every_failure alloc out.bf bfbuild -n 5000 --format dcso-gzip -o out.bf "$F/keys.txt"
	every_failure alloc out.bf bfbuild --key "$KEY" --window 1000keys -o out.bf "$F/keys.txt"
	every_failure alloc out.bf bfbuild --like "$F/f.bf" -k 1 -t , -o out.bf "$F/keys.txt"
	check_failures
}

@test "failcall: bfgrep, bfuniq, bfcount, bfmerge, bfinfo, every allocation failing in turn" {
	every_failure alloc - bfgrep -c -f "$F/f.bf" "$F/keys.txt"
	every_failure alloc - bfgrep -c -f "$F/d.bf" -f "$F/g.bf" "$F/keys.txt"
	every_failure alloc - bfgrep -w -c -f "$F/f.bf" "$F/keys.txt"
	every_failure alloc - bfuniq --key "$KEY" "$F/keys.txt"
	every_failure alloc - bfuniq --key "$KEY" --window 500keys "$F/keys.txt"
	every_failure alloc - bfcount "$F/keys.txt"
	every_failure alloc - bfcount --union -f "$F/f.bf" -f "$F/g.bf"
	every_failure alloc - bfcount -s "$F/s.hll" "$F/keys.txt"
	every_failure alloc out.bf bfmerge -o out.bf "$F/f.bf" "$F/g.bf"
	every_failure alloc out.bf bfmerge --intersect -o out.bf "$F/f.bf" "$F/g.bf"
	every_failure alloc - bfinfo "$F/f.bf" "$F/d.bf" "$F/s.hll"
	check_failures
}

@test "failcall: keys cut on every thread (--jsonl, --csv, -i), every allocation failing in turn" {
	every_failure alloc - bfuniq --key "$KEY" --jsonl --bad-line=skip -k .n "$F/keys.json"
	every_failure alloc - bfuniq --key "$KEY" -i --window 500keys "$F/keys.txt"
	every_failure alloc out.bf bfbuild --key "$KEY" --csv -k 1 -o out.bf "$F/keys.txt"
	check_failures
}

@test "failcall: a save whose fsync, close, rename or fchmod fails is a clean error, with no partial file or temporary left" {
	local call
	for call in fsync:5 close:5 rename:28 fchmod:1 write:28; do
		every_failure "$call" out.bf bfbuild --key "$KEY" -n 5000 -o out.bf "$F/keys.txt"
		every_failure "$call" out.bf bfbuild -n 5000 --format dcso-gzip -o out.bf "$F/keys.txt"
		every_failure "$call" out.bf bfmerge -o out.bf "$F/f.bf" "$F/g.bf"
		every_failure "$call" out.hll bfcount -o out.hll "$F/keys.txt"
	done
	check_failures
}

@test "failcall: bfsplit's first fsync failing (on its syncing threads) is a clean error, with no output left" {
	local st=0
	seq 1 20000 >in.txt
	# Linux reports a writeback error to a descriptor once: the fsync
	# before each rename would succeed, so this failure must not be lost
	FAIL_CALL=fsync:1:5 FAIL_LOG=made.log LD_PRELOAD=$SHIM \
		bfsplit -N 4 --shard-key "$KEY" -o 'sync-%d' in.txt 2>got.err || st=$?
	[ -e made.log ] || note_failure "bfsplit made no fsync (or the shim is not working)"
	[ "$st" -eq 2 ] || note_failure "status $st, not 2"
	grep -qx 'bfsplit: sync-[0-3]: Input/output error' got.err && [ "$(wc -l <got.err)" -eq 1 ] ||
		note_failure "stderr is not one line naming the output: $(head -c 300 got.err)"
	[ -z "$(compgen -G 'sync-*' || true)" ] || note_failure "outputs left: $(compgen -G 'sync-*')"
	[ -z "$(compgen -G '.*.??????' || true)" ] || note_failure "temporary files left: $(compgen -G '.*.??????')"
	check_failures
}

@test "failcall: bfsplit --no-sync makes no fsync, and writes what bfsplit writes with them" {
	local st i
	seq 1 20000 >in.txt
	bfsplit -N 4 --shard-key "$KEY" -o 'sync-%d' in.txt
	st=0
	FAIL_CALL=fsync:1:5 FAIL_LOG=made.log LD_PRELOAD=$SHIM \
		bfsplit --no-sync -N 4 --shard-key "$KEY" -o 'nosync-%d' in.txt 2>got.err || st=$?
	[ "$st" -eq 0 ] && [ ! -s got.err ] || note_failure "--no-sync: status $st, stderr $(head -c 300 got.err)"
	[ ! -e made.log ] || note_failure "bfsplit --no-sync made an fsync"
	for i in 0 1 2 3; do
		cmp -s "sync-$i" "nosync-$i" || note_failure "--no-sync: output $i differs"
	done
	[ -z "$(compgen -G '.*.??????' || true)" ] || note_failure "temporary files left: $(compgen -G '.*.??????')"
	check_failures
}

@test "failcall: reading a filter whose read or fstat fails is a clean error" {
	local call
	for call in read:5 fstat:5; do
		every_failure "$call" - bfgrep -c -f "$F/f.bf" "$F/keys.txt"
		every_failure "$call" - bfgrep -c -f "$F/d.bf" "$F/keys.txt"
	done
	# bfinfo says "size on disk: unknown" when fstat fails, on purpose
	every_failure read:5 - bfinfo "$F/f.bf" "$F/d.bf" "$F/s.hll"
	check_failures
}

@test "failcall: a key file whose write, fsync, close or read fails is a clean error" {
	local call
	ALSO_REMOVE=new.key
	for call in write:28 fsync:5 close:5; do
		every_failure "$call" out.bf bfbuild --key-file new.key -n 5000 -o out.bf "$F/keys.txt"
	done
	ALSO_REMOVE=
	bfbuild --key-file k.key -n 5000 -o ext.bf "$F/keys.txt"
	every_failure read:5 - bfgrep -c --key-file k.key -f ext.bf "$F/keys.txt"
	every_failure fstat:5 - bfgrep -c --key-file k.key -f ext.bf "$F/keys.txt"
	check_failures
}

# every_pread_failure_builds_nothing J: bfbuild -j J on big.txt with the
# 1st, 2nd, ... pread failing: exit 2, the input's line then bfbuild's
# own (as when a stream's read fails), and no filter file.
every_pread_failure_builds_nothing() {
	local n st want
	want="bfbuild: $F/big.txt: Input/output error
bfbuild: no filter written: an input could not be read"
	for ((n = 1; n <= 200; n++)); do
		rm -f out.bf made.log
		st=0
		FAIL_CALL=pread:$n:5 FAIL_LOG=made.log LD_PRELOAD=$SHIM timeout -k 5 60 \
			bfbuild -j "$1" --key "$KEY" -n 3e5 -o out.bf "$F/big.txt" 2>got.err || st=$?
		[ -e made.log ] || break
		[ "$st" -eq 2 ] && [ "$(cat got.err)" = "$want" ] && [ ! -e out.bf ] ||
			note_failure "bfbuild -j $1 (pread #$n): status $st, out.bf $([ -e out.bf ] && echo left || echo absent), stderr: $(head -c 300 got.err)"
	done
	[ "$n" -gt 1 ] || note_failure "bfbuild -j $1: makes no pread call (or the shim is not working)"
}

@test "failcall: a big file read in ranges whose pread fails is a clean error, whichever thread reads it" {
	local j
	for j in 2 3; do
		every_pread_failure_builds_nothing "$j"
		every_failure pread:5 - bfgrep -j "$j" -c -f "$F/f.bf" "$F/big.txt" "$F/keys.txt"
		every_failure pread:5 - bfgrep -j "$j" -l -f "$F/f.bf" "$F/keys.txt" "$F/big.txt"
	done
	check_failures
}

# every_pread_failure_in_place J: bfuniq -j J on big.txt then keys.txt,
# big.txt read in ranges consumed in order, with the 1st, 2nd, ... pread
# failing: exit 2 with big.txt's one line naming the first line not
# read, its lines before the failed range written (1..m, in order: no
# range skipped), and nothing of keys.txt: a clean cut. (Once all of
# big.txt is read, keys.txt's lines not among them follow; the last
# failure is keys.txt's own, which a stream reads with a pread too).
every_pread_failure_in_place() {
	local n st m want
	for ((n = 1; n <= 200; n++)); do
		rm -f made.log
		st=0
		FAIL_CALL=pread:$n:5 FAIL_LOG=made.log LD_PRELOAD=$SHIM timeout -k 5 60 \
			bfuniq -j "$1" --key "$KEY" -n 3e5 "$F/big.txt" "$F/keys.txt" >got.out 2>got.err || st=$?
		[ -e made.log ] || break
		m=$(awk '$0 != NR { exit } END { print NR - ($0 != NR) }' got.out)
		[ "$m" -ge 0 ] || m=0	# nothing written
		{ seq 1 "$m"; [ "$m" -ge 3000 ] || seq "$((m + 1))" 3000; } >want.out
		# all of big.txt read: the failure was keys.txt's (its sniffing pread)
		want=big.txt
		[ "$m" -lt 250000 ] || want=keys.txt
		# a failed read is a clean cut: the lines before it, the line named, no
		# later input; unless it is the sniffing read, before any line (then
		# big.txt is unreadable, as if it could not be opened, and keys.txt read)
		if [ "$want" = big.txt ] && [ "$(cat got.err)" != "bfuniq: $F/big.txt: Input/output error" ]; then
			seq 1 "$m" >want.out
			want="$want:$((m + 1))"
		fi
		[ "$st" -eq 2 ] && [ "$(cat got.err)" = "bfuniq: $F/$want: Input/output error" ] &&
			cmp -s got.out want.out ||
			note_failure "bfuniq -j $1 (pread #$n): status $st, $m lines in order, stderr: $(head -c 300 got.err)"
	done
	[ "$n" -gt 2 ] || note_failure "bfuniq -j $1: makes no pread call (or the shim is not working)"
}

@test "failcall: bfuniq reading a big file in ranges in order reports a failed pread in its place" {
	local j
	for j in 1 2 3; do
		every_pread_failure_in_place "$j"
	done
	check_failures
}

@test "failcall: gzip and zstd inputs, every allocation, read and sniffing pread failing in turn: a clean error or the same result" {
	gzip -c <"$F/keys.txt" >k.gz
	zstd -q -c <"$F/keys.txt" >k.zst
	# 1.9 MB of lines gzipped to about 0.5 MB: the -j 2 plan reads its magic with pread
	gzip -c <"$F/big.txt" >big.gz
	every_failure alloc - bfgrep -c -f "$F/f.bf" k.gz
	every_failure alloc - bfgrep -c -f "$F/f.bf" k.zst
	every_failure read:5 - bfgrep -c -f "$F/f.bf" k.gz k.zst
	every_failure pread:5 - bfgrep -j 2 -c -f "$F/f.bf" big.gz "$F/big.txt"
	check_failures
}

@test "failcall: reading a big file in ranges, every allocation failing in turn: a clean error or the same result" {
	every_failure alloc out.bf bfbuild -j 3 --key "$KEY" -n 3e5 -o out.bf "$F/big.txt"
	every_failure alloc - bfgrep -j 3 -c -f "$F/f.bf" "$F/big.txt"
	check_failures
}
