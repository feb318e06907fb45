#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh [HARNESS...] - make fuzz: build each fuzz harness (format, lines,
# numparse; all by default) with clang's libFuzzer under ASan and UBSan and
# run it for FUZZ_SECONDS (default 60), all at once, starting from its
# committed corpus (tests/fuzz/corpus/<harness>/). New inputs go to a
# scratch corpus, never the committed one; a crash is saved as
# crash-<sha1> beside it. Then one line per harness:
#   fuzz format: 41210 runs, cov 562, ft 1408, corpus 214, no findings
# Exit 1 if any harness found something (its log is printed), 2 when the
# fuzzer cannot be built.
#
# Environment:
#   FUZZ_SECONDS  seconds per harness (default 60)
#   FUZZ_WORK     scratch directory (default build/fuzz): <harness>/corpus,
#                 <harness>/crash-*, <harness>.log
#   FUZZ_CC       clang to use (default clang)
#   FUZZ_FLAGS    extra libFuzzer flags, e.g. "-max_len=65536"
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
harnesses=${*:-format lines numparse}
flags="-std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
-D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I$top/lib -pthread \
-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"

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

for h in $harnesses; do
	[ -f "$here/fuzz_$h.c" ] || { echo "fuzz: no harness '$h'" >&2; exit 2; }
	echo "fuzz: building $h"
	# shellcheck disable=SC2086 # $flags is a list of words
	$clang $flags -o "$work/fuzz_$h" "$here/fuzz_$h.c" "$top"/lib/*.c -lz -lm || exit 2
done

echo "fuzz: running $harnesses for ${seconds}s each"
for h in $harnesses; do
	mkdir -p "$work/$h/corpus"
	# shellcheck disable=SC2086 # FUZZ_FLAGS is a list of words
	"$work/fuzz_$h" -max_total_time="$seconds" -print_final_stats=1 \
		-artifact_prefix="$work/$h/" ${FUZZ_FLAGS:-} \
		"$work/$h/corpus" "$here/corpus/$h" >"$work/$h.log" 2>&1 &
done
wait

# report NAME: the numbers from libFuzzer's log, and what it found
report() {
	log="$work/$1.log"
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1)
	cov=$(printf '%s\n' "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(printf '%s\n' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(printf '%s\n' "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
	found=$(find "$work/$1" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' \
		-o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
	if [ "$found" -eq 0 ] && grep -q 'Done [0-9]* runs' "$log"; then
		echo "fuzz $1: ${runs:-?} runs, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}, no findings"
		return 0
	fi
	echo "fuzz $1: ${runs:-?} runs, cov ${cov:-?}, ft ${ft:-?}: FOUND $found (inputs in $work/$1/)"
	grep -v -E '^#[0-9]+' "$log" | tail -n 40 | sed 's/^/  /'
	return 1
}

status=0
for h in $harnesses; do
	report "$h" || status=1
done
exit $status
