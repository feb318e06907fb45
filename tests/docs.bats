#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# docs.bats - what the README and the man pages say about the programs
# agrees with the programs and with each other: how many programs the
# Debian package holds, bfcount's accuracy (the man page's measured table
# is the source), and which programs the shared options are listed for
# (each program's --help is the source). Reads only files of this tree.

bats_require_minimum_version 1.5.0
load helpers

TOP="$BATS_TEST_DIRNAME/.."
PROGRAMS="bfbuild bfgrep bfuniq bfcount bfmerge bfinfo bftop bfsplit"

@test "docs: the README's Debian section counts the programs there are" {
	local n
	n=$(wc -w <<<"$PROGRAMS")
	[ "$n" -eq 8 ]
	grep -q '^PROGRAMS  = bfbuild bfgrep bfuniq bfcount bfmerge bfinfo bftop bfsplit$' "$TOP/Makefile"
	grep -q '`bftools` holds the eight programs' "$TOP/README.md" ||
		expect_eq "README's Debian section" '`bftools` holds the eight programs ...' "$(grep '`bftools` holds the' "$TOP/README.md")"
}

@test "docs: bfcount's accuracy is the same in the README and its man page, and the man page's measurements bear it out" {
	local readme man worst
	readme=$(tr '\n' ' ' <"$TOP/README.md" | grep -o 'then within [0-9.]*% at the 95th percentile')
	man=$(tr '\n' ' ' <"$TOP/man/bfcount.1" | grep -o 'an estimate within [0-9.]*% at the *95th percentile')
	expect_eq "README" "then within 1% at the 95th percentile" "$readme"
	expect_eq "bfcount(1)" "an estimate within 1% at the 95th percentile" "$man"
	# the table of "Accuracy of stream counts": every decade's 95th percentile under 1%
	worst=$(awk '/^true count/ { t = 1; next } t && /^\.EE/ { t = 0 } t && $2 == ".." && $4 ~ /%$/ { v = $4 + 0; if (v > w) w = v } END { print w }' "$TOP/man/bfcount.1")
	awk -v w="$worst" 'BEGIN { exit !(w > 0 && w < 1) }' || expect_eq "worst 95th percentile measured" "< 1%" "$worst%"
}

@test "docs: the shared options are listed for every program whose --help has them (bftop among them)" {
	local prog row
	# the -i row of the README's table of shared options, and bftools(7)'s -k and -i lists
	row=$(grep '^| `-i`, `--ignore-case` |' "$TOP/README.md")
	for prog in $PROGRAMS; do
		if "$prog" --help | grep -q -- '-i, --ignore-case'; then
			case $row in *"\`$prog\`"*) ;; *) expect_eq "README -i row names $prog" "... \`$prog\` ..." "$row" ;; esac
			grep -A1 '^Fold ASCII case of keys' "$TOP/man/bftools.7" | grep -q "$prog" ||
				expect_eq "bftools(7) -i names $prog" "$prog" "(missing)"
		fi
		if "$prog" --help | grep -q -- '-k, --field'; then
			grep -q "^(.*$prog.*)\$" <(sed -n '/^\\fB\\-k\\fR/,/^\.TP/p' "$TOP/man/bftools.7") ||
				expect_eq "bftools(7) -k names $prog" "$prog" "(missing)"
		fi
	done
}
