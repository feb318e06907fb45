#!/bin/sh
# SPDX-License-Identifier: MIT
# threads.sh - `make bench-threads`: how each program scales with -j N
# (issue 17). Lines per second for N = 1, 2, 4, 8, 16, up to the CPUs
# online, for bfbuild, bfgrep -c, bfcount and bfuniq, with a small filter
# and a big one, and each rate's ratio to N = 1 measured in the same run.
#
#   THREADS_LINES      corpus lines (default 1e7; gen.c's URL-like lines,
#                      about 60 bytes, half of them repeats)
#   THREADS_SMALL_MB   the small filter, in MB (default 16: about the
#                      last-level cache of a server, so probes mostly hit it)
#   THREADS_BIG_MB     the big filter, in MB (default 2700, issue 17's
#                      2.7 GB: every probe a cache and TLB miss). On a small
#                      or busy machine a smaller one keeps the run short
#   THREADS_CAPACITY   when set (1e9 for issue 27's rows), the big-filter
#                      rows size bfbuild, bfgrep's filter and bfuniq with
#                      -n THREADS_CAPACITY -p 1e-4 instead of THREADS_BIG_MB
#                      (1e9 keys: a 2.75 GB filter)
#   THREADS_PIPE       1 (the default) adds rows for bfbuild and bfuniq
#                      reading the corpus through a pipe, with the big
#                      filter, beside a `cat | wc -l` row, their floor;
#                      0 leaves them out
#   THREADS_PIPE_CAPACITY  the pipe rows' -n (default: the big filter's);
#                      1e9 with a corpus of 1e8 lines is issue 36's cut of
#                      its 1e9-line pipe job
#   THREADS_PIPE_LIST  the pipe rows' thread counts (default THREADS_LIST)
#   THREADS_RUNS       rounds (default 3): the median is reported
#   THREADS_LIST       thread counts (default "1 2 4 8 16" up to the CPUs)
#   THREADS_PROGRAMS   which rows (default "bfbuild bfgrep bfuniq bfcount")
#   THREADS_SHAPES     which filters (default "small big"; empty: none)
#   BENCH_DIR          work directory (default build/bench/), shared with
#                      make bench: the corpus is cached there
#   THREADS_OUT        where bfbuild writes its filters (default a
#                      directory in /dev/shm where there is one: saving
#                      ends in fsync, which on a busy disk costs seconds
#                      that have nothing to do with threads)
#
# Needs a C compiler for gen.c and cputime.c (the stopwatch), or both
# already built in BENCH_DIR and newer than their sources (a lent machine
# with no compiler: see the README's Threads section).
#
# Method. Every command runs in rounds, its thread counts alternating
# within a round (1 2 4 ... 1 2 4 ...), so a change in the machine's load
# falls on all of them alike; the median wall time of the rounds counts.
# A filter of hundreds of megabytes takes seconds to create, load or save
# whatever the input, so each command is also timed on empty input (same
# options, same rounds) and the rate is
#     lines / (median time with the corpus - median time with no input):
# the lines per second of the streaming itself, which is what the threads
# change. CPU/line is the same difference in CPU time (user + system, from
# cputime.c) per line: on a machine shared with other work the wall
# times say how much of it a program got, CPU/line what each line cost
# (threads cost some: atomics, waiting, cache lines moving between cores). The corpus is read once before timing (page cache). bfgrep's
# filters hold the first 1% of the corpus's distinct lines, built once;
# bfbuild and bfuniq make theirs of the same size as they run (bfuniq is
# sized with -n for about the same bytes at -p 1e-2). bfcount keeps a
# sketch, not a filter: one row. Outputs go to files in BENCH_DIR/out,
# the filters bfbuild writes to THREADS_OUT.
#
# This measures; it never fails on a ratio (exit 2 only when it cannot
# run). Never part of `make check`.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=$root/cmd
LC_ALL=C
export LC_ALL
PATH=$bin:$PATH
export PATH
unset BFTOOLS_THREADS

say() { printf 'bench-threads: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }

whole() {
	awk -v s="$1" 'BEGIN { if (s !~ /^[0-9]+(\.[0-9]*)?([eE]\+?[0-9]+)?$/ || s + 0 < 1) exit 1; printf "%.0f\n", s }'
}
lines=$(whole "${THREADS_LINES:-1e7}") || die "THREADS_LINES: want a number of lines, like 1e7"
small_mb=$(whole "${THREADS_SMALL_MB:-16}") || die "THREADS_SMALL_MB: want a size in MB"
big_mb=$(whole "${THREADS_BIG_MB:-2700}") || die "THREADS_BIG_MB: want a size in MB"
runs=$(whole "${THREADS_RUNS:-3}") || die "THREADS_RUNS: want a number of rounds"
capacity=
if [ -n "${THREADS_CAPACITY:-}" ]; then
	capacity=$(whole "$THREADS_CAPACITY") || die "THREADS_CAPACITY: want a number of keys, like 1e9"
fi
case ${THREADS_PIPE:-1} in 0 | 1) ;; *) die "THREADS_PIPE: want 0 or 1" ;; esac
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
if [ -n "${THREADS_LIST:-}" ]; then
	list=$THREADS_LIST
else
	list=
	for n in 1 2 4 8 16; do
		[ "$n" -le "$cpus" ] && list="$list $n"
	done
fi
for n in $list; do
	case $n in '' | *[!0-9]* | 0) die "THREADS_LIST: '$n' is not a thread count" ;; esac
done
dir=${BENCH_DIR:-$root/build/bench}
mkdir -p "$dir/out" || die "cannot make $dir"
cd "$dir" || die "cannot enter $dir"

# gen.c and cputime.c, compiled as make bench does gen.c.
for tool in gen cputime; do
	if ! [ -x $tool ] || [ -n "$(find "$here/$tool.c" -newer $tool 2>/dev/null)" ]; then
		${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -o $tool "$here/$tool.c" -lm ||
			die "cannot compile $here/$tool.c"
	fi
done
corpus=corpus-$lines.txt
if ! [ -s "$corpus" ] || [ -n "$(find gen -newer "$corpus" 2>/dev/null)" ]; then
	say "generating $corpus"
	{ ./gen corpus "$lines" >"$corpus.tmp" && mv "$corpus.tmp" "$corpus"; } || die "cannot write $corpus"
fi
cat "$corpus" >/dev/null
: >empty.txt
if [ -n "${THREADS_OUT:-}" ]; then
	out=$THREADS_OUT
elif [ -d /dev/shm ] && [ -w /dev/shm ]; then
	out=/dev/shm/bftools-bench-threads.$$
	trap 'rm -rf "$out"' EXIT
	trap 'exit 2' INT TERM
else
	out=out
fi
mkdir -p "$out" || die "cannot make $out"
KEY=000102030405060708090a0b0c0d0e0f

# A filter of the given size (SIZE options, NAME for the file) holding
# the first 1% of the corpus's distinct lines: bfgrep's, cached.
grep_filter() {
	f=grep-$2-$lines.bf
	if ! [ -s "$f" ]; then
		# shellcheck disable=SC2086 # $1 is a list of options
		./gen keys 0 $((lines / 200 + 1)) 1 | bfbuild $1 --key "$KEY" -o "$f" ||
			die "cannot build $f"
	fi
	echo "$f"
}

# run_once CMD: CMD's wall time and CPU time (user + system) in seconds; dies if it fails.
run_once() {
	./cputime "$1" || die "failed: $1"
}

# median COLUMN: the median of that column of standard input.
median() { awk -v c="$1" '{ print $c }' | sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure NAME TEMPLATE: TEMPLATE with @J@ the thread count and @IN@ the
# input, in alternating rounds; prints a table row per thread count.
measure() {
	name=$1 template=$2
	rm -f times.*
	r=0
	while [ "$r" -lt "$runs" ]; do
		for j in $list; do
			for input in "$corpus" empty.txt; do
				cmd=$(printf '%s\n' "$template" | sed "s|@J@|$j|g; s|@IN@|$input|g")
				# the last run's outputs go first, untimed: truncating a 3 GB
				# output or unlinking a 2.4 GB filter is no part of a run
				rm -f out/*.txt "$out"/*.bf
				run_once "$cmd" >>"times.$j.$input"
			done
		done
		r=$((r + 1))
	done
	base=
	for j in $list; do
		full=$(median 1 <"times.$j.$corpus")
		fixed=$(median 1 <"times.$j.empty.txt")
		cpu=$(awk -v l="$lines" -v f="$(median 2 <"times.$j.$corpus")" -v e="$(median 2 <"times.$j.empty.txt")" \
			'BEGIN { d = f - e; if (d < 0) d = 0; printf "%.0f", d * 1e9 / l }')
		rate=$(awk -v l="$lines" -v f="$full" -v e="$fixed" 'BEGIN { d = f - e; if (d <= 0) d = 1e-9; printf "%.0f", l / d }')
		[ -n "$base" ] || base=$rate
		printf '| %-30s | %2s | %7.2f s | %7.2f s | %7.2f M | %5.2fx | %4s ns |\n' "$name" "$j" "$full" "$fixed" \
			"$(awk -v r="$rate" 'BEGIN { print r / 1e6 }')" "$(awk -v r="$rate" -v b="$base" 'BEGIN { print r / b }')" "$cpu"
	done
}

say "$lines lines, filters of $small_mb MB and $big_mb MB, threads:$list, $runs rounds, $cpus CPUs online"
printf '| %-30s | %2s | %9s | %9s | %9s | %6s | %7s |\n' "program, filter" "-j" "wall" "no input" "lines/s" "vs -j 1" "CPU/line"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' -------------------------------- ---- ----------- ----------- ----------- -------- ---------
# The filters of a row: SIZE, the name of the row's filter; BUILD,
# bfbuild's and the grep filter's size options; UNIQ, bfuniq's.
shapes() {
	if [ "$1" = big ] && [ -n "$capacity" ]; then
		SIZE="-n $capacity"
		BUILD="-n $capacity -p 1e-4"
		UNIQ="-n $capacity -p 1e-4"
		return
	fi
	mb=$small_mb
	[ "$1" = big ] && mb=$big_mb
	SIZE="$mb MB"
	BUILD="-m $((mb * 8000000))"
	# bfuniq -n for about mb MB at 1e-2: a blocked filter takes about 10.5 bits a key there
	UNIQ="-n $((mb * 8000000 / 21 * 2)) -p 1e-2"
}

programs=${THREADS_PROGRAMS:-bfbuild bfgrep bfuniq bfcount}
wants() { case " $programs " in *" $1 "*) return 0 ;; esac; return 1; }
for which in ${THREADS_SHAPES-small big}; do
	shapes "$which"
	if wants bfbuild; then
		measure "bfbuild, $SIZE" "bfbuild -j @J@ $BUILD --key $KEY -o $out/build.bf @IN@"
	fi
	if wants bfgrep; then
		f=$(grep_filter "$BUILD" "$(printf '%s' "$SIZE" | tr -d ' ')")
		measure "bfgrep -c, $SIZE" "bfgrep -j @J@ -c -f $f @IN@ >out/grep.txt || [ \$? -eq 1 ]"
	fi
	if wants bfuniq; then
		measure "bfuniq, $SIZE" "bfuniq -j @J@ $UNIQ --key $KEY @IN@ >out/uniq.txt"
	fi
done
if [ "${THREADS_PIPE:-1}" = 1 ]; then
	# the same jobs through a pipe (one reader), beside the pipe's own floor
	shapes big
	if [ -n "${THREADS_PIPE_CAPACITY:-}" ]; then
		n=$(whole "$THREADS_PIPE_CAPACITY") || die "THREADS_PIPE_CAPACITY: want a number of keys, like 1e9"
		SIZE="-n $n" BUILD="-n $n -p 1e-4" UNIQ="-n $n -p 1e-4"
	fi
	all=$list
	list=1
	measure "cat | wc -l" "cat @IN@ | wc -l >out/wc.txt"
	list=${THREADS_PIPE_LIST:-$all}
	wants bfbuild && measure "cat | bfbuild, $SIZE" "cat @IN@ | bfbuild -j @J@ $BUILD --key $KEY -o $out/build.bf"
	wants bfuniq && measure "cat | bfuniq, $SIZE" "cat @IN@ | bfuniq -j @J@ $UNIQ --key $KEY >out/uniq.txt"
	list=$all
fi
if wants bfcount; then
	measure "bfcount (sketch)" "bfcount -j @J@ @IN@ >out/count.txt"
fi
