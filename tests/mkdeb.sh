#!/bin/sh
# SPDX-License-Identifier: MIT
# mkdeb.sh - build the Debian packages (make deb): bftools, libbftools1,
# libbftools-dev (and their -dbgsym packages) in build/deb/, then list them
# and run lintian on them. Exit 1 if the build fails or lintian reports an
# error; lintian's warnings are shown but do not fail.
#
# dpkg-buildpackage writes its .deb, .buildinfo and .changes files into the
# parent of the tree it builds. So that nothing is written outside this
# repository, the tree is copied to build/deb/bftools-VERSION/ and built
# there: the files git knows (tracked ones as they are in the work tree,
# edits included, and new ones not ignored), or, outside a git checkout,
# everything but build/. The package's build runs make check, unless
# DEB_BUILD_OPTIONS contains nocheck; its output goes to build/deb/build.log.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
out="$top/build/deb"

version=$(sed -n 's/^VERSION *= *//p' "$top/Makefile")
changelog=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version) || exit 1
if [ "$version" != "$changelog" ]; then
	echo "deb: the Makefile says version $version, debian/changelog $changelog" >&2
	exit 1
fi

# copy_tree DIR - the source files of this checkout into DIR.
copy_tree() {
	if command -v git >/dev/null 2>&1 &&
		git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		# a file deleted but not yet committed is still listed: skip it
		(cd "$top" && git ls-files -z --cached --others --exclude-standard |
			xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
			tar -cf - --null -T -) | tar -xf - -C "$1"
	else
		(cd "$top" && tar -cf - --exclude=./build --exclude=./.git .) | tar -xf - -C "$1"
	fi
}

rm -rf "$out"
mkdir -p "$out/bftools-$version" || exit 1
copy_tree "$out/bftools-$version" || { echo "deb: could not copy the tree" >&2; exit 1; }

echo "deb: dpkg-buildpackage -us -uc -b in build/deb/bftools-$version (log: build/deb/build.log)"
# The calling make's flags and command-line variables (MAKEFLAGS), its
# build directory (O) and any CFLAGS it exported are not the package
# build's: dpkg-buildflags decides those (DEB_CFLAGS_APPEND and the like
# adjust them).
if ! (cd "$out/bftools-$version" &&
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u O \
		-u CFLAGS -u CPPFLAGS -u LDFLAGS \
		dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log"
	echo "deb: dpkg-buildpackage failed; the whole log is build/deb/build.log" >&2
	exit 1
fi
# the package build's make check summary, when it ran
case " ${DEB_BUILD_OPTIONS:-} " in
*" nocheck "*) echo "deb: the package build ran no tests (DEB_BUILD_OPTIONS=nocheck)" ;;
*)
	grep '^tests: ' "$out/build.log" || {
		echo "deb: the package build ran make check but printed no summary (see build/deb/build.log)" >&2
		exit 1
	}
	;;
esac

echo "deb: packages made:"
(cd "$top" && ls -1 build/deb/*.deb) || exit 1
echo "deb: lintian"
lintian --fail-on error "$out"/*.deb || { echo "deb: lintian reported errors" >&2; exit 1; }
echo "deb: lintian reported no errors"
