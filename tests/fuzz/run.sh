#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh [HARNESS...] - make fuzz and make fuzz-long: build each fuzz
# harness (tests/fuzz/fuzz_<harness>.c; all of them by default) with
# clang's libFuzzer under ASan and UBSan, and run it for FUZZ_SECONDS,
# FUZZ_JOBS harnesses at a time, starting from its committed corpus
# (tests/fuzz/corpus/<harness>/). New inputs go to a scratch corpus, never
# the committed one; a crash is saved as crash-<sha1> beside it. Then one
# line per harness, from libFuzzer's final statistics:
#   fuzz format: 4121000 runs in 600 s (6868/s), cov 562, ft 1408, corpus 214, no findings
# Exit 1 if any harness found something (its log is printed), 2 when the
# fuzzer cannot be built.
#
# With FUZZ_MERGE=1 (make fuzz-long), each committed corpus is then
# minimised with what the run found: libFuzzer's -merge=1 keeps the
# smallest set of inputs that reaches every feature of both, and that set
# replaces tests/fuzz/corpus/<harness>/ (regression inputs, crash-*, and
# the hand-made crafted-* that tests/damage.bats uses, are always kept).
# Commit the result.
#
# Environment:
#   FUZZ_SECONDS  seconds per harness (default 60)
#   FUZZ_JOBS     harnesses run at once (default: all)
#   FUZZ_MERGE    1: minimise the committed corpora with the new inputs
#   FUZZ_WORK     scratch directory (default build/fuzz): <harness>/corpus,
#                 <harness>/crash-*, <harness>.log, lib/ (objects)
#   FUZZ_CC       clang to use (default clang)
#   FUZZ_FLAGS    extra libFuzzer flags, e.g. "-max_len=65536"
#   FUZZ_MERGE_FLAGS  flags for the merge; by default "-use_counters=0"
#                 for formats (keep inputs for new edges only, not for new
#                 hit counts of an edge: 146 inputs for its 520 edges,
#                 where counts kept 856) and none for the others
#   FUZZ_NICE     run the fuzzers under nice -n FUZZ_NICE (default 0)
#
# The library is built with -DBFTOOLS_IO_BUFFER=65536 (lib/base/iosize.h):
# the same results with 64 KiB buffers instead of 1 MiB ones, which under
# ASan is most of what a small load costs; and with
# -DBFTOOLS_FILTER_HEAP=1048576 (lib/sets/filter.c): bit arrays up to 1 MiB on
# the heap, where ASan's redzones catch a step past their end, instead of
# in mappings.
#
# A finding is reproduced, with any compiler, by
#   sh tests/fuzz/replay.sh build && build/tests/fuzz/replay/replay_<harness> FILE
# and once fixed belongs in tests/fuzz/corpus/<harness>/ as a regression
# input (keep the crash-<sha1> name).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
seconds=${FUZZ_SECONDS:-60}
work=${FUZZ_WORK:-$top/build/fuzz}
case $work in /*) ;; *) work="$top/$work" ;; esac
clang=${FUZZ_CC:-clang}
all=$(cd "$here" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')
harnesses=${*:-$all}
jobs=${FUZZ_JOBS:-0}
# every layer of lib/ (ARCHITECTURE.md): headers go by their bare names
libinc=$(for d in "$top"/lib "$top"/lib/*/; do printf -- "-I%s " "${d%/}"; done)
flags="-std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
-D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DBFTOOLS_IO_BUFFER=65536 -DBFTOOLS_FILTER_HEAP=1048576 $libinc -pthread \
-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"

have_fuzzer() {
	printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' |
		"$clang" -x c -fsanitize=fuzzer,address,undefined - -o "$work/.probe" >/dev/null 2>&1
}

# Debian ships libFuzzer's runtime apart from clang: libclang-rt-<major>-dev.
install_fuzzer() {
	major=$("$clang" --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -n 1)
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	command -v apt-get >/dev/null 2>&1 && [ -n "$major" ] || return 1
	echo "fuzz: installing libclang-rt-$major-dev (clang's libFuzzer runtime)"
	DEBIAN_FRONTEND=noninteractive $sudo apt-get -qq install -y "libclang-rt-$major-dev" >/dev/null 2>&1 ||
		{ $sudo apt-get -qq update >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive $sudo apt-get -qq install -y "libclang-rt-$major-dev" >/dev/null 2>&1; }
}

# The library once, instrumented for coverage but without libFuzzer's main;
# objects are reused while sources, headers and flags are unchanged.
build_lib() {
	mkdir -p "$work/lib" || return 1
	if [ "$(cat "$work/lib/flags" 2>/dev/null)" != "$clang $flags" ]; then
		rm -f "$work"/lib/*.o
		printf '%s\n' "$clang $flags" >"$work/lib/flags"
	fi
	for src in "$top"/lib/*/*.c; do
		obj="$work/lib/$(basename "$src" .c).o"
		[ -f "$obj" ] && [ -z "$(find "$src" "$top"/lib/*.h "$top"/lib/*/*.h -newer "$obj" 2>/dev/null | head -n 1)" ] &&
			continue
		rm -f "$obj"
		# shellcheck disable=SC2086 # $flags is a list of words
		$clang $flags -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
	done
	wait
	for src in "$top"/lib/*/*.c; do
		[ -f "$work/lib/$(basename "$src" .c).o" ] || return 1
	done
}

mkdir -p "$work" || exit 2
if ! command -v "$clang" >/dev/null 2>&1; then
	echo "fuzz: $clang not found (install clang, or set FUZZ_CC)" >&2
	exit 2
fi
if ! have_fuzzer && ! { install_fuzzer && have_fuzzer; }; then
	echo "fuzz: $clang cannot link -fsanitize=fuzzer (install clang's libFuzzer runtime)" >&2
	exit 2
fi
rm -f "$work/.probe"

echo "fuzz: building $(echo $harnesses)"
build_lib || exit 2
for h in $harnesses; do
	[ -f "$here/fuzz_$h.c" ] || { echo "fuzz: no harness '$h'" >&2; exit 2; }
	# shellcheck disable=SC2086 # $flags is a list of words
	$clang $flags -fsanitize=fuzzer -o "$work/fuzz_$h" "$here/fuzz_$h.c" "$work"/lib/*.o -lz -ldeflate -lzstd -llzma -lbz2 -llz4 -lm ||
		exit 2
done

# fuzz NAME: one harness for the time given, in the background
fuzz() {
	mkdir -p "$work/$1/corpus" "$here/corpus/$1"
	# shellcheck disable=SC2086 # FUZZ_FLAGS is a list of words
	nice -n "${FUZZ_NICE:-0}" "$work/fuzz_$1" -max_total_time="$seconds" -print_final_stats=1 \
		-artifact_prefix="$work/$1/" ${FUZZ_FLAGS:-} \
		"$work/$1/corpus" "$here/corpus/$1" >"$work/$1.log" 2>&1 &
}

echo "fuzz: running $(echo $harnesses) for ${seconds}s each"
running=0
for h in $harnesses; do
	if [ "$jobs" -gt 0 ] && [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
	fuzz "$h"
	running=$((running + 1))
done
wait

# merge NAME: the committed corpus minimised together with the new inputs
merge() {
	new="$work/$1/merged"
	rm -rf "$new" && mkdir -p "$new" || return 1
	flags=${FUZZ_MERGE_FLAGS-}
	[ -z "${FUZZ_MERGE_FLAGS+set}" ] && [ "$1" = formats ] && flags=-use_counters=0
	# shellcheck disable=SC2086 # the flags are a list of words
	"$work/fuzz_$1" -merge=1 $flags "$new" "$here/corpus/$1" "$work/$1/corpus" >"$work/$1.merge.log" 2>&1 ||
		return 1
	# regression inputs, and the hand-made files tests use by name, stay
	find "$here/corpus/$1" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'crafted-*' \) \
		-exec cp {} "$new/" \;
	rm -rf "$here/corpus/$1" && mv "$new" "$here/corpus/$1" || return 1
	echo "fuzz $1: corpus merged: $(ls "$here/corpus/$1" | wc -l) inputs," \
		"$(du -sk "$here/corpus/$1" | cut -f1) KiB"
}

# report NAME: the numbers from libFuzzer's log, and what it found
report() {
	log="$work/$1.log"
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1)
	cov=$(printf '%s\n' "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(printf '%s\n' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(printf '%s\n' "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
	found=$(find "$work/$1" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' \
		-o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
	if [ "$found" -eq 0 ] && grep -q 'Done [0-9]* runs' "$log"; then
		echo "fuzz $1: ${runs:-?} runs in ${seconds} s (${rate:-?}/s), cov ${cov:-?}, ft ${ft:-?}," \
			"corpus ${corp:-?}, no findings"
		return 0
	fi
	echo "fuzz $1: ${runs:-?} runs, cov ${cov:-?}, ft ${ft:-?}: FOUND $found (inputs in $work/$1/)"
	grep -v -E '^#[0-9]+' "$log" | tail -n 40 | sed 's/^/  /'
	return 1
}

status=0
for h in $harnesses; do
	if report "$h"; then
		[ "${FUZZ_MERGE:-0}" = 1 ] && { merge "$h" || { echo "fuzz $h: merge failed"; status=1; }; }
	else
		status=1
	fi
done
exit $status
