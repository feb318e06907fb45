#!/bin/sh
# SPDX-License-Identifier: MIT
# deb.sh - check the Debian packages that make deb left in build/deb/ (make
# check-deb). bftools, libbftools1 and libbftools-dev are unpacked with
# dpkg -x into a scratch root, build/deb/check/root, and used from there as
# an installed system would use them:
#   - the installed bfuniq drops the repeated lines of a small input
#   - man -l renders every installed page
#   - the installed bash completion loads and completes an option
#   - zsh and fish read the directories their completions are in
#   - pkg-config finds the installed bftools.pc: --libs gives -lbftools
#   - tests/examples/count_keys.c builds against the installed headers and
#     shared library, and again statically, and runs
#   - python3 imports the installed bftools module (python3-bftools) and
#     reads a filter the installed bfbuild wrote
# Each check prints one line, "ok - WHAT" or "not ok - WHAT" followed by
# what went wrong, then the summary
#   check-deb: N passed, N failed
# Exit 1 if any failed. Nothing is installed on the machine itself; the
# programs and the example find the scratch library through
# LD_LIBRARY_PATH.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
LC_ALL=C
export LC_ALL

debs="$top/build/deb"
version=$(sed -n 's/^VERSION *= *//p' "$top/Makefile")
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
work="$debs/check"
root="$work/root"
libdir="$root/usr/lib/$multiarch"
KEY=000102030405060708090a0b0c0d0e0f

passed=0
failed=0
# pass WHAT / fail WHAT DETAILS - report one check.
pass() {
	echo "ok - $1"
	passed=$((passed + 1))
}
fail() {
	echo "not ok - $1"
	printf '%s\n' "$2" | sed 's/^/#   /'
	failed=$((failed + 1))
}

# installed PROGRAM ARG... - run a program from the scratch root.
installed() {
	prog=$1
	shift
	LD_LIBRARY_PATH="$libdir" "$root/usr/bin/$prog" "$@"
}

rm -rf "$work"
mkdir -p "$root" || exit 1
for pkg in bftools libbftools1 libbftools-dev python3-bftools; do
	deb="$debs/${pkg}_${version}_$arch.deb"
	if [ ! -f "$deb" ]; then
		echo "check-deb: build/deb/${deb##*/} is missing (make deb makes it)" >&2
		exit 1
	fi
	dpkg -x "$deb" "$root" || { echo "check-deb: dpkg -x ${deb##*/} failed" >&2; exit 1; }
done
cd "$work" || exit 1

check_bfuniq() {
	what="installed bfuniq keeps the first of each line, in order"
	# the fixed key makes the answer the same on every run (a first-seen
	# line is dropped with chance 1e-6 per line under a random key)
	got=$(printf '%s\n' b a b c a | installed bfuniq --key "$KEY" 2>&1)
	want=$(printf '%s\n' b a c)
	[ "$got" = "$want" ] || { fail "$what" "got: $got"; return; }
	got=$(installed bfuniq --version 2>&1 | head -n 1)
	[ "$got" = "bfuniq (bftools) $version" ] || { fail "$what" "--version: $got"; return; }
	pass "$what"
}

# Every page in man/ is installed, compressed, in its section's directory.
check_man() {
	what="man -l renders every installed page"
	n=0
	for src in "$top"/man/*.[0-9]; do
		name=${src##*/}
		page="$root/usr/share/man/man${name##*.}/$name.gz"
		[ -f "$page" ] || { fail "$what" "man/$name is not installed as ${page#"$root"}"; return; }
		text=$(MANWIDTH=80 man -l "$page" 2>&1) || { fail "$what" "$name: $text"; return; }
		case $text in
		*NAME*"${name%.*}"*) ;;
		*) fail "$what" "$name renders without NAME ${name%.*}: $(printf '%s\n' "$text" | head -n 5)"; return ;;
		esac
		n=$((n + 1))
	done
	pass "$what ($n)"
}

# As bash-completion's loader would: the file named after the command is
# sourced, and the function it registers with complete -F is called with
# COMP_WORDS set as bash itself sets them, for "bfuniq --ign".
check_bash() {
	what="installed bash completion loads and completes bfuniq --ign to --ignore-case"
	file="$root/usr/share/bash-completion/completions/bfuniq"
	got=$(bash --norc --noprofile -c '
		source "$1" || exit 3
		fn=$(complete -p bfuniq | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
		[ -n "$fn" ] || exit 4
		COMP_WORDS=(bfuniq --ign)
		COMP_CWORD=1
		COMP_LINE="bfuniq --ign"
		COMP_POINT=${#COMP_LINE}
		"$fn" bfuniq --ign bfuniq || exit 5
		printf "%s\n" "${COMPREPLY[@]}"
	' bash "$file" 2>&1)
	[ "$got" = --ignore-case ] || { fail "$what" "got: $got"; return; }
	pass "$what"
}

# The directories are the ones Debian's zsh and fish search: on zsh's
# default $fpath, on fish's $fish_complete_path (fish runs with HOME in the
# scratch directory, where it may write its own files).
check_shell_dirs() {
	what="zsh and fish read the directories the completions are installed in"
	zdir=/usr/share/zsh/vendor-completions
	fdir=/usr/share/fish/vendor_completions.d
	[ -f "$root$zdir/_bfuniq" ] || { fail "$what" "no $zdir/_bfuniq"; return; }
	[ -f "$root$fdir/bfuniq.fish" ] || { fail "$what" "no $fdir/bfuniq.fish"; return; }
	if ! command -v zsh >/dev/null 2>&1; then
		echo "# zsh is not installed: its \$fpath is not read"
	elif ! zsh -f -c 'print -l -- $fpath' | grep -qx "$zdir"; then
		fail "$what" "$zdir is not on zsh's \$fpath"
		return
	fi
	if ! command -v fish >/dev/null 2>&1; then
		echo "# fish is not installed: its \$fish_complete_path is not read"
	elif ! HOME="$work" XDG_CONFIG_HOME="$work/.config" XDG_DATA_HOME="$work/.local/share" \
		fish -c 'string join \n -- $fish_complete_path' | grep -qx "$fdir"; then
		fail "$what" "$fdir is not on fish's \$fish_complete_path"
		return
	fi
	pass "$what"
}

# pkg-config reads the installed bftools.pc and prefixes its paths with
# the scratch root, as for a cross-compiling sysroot.
PKG_CONFIG_SYSROOT_DIR="$root"
PKG_CONFIG_PATH="$libdir/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH

check_pkg_config() {
	what="pkg-config --libs bftools gives -lbftools in the installed library directory"
	got=$(pkg-config --libs bftools 2>&1) || { fail "$what" "$got"; return; }
	case " $got " in
	*" -L$libdir "*"-lbftools "*) ;;
	*) fail "$what" "got: $got"; return ;;
	esac
	got=$(pkg-config --modversion bftools 2>&1)
	[ "$got" = "$version" ] || { fail "$what" "--modversion: $got"; return; }
	pass "$what"
}

# What count_keys prints for this input and these keys; tests/install.bats
# explains why (the fixed key makes dave absent on every run).
example_output="lines read: 4
insertions: 4
estimated distinct keys: 3
alice: maybe present
bob: maybe present
dave: absent"

# run_example WHAT - run ./count_keys on the example input and compare
# what it prints, and the filter it writes, with what the installed
# bfbuild writes.
run_example() {
	got=$(printf '%s\n' alice bob carol bob |
		LD_LIBRARY_PATH="$libdir" ./count_keys names.bf alice bob dave 2>&1)
	[ "$got" = "$example_output" ] || { fail "$1" "count_keys printed: $got"; return 1; }
	printf '%s\n' alice bob carol bob | installed bfbuild -n 1000 -p 0.01 --key "$KEY" -o want.bf
	cmp want.bf names.bf >/dev/null 2>&1 || { fail "$1" "names.bf differs from bfbuild's"; return 1; }
}

compile_example() {
	${CC:-cc} -std=c11 -Wall -Wextra -Wpedantic -Werror -o count_keys \
		"$top/tests/examples/count_keys.c" "$@" 2>&1
}

check_example_shared() {
	what="count_keys.c builds with pkg-config against the installed shared library and runs"
	rm -f count_keys names.bf want.bf
	got=$(compile_example $(pkg-config --cflags --libs bftools)) || { fail "$what" "$got"; return; }
	# the library from the package, not one installed on this machine
	got=$(LD_LIBRARY_PATH="$libdir" ldd ./count_keys 2>&1)
	case $got in
	*"libbftools.so.1 => $libdir/libbftools.so.1 "*) ;;
	*) fail "$what" "ldd: $got"; return ;;
	esac
	run_example "$what" && pass "$what"
}

check_example_static() {
	what="count_keys.c links statically with pkg-config --static and runs"
	rm -f count_keys names.bf want.bf
	got=$(compile_example -static $(pkg-config --cflags bftools) \
		$(pkg-config --static --libs bftools)) || { fail "$what" "$got"; return; }
	run_example "$what" && pass "$what"
}

# The module from the package, with the answers of the installed bfgrep.
check_python() {
	what="python3 imports the installed bftools module and reads bfbuild's filter"
	# as count_keys: under this key, dave is absent (run_example)
	printf '%s\n' alice bob carol bob | installed bfbuild -n 1000 -p 0.01 --key "$KEY" -o py.bf
	got=$(printf '%s\n' alice dave | installed bfgrep -f py.bf)
	[ "$got" = alice ] || { fail "$what" "bfgrep: $got"; return; }
	got=$(cd / && PYTHONPATH="$root/usr/lib/python3/dist-packages" /usr/bin/python3 -c '
import sys, bftools
assert bftools.__file__.startswith(sys.argv[1]), bftools.__file__
print(bftools.Filter(sys.argv[2]).contains_many(["alice", "dave"]))' "$root" "$work/py.bf" 2>&1)
	[ "$got" = "[True, False]" ] || { fail "$what" "$got"; return; }
	pass "$what"
}

check_bfuniq
check_python
check_man
check_bash
check_shell_dirs
check_pkg_config
check_example_shared
check_example_static

echo "check-deb: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
