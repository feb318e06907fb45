#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# seams.bats - the clean cut (cli.h; the programs' man pages, DIAGNOSTICS):
# a failure mid-input writes every record before the bad one, exactly as a
# clean run over those records alone would, then one message naming the
# input and line, exit 2; the state (-f, -o) holds exactly those records;
# and rerunning the rest after the fix gives the whole clean run's output
# and state. Also the window clock rule: a window file remembers what its
# clock reads, and every program reads it at the same time.
#
# The matrix: each key-taking program (bfuniq, bfbuild, bfcount, bfgrep
# and bfgrep -c, bftop) x input way (a small file; a big
# file, over 512 KiB, read in ranges from -j 2; a pipe; gzip; zstd) x
# -j 1, 2, 4 x fault (a line not JSON, a CSV quote never closed, a time
# that cannot be read, a truncated gzip or zstd stream). The bad line is
# drawn with a fixed seed (SEAMS_SEED, default 32): reproducible, and
# another seed moves it. Every comparison is byte for byte, against runs
# with -j 1 on plain files of the prefix and of the whole; every filter
# is made with a fixed SipHash key. Data is made once for the file.

bats_require_minimum_version 1.5.0
load helpers

SEED=${SEAMS_SEED:-32}

# lines FAULT FIRST LAST: data lines FIRST..LAST of a fault's data set, keys
# repeating (i * 7919 mod 9973), times one second apart from 2023-11-14.
lines() {
	awk -v f="$1" -v a="$2" -v b="$3" 'BEGIN {
		for (i = a; i <= b; i++) {
			k = "k" (i * 7919) % 9973
			if (f == "json") printf "{\"k\":\"%s\",\"n\":%d}\n", k, i
			else if (f == "csv") printf "%s,%d\n", k, i
			else printf "%d\t%s\n", 1700000000 + i, k
		}
	}'
}

# bad_line FAULT: the line that is wrong in its way.
bad_line() {
	case $1 in
	json) echo 'oops' ;;
	csv) echo '"k1,2' ;;	# a quote never closed: it would run to the end
	time) printf 'soon\tk1\n' ;;
	esac
}

# make_set FAULT SIZE N: $D/FAULT.SIZE.{bad,pre,rest,whole,line} and the
# bad file gzipped and zstd'd, the bad line at a seeded line of N.
make_set() {
	local f=$1 size=$2 n=$3 at p=$D/$1.$2
	at=$(awk -v s="$SEED$size$f" -v n="$n" 'BEGIN {
		for (i = 1; i <= length(s); i++) h = (h * 31 + index("0123456789abcdefghijklmnopqrstuvwxyz", substr(s, i, 1))) % 1000003
		srand(h); print int(n / 4 + rand() * n / 2) }')
	lines "$f" 1 $((at - 1)) >"$p.pre"
	lines "$f" "$at" "$n" >"$p.rest"
	cat "$p.pre" "$p.rest" >"$p.whole"
	{ cat "$p.pre"; bad_line "$f"; cat "$p.rest"; } >"$p.bad"
	echo "$at" >"$p.line"
	gzip -c "$p.bad" >"$p.bad.gz"
	zstd -q -c "$p.bad" >"$p.bad.zst"
}

setup_file() {
	D=$BATS_FILE_TMPDIR/data
	export D
	mkdir -p "$D"
	for f in json csv time; do
		make_set "$f" small 3000
		make_set "$f" big 40000	# ~1 MB: read in ranges from -j 2
	done
	# truncated streams: the whole time set's big file, cut at a seeded byte
	for z in gz zst; do
		if [ $z = gz ]; then gzip -c "$D/time.big.whole" >"$D/whole.gz"
		else zstd -q -c "$D/time.big.whole" >"$D/whole.zst"; fi
		size=$(wc -c <"$D/whole.$z")
		cut=$(awk -v s="$SEED" -v n="$size" 'BEGIN { srand(s + 7); print int(n / 4 + rand() * n / 2) }')
		head -c "$cut" "$D/whole.$z" >"$D/trunc.$z"
	done
	printf 'k%d\n' $(seq 0 3 9972) >"$D/keys.txt"
	bfbuild --key "$KEY" -o "$D/keys.bf" "$D/keys.txt"
}

# args FAULT: the key options for a fault's data.
args() {
	case $1 in
	json) echo "--jsonl -k .k" ;;
	csv) echo "--csv -k 1" ;;
	time) echo "--window 10m --time-field 1 -k 2" ;;
	trunc) echo "-k 2" ;;
	esac
}

# start PROG J STATE FAULT [FILE]: a first run, making STATE (none for
# bfgrep and bftop); stdin when FILE is not given.
start() {
	local prog=$1 j=$2 s=$3 f=$4
	shift 4
	case $prog in
	bfuniq) bfuniq -j "$j" --key "$KEY" -f "$s" $(args "$f") "$@" ;;
	bfbuild) bfbuild -j "$j" --key "$KEY" -o "$s" $(args "$f") "$@" ;;
	bfcount) bfcount -j "$j" -o "$s" $(args "$f") "$@" ;;
	bfgrep) bfgrep -j "$j" -f "$D/keys.bf" $(args "$f") "$@" ;;
	bfgrep-c) bfgrep -c -j "$j" -f "$D/keys.bf" $(args "$f") "$@" ;;
	bftop) bftop -j "$j" $(args "$f") "$@" ;;
	esac
}

# resume PROG J STATE FAULT FILE: a run that goes on from STATE.
resume() {
	local prog=$1 j=$2 s=$3 f=$4
	shift 4
	case $prog in
	bfuniq) bfuniq -j "$j" --key "$KEY" -f "$s" $(args "$f") "$@" ;;
	bfbuild) bfbuild -j "$j" -f "$s" $(args "$f") "$@" ;;
	bfcount) bfcount -j "$j" -s "$s" --add $(args "$f") "$@" ;;
	*) start "$prog" "$j" "$s" "$f" "$@" ;;
	esac
}

has_state() { case $1 in bfuniq | bfbuild | bfcount) return 0 ;; esac; return 1; }

# clean PROG FAULT PART: the clean run (-j 1, a plain file) of PART (pre,
# whole) of a data set, once: $C/PROG.FAULT.PART.{out,state}.
clean() {
	local o=$C/$1.$2.$3
	[ -e "$o.out" ] && return 0
	rm -f "$o.state"
	start "$1" 1 "$o.state" "${2%%.*}" "$D/$2.$3" >"$o.out"
}

# cell PROG FAULT WAY J: one cell of the matrix (see the file's header).
cell() {
	local prog=$1 fault=$2 way=$3 j=$4 size=small in name line st=$BATS_TEST_TMPDIR/s
	[ "$way" = big ] && size=big
	local set=$fault.$size
	in=$D/$set.bad
	case $way in gzip) in=$in.gz ;; zstd) in=$in.zst ;; esac
	name=$in
	line=$(cat "$D/$set.line")
	rm -f "$st" "$st.rest"
	if [ "$way" = pipe ]; then
		name="(standard input)"
		start "$prog" "$j" "$st" "$fault" <"$in" >out 2>err && rc=0 || rc=$?
	else
		start "$prog" "$j" "$st" "$fault" "$in" >out 2>err && rc=0 || rc=$?
	fi
	check_cut "$prog $fault $way -j $j" "$prog" "$set" "$name" "$line" "$rc" "$st"
}

# check_cut WHAT PROG SET NAME LINE RC STATE: status 2, the one message,
# the prefix's output and state, then the rest's run making the whole's.
# Each check returns at once (called from a loop, errexit does not stop it).
check_cut() {
	local what=$1 prog=$2 set=$3 name=$4 line=$5 rc=$6 st=$7 p=${2%-c}
	expect_eq "$what: status" 2 "$rc" || return 1
	expect_eq "$what: stderr lines" 1 "$(wc -l <err)" || return 1
	case $(cat err) in
	"$p: $name:$line: "?*) ;;
	*) expect_eq "$what: message" "$p: $name:$line: ..." "$(cat err)"; return 1 ;;
	esac
	clean "$prog" "$set" pre || return 1
	clean "$prog" "$set" whole || return 1
	cmp out "$C/$prog.$set.pre.out" || { echo "$what: output is not the prefix's" >&2; return 1; }
	if has_state "$prog"; then
		cmp "$st" "$C/$prog.$set.pre.state" || { echo "$what: state is not the prefix's" >&2; return 1; }
	fi
	case $prog in bfgrep-c | bftop) cells=$((cells + 1)); return 0 ;; esac
	# rerun the rest after the fix: the whole clean run's output and state
	resume "$prog" "$j" "$st" "${set%%.*}" "$D/$set.rest" >out.rest 2>err.rest ||
		{ cat err.rest >&2; return 1; }
	if [ "$prog" = bfcount ]; then
		cmp out.rest "$C/$prog.$set.whole.out" || { echo "$what: rerun's count is not the whole's" >&2; return 1; }
	else
		cat out out.rest | cmp - "$C/$prog.$set.whole.out" ||
			{ echo "$what: output and the rerun's are not the whole's" >&2; return 1; }
	fi
	if has_state "$prog"; then
		cmp "$st" "$C/$prog.$set.whole.state" || { echo "$what: rerun's state is not the whole's" >&2; return 1; }
	fi
	cells=$((cells + 1))
}

# matrix PROG FAULT...: every way and -j for each fault.
matrix() {
	local prog=$1 f way j
	shift
	for f in "$@"; do
		for way in file big pipe gzip zstd; do
			for j in 1 2 4; do
				cell "$prog" "$f" "$way" "$j" || return 1
			done
		done
	done
}

# truncated PROG: a gzip and a zstd stream cut short, every -j. The line
# is the program's own word; the prefix is then checked against zcat's.
truncated() {
	local prog=$1 z j line whole_lines
	for z in gz zst; do
		# the lines the decompressor delivers whole before the damage
		if [ $z = gz ]; then zcat "$D/trunc.gz" >z.out 2>/dev/null || true
		else zstd -q -d -c "$D/trunc.zst" >z.out 2>/dev/null || true; fi
		whole_lines=$(wc -l <z.out)
		[ -e "$D/trunc.$z.line" ] || {
			echo $((whole_lines + 1)) >"$D/trunc.$z.line"
			head -n "$whole_lines" "$D/time.big.whole" >"$D/trunc.$z.pre"
			tail -n +$((whole_lines + 1)) "$D/time.big.whole" >"$D/trunc.$z.rest"
			cp "$D/time.big.whole" "$D/trunc.$z.whole"
		}
		# the cut is mid-stream, after several batches
		[ "$whole_lines" -gt 1000 ] || { echo "$z: $whole_lines lines before the cut" >&2; return 1; }
		line=$(cat "$D/trunc.$z.line")
		for j in 1 2 4; do
			st=$BATS_TEST_TMPDIR/s
			rm -f "$st"
			start "$prog" "$j" "$st" trunc "$D/trunc.$z" >out 2>err && rc=0 || rc=$?
			check_cut "$prog truncated $z -j $j" "$prog" "trunc.$z" "$D/trunc.$z" "$line" "$rc" "$st" || return 1
		done
	done
}

setup() {
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
	C=$BATS_FILE_TMPDIR/clean
	mkdir -p "$C"
}

# ------------------------------------------------------------ the matrix

@test "seams: bfuniq cuts cleanly at a bad line, time, quote or stream, every way and -j" {
	cells=0
	matrix bfuniq json csv time
	truncated bfuniq
	expect_eq "cells checked" 51 "$cells"	# 3 faults x 5 ways x 3 -j, and 2 streams x 3 -j
}

@test "seams: bfbuild cuts cleanly at a bad line, time, quote or stream, every way and -j" {
	cells=0
	matrix bfbuild json csv time
	truncated bfbuild
	expect_eq "cells checked" 51 "$cells"
}

@test "seams: bfcount cuts cleanly at a bad line, quote or stream, every way and -j" {
	cells=0
	matrix bfcount json csv
	truncated bfcount
	expect_eq "cells checked" 36 "$cells"
}

@test "seams: bfgrep and bfgrep -c cut cleanly at a bad line, quote or stream, every way and -j" {
	cells=0
	matrix bfgrep json csv
	truncated bfgrep
	matrix bfgrep-c json csv
	truncated bfgrep-c
	expect_eq "cells checked" 72 "$cells"
}

@test "seams: bftop cuts cleanly at a bad line, quote, time (--window) or stream, every way and -j" {
	cells=0
	matrix bftop json csv time
	truncated bftop
	expect_eq "cells checked" 51 "$cells"
}

@test "seams: another seed moves the bad line, and the cut with it" {
	# the matrix above is not tuned to one line: the data sets of seed 32
	# and 33 put the bad line elsewhere
	[ "$(cat "$D/json.big.line")" -ge 10000 ] && [ "$(cat "$D/json.big.line")" -le 30000 ]
	D2=$BATS_TEST_TMPDIR/d2
	mkdir -p "$D2"
	(D=$D2 SEED=33; make_set json big 40000)
	[ "$(cat "$D2/json.big.line")" != "$(cat "$D/json.big.line")" ]
}

# ------------------------------------------------------------ the issue's findings

@test "seams: a line not JSON mid-input: every line before it written, -f state saved, the rerun repeats none" {
	awk 'BEGIN { for (i = 1; i <= 60000; i++)
		if (i == 50001) print "oops"; else printf "{\"pkg\":\"p%d\",\"n\":%d}\n", (i * 7919) % 45000, i }' >bad.ndjson
	head -n 50000 bad.ndjson >good.ndjson
	tail -n +50002 bad.ndjson >rest.ndjson
	bfuniq --key "$KEY" -f clean.bf --jsonl -k .pkg good.ndjson >clean.out
	for j in 1 2 4; do
		rm -f seen.bf
		run --separate-stderr bfuniq -j "$j" --key "$KEY" -f seen.bf --jsonl -k .pkg bad.ndjson
		expect_status 2
		expect_stderr "bfuniq: bad.ndjson:50001: not JSON: not a JSON value"
		expect_eq "-j $j: the lines before it" "$(cat clean.out)" "$output"
		cmp seen.bf clean.bf
		# the rerun after fixing the line writes no line a second time
		bfuniq -j "$j" --key "$KEY" -f seen.bf --jsonl -k .pkg rest.ndjson >rerun.out
		[ -z "$(sort clean.out rerun.out | uniq -d)" ]
	done
	run --separate-stderr bfgrep -c --jsonl -k .pkg -f clean.bf bad.ndjson
	expect_status 2
	expect_output 50000
	expect_stderr "bfgrep: bad.ndjson:50001: not JSON: not a JSON value"
}

@test "seams: a bad --time-field value mid-input: the lines before it written and the window saved" {
	awk 'BEGIN { for (i = 1; i <= 30000; i++)
		if (i == 20001) print "later\tkx"; else printf "%d\tk%d\n", 1700000000 + i, i % 7000 }' >bad.log
	head -n 20000 bad.log >good.log
	bfuniq --key "$KEY" -f clean.bf --window 10m --time-field 1 -k 2 good.log >clean.out
	run --separate-stderr bfuniq --key "$KEY" -f win.bf --window 10m --time-field 1 -k 2 bad.log
	expect_status 2
	expect_stderr "bfuniq: bad.log:20001: time field 1: not a time (Unix seconds or RFC 3339)"
	expect_eq "the lines before it" "$(cat clean.out)" "$output"
	cmp win.bf clean.bf
}

@test "seams: a time-field window resumed without its --time-field is refused, the file unchanged" {
	awk 'BEGIN { for (i = 1; i <= 3000; i++) printf "%d\tk%d\n", 1700000000 + i / 5, i % 409 }' >log
	bfuniq --key "$KEY" -f win.bf --window 10m --time-field 1 -k 2 log >/dev/null
	cp win.bf before.bf
	tail -n 5 log >last5
	run --separate-stderr bfuniq -f win.bf -k 2 last5
	expect_fail "bfuniq: win.bf: a window clocked by time field 1, not by the wall clock as asked (give --time-field 1)"
	cmp win.bf before.bf
	run --separate-stderr bfuniq -f win.bf --time-field 2 -k 2 last5
	expect_fail "bfuniq: win.bf: a window clocked by time field 1, not by time field 2 as asked (give --time-field 1)"
	run --separate-stderr bfbuild -f win.bf -k 2 last5
	expect_fail "bfbuild: win.bf: a window clocked by time field 1, not by the wall clock as asked (give --time-field 1)"
	cmp win.bf before.bf
	# with its field, the 5 lines are repeats: nothing written
	run --separate-stderr bfuniq -f win.bf --time-field 1 -k 2 last5
	expect_status 0
	expect_output ""
	# and a wall-clock window refuses a time field
	bfuniq -f wall.bf --window 10m --now 2023-11-20T00:00:00Z -k 2 last5 >/dev/null
	run --separate-stderr bfuniq -f wall.bf --time-field 1 -k 2 last5
	expect_fail "bfuniq: wall.bf: a window clocked by the wall clock, not by time field 1 as asked (leave out --time-field)"
}

@test "seams: bfgrep, bfcount and bfinfo read a time-field window at its own clock, alike" {
	awk 'BEGIN { for (i = 1; i <= 3000; i++) printf "%d\tk%d\n", 1700000000 + i / 5, i }' >log
	bfuniq --key "$KEY" -f win.bf --window 10m --time-field 1 -k 2 log >/dev/null
	# the keys of the window's last 10 minutes (3000 keys, 600 s): all within it
	cut -f 2 log >keys
	run --separate-stderr bfgrep -c -f win.bf keys
	expect_status 0
	expect_stderr ""
	expect_output 3000
	run --separate-stderr bfcount -f win.bf
	expect_status 0
	expect_stderr ""
	[ "$output" -gt 2900 ] && [ "$output" -lt 3100 ]	# HLL-free: the bits' estimate, ~1%
	run --separate-stderr bfinfo win.bf
	expect_status 0
	expect_stderr ""
	grep -qx 'clock source: *time field 1' <<<"$output"
	grep -qx 'read at: *2023-11-14T22:23:20.000Z' <<<"$output"
	grep -qx 'live generations: *8' <<<"$output"
}

@test "seams: a window read after it has expired everything it held says so once, in every program" {
	printf 'a\nb\n' >in
	bfuniq -f wall.bf --window 10m --now 2023-11-20T00:00:00Z in >/dev/null
	msg="wall.bf: the window has expired everything it held: its clock is 2023-11-20T00:00:00Z, read at 2023-11-21T00:00:00Z (--now)"
	run --separate-stderr bfgrep -c --now 2023-11-21T00:00:00Z -f wall.bf in
	expect_status 1
	expect_output 0
	expect_stderr "bfgrep: $msg"
	# read within the window: the keys are there, and nothing is said
	run --separate-stderr bfgrep -c --now 2023-11-20T00:05:00Z -f wall.bf in
	expect_status 0
	expect_output 2
	expect_stderr ""
	# the wall clock is years past 2023: bfcount and bfinfo say it too, once
	run --separate-stderr bfcount -f wall.bf
	expect_output 0
	expect_eq "one line" 1 "$(wc -l <<<"$stderr")"
	case $stderr in "bfcount: wall.bf: the window has expired everything it held: its clock is 2023-11-20T00:00:00Z, read at "*" (the wall clock)") ;; *) false ;; esac
	run --separate-stderr bfinfo wall.bf
	expect_status 0
	expect_eq "one line" 1 "$(wc -l <<<"$stderr")"
	grep -qx 'live generations: *0' <<<"$output"
}
