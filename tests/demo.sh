#!/bin/sh
# SPDX-License-Identifier: MIT
# demo.sh BINDIR - bftools end to end, for a newcomer to read.
#
# Makes a list of 20000 spammer addresses and a mail log of 200000 lines in
# which about 1% of the lines are mail from a listed spammer, builds a
# Bloom filter from the list with BINDIR/bfbuild, finds the spammers' lines
# with BINDIR/bfgrep -w, and checks the answer against the exact one from
# grep -F -f: every spammer line must be found (a Bloom filter has no false
# negatives), and the extra lines are the false positives.
#
# The data comes from awk with its own fixed-seed generator (Park-Miller,
# exact in awk's doubles), so every run and every awk sees the same input.
# Only POSIX sh, awk, grep and coreutils; no network. Everything happens in
# a temporary directory removed at exit. Any failing step stops the demo
# with a non-zero status.
set -eu

if [ $# -ne 1 ]; then
	echo "usage: sh tests/demo.sh BINDIR (the directory holding bfbuild and bfgrep)" >&2
	exit 2
fi
if ! bin=$(cd "$1" 2>/dev/null && pwd); then
	echo "demo: $1: no such directory" >&2
	exit 2
fi
for prog in bfbuild bfgrep; do
	if [ ! -x "$bin/$prog" ]; then
		echo "demo: $bin/$prog not found (run make first)" >&2
		exit 2
	fi
done
LC_ALL=C
export LC_ALL

SPAMMERS=20000
LINES=200000
# A filter filled exactly to capacity is at its target rate, and bfbuild
# warns once its estimate passes it: size the fitted one with some room.
FITTED=25000

work=$(mktemp -d "${TMPDIR:-/tmp}/bftools-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
cd "$work"

# Indent what a command printed, so it stands apart from the narration.
indent() { awk '{ print "      " $0 }'; }
# A file's size in bytes / lines, without wc's padding.
bytes() { wc -c <"$1" | awk '{ print $1 }'; }
lines() { wc -l <"$1" | awk '{ print $1 }'; }

# --- 1. the data ----------------------------------------------------------

# spammers.txt: one address per line, all distinct (the serial number).
gen_spammers() {
	awk -v n="$SPAMMERS" '
	function rnd(k) { seed = (seed * 16807) % 2147483647; return 1 + int(seed / 2147483647 * k) }
	BEGIN {
		seed = 20261121
		split("cheap best free win easy quick top real hot new", a, " ")
		split("pills deals offers loans prize watches crypto casino bonus meds", b, " ")
		split("bulk-mailer.example promo-blast.example cheap-offers.example win-now.example", d, " ")
		for (i = 1; i <= n; i++)
			printf "%s.%s%05d@%s\n", a[rnd(10)], b[rnd(10)], i, d[rnd(4)]
	}'
}

# mail.log: postfix-style lines. Each message logs client, message-id, from
# and to lines; about 1 line in 100 is a "from=" line of a listed spammer.
# Ordinary senders live on other domains, so no ordinary line can match.
gen_log() {
	awk -v lines="$LINES" '
	function rnd(k) { seed = (seed * 16807) % 2147483647; return 1 + int(seed / 2147483647 * k) }
	function stamp(i,   s) {
		s = int(i * 86400 / lines)
		return sprintf("Nov 21 %02d:%02d:%02d mx1 postfix/", int(s / 3600), int(s / 60) % 60, s % 60)
	}
	function person() { return sprintf("%s.%s%d@%s", first[rnd(8)], last[rnd(8)], rnd(5000), dom[rnd(5)]) }
	BEGIN {
		seed = 4242
		split("alice bob carol dave erin frank grace heidi", first, " ")
		split("smith jones brown taylor wilson davies evans thomas", last, " ")
		split("corp.example.com mail.example.org uni.example.edu shop.example.net home.example.com", dom, " ")
		while ((getline addr < "spammers.txt") > 0)
			spammer[++nspam] = addr
		for (i = 1; i <= lines; i++) {
			id = sprintf("%07X", (i * 7919) % 268435456)
			t = stamp(i)
			if (rnd(100) == 1) {
				printf "%sqmgr[1001]: %s: from=<%s>, size=%d, nrcpt=1 (queue active)\n", t, id, spammer[rnd(nspam)], 1000 + rnd(90000)
				continue
			}
			kind = rnd(4)
			if (kind == 1)
				printf "%ssmtpd[%d]: %s: client=host-%d.example.net[198.51.100.%d]\n", t, 2000 + rnd(7000), id, rnd(250), rnd(250)
			else if (kind == 2)
				printf "%scleanup[%d]: %s: message-id=<%s.%s@mx1.example.net>\n", t, 2000 + rnd(7000), id, i, id
			else if (kind == 3)
				printf "%sqmgr[1001]: %s: from=<%s>, size=%d, nrcpt=1 (queue active)\n", t, id, person(), 1000 + rnd(90000)
			else
				printf "%ssmtp[%d]: %s: to=<%s>, relay=mx.example.com[192.0.2.%d]:25, status=sent\n", t, 2000 + rnd(7000), id, person(), rnd(250)
		}
	}'
}

echo "bftools demo: find the mail of listed spammers in a mail log"
echo
echo "1. Generate the data (awk, same every run)"
gen_spammers >spammers.txt
gen_log >mail.log
echo "   spammers.txt  $(lines spammers.txt) addresses, $(bytes spammers.txt) bytes, e.g."
head -n 2 spammers.txt | indent
echo "   mail.log      $(lines mail.log) lines, $(bytes mail.log) bytes, e.g."
head -n 4 mail.log | indent
echo

# --- 2. the filter --------------------------------------------------------

echo "2. Build a Bloom filter from the list (default size: 1000000 keys at p = 0.001)"
echo "   \$ bfbuild -v -o spammers.bf spammers.txt"
"$bin/bfbuild" -v -o spammers.bf spammers.txt 2>build.txt
indent <build.txt
echo

# --- 3. the search --------------------------------------------------------

echo "3. Search the log: a line is selected if any of its words is in the filter"
echo "   (-w splits from=<x@y>, into from and x@y)"
echo "   \$ bfgrep -w -f spammers.bf mail.log > found.txt"
"$bin/bfgrep" -w -f spammers.bf mail.log >found.txt
found=$(lines found.txt)
echo "   first 5 of the $found selected lines:"
head -n 5 found.txt | indent
echo

# --- 4. the exact answer --------------------------------------------------

echo "4. Compare with the exact answer"
awk '{ print "from=<" $0 ">" }' spammers.txt >patterns.txt
echo "   \$ grep -F -f patterns.txt mail.log > exact.txt    (patterns: from=<ADDRESS>)"
grep -F -f patterns.txt mail.log >exact.txt
exact=$(lines exact.txt)
sort found.txt >found.sorted
sort exact.txt >exact.sorted
true_pos=$(comm -12 exact.sorted found.sorted | wc -l | awk '{ print $1 }')
false_pos=$(comm -13 exact.sorted found.sorted | wc -l | awk '{ print $1 }')
missed=$(comm -23 exact.sorted found.sorted | wc -l | awk '{ print $1 }')
printf '   %-40s %6s\n' \
	"lines from a listed spammer (exact):" "$exact" \
	"lines bfgrep selected:" "$found" \
	"  of which exact matches:" "$true_pos" \
	"  of which false positives:" "$false_pos" \
	"spammer lines bfgrep missed:" "$missed"
if [ "$missed" -ne 0 ]; then
	echo "demo: FAILED: a Bloom filter must never miss a key that was added" >&2
	exit 1
fi
echo "   No line was missed: a Bloom filter has no false negatives. False"
echo "   positives happen at the filter's rate per word tested; this filter holds"
echo "   $SPAMMERS keys but is sized for 1000000, so its real rate is far below 0.001."
echo

# --- 5. sizes -------------------------------------------------------------

echo "5. Size"
"$bin/bfbuild" -n "$FITTED" -o fitted.bf spammers.txt
printf '   %-56s %9s bytes\n' \
	"spammers.txt (the list itself)" "$(bytes spammers.txt)" \
	"spammers.bf  (sized for 1000000 keys)" "$(bytes spammers.bf)" \
	"fitted.bf    (bfbuild -n $FITTED: the list and some room)" "$(bytes fitted.bf)"
echo "   On disk gzip squeezes the unused part of a filter; in memory it takes its"
echo "   full size (the -v report above). That size depends on how many keys it is"
echo "   sized for and on p, never on how long the keys are. Size it for the keys"
echo "   you expect, and remember that -w tests every word of a line: a line of w"
echo "   words is a false positive with a chance of about w x p."
echo
echo "demo: ok"
