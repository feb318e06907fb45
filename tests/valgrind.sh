#!/bin/sh
# SPDX-License-Identifier: MIT
# valgrind.sh BUILD_DIR - the whole test suite with every program under
# valgrind memcheck: the unit tests directly, and the bats files through
# wrappers named like the programs, put first in BFTOOLS_BIN. A memcheck
# error (invalid read or write, uninitialised value used, a definite leak)
# makes the program exit 99, which no test expects, so it shows up as a
# failed test. Slow (about 30x): not part of make check.
set -u
build=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
case $build in /*) ;; *) build="$top/$build" ;; esac
command -v valgrind >/dev/null 2>&1 || sh "$here/deps.sh" valgrind || exit 1

wrappers=$(mktemp -d)
trap 'rm -rf "$wrappers"' EXIT INT TERM
for prog in "$build"/cmd/bf*; do
	case $prog in *.o | *.d) continue ;; esac
	name=$(basename "$prog")
	cat >"$wrappers/$name" <<WRAP
#!/bin/sh
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \\
	--show-leak-kinds=definite \\
	"$prog" "\$@"
WRAP
	chmod +x "$wrappers/$name"
done
# the unit tests, and the accuracy program that tests/accuracy.bats runs
# (found beside the programs, as BFTOOLS_BIN/../tests/accuracy/accuracy)
for test in unit/unit accuracy/accuracy; do
	mkdir -p "$wrappers/tests/${test%/*}"
	cat >"$wrappers/tests/$test" <<WRAP
#!/bin/sh
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \\
	--show-leak-kinds=definite \\
	"$build/tests/$test" "\$@"
WRAP
	chmod +x "$wrappers/tests/$test"
done
mkdir -p "$wrappers/cmd"
cp -p "$wrappers"/bf* "$wrappers/cmd/"
sh "$here/run.sh" "$wrappers"
