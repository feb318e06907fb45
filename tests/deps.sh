#!/bin/sh
# SPDX-License-Identifier: MIT
# deps.sh build|check|lint - make sure this machine has what the target needs.
#
# Missing Debian packages are installed with apt-get (through sudo when not
# root), announced in one line. Without apt-get the missing packages are
# named and the script fails, so the make target stops.
set -u
need=""

have_cmd() { command -v "$1" >/dev/null 2>&1; }
want() { need="$need $1"; }

have_zlib_header() {
	printf '#include <zlib.h>\nint main(void){return 0;}\n' |
		${CC:-cc} -x c - -o /dev/null -lz >/dev/null 2>&1
}

check_build() {
	have_cmd make || want make
	if have_cmd "${CC:-cc}"; then
		have_zlib_header || want zlib1g-dev
	else
		want gcc
		want libc6-dev
		want zlib1g-dev
	fi
}

case ${1:-build} in
build) check_build ;;
check)
	check_build
	have_cmd bats || want bats
	have_cmd gzip || want gzip
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
	;;
valgrind) have_cmd valgrind || want valgrind ;;
tsan)
	# make tsan: clang and its ThreadSanitizer runtime (make check's own come after)
	have_cmd clang || want clang
	printf 'int main(void){return 0;}\n' |
		clang -fsanitize=thread -x c - -o /dev/null >/dev/null 2>&1 || want libclang-rt-dev
	;;
lint)
	have_cmd mandoc || want mandoc
	have_cmd groff || want groff-base
	;;
*) echo "deps.sh: unknown target '$1'" >&2; exit 2 ;;
esac

[ -z "$need" ] && exit 0

if ! have_cmd apt-get; then
	echo "bftools: missing prerequisites:$need (install them, then run make again)" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if ! have_cmd sudo; then
		echo "bftools: missing prerequisites:$need (need root or sudo to install them)" >&2
		exit 1
	fi
	sudo="sudo"
fi
echo "bftools: installing missing packages:$need (apt-get)"
export DEBIAN_FRONTEND=noninteractive
if ! { $sudo apt-get -qq update >/dev/null && $sudo apt-get -qq install -y $need >/dev/null; }; then
	echo "bftools: could not install:$need" >&2
	exit 1
fi
