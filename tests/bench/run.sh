#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - `make bench`: time bftools beside the tools a user would
# otherwise use, on the same input, in the same run, and judge each job
# against its target in issue 4 (README, Performance).
#
#   BENCH_LINES  corpus lines (default 10000000; 1e7, 1e8, 10M, 2.5M work)
#   BENCH_PIPE_LINES  lines of the pipe-limit job's own corpus (default
#                1e8, the size issue 4 judges that target at; about 6 GB,
#                generated once and cached)
#   BENCH_RUNS   rounds per job (default 5)
#   BENCH_DIR    work directory (default build/bench/): the compiled
#                helpers, cached corpora and filters, outputs, results.md
#   BENCH_JOBS   which jobs (default "uniq window grep build count top pipe files gzip formats
#                split sparse"; "dedup", the Dask pipeline, is make bench-scaleout's)
#   BENCH_FILTER_MIB  size of the dense filter of the files and sparse
#                jobs (default 1024 from 1e7 lines up, else 128, to keep
#                quick runs quick)
#   BENCH_BEFORE git ref of the build the sparse job compares with
#                (default 8528508, main before issue 33's work; built once
#                into BENCH_DIR/before-REF; "none" for no comparison)
#   BENCH_SPARSE_PIPE_LINES  lines of the sparse job's pipe-limit row
#                (default 1e7: issue 33 names 1e8, about 6 GB and minutes
#                a round; say 1e8 for its own size)
#
# Method. The corpus comes from gen.c (deterministic URL-like lines, ~60
# bytes, about half repeats), compiled here and cached per line count. It
# is read once before timing, so every command reads it from the page
# cache. Each job runs its commands in rounds, A B A B ... (so drift in the
# machine's speed hits both sides alike), each command under
# /usr/bin/time for its peak resident memory (%M: the largest process of a
# pipeline) and CPU time, between two `date +%s%N` for the wall time. A job
# reports medians of the wall times and the largest peak; every command's
# spread and CPU time are listed too, since a busy machine shows as CPU
# time far below the wall time. Outputs go to files in BENCH_DIR/out (never
# to /dev/null, where GNU grep stops at the first match), except in the
# pipe-limit job, whose point is the input side; floor.c times, beside it,
# the first touch of as much fresh memory as that job's filter. The whole
# run is LC_ALL=C: byte semantics for every tool, baselines included, which
# is also their fastest mode.
#
# Each target prints PASS or MISS from the measured ratio; a comparison
# whose tool is missing prints SKIP and why. The table goes to standard
# output and, as Markdown with the commands and the machine, to
# BENCH_DIR/results.md. Exit status 0 even with MISSes (this measures, it
# does not gate); 2 when the benchmark itself could not run. Never part of
# `make check`.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=$root/cmd
LC_ALL=C
export LC_ALL
PATH=$bin:$PATH
export PATH

say() { printf 'bench: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }

# A count as 10000000, 1e7, 10M or 2.5M, printed as digits; fails otherwise.
parse_count() {
	awk -v s="$1" 'BEGIN {
		m = 1; u = substr(s, length(s))
		if (u == "k" || u == "K") m = 1e3
		else if (u == "M") m = 1e6
		else if (u == "G") m = 1e9
		if (m > 1) s = substr(s, 1, length(s) - 1)
		if (s !~ /^[0-9]+(\.[0-9]*)?([eE]\+?[0-9]+)?$/) exit 1
		v = s * m
		if (v < 1000 || v > 1e10 || v != int(v)) exit 1
		printf "%.0f\n", v
	}'
}

lines=$(parse_count "${BENCH_LINES:-10000000}") ||
	die "BENCH_LINES=${BENCH_LINES:-}: want a whole number of lines from 1000 up, like 1e7 or 10M"
pipe_lines=$(parse_count "${BENCH_PIPE_LINES:-100000000}") ||
	die "BENCH_PIPE_LINES=${BENCH_PIPE_LINES:-}: want a whole number of lines from 1000 up, like 1e8 or 10M"
runs=${BENCH_RUNS:-5}
case $runs in
'' | *[!0-9]* | 0) die "BENCH_RUNS=$runs: want a whole number of rounds, 1 or more" ;;
esac
sparse_pipe_lines=$(parse_count "${BENCH_SPARSE_PIPE_LINES:-10000000}") ||
	die "BENCH_SPARSE_PIPE_LINES=${BENCH_SPARSE_PIPE_LINES:-}: want a whole number of lines from 1000 up, like 1e7 or 1e8"
jobs=${BENCH_JOBS:-uniq window grep build count top pipe files gzip formats split sparse}
for job in $jobs; do
	case $job in
	uniq | window | grep | build | count | top | pipe | files | gzip | formats | split | sparse | dedup) ;;
	*) die "BENCH_JOBS: unknown job '$job' (uniq window grep build count top pipe files gzip formats split sparse dedup)" ;;
	esac
done
dir=${BENCH_DIR:-$root/build/bench}
mkdir -p "$dir" || die "cannot create $dir"
dir=$(cd "$dir" && pwd)
out=$dir/out
raw=$dir/raw
rm -rf "$out" "$raw"
mkdir -p "$out" "$raw" || die "cannot create $out"

for prog in bfbuild bfgrep bfuniq bfcount bfmerge bfinfo bftop bfsplit; do
	[ -x "$bin/$prog" ] || die "$bin/$prog not found (run make first)"
done

# ------------------------------------------------------------ prerequisites

is_dcso_bloom() { bloom --version 2>/dev/null | grep -q '^Bloom Filter'; }

missing_packages() {
	[ -x /usr/bin/time ] || printf ' time'
	command -v gawk >/dev/null 2>&1 || printf ' gawk'
	is_dcso_bloom || printf ' golang-github-dcso-bloom-cli'
	command -v jq >/dev/null 2>&1 || printf ' jq'
}

# Install what is missing with apt-get (sudo when not root), one line to
# say so; whatever cannot be had only skips the comparisons that need it.
install_missing() {
	need=$(missing_packages)
	[ -z "$need" ] && return 0
	if ! command -v apt-get >/dev/null 2>&1; then
		say "missing:$need (no apt-get): skipping what needs them"
		return 0
	fi
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || { say "missing:$need (need root or sudo): skipping what needs them"; return 0; }
		sudo=sudo
	fi
	say "installing missing packages:$need (apt-get)"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get -qq update >/dev/null 2>&1
	for pkg in $need; do
		$sudo apt-get -qq install -y "$pkg" >/dev/null 2>&1 ||
			say "could not install $pkg: skipping the comparisons that need it"
	done
}

install_missing
have_time=no have_gawk=no have_bloom=no have_jq=no
[ -x /usr/bin/time ] && have_time=yes
command -v jq >/dev/null 2>&1 && have_jq=yes
command -v gawk >/dev/null 2>&1 && have_gawk=yes
is_dcso_bloom && have_bloom=yes

# gawk holds every distinct line in a hash table: about 172 bytes per line
# of this corpus (1.7 GB at 1e7). Where that would not fit in three
# quarters of the memory, the comparison is skipped rather than swapped or
# killed.
gawk_fits() {
	awk -v n="$lines" '/^MemTotal:/ { exit !(n * 172 <= 0.75 * $2 * 1024) }' /proc/meminfo 2>/dev/null
}
gawk_why="gawk not installed"
if [ "$have_gawk" = yes ] && ! gawk_fits; then
	have_gawk=no gawk_why="gawk would need about $((lines * 172 / 1000000)) MB"
fi

# Other work on the machine distorts every timing: say so, then go on.
load_at_start=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null)
if awk -v l="${load_at_start:-0}" -v c="$(nproc)" 'BEGIN { exit !(l > c / 2) }'; then
	say "warning: load average $load_at_start on $(nproc) cores: other work will distort the timings"
fi

# -------------------------------------------------------------- the input

# newer A B: A was modified after B (POSIX find; test -nt is not POSIX).
newer() { [ -n "$(find "$1" -prune -newer "$2" 2>/dev/null)" ]; }

# compile NAME [LIBS]: tests/bench/NAME.c into BENCH_DIR/NAME unless it is current.
compile() {
	[ -x "$dir/$1" ] && newer "$dir/$1" "$here/$1.c" && return 0
	# shellcheck disable=SC2086 # LIBS is a list of flags, split on purpose
	${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -o "$dir/$1" "$here/$1.c" -lm ${2:-} ||
		die "cannot compile $here/$1.c"
}
compile gen
compile floor -pthread
gen=$dir/gen

now_ns() { date +%s%N; }
seconds_since() { awk -v a="$1" -v b="$(now_ns)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }

# free_kib: kilobytes free in the work directory (POSIX df -P).
free_kib() { df -Pk . | awk 'NR == 2 { print $4 }'; }

# make_corpus LINES: corpus-LINES.txt, generated unless cached and current;
# fails (with why on stderr) when the disk has no room for its ~61 bytes a line.
make_corpus() {
	file=corpus-$1.txt
	[ -s "$file" ] && newer "$file" "$gen" && return 0
	need=$(($1 * 62 / 1024))
	if [ "$(free_kib)" -lt "$need" ]; then
		say "no room for $file: it needs about $((need / 1024)) MiB, $(($(free_kib) / 1024)) MiB free in $dir"
		return 1
	fi
	t0=$(now_ns)
	{ "$gen" corpus "$1" >"$file.tmp" && mv "$file.tmp" "$file"; } || { rm -f "$file.tmp"; die "cannot write $dir/$file"; }
	say "corpus: $1 lines, $(wc -c <"$file") bytes, generated in $(seconds_since "$t0") s by gen.c"
}

corpus=corpus-$lines.txt
patterns=patterns-$lines.txt
cd "$dir" || die "cannot enter $dir"
make_corpus "$lines" || die "cannot make the corpus"
# 100k pattern lines spread evenly over ids 0 .. lines: the corpus holds
# ids below about lines/2, so half the patterns occur in it (~1% of its
# lines match) and half do not, as with a real block list.
stride=$((lines / 100000))
[ "$stride" -ge 1 ] || stride=1
"$gen" keys 0 100000 "$stride" >"$patterns" || die "cannot write $dir/$patterns"
cat "$corpus" >/dev/null

# ------------------------------------------------------------ measurement

log=$raw/order
shm=""
trap '[ -z "$shm" ] || rm -rf "$shm"' EXIT
trap 'exit 130' INT TERM HUP
: >"$log"

# measure NAME LABEL CMD: run CMD once (sh -c, in BENCH_DIR) and append
# "nanoseconds peak-KiB status CPU-seconds" to raw/NAME.runs (CPU time is
# user + system over the whole pipeline: far below the wall time when the
# machine is busy with other work). Filters written by the previous
# command are removed first, outside the timing.
measure() {
	[ -f "$raw/$1.cmd" ] || { printf '%s\n' "$3" >"$raw/$1.cmd"; printf '%s\n' "$2" >"$raw/$1.label"; echo "$1" >>"$log"; }
	rm -f "$out"/*.bf "$out"/*.bloom
	[ -z "$shm" ] || rm -f "$shm"/*.bf
	t0=$(now_ns)
	if [ "$have_time" = yes ]; then
		/usr/bin/time -f '%M %U %S' -o "$raw/$1.mem" sh -c "$3" >"$out/$1.stdout" 2>"$out/$1.stderr"
	else
		sh -c "$3" >"$out/$1.stdout" 2>"$out/$1.stderr"
	fi
	status=$?
	t1=$(now_ns)
	usage="- -"
	[ "$have_time" = yes ] && usage=$(tail -n 1 "$raw/$1.mem" | awk '{ printf "%s %.2f", $1, $2 + $3 }')
	echo "$((t1 - t0)) ${usage% *} $status ${usage#* }" >>"$raw/$1.runs"
	[ "$status" -le 1 ] || say "$1: exit status $status: $(head -c 300 "$out/$1.stderr")"
	printf '.' >&2
}

# One round: every NAME LABEL CMD triple once, in the order given.
round() {
	while [ $# -ge 3 ]; do
		measure "$1" "$2" "$3"
		shift 3
	done
}

# The same, the triples taken from the last to the first.
round_backwards() {
	back_at=$#
	while [ "$back_at" -ge 3 ]; do
		eval "measure \"\${$((back_at - 2))}\" \"\${$((back_at - 1))}\" \"\${$back_at}\""
		back_at=$((back_at - 3))
	done
}

# alternate TITLE NAME LABEL CMD ...: BENCH_RUNS rounds, A B, B A, A B ...
# The order turns every round: on this machine the first command of a
# round paid more than the others often enough (the memory the last one
# freed being handed back to the host meanwhile) that, always first, ours
# lost every round of the pipe-limit row that it won as often as not in
# another order (2026-12-02).
alternate() {
	printf '%-36s' "$1" >&2
	shift
	r=0
	while [ "$r" -lt "$runs" ]; do
		if [ $((r % 2)) -eq 0 ]; then
			round "$@"
		else
			round_backwards "$@"
		fi
		r=$((r + 1))
	done
	printf '\n' >&2
}

median() {
	cut -d' ' -f1 "$raw/$1.runs" | sort -n | awk '{ v[NR] = $1 }
		END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f\n", m / 1e9 }'
}

peak_mib() {
	cut -d' ' -f2 "$raw/$1.runs" | awk '$1 != "-" { if ($1 > p) p = $1; seen = 1 }
		END { if (seen) printf "%.1f\n", p / 1024; else print "-" }'
}

# spread NAME: "min median max cpu-median" of its runs, in seconds.
spread() {
	awk '{ print $1 / 1e9, $4 }' "$raw/$1.runs" | sort -n | awk '{ w[NR] = $1; c[NR] = $2 }
		END { printf "%.3f %.3f %.3f ", w[1], (NR % 2 ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2), w[NR]
			n = 0; for (i = 1; i <= NR; i++) if (c[i] != "-") v[++n] = c[i]
			if (n == 0) { print "-"; exit }
			for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
			printf "%.2f\n", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}

failed() { awk '$3 > 1 { bad = 1 } END { exit !bad }' "$raw/$1.runs"; }
label() { cat "$raw/$1.label"; }

# row_values JOB OURS-S OURS-MIB BASE-LABEL BASE-S BASE-MIB RATIO TARGET
# VERDICT: one line of the table, to rows.tsv. The table is ASCII (>=, x)
# so that it aligns in any terminal; the Markdown gets the real signs.
row_values() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$raw/rows.tsv"
}

# row JOB OURS BASE-LABEL BASE-S BASE-MIB RATIO TARGET VERDICT
row() {
	j=$1 o=$2
	shift 2
	row_values "$j" "$(median "$o")" "$(peak_mib "$o")" "$@"
}

# skip_row JOB OURS BASE-LABEL TARGET WHY
skip_row() {
	row "$1" "$2" "$3" - - - "$4" "SKIP ($5)"
}

# faster JOB OURS BASE TARGET: the speed-up BASE/OURS must reach TARGET.
faster() {
	if failed "$2" || failed "$3"; then
		row "$1" "$2" "$(label "$3")" "$(median "$3")" "$(peak_mib "$3")" - ">= ${4}x faster" FAIL
		return
	fi
	set -- "$1" "$2" "$3" "$4" "$(median "$2")" "$(median "$3")"
	verdict=$(awk -v o="$5" -v b="$6" -v t="$4" 'BEGIN { print (o > 0 && b / o >= t) ? "PASS" : "MISS" }')
	ratio=$(awk -v o="$5" -v b="$6" 'BEGIN { if (o > 0) printf "%.2fx faster", b / o; else print "-" }')
	row "$1" "$2" "$(label "$3")" "$6" "$(peak_mib "$3")" "$ratio" ">= ${4}x faster" "$verdict"
}

# leaner JOB OURS BASE DIVISOR: peak memory at most 1/DIVISOR of BASE's.
leaner() {
	o=$(peak_mib "$2") b=$(peak_mib "$3")
	if [ "$o" = - ] || [ "$b" = - ]; then
		skip_row "$1" "$2" "$(label "$3")" "<= 1/$4 memory" "no /usr/bin/time"
		return
	fi
	verdict=$(awk -v o="$o" -v b="$b" -v t="$4" 'BEGIN { print (o * t <= b) ? "PASS" : "MISS" }')
	{ failed "$2" || failed "$3"; } && verdict=FAIL
	ratio=$(awk -v o="$o" -v b="$b" 'BEGIN { printf "1/%.1f memory", b / o }')
	row "$1" "$2" "$(label "$3")" "$(median "$3")" "$b" "$ratio" "<= 1/$4 memory" "$verdict"
}

# within JOB OURS BASE LIMIT: OURS may take at most LIMIT times BASE's time.
within() {
	o=$(median "$2") b=$(median "$3")
	verdict=$(awk -v o="$o" -v b="$b" -v t="$4" 'BEGIN { print (o <= t * b) ? "PASS" : "MISS" }')
	failed "$2" && verdict=FAIL
	ratio=$(awk -v o="$o" -v b="$b" 'BEGIN { if (b > 0) printf "%.2fx its time", o / b; else print "-" }')
	row "$1" "$2" "$(label "$3")" "$b" "$(peak_mib "$3")" "$ratio" "<= ${4}x its time" "$verdict"
}

# heavier JOB OURS BASE LIMIT: OURS's peak memory at most LIMIT times BASE's.
heavier() {
	o=$(peak_mib "$2") b=$(peak_mib "$3")
	if [ "$o" = - ] || [ "$b" = - ]; then
		skip_row "$1" "$2" "$(label "$3")" "<= ${4}x its memory" "no /usr/bin/time"
		return
	fi
	verdict=$(awk -v o="$o" -v b="$b" -v t="$4" 'BEGIN { print (o <= t * b) ? "PASS" : "MISS" }')
	{ failed "$2" || failed "$3"; } && verdict=FAIL
	ratio=$(awk -v o="$o" -v b="$b" 'BEGIN { if (b > 0) printf "%.2fx its memory", o / b; else print "-" }')
	row "$1" "$2" "$(label "$3")" "$(median "$3")" "$b" "$ratio" "<= ${4}x its memory" "$verdict"
}

note() { printf '%s\n' "$*" >>"$raw/notes"; }
count_lines() { wc -l <"$1" | tr -d ' '; }

# ------------------------------------------------------------------- jobs

job_uniq() {
	set -- uniq.bfuniq "bfuniq -n $lines -p 1e-4" "bfuniq -n $lines -p 1e-4 $corpus >out/uniq.bfuniq.txt" \
		uniq.sort "sort -u" "sort -u $corpus >out/uniq.sort.txt"
	if [ "$have_gawk" = yes ]; then
		set -- "$@" uniq.gawk "gawk '!s[\$0]++'" "gawk '!s[\$0]++' $corpus >out/uniq.gawk.txt"
	fi
	alternate "bfuniq vs sort -u, gawk" "$@"
	faster "de-duplicate (bfuniq)" uniq.bfuniq uniq.sort 8
	if [ "$have_gawk" = yes ]; then faster "de-duplicate (bfuniq)" uniq.bfuniq uniq.gawk 15; else
		skip_row "de-duplicate (bfuniq)" uniq.bfuniq gawk ">= 15x faster" "$gawk_why"; fi
	leaner "de-duplicate, memory" uniq.bfuniq uniq.sort 20
	if [ "$have_gawk" = yes ]; then leaner "de-duplicate, memory" uniq.bfuniq uniq.gawk 20; else
		skip_row "de-duplicate, memory" uniq.bfuniq gawk "<= 1/20 memory" "$gawk_why"; fi
	exact=$(count_lines out/uniq.sort.txt) ours=$(count_lines out/uniq.bfuniq.txt)
	note "bfuniq wrote $ours lines; sort -u found $exact distinct: $((exact - ours)) first-seen lines lost to false positives (rate 1e-4)."
	if [ "$have_gawk" = yes ] && cmp -s out/uniq.gawk.txt out/uniq.bfuniq.txt; then
		note "bfuniq's output is byte for byte gawk's (same lines, same order)."
	fi
}

# De-duplication beyond one machine (issue 34): bfsplit's one pass into 16
# files by key partition, against bfuniq's own time on the same lines
# (target: within 1.5x), so splitting first costs about what a machine's
# bfuniq does. Every line must land in one output.
SHARD_KEY=000102030405060708090a0b0c0d0e0f
job_split() {
	alternate "bfsplit -N 16 vs bfuniq" \
		split.bfsplit "bfsplit -N 16" "bfsplit -N 16 --shard-key $SHARD_KEY -o 'out/split-%02d' $corpus" \
		split.bfuniq "bfuniq -n $lines -p 1e-4" "bfuniq -n $lines -p 1e-4 $corpus >out/split.bfuniq.txt"
	within "split by key into 16 (bfsplit)" split.bfsplit split.bfuniq 1.5
	note "bfsplit -N 16 wrote $(cat out/split-* | wc -l | tr -d ' ') lines of $lines into 16 files of $(wc -l out/split-* | sort -n | sed -n '1p' | awk '{ print $1 }') to $(wc -l out/split-* | sort -n | sed -n '16p' | awk '{ print $1 }') lines."
	rm -f out/split-*
}

# The whole pipeline on one machine (tests/examples/bfdedup.py on a Dask
# scheduler and one single-threaded worker per CPU, on 127.0.0.1): map
# tasks bfsplit byte ranges into 16 partitions, reduce tasks bfuniq -f
# each, against one bfuniq over the same lines (target: within 3x, the
# price of the shuffle through files). Needs python3-distributed (make
# bench-scaleout installs it); each round starts from no states. Timed:
# the driver from its start to its exit (Python, importing Dask and
# connecting count: about half a second before the first task); not
# timed: starting the scheduler and workers, done once before the rounds,
# as a cluster that is already up (one bfuniq needs none).
dedup_cluster=""
start_dedup_cluster() {
	dedup_cluster=$dir/cluster
	rm -rf "$dedup_cluster" && mkdir -p "$dedup_cluster/config" || die "cannot create $dedup_cluster"
	export HOME="$dedup_cluster" DASK_CONFIG="$dedup_cluster/config"
	/usr/bin/python3 /usr/bin/dask scheduler --host 127.0.0.1 --port 0 --no-dashboard \
		--scheduler-file "$dedup_cluster/scheduler.json" --idle-timeout 600 \
		</dev/null >"$dedup_cluster/scheduler.log" 2>&1 &
	echo $! >"$dedup_cluster/pids"
	for w in $(seq 1 "$(nproc)"); do
		/usr/bin/python3 /usr/bin/dask worker --scheduler-file "$dedup_cluster/scheduler.json" \
			--host 127.0.0.1 --no-nanny --nthreads 1 --no-dashboard \
			--local-directory "$dedup_cluster/w$w" --death-timeout 60 \
			</dev/null >"$dedup_cluster/w$w.log" 2>&1 &
		echo $! >>"$dedup_cluster/pids"
	done
}
stop_dedup_cluster() {
	[ -n "$dedup_cluster" ] && [ -f "$dedup_cluster/pids" ] || return 0
	for pid in $(cat "$dedup_cluster/pids"); do kill "$pid" 2>/dev/null; done
}
job_dedup() {
	/usr/bin/python3 -c 'import distributed' 2>/dev/null ||
		die "the dedup job needs python3-distributed (make bench-scaleout installs it)"
	start_dedup_cluster
	trap 'stop_dedup_cluster; [ -z "$shm" ] || rm -rf "$shm"' EXIT
	alternate "Dask bfsplit+bfuniq vs bfuniq" \
		dedup.dask "bfdedup.py -N 16 (Dask, $(nproc) workers)" \
		"rm -rf out/dedup-states out/dedup && /usr/bin/python3 $root/tests/examples/bfdedup.py --scheduler-file $dedup_cluster/scheduler.json --workers $(nproc) -N 16 --shard-key $SHARD_KEY --state-dir out/dedup-states -o out/dedup --run bench $corpus -- -p 1e-4" \
		dedup.bfuniq "bfuniq -p 1e-4" "bfuniq -p 1e-4 $corpus >out/dedup.bfuniq.txt"
	within "de-duplicate on Dask, one machine" dedup.dask dedup.bfuniq 3
	note "bfdedup.py wrote $(cat out/dedup/part-* | wc -l | tr -d ' ') lines in 16 partitions; one bfuniq wrote $(count_lines out/dedup.bfuniq.txt)."
	stop_dedup_cluster
}

# A window of as many keys as the corpus has lines (window.h: G = 8
# generations, each a filter for 1/7 of it at P/8) against one filter of
# that capacity: a new key probes every live generation, where the plain
# filter probes one.
# The corpus as NDJSON ({"n":N,"url":LINE}) and as CSV (N,"LINE",x),
# derived once per corpus and cached: the same keys, in the formats of
# issue 25, against the way a user gets them there without --jsonl/--csv.
# What --jsonl costs beyond plain lines is parsing, which bfuniq does on
# every thread (keys cut in the work step, keyset_cut), so the ratio to
# plain lines falls with -j: on 2 busy cores, 1e6 lines, 7 rounds, it was
# 1.42x (0.108 s vs 0.076 s) and --csv 1.23x, where cutting keys on the
# reader thread alone had given 1.96-2.01x and 1.35x.
job_formats() {
	json=corpus-$lines.json
	csv=corpus-$lines.csv
	if ! newer "$json" "$corpus"; then
		awk '{ gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); printf "{\"n\":%d,\"url\":\"%s\"}\n", NR, $0 }' \
			"$corpus" >"$json" || die "cannot write $dir/$json"
	fi
	if ! newer "$csv" "$corpus"; then
		awk '{ gsub(/"/, "\"\""); printf "%d,\"%s\",x\n", NR, $0 }' "$corpus" >"$csv" ||
			die "cannot write $dir/$csv"
	fi
	cat "$json" "$csv" >/dev/null
	set -- formats.json "bfuniq --jsonl -k .url" "bfuniq -n $lines -p 1e-4 --jsonl -k .url $json >out/formats.json.txt" \
		formats.plain "bfuniq (the urls as lines)" "bfuniq -n $lines -p 1e-4 $corpus >out/formats.plain.txt" \
		formats.csv "bfuniq --csv -k 2" "bfuniq -n $lines -p 1e-4 --csv -k 2 $csv >out/formats.csv.txt" \
		formats.comma "bfuniq -t , -k 2" "bfuniq -n $lines -p 1e-4 -t , -k 2 $csv >out/formats.comma.txt"
	if [ "$have_jq" = yes ]; then
		set -- "$@" formats.jq "jq -r .url | bfuniq" \
			"jq -r .url $json | bfuniq -n $lines -p 1e-4 >out/formats.jq.txt"
	fi
	alternate "bfuniq --jsonl, --csv vs jq, -t ," "$@"
	if [ "$have_jq" = yes ]; then faster "de-duplicate NDJSON (--jsonl)" formats.json formats.jq 3; else
		skip_row "de-duplicate NDJSON (--jsonl)" formats.json "jq -r .url | bfuniq" ">= 3x faster" "jq not installed"; fi
	within "de-duplicate NDJSON (--jsonl)" formats.json formats.plain 2
	within "de-duplicate CSV (--csv)" formats.csv formats.comma 1.5
	note "bfuniq --jsonl -k .url wrote $(count_lines out/formats.json.txt) lines, bfuniq on the urls $(count_lines out/formats.plain.txt), --csv -k 2 $(count_lines out/formats.csv.txt)."
}

job_window() {
	alternate "bfuniq --window vs -n" \
		window.bfuniq "bfuniq --window ${lines}keys -p 1e-4" "bfuniq --window ${lines}keys -p 1e-4 $corpus >out/window.bfuniq.txt" \
		window.fixed "bfuniq -n $lines -p 1e-4" "bfuniq -n $lines -p 1e-4 $corpus >out/window.fixed.txt"
	within "de-duplicate in a window" window.bfuniq window.fixed 1.5
	heavier "de-duplicate in a window, memory" window.bfuniq window.fixed 2
}

job_grep() {
	bfbuild -n 100000 -p 1e-4 -o "patterns-$lines.bf" "$patterns" 2>>"$raw/setup.log" || die "bfbuild of $patterns failed"
	set -- grep.bfgrep "bfgrep -f (100k keys)" "bfgrep -f patterns-$lines.bf $corpus >out/grep.bfgrep.txt" \
		grep.grep "grep -F -x -f (100k lines)" "grep -F -x -f $patterns $corpus >out/grep.grep.txt"
	if [ "$have_bloom" = yes ]; then
		rm -f "patterns-$lines.bloom"
		{ bloom create -n 100000 -p 1e-4 "patterns-$lines.bloom" && bloom insert "patterns-$lines.bloom" <"$patterns"; } \
			2>>"$raw/setup.log" || die "bloom insert of $patterns failed"
		set -- "$@" grep.bloom "bloom check" "bloom check patterns-$lines.bloom <$corpus >out/grep.bloom.txt"
	fi
	alternate "bfgrep vs grep -F -x -f, bloom" "$@"
	faster "search 100k keys (bfgrep)" grep.bfgrep grep.grep 2
	if [ "$have_bloom" = yes ]; then faster "search 100k keys (bfgrep)" grep.bfgrep grep.bloom 15; else
		skip_row "search 100k keys (bfgrep)" grep.bfgrep "bloom check" ">= 15x faster" "DCSO bloom not installed"; fi
	msg="grep -F -x -f selected $(count_lines out/grep.grep.txt) lines, bfgrep $(count_lines out/grep.bfgrep.txt)"
	[ "$have_bloom" = yes ] && msg="$msg, bloom check $(count_lines out/grep.bloom.txt)"
	note "$msg (the excess over grep's are false positives at rate 1e-4)."
}

job_build() {
	if [ "$have_bloom" != yes ]; then
		alternate "bfbuild (bloom missing)" build.bfbuild "bfbuild -n $lines -p 1e-4" \
			"bfbuild -n $lines -p 1e-4 -o out/corpus.bf $corpus"
		skip_row "build a filter (bfbuild)" build.bfbuild "bloom insert" ">= 10x faster" "DCSO bloom not installed"
		return
	fi
	alternate "bfbuild vs bloom insert" \
		build.bfbuild "bfbuild -n $lines -p 1e-4" "bfbuild -n $lines -p 1e-4 -o out/corpus.bf $corpus" \
		build.bloom "bloom create + insert" \
		"bloom create -n $lines -p 1e-4 out/corpus.bloom && bloom insert out/corpus.bloom <$corpus"
	faster "build a filter (bfbuild)" build.bfbuild build.bloom 10
}

job_count() {
	alternate "bfcount vs sort -u | wc -l" \
		count.bfcount "bfcount" "bfcount $corpus" \
		count.sort "sort -u | wc -l" "sort -u $corpus | wc -l"
	faster "count distinct (bfcount)" count.bfcount count.sort 5
	est=$(cat out/count.bfcount.stdout) exact=$(tr -d ' ' <out/count.sort.stdout)
	note "bfcount estimated $est distinct lines; sort -u | wc -l counted $exact ($(awk -v e="$est" -v x="$exact" 'BEGIN { printf "%+.2f%%", 100 * (e - x) / x }'))."
}

# The top keys of a Zipf corpus (gen zipf: BENCH_LINES lines over 1e6
# distinct URLs, skew 1.0, seed 1, cached like the corpus): bftop against
# the pipeline issue 24 names and the awk idiom, which holds every
# distinct key, then sorts the counts. bftop's default summary must stay
# under 16 MB of peak memory (its summary is 4.7 MB).
job_top() {
	zipf=zipf-$lines.txt
	if ! [ -s "$zipf" ] || ! newer "$zipf" "$gen"; then
		{ "$gen" zipf "$lines" 1000000 1.0 1 >"$zipf.tmp" && mv "$zipf.tmp" "$zipf"; } ||
			{ rm -f "$zipf.tmp"; die "cannot write $dir/$zipf"; }
	fi
	cat "$zipf" >/dev/null
	alternate "bftop vs sort | uniq -c, awk" \
		top.bftop "bftop -n 10" "bftop -n 10 $zipf >out/top.bftop.txt" \
		top.sort "sort | uniq -c | sort -rn | head" "sort $zipf | uniq -c | sort -rn | head >out/top.sort.txt" \
		top.awk "awk '{ c[\$0]++ }' | sort -rn | head" \
		"awk '{ c[\$0]++ } END { for (k in c) print c[k], k }' $zipf | sort -rn | head >out/top.awk.txt"
	faster "top 10 keys (bftop)" top.bftop top.sort 10
	faster "top 10 keys (bftop)" top.bftop top.awk 3
	peak=$(peak_mib top.bftop)
	verdict=$(awk -v p="$peak" 'BEGIN { print (p != "-" && p <= 16 * 1e6 / 1048576) ? "PASS" : "MISS" }')
	row_values "top 10 keys, memory" "$(median top.bftop)" "$peak" "16 MB" - 15.3 "$peak MiB" "<= 16 MB" "$verdict"
	awk '{ print $1 }' out/top.sort.txt >out/top.sort.counts
	if awk '{ print $1 }' out/top.bftop.txt | cmp -s - out/top.sort.counts; then
		note "bftop's top 10 counts are exactly those of sort | uniq -c."
	else
		note "bftop's top 10 counts differ from those of sort | uniq -c (see out/top.*.txt)."
	fi
}

# The filter of bfuniq -n 1e9 -p 1e-4 is 2.75 GB (22.03 bits a key,
# README). floor.c times only the first touch of that much fresh memory:
# what any program holding such a filter pays here, before its first key.
# The job has a corpus of its own, BENCH_PIPE_LINES lines (1e8 unless
# said): issue 4 sets this target at 100M lines, where the cost per line,
# not the fixed cost of that first touch, decides.
job_pipe() {
	pipe_job="pipe limit (bfuniq -n 1e9), $pipe_lines lines"
	if ! make_corpus "$pipe_lines"; then
		skip_row "$pipe_job" pipe.bfuniq "cat | wc -l" "<= 1.5x its time" "no room for a $pipe_lines-line corpus"
		return
	fi
	pipe_corpus=corpus-$pipe_lines.txt
	cat "$pipe_corpus" >/dev/null
	alternate "pipe: cat | bfuniq vs cat | wc -l, $pipe_lines lines" \
		pipe.bfuniq "cat | bfuniq -n 1e9 -p 1e-4" "cat $pipe_corpus | bfuniq -n 1e9 -p 1e-4 >/dev/null" \
		pipe.wc "cat | wc -l" "cat $pipe_corpus | wc -l" \
		pipe.floor "floor: first touch of 2.75 GB" "./floor 2754000000"
	within "$pipe_job" pipe.bfuniq pipe.wc 1.5
	note "Pipe limit on $pipe_lines lines ($(wc -c <"$pipe_corpus" | tr -d ' ') bytes): touching the 2.75 GB of a fresh -n 1e9 filter alone (floor.c, no input) took $(median pipe.floor) s, median; cat | wc -l took $(median pipe.wc) s."
}

# as_fast JOB OURS BASE SHARE: OURS must reach SHARE of BASE's speed
# (BASE's time over OURS's at least SHARE), shown as "0.95x its speed".
as_fast() {
	o=$(median "$2") b=$(median "$3")
	verdict=$(awk -v o="$o" -v b="$b" -v t="$4" 'BEGIN { print (o > 0 && b / o >= t) ? "PASS" : "MISS" }')
	{ failed "$2" || failed "$3"; } && verdict=FAIL
	ratio=$(awk -v o="$o" -v b="$b" 'BEGIN { if (o > 0) printf "%.2fx its speed", b / o; else print "-" }')
	row "$1" "$2" "$(label "$3")" "$b" "$(peak_mib "$3")" "$ratio" ">= ${4}x its speed" "$verdict"
}

# Compressed logs (issue 25): bfuniq reading the corpus gzipped, against
# zcat piping it to bfuniq. The gzip file (default level, as logrotate
# writes) is made once and cached; both sides read it from the page cache.
job_gzip() {
	gz=$corpus.gz
	if ! { [ -s "$gz" ] && newer "$gz" "$corpus"; }; then
		t0=$(now_ns)
		{ gzip -c "$corpus" >"$gz.tmp" && mv "$gz.tmp" "$gz"; } || { rm -f "$gz.tmp"; die "cannot write $dir/$gz"; }
		say "gzip: $gz, $(wc -c <"$gz") bytes, compressed in $(seconds_since "$t0") s"
	fi
	cat "$gz" >/dev/null
	# one fixed key for both, so that they drop the same false positives
	key=000102030405060708090a0b0c0d0e0f
	alternate "bfuniq FILE.gz vs zcat | bfuniq" \
		gzip.bfuniq "bfuniq FILE.gz" "bfuniq -n $lines -p 1e-4 --key $key $gz >out/gzip.bfuniq.txt" \
		gzip.zcat "zcat FILE.gz | bfuniq" "zcat $gz | bfuniq -n $lines -p 1e-4 --key $key >out/gzip.zcat.txt"
	as_fast "de-duplicate gzip input" gzip.bfuniq gzip.zcat 0.9
	if cmp -s out/gzip.bfuniq.txt out/gzip.zcat.txt; then
		note "bfuniq FILE.gz wrote byte for byte what zcat FILE.gz | bfuniq wrote ($(count_lines out/gzip.bfuniq.txt) lines)."
	else
		note "bfuniq FILE.gz and zcat FILE.gz | bfuniq wrote different output with the same key: a bug."
	fi
}

percent() { awk -v f="$1" 'BEGIN { printf "%.2f%%", 100 * f }'; }
mib_of() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
json_field() { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" "$1"; }

# A dense filter of MiB mebibytes, about half its bits set, so that the
# format stores it raw (it stores 1 MiB chunks whose ones fraction lies in
# [0.3, 0.7]). Filling bits is what costs: keys x k must reach about
# ln 2 x bits, so the filter takes the most probes a key may make (-K 64)
# and the shortest distinct keys (decimal numbers from gen). In the blocked
# layout a block of 512 bits holding L keys has a bit still clear with
# probability (1 - 1/512)^(64 L); L is Poisson with mean keys/blocks, so
# half the bits are set at keys = blocks x ln 2 / (1 - (511/512)^64), about
# 5.89 keys a block: 98.8 million keys for 1 GiB. Cached until bfbuild
# changes.
make_dense() {
	dense=dense-${mib}MiB.bf
	[ -s "$dense" ] && [ -s "$dense.json" ] && newer "$dense" "$bin/bfbuild" && return 0
	keys=$(awk -v b="$bits" 'BEGIN { printf "%.0f", b / 512 * log(2) / (1 - (511 / 512) ^ 64) }')
	say "files: filling a $mib MiB filter with $keys keys (-K 64), once"
	t0=$(now_ns)
	"$gen" numbers "$keys" | bfbuild -m "$bits" -K 64 -n "$((keys + keys / 10))" -o "$dense" 2>>"$raw/setup.log" ||
		die "bfbuild of $dense failed"
	bfinfo --json "$dense" >"$dense.json" || die "bfinfo $dense failed"
	say "files: built in $(seconds_since "$t0") s, fill $(percent "$(json_field "$dense.json" fill)")"
}

# A realistic filter (sized for the corpus at 1e-4) holding just enough
# distinct URLs to set 1% of its bits: one trial build gives the fill f1
# of n1 keys; fill = 1 - exp(-c n), so n = n1 ln(0.99) / ln(1 - f1).
make_sparse() {
	n1=$((lines / 50))
	"$gen" keys 0 "$n1" 1 | bfbuild -n "$lines" -p 1e-4 -o sparse.bf 2>>"$raw/setup.log" || die "bfbuild of sparse.bf failed"
	bfinfo --json sparse.bf >sparse.json || die "bfinfo sparse.bf failed"
	n=$(awk -v n="$n1" -v f="$(json_field sparse.json fill)" 'BEGIN { printf "%.0f", n * log(0.99) / log(1 - f) }')
	"$gen" keys 0 "$n" 1 | bfbuild -n "$lines" -p 1e-4 -o sparse.bf 2>>"$raw/setup.log" || die "bfbuild of sparse.bf failed"
	bfinfo --json sparse.bf >sparse.json || die "bfinfo sparse.bf failed"
}

# gb_per_s SECONDS: the dense filter's bytes over SECONDS, in GB/s.
gb_per_s() { awk -v s="$1" -v n="$bytes" 'BEGIN { if (s > 0) printf "%.2f", n / s / 1e9; else print "inf" }'; }
at_least() { awk -v v="$1" -v t="$2" 'BEGIN { print (v != "inf" && v + 0 >= t) ? "PASS" : "MISS" }'; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", a - b }'; }

# dense_size: mib and bits of the dense filter, from BENCH_FILTER_MIB.
dense_size() {
	mib=${BENCH_FILTER_MIB:-}
	[ -n "$mib" ] || { if [ "$lines" -ge 10000000 ]; then mib=1024; else mib=128; fi; }
	case $mib in
	'' | *[!0-9]* | 0) die "BENCH_FILTER_MIB=$mib: want a whole number of MiB, 1 or more" ;;
	esac
	bits=$((mib * 8388608))
}

job_files() {
	dense_size
	make_dense
	bytes=$(json_field "$dense.json" bytes_in_memory)
	shm=/dev/shm/bftools-bench
	mkdir -p "$shm" || die "cannot create $shm"
	# Every writer starts from no file, and pays for removing the last
	# round's: a save writes a new file beside the old one and renames it
	# over at the end (never a partial file), so it needs fresh page cache
	# for all of it, while dd truncates the old file and reuses its pages
	# at once; on this kind of VM fresh memory costs more than the disk.
	alternate "files: load and save $mib MiB" \
		files.load "load: bfgrep -c -f, no input" "bfgrep -c -f $dense /dev/null" \
		files.cat "cat (page cache)" "cat $dense >/dev/null" \
		files.save "load + save: bfbuild -f -o" "rm -f out/save.bf; bfbuild -f $dense -o out/save.bf </dev/null" \
		files.dd "dd conv=fsync (disk)" "rm -f out/dd.bf; dd if=$dense of=out/dd.bf bs=1M conv=fsync 2>/dev/null" \
		files.shm "load + save to tmpfs" "rm -f $shm/save.bf; bfbuild -f $dense -o $shm/save.bf </dev/null"
	rm -rf "$shm"
	shm=""
	load=$(median files.load)
	save=$(minus "$(median files.save)" "$load")
	shmsave=$(minus "$(median files.shm)" "$load")
	rate=$(gb_per_s "$load")
	row_values "load a dense $mib MiB filter" "$load" "$(peak_mib files.load)" "$(label files.cat)" \
		"$(median files.cat)" "$(peak_mib files.cat)" "$rate GB/s" ">= 1 GB/s" "$(at_least "$rate" 1)"
	rate=$(gb_per_s "$save")
	row_values "save it, to disk (fsync)" "$save" "$(peak_mib files.save)" "$(label files.dd)" \
		"$(median files.dd)" "$(peak_mib files.dd)" "$rate GB/s" ">= 1 GB/s" "$(at_least "$rate" 1)"
	rate=$(gb_per_s "$shmsave")
	row_values "save it, to tmpfs" "$shmsave" "$(peak_mib files.shm)" - - - "$rate GB/s" ">= 1 GB/s" "$(at_least "$rate" 1)"
	note "dense filter: $bits bits, k = 64, fill $(percent "$(json_field "$dense.json" fill)"), $(json_field "$dense.json" bytes_on_disk) bytes on disk; save times are (load + save) - load, medians."
	make_sparse
	mem=$(json_field sparse.json bytes_in_memory) disk=$(json_field sparse.json bytes_on_disk)
	shrink=$(awk -v m="$mem" -v d="$disk" 'BEGIN { printf "%.1f", m / d }')
	row_values "filter 1% full: disk vs memory" - "$(mib_of "$disk")" "in memory" - "$(mib_of "$mem")" \
		"${shrink}x smaller" ">= 5x smaller" "$(at_least "$shrink" 5)"
	note "sparse filter: bfbuild -n $lines -p 1e-4, fill $(percent "$(json_field sparse.json fill)"): $mem bytes in memory, $disk on disk."
}

# ------------------------------------------------------- sparse (issue 33)

# build_before: the programs of BENCH_BEFORE into $before (BENCH_DIR/
# before-REF/cmd), built once from `git archive` of that commit and cached;
# before="" (rows without a peer) where it cannot be had.
build_before() {
	ref=${BENCH_BEFORE:-8528508}
	before=""
	[ "$ref" = none ] && return 0
	sha=$(git -C "$root" rev-parse --short "$ref^{commit}" 2>/dev/null) ||
		{ say "sparse: no commit $ref here: rows without the build before"; return 0; }
	tree=$dir/before-$sha
	if [ ! -x "$tree/cmd/bfgrep" ]; then
		say "sparse: building $ref ($sha) into $tree, once"
		rm -rf "$tree.tmp" && mkdir -p "$tree.tmp" &&
			git -C "$root" archive "$sha" | tar -x -C "$tree.tmp" &&
			make -C "$tree.tmp" -j2 all >"$raw/before-build.log" 2>&1 &&
			mv "$tree.tmp" "$tree" ||
			{ rm -rf "$tree.tmp"; say "sparse: cannot build $ref (see $raw/before-build.log)"; return 0; }
	fi
	before=$tree/cmd before_name="before ($sha)"
}

# meets NAME MAX-S MAX-MB: PASS when NAME's median wall time is at most
# MAX-S seconds and its peak at most MAX-MB megabytes (10^6 bytes; - for
# no limit), else MISS; FAIL when a run failed.
meets() {
	failed "$1" && { echo FAIL; return; }
	awk -v s="$(median "$1")" -v m="$(peak_mib "$1")" -v ts="$2" -v tm="$3" 'BEGIN {
		ok = 1
		if (ts != "-" && s > ts + 0) ok = 0
		if (tm != "-" && (m == "-" || m * 1048576 > tm * 1e6)) ok = 0
		print ok ? "PASS" : "MISS" }'
}

# sparse_row TITLE NAME PEER MAX-S MAX-MB TARGET: a row judged by meets,
# beside PEER (the same command of the build before; "" for none), the
# ratio its time over ours.
sparse_row() {
	if [ -z "$3" ]; then
		row "$1" "$2" - - - - "$6" "$(meets "$2" "$4" "$5")"
		return
	fi
	ratio=$(awk -v o="$(median "$2")" -v b="$(median "$3")" 'BEGIN { if (o > 0) printf "%.1fx faster", b / o; else print "-" }')
	row "$1" "$2" "$(label "$3")" "$(median "$3")" "$(peak_mib "$3")" "$ratio" "$6" "$(meets "$2" "$4" "$5")"
}

# sparse_pair TITLE NAME LABEL CMD: CMD with our programs, and with the
# build before's when there is one, alternating: its bf* names rewritten
# to before's paths, and its template the one before made. $peer names
# the before side, or is empty.
sparse_pair() {
	peer=""
	if [ -z "$before" ]; then
		alternate "$1" "$2" "$3" "$4"
		return
	fi
	peer=$2.before
	alternate "$1" "$2" "$3" "$4" "$peer" "$before_name: $3" "$(printf '%s\n' "$4" |
		sed -e "s#\(^\|[|] *\)\(bf[a-z]*\) #\1$before/\2 #g" -e 's#sparse-tpl\.bf#sparse-tpl-before.bf#g')"
}

# The rows of issue 33: a filter sized for 1e9 keys costs what it holds.
# Each template is made once (outside the timings) by its own build, as a
# user of that build would have it.
job_sparse() {
	build_before
	bfbuild -n 1e9 -p 1e-4 -o sparse-tpl.bf </dev/null || die "bfbuild of sparse-tpl.bf failed"
	[ -z "$before" ] || "$before/bfbuild" -n 1e9 -p 1e-4 -o sparse-tpl-before.bf </dev/null ||
		die "the build before could not make its template"
	sparse_pair "sparse: empty -n 1e9 template" sparse.create "bfbuild -n 1e9 -p 1e-4 -o tpl.bf </dev/null" \
		"bfbuild -n 1e9 -p 1e-4 -o out/tpl.bf </dev/null"
	sparse_row "empty -n 1e9 -p 1e-4 template: create" sparse.create "$peer" 0.2 50 "<= 0.2 s, 50 MB"
	sparse_pair "sparse: one lookup in the template" sparse.grep "echo x | bfgrep -f tpl.bf" \
		"echo x | bfgrep -f sparse-tpl.bf >out/sparse.grep.txt"
	sparse_row "echo x | bfgrep -f it" sparse.grep "$peer" 0.1 50 "<= 0.1 s, 50 MB"
	sparse_pair "sparse: bfinfo of the template" sparse.info "bfinfo tpl.bf" "bfinfo sparse-tpl.bf >out/sparse.info.txt"
	sparse_row "bfinfo it" sparse.info "$peer" 0.05 - "<= 0.05 s"
	for k in 1000 100000 10000000; do
		"$gen" numbers "$k" >"sparse-keys-$k.txt" || die "cannot write sparse-keys-$k.txt"
		# a page (4 KiB) a key at most, over the 64 MB a run of 1,000 keys may take
		limit=$(awk -v k="$k" 'BEGIN { printf "%.0f", 64 + k * 4096 / 1e6 }')
		sparse_pair "sparse: $k keys into -n 1e9" "sparse.k$k" "bfuniq -n 1e9 -p 1e-4, $k keys" \
			"bfuniq -n 1e9 -p 1e-4 sparse-keys-$k.txt >out/sparse.k$k.txt"
		sparse_row "$k keys into -n 1e9: memory" "sparse.k$k" "$peer" - "$limit" "<= 64 MB + 4 KiB a key"
	done
	sparse_pipe
	sparse_dense
}

# The pipe-limit job of issue 4 on BENCH_SPARSE_PIPE_LINES lines: no slower
# than the build before, within 5%.
sparse_pipe() {
	title="pipe limit (bfuniq -n 1e9), $sparse_pipe_lines lines"
	if ! make_corpus "$sparse_pipe_lines"; then
		skip_row "$title" sparse.pipe - "<= 1.05x the time before" "no room for the corpus"
		return
	fi
	cat "corpus-$sparse_pipe_lines.txt" >/dev/null
	sparse_pair "sparse: pipe limit, $sparse_pipe_lines lines" sparse.pipe "cat | bfuniq -n 1e9 -p 1e-4" \
		"cat corpus-$sparse_pipe_lines.txt | bfuniq -n 1e9 -p 1e-4 >/dev/null"
	if [ -z "$peer" ]; then
		skip_row "$title" sparse.pipe - "<= 1.05x the time before" "no build before"
		return
	fi
	within "$title" sparse.pipe "$peer" 1.05
	freed_window
}

# What the memory the last command freed costs the next, by how soon it is
# touched (floor.c --after): 2.75 GB held and freed by one floor, then
# backed by the next after 0, 300 and 1,000 ms, three times each. Where
# the host takes freed memory back (a guest's free page reporting), late
# touches pay its faults: the build before backs its array in its first
# 0.05 s, ours once the table holds 672,000 blocks, about 0.3 s into a
# pipe, so back to back the pipe-limit row weighs that too.
freed_window() {
	printf '%-36s' "sparse: memory freed, touched later" >&2
	for wait_ms in 0 300 1000; do
		: >"$raw/freed.$wait_ms.runs"	# nanoseconds a line, as measure writes them, for median
		for _ in 1 2 3; do
			./floor 2754000000 && ./floor --after "$wait_ms" 2754000000 >>"$raw/freed.$wait_ms.runs" ||
				{ say "floor --after $wait_ms failed"; printf '\n' >&2; return; }
			printf '.' >&2
		done
	done
	printf '\n' >&2
	note "Memory the last command freed (2.75 GB), backed again on two threads: $(median freed.0) s right after, $(median freed.300) s 300 ms later, $(median freed.1000) s a second later (floor.c --after, medians of three)."
}


# Loading the dense filter of the files job: at least twice the speed before.
sparse_dense() {
	dense_size
	make_dense
	sparse_pair "sparse: load a dense $mib MiB filter" sparse.dense "bfgrep -c -f dense, no input" \
		"bfgrep -c -f $dense /dev/null"
	if [ -z "$peer" ]; then
		skip_row "load a dense $mib MiB filter" sparse.dense - ">= 2x the speed before" "no build before"
		return
	fi
	faster "load a dense $mib MiB filter" sparse.dense "$peer" 2
	dense_floor
}

# The least a load of that file costs here (floor.c --read: its bytes into
# fresh memory on the load's threads, nothing else, not even a CRC), after
# as many runs again of ours and the build before's, alternating: more
# than any load that checks what it reads could gain over the build
# before, beside the 2x asked.
dense_floor() {
	threads=$(nproc)	# a load's threads: one a core, up to 16 (pipeline.h)
	[ "$threads" -le 16 ] || threads=16
	alternate "sparse: dense load's floor" sparse.dense.floor "floor: read on $threads threads" \
		"./floor --read $dense $threads" sparse.dense.again "bfgrep -c -f dense, no input" \
		"bfgrep -c -f $dense /dev/null" sparse.dense.before.again "$before_name: bfgrep -c -f dense" \
		"$before/bfgrep -c -f $dense /dev/null"
	note "Dense load: $(median sparse.dense.floor) s to read the $mib MiB file into fresh memory on $threads threads and nothing else, no CRC (floor.c --read), $(median sparse.dense.again) s ours, $(median sparse.dense.before.again) s $before_name, medians of runs alternating the three: the build before over the floor is $(awk -v b="$(median sparse.dense.before.again)" -v f="$(median sparse.dense.floor)" 'BEGIN { printf "%.2f", b / f }')x, more than any load that checks what it reads could gain here."
}

# --------------------------------------------------------------- the report

machine() {
	mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
	thp=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
	echo "machine: $(nproc) cores ($model), $mem RAM, $(uname -sr), transparent huge pages: ${thp:-unknown}"
	tools="bftools $(bfuniq -V 2>/dev/null | head -n 1 | awk '{ print $NF }'), $(sort --version | head -n 1)"
	tools="$tools, $(grep -V | head -n 1)"
	[ "$have_gawk" = yes ] && tools="$tools, $(gawk --version | head -n 1 | cut -d, -f1)"
	[ "$have_bloom" = yes ] && tools="$tools, DCSO bloom $(bloom --version | awk '{ print $NF }')"
	echo "tools: $tools"
	echo "load average (1 min) at start $load_at_start, at end $(cut -d' ' -f1 /proc/loadavg)"
	echo "corpus: $lines lines, $(wc -c <"$corpus" | tr -d ' ') bytes (tests/bench/gen.c), $runs rounds per job, alternating; wall-time medians, peak RSS from /usr/bin/time; LC_ALL=C"
}

# The table: job, ours, baseline, ratio, target, result, peak memory.
table_text() {
	awk -F '\t' 'BEGIN { OFS = "\t"; print "job", "ours s", "baseline", "base s", "ratio", "target", "result", "MiB ours", "MiB base" }
		{ print $1, $2, $4, $5, $7, $8, $9, $3, $6 }' "$raw/rows.tsv" |
	awk -F '\t' '{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n = NF }
		END { for (r = 1; r <= NR; r++) { line = ""
			for (i = 1; i <= n; i++) line = line sprintf(i == 1 || i == 3 || i == 6 || i == 7 ? "%-*s  " : "%*s  ", w[i], c[r, i])
			sub(/ +$/, "", line); print line
			if (r == 1) { s = line; gsub(/./, "-", s); print s } } }'
}

table_markdown() {
	echo "| job | ours (s) | baseline | baseline (s) | ratio | target | result | peak MiB ours | peak MiB baseline |"
	echo "|---|--:|---|--:|---|---|---|--:|--:|"
	awk -F '\t' '{ gsub(/\|/, "\\|"); printf "| %s | %s | %s | %s | %s | %s | **%s** | %s | %s |\n", $1, $2, $4, $5, $7, $8, $9, $3, $6 }' \
		"$raw/rows.tsv" | sed 's/>= /≥ /g; s/<= /≤ /g; s/\([0-9]\)x /\1× /g'
}

# Every command: label, wall-time min/median/max, CPU median, peak, runs.
measurements() {
	while read -r name; do
		printf '%s\t%s\t%s\t%s\n' "$(label "$name")" "$(spread "$name")" "$(peak_mib "$name")" \
			"$(awk '$3 > 1 { bad++ } END { print NR (bad ? " (" bad " failed)" : "") }' "$raw/$name.runs")"
	done <"$log"
}

commands() {
	while read -r name; do
		printf '%s\t%s\n' "$(label "$name")" "$(cat "$raw/$name.cmd")"
	done <"$log"
}

invocation() {
	cmd="make bench"
	[ -n "${BENCH_RUNS:-}" ] && cmd="BENCH_RUNS=$BENCH_RUNS $cmd"
	[ -n "${BENCH_LINES:-}" ] && cmd="BENCH_LINES=$BENCH_LINES $cmd"
	[ -n "${BENCH_PIPE_LINES:-}" ] && cmd="BENCH_PIPE_LINES=$BENCH_PIPE_LINES $cmd"
	[ -n "${BENCH_JOBS:-}" ] && cmd="BENCH_JOBS='$BENCH_JOBS' $cmd"
	echo "$cmd"
}

report_text() {
	echo
	machine
	echo
	table_text
	echo
	[ -f "$raw/notes" ] && sed 's/^/- /' "$raw/notes" && echo
	echo "every command: wall s min / median / max, CPU s (user+sys) median, peak MiB, runs:"
	measurements | awk -F '\t' '{ split($2, s, " "); printf "  %-32s %7s %7s %7s  cpu %7s  %8s MiB  %s\n", $1, s[1], s[2], s[3], s[4], $3, $4 }'
	echo
	echo "commands (in $dir, LC_ALL=C, bftools from $bin):"
	commands | awk -F '\t' '{ printf "  %-32s %s\n", $1 ":", $2 }'
}

report_markdown() {
	echo "Measured with \`$(invocation)\` (same as \`sh tests/bench/run.sh\`), $(date -u '+%Y-%m-%d %H:%M UTC'):"
	echo
	machine | sed 's/^/- /'
	echo
	table_markdown
	echo
	[ -f "$raw/notes" ] && sed 's/^/- /' "$raw/notes" && echo
	echo "Every command (wall-time seconds; CPU = user + system, over the whole pipeline):"
	echo
	echo "| command | min | median | max | CPU median | peak MiB | runs |"
	echo "|---|--:|--:|--:|--:|--:|--:|"
	measurements | awk -F '\t' '{ split($2, s, " "); gsub(/\|/, "\\|", $1); printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, s[1], s[2], s[3], s[4], $3, $4 }'
	echo
	echo "Commands, run in the bench directory with \`LC_ALL=C\` (speed-up = baseline median / ours;"
	echo "memory = ours peak / baseline peak; save = (load + save) - load):"
	echo
	commands | awk -F '\t' '{ printf "- %s: `%s`\n", $1, $2 }'
}

# ------------------------------------------------------------------- main

started=$(now_ns)
programs() { cksum "$bin"/bfbuild "$bin"/bfgrep "$bin"/bfuniq "$bin"/bfcount "$bin"/bfmerge "$bin"/bfinfo "$bin"/bftop "$bin"/bfsplit; }
build_at_start=$(programs)
say "$lines lines, $runs rounds, jobs: $jobs; work directory $dir"
for job in $jobs; do
	"job_$job"
done
[ -f "$raw/rows.tsv" ] || die "no job ran"
if [ "$(programs)" != "$build_at_start" ]; then
	say "warning: the programs in $bin changed during the run: its numbers mix two builds"
	note "The programs in cmd/ were rebuilt during this run: its numbers mix two builds."
fi
report_text
report_markdown >"$dir/results.md"
echo
echo "Markdown: $dir/results.md; whole run $(seconds_since "$started") s"
