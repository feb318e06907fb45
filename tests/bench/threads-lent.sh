#!/bin/sh
# SPDX-License-Identifier: MIT
# threads-lent.sh - issue 36's figures on a lent many-core machine, in one
# call: `make bench-threads-static` builds build/lent/ here (the programs,
# gen and cputime, all static: the lent machine has no compiler, no zlib and
# no network), the device tool carries that folder there, and this script
# runs there from the repository's root:
#
#   sh tests/bench/threads-lent.sh [OUTDIR]
#
# It prints the machine (CPUs, model, memory) and then tests/bench/threads.sh
# in the cut that fits one call of the device tool (ten minutes, of which a
# machine's start takes one or two):
#   - bfuniq and bfbuild reading 1e8 lines of gen.c's corpus from a file,
#     -n 1e8 -p 1e-4, -j 1 4 8 12 16 (up to the CPUs), LENT_RUNS rounds;
#   - `cat FILE | bfuniq` and `cat FILE | bfbuild` at -j LENT_PIPE_LIST into
#     -n 1e9 -p 1e-4 (a 2.4 GB filter), beside `cat FILE | wc -l`: the 1e9
#     lines of the issue would be a 60 GB file, past the machine's disk and
#     the call's time, so the same filter takes 1e8 lines;
#   - then, while LENT_SECONDS allow, bfgrep -c and bfcount at -j 1 8 16, one round;
#   - the stopwatch builds (build/lent/stopwatch/, lib/base/stopwatch.h) of
#     bfuniq and bfbuild once each at -j 8 and 16 from the file, and at 16
#     through a pipe into -n 1e9: where the calling thread's time went
#     (waiting for batches, work or parts, splitting, consuming) and how
#     long the save took, so that one call brings the bottleneck back too.
# Each part's table goes to OUTDIR (default build/lent/out) as it ends, so a
# call cut short still returns what was measured.
#
#   LENT_LINES       corpus lines (default 1e8)
#   LENT_RUNS        rounds of the main rows (default 2)
#   LENT_LIST        thread counts (default 1 4 8 12 16, up to the CPUs; 2
#                    is in the 2-core tables already)
#   LENT_PIPE_LIST   the pipe rows' thread counts (default 8 16, or the CPUs)
#   LENT_SECONDS     no part starts after this many seconds (default 330)
#   LENT_PARTS       which parts, in order (default "stopwatch ordered pipe
#                    unordered": the stopwatch's rows are short and say why)
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
lent=$root/build/lent
outdir=${1:-$lent/out}
say() { printf 'threads-lent: %s\n' "$*" >&2; }
[ -x "$lent/bfuniq" ] && [ -x "$lent/gen" ] && [ -x "$lent/cputime" ] ||
	{ say "no static build in $lent: run make bench-threads-static first"; exit 2; }
mkdir -p "$outdir" "$root/build/bench" || exit 2
start=$(date +%s)

# The static programs stand where threads.sh looks for them, gen and cputime
# where it keeps them, newer than their sources so nothing is compiled.
for p in bfbuild bfgrep bfuniq bfcount; do cp "$lent/$p" "$root/cmd/$p" || exit 2; done
# Copied only when they differ: a corpus made before by this gen stays.
for p in gen cputime; do
	cmp -s "$lent/$p" "$root/build/bench/$p" ||
		{ cp "$lent/$p" "$root/build/bench/$p" && touch "$root/build/bench/$p"; } || exit 2
done

cpus=$(getconf _NPROCESSORS_ONLN)
list=
for n in ${LENT_LIST:-1 4 8 12 16}; do [ "$n" -le "$cpus" ] && list="$list $n"; done
pipe_list=${LENT_PIPE_LIST:-$([ "$cpus" -ge 16 ] && echo 8 16 || echo "$cpus")}
{
	date -u '+%Y-%m-%d %H:%M UTC'
	echo "CPUs online: $cpus"
	grep -m1 'model name' /proc/cpuinfo
	command -v lscpu >/dev/null && lscpu | grep -E '^(Thread|Core|Socket|NUMA node\(s\)|L3|CPU max MHz)'
	grep -E '^(MemTotal|MemAvailable)' /proc/meminfo
	echo "load: $(cat /proc/loadavg)"
} | tee "$outdir/machine.txt"

# part NAME SETTINGS...: threads.sh with those settings, if time is left.
part() {
	name=$1
	shift
	case " ${LENT_PARTS:-stopwatch ordered pipe unordered} " in *" $name "*) ;; *) return ;; esac
	if [ $(($(date +%s) - start)) -ge "${LENT_SECONDS:-330}" ]; then
		say "$name: skipped, past LENT_SECONDS"
		return
	fi
	say "$name: starting at $(($(date +%s) - start)) s"
	env THREADS_LINES="${LENT_LINES:-1e8}" "$@" sh "$root/tests/bench/threads.sh" 2>&1 |
		tee "$outdir/$name.md"
}
# stopwatch_rows: the stopwatch builds' runs, their stderr lines kept.
stopwatch_rows() {
	corpus=$root/build/bench/corpus-$(awk -v s="${LENT_LINES:-1e8}" 'BEGIN { printf "%.0f", s }').txt
	sw=$lent/stopwatch
	key=000102030405060708090a0b0c0d0e0f
	[ -s "$corpus" ] || "$root/build/bench/gen" corpus "$(awk -v s="${LENT_LINES:-1e8}" 'BEGIN { printf "%.0f", s }')" >"$corpus" || return
	for j in 8 16; do
		[ "$j" -le "$cpus" ] || continue
		echo "== bfuniq -j $j -n 1e8 -p 1e-4 FILE > file"
		"$sw/bfuniq" -j "$j" -n 1e8 -p 1e-4 --key $key "$corpus" 2>&1 >"$root/build/bench/sw.out"
		echo "== bfbuild -j $j -n 1e8 -p 1e-4 FILE"
		"$sw/bfbuild" -j "$j" -n 1e8 -p 1e-4 --key $key -o "$root/build/bench/sw.bf" "$corpus" 2>&1
	done
	echo "== cat FILE | bfuniq -j $pipe_top -n 1e9 -p 1e-4 > file"
	cat "$corpus" | "$sw/bfuniq" -j "$pipe_top" -n 1e9 -p 1e-4 --key $key 2>&1 >"$root/build/bench/sw.out"
	echo "== cat FILE | bfbuild -j $pipe_top -n 1e9 -p 1e-4"
	cat "$corpus" | "$sw/bfbuild" -j "$pipe_top" -n 1e9 -p 1e-4 --key $key -o "$root/build/bench/sw.bf" 2>&1
	rm -f "$root/build/bench/sw.out" "$root/build/bench/sw.bf"
}
if [ -x "$lent/stopwatch/bfuniq" ] && [ -x "$lent/stopwatch/bfbuild" ]; then
	pipe_top=$([ "$cpus" -ge 16 ] && echo 16 || echo "$cpus")
	case " ${LENT_PARTS:-stopwatch ordered pipe unordered} " in
	*" stopwatch "*)
		say "stopwatch: starting at $(($(date +%s) - start)) s"
		stopwatch_rows | tee "$outdir/stopwatch.txt" ;;
	esac
fi
part ordered THREADS_PROGRAMS="bfuniq bfbuild" THREADS_SHAPES=big THREADS_CAPACITY=1e8 \
	THREADS_PIPE=0 THREADS_RUNS="${LENT_RUNS:-2}" THREADS_LIST="$list"
part pipe THREADS_PROGRAMS="bfuniq bfbuild" THREADS_SHAPES= THREADS_CAPACITY=1e8 \
	THREADS_PIPE_CAPACITY=1e9 THREADS_PIPE_LIST="$pipe_list" THREADS_RUNS="${LENT_RUNS:-2}"
part unordered THREADS_PROGRAMS="bfgrep bfcount" THREADS_SHAPES=big THREADS_CAPACITY=1e8 \
	THREADS_PIPE=0 THREADS_RUNS=1 THREADS_LIST="$(for n in 1 8 16; do [ "$n" -le "$cpus" ] && printf "%s " $n; done)"
say "done in $(($(date +%s) - start)) s"
