#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# install.bats - `make install` and `make uninstall` as a packager uses them:
# into a DESTDIR, with PREFIX and the per-kind directories honoured, every
# file where it belongs and nothing else; the library usable by a C program
# built the ordinary way, with pkg-config, against the installed header and
# both the shared and the static library; uninstall removing exactly that.
#
# make runs from the tree root. It rebuilds nothing when the tree is built
# (make check builds it first), so each install takes a fraction of a
# second and every test does its own, in its own $BATS_TEST_TMPDIR.
# The compile tests need pkg-config (tests/deps.sh installs it) and skip,
# saying so, without it.

PROGRAMS="bfbuild bfgrep bfuniq bfcount bfmerge bfinfo bftop bfsplit"
KEY=000102030405060708090a0b0c0d0e0f

setup() {
	TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	VERSION=$(sed -n 's/^VERSION *= *//p' "$TOP/Makefile")
	ROOT="$BATS_TEST_TMPDIR/root"
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work" || return 1
}

# bfmake TARGET VAR=VALUE... - make TARGET in the tree root with exactly
# these variables. Whatever a calling make exported (make asan passes O,
# CFLAGS and LDFLAGS down; MAKEFLAGS carries -j and command-line
# variables) and any install directory in the environment are dropped, so
# the test installs the normal build wherever it says and nowhere else.
bfmake() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u O -u CFLAGS -u LDFLAGS -u CPPFLAGS \
		-u DESTDIR -u PREFIX -u BINDIR -u MANDIR -u LIBDIR -u INCLUDEDIR \
		-u PKGCONFIGDIR -u BASHCOMPDIR -u ZSHCOMPDIR -u FISHCOMPDIR \
		make -C "$TOP" --no-print-directory "$@"
}

# install_ok VAR=VALUE... - make install with these variables, which must
# succeed; its output is shown only when it fails.
install_ok() {
	run bfmake install "$@"
	[ "$status" -eq 0 ] && return 0
	printf 'make install %s failed (status %s):\n%s\n' "$*" "$status" "$output" >&2
	return 1
}

# installed_files DIR - every file and symbolic link under DIR, as paths
# relative to it with a leading /, sorted: the install as a package sees it.
installed_files() {
	(cd "$1" && find . ! -type d | sed 's|^\.||' | LC_ALL=C sort)
}

# expected_files BIN MAN LIB INC PKGCONFIG BASH ZSH FISH - what make install
# must put in those directories, sorted. The headers are bftools.h and every
# header it includes, read from the source, so the list follows the header.
expected_files() {
	local bin=$1 man=$2 lib=$3 inc=$4 pc=$5 bash=$6 zsh=$7 fish=$8 p h
	{
		for p in $PROGRAMS; do
			printf '%s\n' "$bin/$p" "$man/man1/$p.1" "$bash/$p" "$zsh/_$p" "$fish/$p.fish"
		done
		printf '%s\n' "$man/man5/bf.5" "$man/man7/bftools.7" \
			"$lib/libbftools.a" "$lib/libbftools.so" "$lib/libbftools.so.1" \
			"$pc/bftools.pc" "$inc/bftools/bftools.h"
		for h in $(sed -n 's/^#include "\(.*\)"$/\1/p' "$TOP/lib/bftools.h"); do
			echo "$inc/bftools/$h"
		done
	} | LC_ALL=C sort
}

# expect_same_list WHAT EXPECTED GOT - two sorted lists are equal, or the
# lines only one of them has are shown.
expect_same_list() {
	[ "$2" = "$3" ] && return 0
	echo "$1: missing (expected, not there):" >&2
	LC_ALL=C comm -23 <(printf '%s\n' "$2") <(printf '%s\n' "$3") >&2
	echo "$1: unexpected (there, not expected):" >&2
	LC_ALL=C comm -13 <(printf '%s\n' "$2") <(printf '%s\n' "$3") >&2
	return 1
}

need_pkg_config() {
	command -v pkg-config >/dev/null 2>&1 ||
		skip "pkg-config is not installed (Debian package pkg-config): the library is not compiled against"
}

# use_pc ROOT - pkg-config finds bftools.pc in the DESTDIR and prefixes its
# -I and -L paths with the DESTDIR, as for a cross-compiling sysroot.
use_pc() {
	export PKG_CONFIG_SYSROOT_DIR="$1"
	export PKG_CONFIG_PATH="$1/usr/lib/pkgconfig"
}

# The example's input and the answers it must print for alice bob dave.
# dave was never added: with the fixed key it tests absent (a fixed key
# makes the answer the same on every run; at 1% it could have been a
# false positive, and is not).
example_input() {
	printf '%s\n' alice bob carol bob
}
EXAMPLE_OUTPUT="lines read: 4
insertions: 4
estimated distinct keys: 3
alice: maybe present
bob: maybe present
dave: absent"

# compile_example OUT EXTRA... - build tests/examples/count_keys.c with the
# compiler the tests use, warnings as errors (the installed headers must be
# clean under -std=c11 -Wpedantic), and EXTRA (pkg-config's flags).
compile_example() {
	local out=$1
	shift
	${CC:-cc} -std=c11 -Wall -Wextra -Wpedantic -Werror -o "$out" \
		"$TOP/tests/examples/count_keys.c" "$@"
}

@test "install: DESTDIR and PREFIX place programs, man pages, completions and library, and nothing else" {
	install_ok DESTDIR="$ROOT" PREFIX=/usr
	want=$(expected_files /usr/bin /usr/share/man /usr/lib /usr/include /usr/lib/pkgconfig \
		/usr/share/bash-completion/completions /usr/share/zsh/site-functions \
		/usr/share/fish/vendor_completions.d)
	expect_same_list "files under DESTDIR" "$want" "$(installed_files "$ROOT")"
}

@test "install: programs are mode 755 and run from where they were installed; data files are 644" {
	install_ok DESTDIR="$ROOT" PREFIX=/usr
	for p in $PROGRAMS; do
		[ "$(stat -c %a "$ROOT/usr/bin/$p")" = 755 ] || { echo "usr/bin/$p is not 755" >&2; false; }
		run "$ROOT/usr/bin/$p" --version
		[ "$status" -eq 0 ] || { echo "installed $p --version exited $status" >&2; false; }
		[ "${lines[0]}" = "$p (bftools) $VERSION" ] || { echo "installed $p --version said: ${lines[0]}" >&2; false; }
	done
	for f in share/man/man1/bfbuild.1 share/man/man5/bf.5 share/man/man7/bftools.7 \
		share/zsh/site-functions/_bfgrep lib/libbftools.a lib/pkgconfig/bftools.pc \
		include/bftools/bftools.h; do
		[ "$(stat -c %a "$ROOT/usr/$f")" = 644 ] || { echo "usr/$f is not 644" >&2; false; }
	done
}

@test "install: libbftools.so.1 has the SONAME libbftools.so.1 and libbftools.so links to it" {
	install_ok DESTDIR="$ROOT" PREFIX=/usr
	lib="$ROOT/usr/lib"
	[ -f "$lib/libbftools.so.1" ]
	[ ! -L "$lib/libbftools.so.1" ]
	[ -L "$lib/libbftools.so" ]
	[ "$(readlink "$lib/libbftools.so")" = libbftools.so.1 ]
	if command -v readelf >/dev/null 2>&1; then
		soname=$(readelf -d "$lib/libbftools.so.1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	elif command -v objdump >/dev/null 2>&1; then
		soname=$(objdump -p "$lib/libbftools.so.1" | awk '$1 == "SONAME" { print $2 }')
	else
		skip "neither readelf nor objdump (binutils) is installed: SONAME not read"
	fi
	[ "$soname" = libbftools.so.1 ] || { echo "SONAME is '$soname'" >&2; false; }
}

@test "install: every header the umbrella header includes is installed beside it" {
	install_ok DESTDIR="$ROOT" PREFIX=/usr
	inc="$ROOT/usr/include/bftools"
	for h in "$inc"/*.h; do
		for dep in $(sed -n 's/^#include "\(.*\)"$/\1/p' "$h"); do
			[ -f "$inc/$dep" ] || { echo "${h##*/} includes $dep, not installed" >&2; false; }
		done
	done
}

@test "install: bftools.pc names the installed prefix, library and header directory" {
	need_pkg_config
	install_ok DESTDIR="$ROOT" PREFIX=/usr
	use_pc "$ROOT"
	run pkg-config --modversion bftools
	[ "$status" -eq 0 ] && [ "$output" = "$VERSION" ] || { echo "modversion: $output (want $VERSION)" >&2; false; }
	run pkg-config --cflags-only-I bftools
	case " $output " in *" -I$ROOT/usr/include/bftools "*) ;; *) echo "cflags: $output" >&2; false ;; esac
	run pkg-config --libs bftools
	case " $output " in *" -L$ROOT/usr/lib "*"-lbftools "*) ;; *) echo "libs: $output" >&2; false ;; esac
}

@test "install: a C program builds with pkg-config against the installed shared library and runs" {
	need_pkg_config
	install_ok DESTDIR="$ROOT" PREFIX=/usr
	use_pc "$ROOT"
	compile_example count_keys $(pkg-config --cflags --libs bftools)
	if command -v readelf >/dev/null 2>&1; then
		readelf -d count_keys | grep -q 'NEEDED.*\[libbftools\.so\.1\]' ||
			{ echo "count_keys does not need libbftools.so.1:" >&2; readelf -d count_keys >&2; false; }
	fi
	if command -v ldd >/dev/null 2>&1; then
		# the copy in DESTDIR, not one installed elsewhere on the machine
		LD_LIBRARY_PATH="$ROOT/usr/lib" ldd ./count_keys |
			grep -q "libbftools\.so\.1 => $ROOT/usr/lib/libbftools\.so\.1 " ||
			{ LD_LIBRARY_PATH="$ROOT/usr/lib" ldd ./count_keys >&2; false; }
	fi
	example_input >in.txt
	run env LD_LIBRARY_PATH="$ROOT/usr/lib" ./count_keys names.bf alice bob dave <in.txt
	[ "$status" -eq 0 ] || { echo "count_keys exited $status: $output" >&2; false; }
	[ "$output" = "$EXAMPLE_OUTPUT" ] || { printf 'count_keys printed:\n%s\n' "$output" >&2; false; }
	# what the library wrote is what the installed bfbuild writes, byte for byte
	"$ROOT/usr/bin/bfbuild" -n 1000 -p 0.01 --key "$KEY" -o want.bf <in.txt
	cmp want.bf names.bf
}

@test "install: the same C program links statically with pkg-config --static and runs" {
	need_pkg_config
	install_ok DESTDIR="$ROOT" PREFIX=/usr
	use_pc "$ROOT"
	# -static makes the linker take libbftools.a: with the .so beside it,
	# -lbftools alone would pick the shared library.
	compile_example count_keys -static $(pkg-config --cflags bftools) \
		$(pkg-config --static --libs bftools)
	if command -v readelf >/dev/null 2>&1; then
		! readelf -d count_keys 2>/dev/null | grep -q 'libbftools' ||
			{ echo "count_keys still needs the shared library" >&2; false; }
	fi
	example_input >in.txt
	# the shared library out of reach: the program must not need it
	rm "$ROOT/usr/lib/libbftools.so.1"
	run ./count_keys names.bf alice bob dave <in.txt
	[ "$status" -eq 0 ] || { echo "count_keys exited $status: $output" >&2; false; }
	[ "$output" = "$EXAMPLE_OUTPUT" ] || { printf 'count_keys printed:\n%s\n' "$output" >&2; false; }
}

@test "install: make uninstall removes every file make install put there, and only those" {
	mkdir -p "$ROOT/usr/bin" "$ROOT/usr/lib" "$ROOT/usr/share/man/man1"
	echo other >"$ROOT/usr/bin/other"
	echo other >"$ROOT/usr/lib/libother.so.1"
	echo other >"$ROOT/usr/share/man/man1/other.1"
	install_ok DESTDIR="$ROOT" PREFIX=/usr
	run bfmake uninstall DESTDIR="$ROOT" PREFIX=/usr
	[ "$status" -eq 0 ] || { echo "make uninstall failed: $output" >&2; false; }
	expect_same_list "files left after uninstall" \
		"$(printf '%s\n' /usr/bin/other /usr/lib/libother.so.1 /usr/share/man/man1/other.1)" \
		"$(installed_files "$ROOT")"
}

@test "install: BINDIR, MANDIR, LIBDIR, INCLUDEDIR and the completion directories are honoured" {
	dirs=(BINDIR=/opt/bf/bin MANDIR=/opt/bf/man LIBDIR=/opt/bf/lib64
		INCLUDEDIR=/opt/bf/inc BASHCOMPDIR=/etc/bash_completion.d
		ZSHCOMPDIR=/opt/bf/zsh FISHCOMPDIR=/opt/bf/fish)
	install_ok DESTDIR="$ROOT" PREFIX=/usr "${dirs[@]}"
	# bftools.pc follows LIBDIR when PKGCONFIGDIR is not given
	want=$(expected_files /opt/bf/bin /opt/bf/man /opt/bf/lib64 /opt/bf/inc \
		/opt/bf/lib64/pkgconfig /etc/bash_completion.d /opt/bf/zsh /opt/bf/fish)
	expect_same_list "files under DESTDIR" "$want" "$(installed_files "$ROOT")"
	grep -qx 'libdir=/opt/bf/lib64' "$ROOT/opt/bf/lib64/pkgconfig/bftools.pc"
	grep -qx 'includedir=/opt/bf/inc' "$ROOT/opt/bf/lib64/pkgconfig/bftools.pc"
	run bfmake uninstall DESTDIR="$ROOT" PREFIX=/usr "${dirs[@]}"
	[ "$status" -eq 0 ] || { echo "make uninstall failed: $output" >&2; false; }
	expect_same_list "files left after uninstall" "" "$(installed_files "$ROOT")"
}

@test "install: PKGCONFIGDIR alone moves bftools.pc" {
	install_ok DESTDIR="$ROOT" PREFIX=/usr PKGCONFIGDIR=/usr/share/pkgconfig
	[ -f "$ROOT/usr/share/pkgconfig/bftools.pc" ]
	[ ! -e "$ROOT/usr/lib/pkgconfig/bftools.pc" ]
	run bfmake uninstall DESTDIR="$ROOT" PREFIX=/usr PKGCONFIGDIR=/usr/share/pkgconfig
	[ "$status" -eq 0 ] && [ -z "$(installed_files "$ROOT")" ]
}
