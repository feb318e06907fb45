#!/bin/sh
# SPDX-License-Identifier: MIT
# analyze.sh BUILD_DIR - the static analysers over lib/ and cmd/, failing
# on any finding:
#   - clang's analyser (scan-build) watching a full build of the library
#     and the programs in BUILD_DIR, emptied first so that every file is
#     compiled, hence analysed; its HTML reports go to BUILD_DIR/report/;
#   - cppcheck --enable=warning,portability,performance over every
#     preprocessor configuration of lib/ and cmd/, across files (its
#     cross-file pass follows pointers from one file's calls into another).
# A false report is silenced in the code, next to its line, with a comment
# saying why it is false: `cppcheck-suppress ID` for cppcheck; for the
# clang analyser, code it can follow. Nothing is silenced here.
set -u
build=${1:?usage: analyze.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
case $build in /*) ;; *) build="$top/$build" ;; esac
cd "$top" || exit 1
sh "$here/deps.sh" analyze || exit 1

status=0
echo "== scan-build"
rm -rf "$build"
mkdir -p "$build"
scan-build -o "$build/report" --status-bugs \
	"${MAKE:-make}" --no-print-directory O="$build" all >"$build/scan-build.log" 2>&1 || status=1
grep -E 'warning:|error:|scan-build:' "$build/scan-build.log"

echo "== cppcheck"
# every layer of lib/ is an include directory (ARCHITECTURE.md)
libinc=$(for d in lib lib/*/; do printf -- "-I%s " "${d%/}"; done)
# shellcheck disable=SC2086 # $libinc is a list of words
cppcheck --enable=warning,portability,performance --std=c11 $libinc --inline-suppr \
	--error-exitcode=1 --quiet lib cmd || status=1

if [ "$status" -eq 0 ]; then
	echo "analyze: no findings ($(grep -rc --include='*.[ch]' 'cppcheck-suppress' lib cmd |
		awk -F: '{ n += $2 } END { print n }') cppcheck suppressions in the code)"
else
	echo "analyze: findings above" >&2
fi
exit $status
