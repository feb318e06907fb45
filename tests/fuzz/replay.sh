#!/bin/sh
# SPDX-License-Identifier: MIT
# replay.sh BUILD_DIR - replay the fuzz corpora without libFuzzer, for
# make check: build each harness with replay.c into
# BUILD_DIR/tests/fuzz/replay/ and feed it every file of its corpus
# (tests/fuzz/corpus/<harness>/), then print one TAP line per harness:
#   ok 1 - fuzz replay: format (37 inputs)
# A harness aborts on a broken invariant, so a crash, a sanitizer report or
# a failed build is "not ok", with the end of its log as "# " lines.
#
# Environment:
#   CC             compiler (default cc); any C11 compiler with pthreads
#   FUZZ_CFLAGS    optimisation and debug flags (default -O1 -g)
#   FUZZ_SANITIZE  added to compiling and linking, e.g.
#                  "-fsanitize=address,undefined -fno-sanitize-recover=all"
#
# The library is compiled from lib/*.c here, with the project's standard
# and warnings, so the flags above apply to it too. Objects are reused while
# the sources, the headers and the flags are unchanged. Exit 1 if any
# harness failed.
set -u
build=${1:?usage: replay.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
case $build in /*) ;; *) build="$top/$build" ;; esac
out="$build/tests/fuzz/replay"
CC=${CC:-cc}
# every layer of lib/ (ARCHITECTURE.md): headers go by their bare names
libinc=$(for d in "$top"/lib "$top"/lib/*/; do printf -- "-I%s " "${d%/}"; done)
flags="-std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
-D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $libinc -pthread \
${FUZZ_CFLAGS:--O1 -g} ${FUZZ_SANITIZE:-}"
harnesses=$(cd "$here" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')

mkdir -p "$out/lib" || exit 1
# Different flags make different objects: start over when they change.
if [ "$(cat "$out/flags" 2>/dev/null)" != "$CC $flags" ]; then
	rm -f "$out"/*.o "$out"/lib/*.o "$out"/replay_*
	printf '%s\n' "$CC $flags" >"$out/flags"
fi

# stale OBJ SRC HEADERS...: whether OBJ is missing or older than any source
stale() {
	obj=$1
	shift
	[ ! -f "$obj" ] || [ -n "$(find "$@" -newer "$obj" 2>/dev/null | head -n 1)" ]
}

# compile SRC OBJ HEADERS...: in the background, the compiler's words in OBJ.log
compile() {
	src=$1 obj=$2
	shift 2
	stale "$obj" "$src" "$@" || return 0
	rm -f "$obj"
	# shellcheck disable=SC2086 # $flags is a list of words
	$CC $flags -c "$src" -o "$obj" >"$obj.log" 2>&1 &
}

for src in "$top"/lib/*/*.c; do
	name=$(basename "$src" .c)
	compile "$src" "$out/lib/$name.o" "$top"/lib/*.h "$top"/lib/*/*.h
done
for h in $harnesses replay; do
	src="$here/fuzz_$h.c"
	[ "$h" = replay ] && src="$here/replay.c"
	compile "$src" "$out/$h.o" "$top"/lib/*.h "$top"/lib/*/*.h "$here"/*.h
done
wait

n=0
status=0
for h in $harnesses; do
	n=$((n + 1))
	bin="$out/replay_$h"
	log="$out/$h.log"
	: >"$log"
	for o in "$out"/lib/*.o.log "$out/$h.o.log" "$out/replay.o.log"; do
		cat "$o" >>"$log" 2>/dev/null
	done
	# shellcheck disable=SC2086
	if ! $CC $flags -o "$bin" "$out/$h.o" "$out/replay.o" "$out"/lib/*.o -lz -ldeflate -lzstd -llzma -lbz2 -llz4 -lm >>"$log" 2>&1; then
		echo "not ok $n - fuzz replay: $h (build failed)"
		sed 's/^/# /' "$log" | tail -n 20
		status=1
		continue
	fi
	if "$bin" "$here/corpus/$h" >>"$log" 2>&1; then
		count=$(sed -n 's/^replayed \([0-9]*\) inputs$/\1/p' "$log" | tail -n 1)
		echo "ok $n - fuzz replay: $h (${count:-0} inputs)"
	else
		echo "not ok $n - fuzz replay: $h"
		grep -v '^replay: /' "$log" | sed 's/^/# /' | tail -n 20
		# the last input named is the one that failed
		grep '^replay: /' "$log" | tail -n 1 | sed 's/^/# /'
		status=1
	fi
done
exit $status
