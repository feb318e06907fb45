#!/bin/sh
# SPDX-License-Identifier: MIT
# share.sh - how a command's CPU time is spread over its threads (issue
# 27's measure on a machine without 16 cores): runs COMMAND, samples
# /proc/PID/task/*/stat every 50 ms, and prints each thread's CPU seconds
# (user + system, the last sample it was seen in) and its share of the
# process's, largest first, then the process's total and wall time.
#
#   tests/bench/share.sh COMMAND [ARG...]     (output of COMMAND to /dev/null)
#
# Linux only (/proc). A thread's last 50 ms may be missed if it ends
# before the process does; the total is the process's own count, which
# includes them, so the shares are slight underestimates. Measures only;
# never part of `make check`.
set -u

[ $# -ge 1 ] || { echo "usage: share.sh COMMAND [ARG...]" >&2; exit 2; }
[ -d /proc/self/task ] || { echo "share.sh: needs /proc" >&2; exit 2; }
hz=$(getconf CLK_TCK)
samples=$(mktemp) || exit 2
trap 'rm -f "$samples"' EXIT
t0=$(date +%s%N)
"$@" >/dev/null &
pid=$!
total=0
while kill -0 "$pid" 2>/dev/null; do
	# fields 14 and 15 (utime, stime) counted after the ")" that ends the name
	for stat in /proc/"$pid"/task/*/stat; do
		sed 's/.*) //' "$stat" 2>/dev/null | awk -v t="${stat%/stat}" '{ print t, $12 + $13 }'
	done >>"$samples"
	p=$(sed 's/.*) //' /proc/"$pid"/stat 2>/dev/null | awk '{ print $12 + $13 }')
	[ -n "$p" ] && total=$p
	sleep 0.05
done
wait "$pid"
status=$?
t1=$(date +%s%N)
awk -v hz="$hz" -v total="$total" -v wall="$(( (t1 - t0) / 1000000 ))" '
	{ cpu[$1] = $2 }
	END {
		for (t in cpu) sum += cpu[t]
		if (total < sum) total = sum
		for (t in cpu) printf "%8.2f s %5.1f%%  %s\n", cpu[t] / hz, total ? 100 * cpu[t] / total : 0, t
		printf "process %.2f s CPU, %.2f s wall\n", total / hz, wall / 1000
	}' "$samples" | sort -rn
exit "$status"
