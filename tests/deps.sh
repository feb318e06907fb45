#!/bin/sh
# SPDX-License-Identifier: MIT
# deps.sh TARGET - make sure this machine has what the make target needs
# (build, check, python, lint, valgrind, coverage, analyze, tsan, deb,
# check-deb, scaleout).
#
# Missing Debian packages are installed with apt-get (through sudo when not
# root), announced in one line. Without apt-get the missing packages are
# named and the script fails, so the make target stops. For deb, the
# package's build dependencies are those debian/control declares: once the
# packaging tools are there, dpkg-checkbuilddeps says whether any is
# missing and apt-get build-dep installs them (DEB_BUILD_PROFILES, such as
# nocheck, honoured).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
need=""
build_deps=no

have_cmd() { command -v "$1" >/dev/null 2>&1; }
want() { need="$need $1"; }

have_zlib_header() {
	printf '#include <zlib.h>\nint main(void){return 0;}\n' |
		${CC:-cc} -x c - -o /dev/null -lz >/dev/null 2>&1
}

# libzstd: compressed inputs (lib/instream_zstd.c) are decoded with it.
have_zstd_header() {
	printf '#include <zstd.h>\nint main(void){return ZSTD_versionNumber() == 0;}\n' |
		${CC:-cc} -x c - -o /dev/null -lzstd >/dev/null 2>&1
}

# liblzma, libbz2, liblz4: xz, bzip2 and lz4 inputs (lib/io/instream_xz.c,
# instream_bzip2.c, instream_lz4.c); libdeflate: a filter file's pieces
# inflated whole (lib/io/gzindex.c). have_lib HEADER LIB: it compiles and links.
have_lib() {
	printf '#include <%s>\nint main(void){return 0;}\n' "$1" |
		${CC:-cc} -x c - -o /dev/null "$2" >/dev/null 2>&1
}

check_build() {
	have_cmd make || want make
	if have_cmd "${CC:-cc}"; then
		have_zlib_header || want zlib1g-dev
		have_zstd_header || want libzstd-dev
		have_lib lzma.h -llzma || want liblzma-dev
		have_lib bzlib.h -lbz2 || want libbz2-dev
		have_lib lz4frame.h -llz4 || want liblz4-dev
		have_lib libdeflate.h -ldeflate || want libdeflate-dev
	else
		want gcc
		want libc6-dev
		want zlib1g-dev
		want libzstd-dev
		want liblzma-dev
		want libbz2-dev
		want liblz4-dev
		want libdeflate-dev
	fi
}

# The Python package (make python) builds for Debian's python3; its
# pytest suite (make check) uses NumPy, and runs the README's pandas example.
check_python() {
	[ -x /usr/bin/python3 ] || want python3
	[ -f "$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)/Python.h" ] ||
		want python3-dev
}
check_python_tests() {
	check_python
	/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || want python3-pytest
	/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1 || want python3-numpy
	/usr/bin/python3 -c 'import pandas' >/dev/null 2>&1 || want python3-pandas
}

case ${1:-build} in
build) check_build ;;
check)
	check_build
	have_cmd bats || want bats
	have_cmd gzip || want gzip
	# compressed.bats compares with zstdcat, xzcat, bzcat and lz4cat
	have_cmd zstd || want zstd
	have_cmd xz || want xz-utils
	have_cmd bzip2 || want bzip2
	have_cmd lz4 || want lz4
	# the completion tests run in the real shells
	have_cmd zsh || want zsh
	have_cmd fish || want fish
	have_cmd script || want bsdutils
	# the scale-out recipe is proven with GNU parallel; memory with time(1)
	have_cmd parallel || want parallel
	[ -x /usr/bin/time ] || want time
	# the install test compiles against the installed library
	have_cmd pkg-config || want pkg-config
	# the reference DCSO bloom CLI, to prove both directions of interop
	have_cmd bloom || want golang-github-dcso-bloom-cli
	# --json and --csv are checked against jq and Miller (tests/formats.bats)
	have_cmd jq || want jq
	have_cmd mlr || want miller
	check_python_tests
	;;
python) check_build; check_python ;;
valgrind) have_cmd valgrind || want valgrind ;;
scaleout)
	# make check-scaleout: Dask distributed as Debian packages it, run by
	# the system python (/usr/bin/python3, whatever python3 PATH finds)
	check_build
	have_cmd bats || want bats
	/usr/bin/python3 -c 'import distributed' >/dev/null 2>&1 || want python3-distributed
	;;
coverage) have_cmd gcovr || want gcovr ;;
analyze)
	# scan-build drives clang's analyser
	have_cmd scan-build || want clang-tools
	have_cmd clang || want clang
	have_cmd cppcheck || want cppcheck
	;;
tsan)
	# make tsan: clang and its ThreadSanitizer runtime (make check's own come after)
	have_cmd clang || want clang
	printf 'int main(void){return 0;}\n' |
		clang -fsanitize=thread -x c - -o /dev/null >/dev/null 2>&1 || want libclang-rt-dev
	;;
deb)
	have_cmd dpkg-buildpackage || want dpkg-dev
	have_cmd dh || want debhelper
	have_cmd lintian || want lintian
	build_deps=yes
	;;
check-deb)
	# the unpacked packages are used as a user would: man, bash, a C
	# compiler through pkg-config
	have_cmd dpkg-architecture || want dpkg-dev
	have_cmd man || want man-db
	have_cmd pkg-config || want pkg-config
	have_cmd "${CC:-cc}" || want gcc
	;;
lint)
	have_cmd mandoc || want mandoc
	have_cmd groff || want groff-base
	;;
*) echo "deps.sh: unknown target '$1'" >&2; exit 2 ;;
esac

# apt_get WHAT ARGS... - run apt-get -qq ARGS (after an update) as root,
# through sudo if need be, saying first that WHAT is being installed.
apt_get() {
	what=$1
	shift
	if ! have_cmd apt-get; then
		echo "bftools: missing prerequisites: $what (install them, then run make again)" >&2
		return 1
	fi
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		if ! have_cmd sudo; then
			echo "bftools: missing prerequisites: $what (need root or sudo to install them)" >&2
			return 1
		fi
		sudo="sudo"
	fi
	echo "bftools: installing missing packages: $what (apt-get)"
	if ! { $sudo env DEBIAN_FRONTEND=noninteractive apt-get -qq update >/dev/null &&
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get -qq "$@" >/dev/null; }; then
		echo "bftools: could not install: $what" >&2
		return 1
	fi
}

if [ -n "$need" ]; then
	apt_get "${need# }" install -y $need || exit 1
fi
[ "$build_deps" = yes ] || exit 0
dpkg-checkbuilddeps "$top/debian/control" >/dev/null 2>&1 && exit 0
profiles=$(printf '%s' "${DEB_BUILD_PROFILES:-}" | tr ' ' ,)
apt_get "the build dependencies in debian/control" \
	build-dep -y ${profiles:+-P "$profiles"} "$top" || exit 1
