#!/bin/sh
# SPDX-License-Identifier: MIT
# lint.sh - check every man page in man/ with two independent formatters:
#   mandoc -Tlint -W warning   (warnings and errors, no style nits)
#   groff -man -ww -z          (every groff warning, output discarded)
# and, where a program has been built, that its page's SYNOPSIS reads
# exactly like the first line of its --help (minus "Usage: "), since the
# two are promised to be identical.
#
# Each problem is printed as the tool reports it. Exit 1 if there was any
# output at all; otherwise print "lint: N man pages clean" and exit 0.
# Deliberately no fixing, no style level: a page either formats silently
# under both tools or it does not.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
bin=${BFTOOLS_BIN:-$top/cmd}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
LC_ALL=C
export LC_ALL

for tool in mandoc groff; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "lint: $tool not found (apt-get install mandoc groff-base, or make lint)"
		exit 1
	fi
done

# The SYNOPSIS as a reader sees it: rendered on one very long line, with no
# bold or underlining, blanks squeezed.
rendered_synopsis() {
	groff -man -Tascii -P-cbou -rLL=1000n "$1" 2>/dev/null |
		awk '/^SYNOPSIS/ { on = 1; next } /^[A-Z]/ { on = 0 } on' |
		tr -s ' \n' '  ' | sed 's/^ //; s/ $//'
}

# Compare a section-1 page with its program's usage line, if built.
check_synopsis() {
	page=$1
	prog=$(basename "$page" .1)
	[ -x "$bin/$prog" ] || return 0
	# further forms ("   or: ...", as bfcount has) belong to the synopsis too
	want=$("$bin/$prog" --help 2>/dev/null |
		sed -n '1s/^[Uu]sage: //p; 2,/^$/s/^ *or: //p' | tr '\n' ' ' | sed 's/ $//')
	got=$(rendered_synopsis "$page")
	[ "$want" = "$got" ] && return 0
	echo "$page: SYNOPSIS differs from '$prog --help':"
	echo "  man:  $got"
	echo "  help: $want"
}

# Relative names (man/bf.5) in every message.
cd "$top" || exit 1
pages=0
for page in man/*.[1-8]; do
	[ -f "$page" ] && pages=$((pages + 1))
done
if [ "$pages" -eq 0 ]; then
	echo "lint: no man pages in $top/man"
	exit 1
fi

problems=$(
	for page in man/*.[1-8]; do
		mandoc -Tlint -W warning "$page" 2>&1
		groff -man -ww -z "$page" 2>&1 | sed "s|^|$page: groff: |"
		case $page in *.1) check_synopsis "$page" ;; esac
	done
)
if [ -n "$problems" ]; then
	printf '%s\n' "$problems"
	exit 1
fi
echo "lint: $pages man pages clean"
