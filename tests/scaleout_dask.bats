#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# scaleout_dask.bats - the README's map-reduce recipe on a real distributed
# engine: a Dask scheduler and three Dask workers, separate processes that
# talk over TCP on 127.0.0.1, and the driver tests/examples/bfdask.py
# submitting one task per shard through a Client. The tasks run bfbuild
# --like (bfcount --like for sketches) in the worker processes; the driver
# merges the shards with bfmerge. The result must be the serial build (or
# count), byte for byte, and every worker must have built some of it.
# Then de-duplication beyond one machine (tests/examples/bfdedup.py): map
# tasks bfsplit byte ranges by key partition, one reduce task per
# partition runs bfuniq -f STATE_i; the outputs must be awk '!s[$0]++''s,
# each in input order, on the first day and the next, after a failed run
# run again, and with a worker killed by its PID mid-run (the last test).
#
# Run by `make check-scaleout` (which installs python3-distributed and sets
# BFTOOLS_CHECK_SCALEOUT=1), not by make check: it starts network servers
# and a Python stack that the suite otherwise never needs, and make check
# runs four times in .ci/run. Elsewhere every test here skips, saying why.
#
# The cluster is started once for the file (setup_file) and always torn
# down (teardown_file, which bats runs even when setup_file fails): every
# process is stopped by its own PID, TERM first, then KILL. As a last
# resort the scheduler ends itself after 300 s without work and the workers
# when their scheduler has gone. Every port is chosen free by the system
# (port 0); the scheduler's address reaches the workers and the driver in
# its --scheduler-file. Dashboards are off and the HTTP servers that Dask
# starts anyway are bound to 127.0.0.1 too: one test checks that no
# process of the cluster listens anywhere else. Dask runs on the system
# python (/usr/bin/python3, the Debian package), whatever python3 PATH
# finds first, with HOME and its configuration in the test's directory.

bats_require_minimum_version 1.5.0
load helpers

N=200000
P=1e-4
WORKERS=3
PY=/usr/bin/python3
DRIVER=$BATS_TEST_DIRNAME/examples/bfdask.py

setup_file() {
	export DASK_SKIP=""
	if [ "${BFTOOLS_CHECK_SCALEOUT:-}" != 1 ]; then
		DASK_SKIP="run by make check-scaleout (Dask distributed, not part of make check)"
		return 0
	fi
	if ! "$PY" -c 'import distributed' 2>/dev/null; then
		DASK_SKIP="python3-distributed is not installed (make check-scaleout installs it)"
		return 0
	fi
	export CLUSTER="$BATS_FILE_TMPDIR/cluster"
	mkdir -p "$CLUSTER/config"
	export HOME="$CLUSTER" DASK_CONFIG="$CLUSTER/config"
	start_cluster
}

teardown_file() {
	[ -n "${CLUSTER:-}" ] && [ -f "$CLUSTER/pids" ] || return 0
	stop_cluster
}

# start_cluster: the scheduler, then the workers, each PID written to
# $CLUSTER/pids as soon as it is known; returns once all have registered.
# Each runs through $DETACH, which closes every descriptor above 2 and
# execs Dask in the same process: bats reads its own pipes (fd 3 and
# others) to their end, so a server holding one would stall bats.
DETACH='import os, sys; os.closerange(3, os.sysconf("SC_OPEN_MAX")); os.execv(sys.argv[1], sys.argv[1:])'
start_cluster() {
	cd "$CLUSTER"
	"$PY" -c "$DETACH" "$PY" /usr/bin/dask scheduler --host 127.0.0.1 --port 0 --no-dashboard \
		--dashboard-address 127.0.0.1:0 --scheduler-file scheduler.json \
		--idle-timeout 300 </dev/null >scheduler.log 2>&1 &
	echo "scheduler $!" >>pids
	disown	# stopped by PID (stop_cluster), never waited for: no "Killed" notice from bash
	wait_for_file scheduler.json
	local w
	for w in $(seq 1 $WORKERS); do
		"$PY" -c "$DETACH" "$PY" /usr/bin/dask worker --scheduler-file scheduler.json --host 127.0.0.1 --no-nanny \
			--nthreads 1 --no-dashboard --dashboard-address 127.0.0.1:0 \
			--local-directory "$CLUSTER/worker$w" --name "worker$w" --death-timeout 30 \
			</dev/null >"worker$w.log" 2>&1 &
		echo "worker $!" >>pids
		disown
	done
	# the worker PIDs as the scheduler knows them: each worker's own process
	"$PY" -c "import os, sys
from distributed import Client
with Client(scheduler_file='scheduler.json', timeout=60) as c:
    c.wait_for_workers($WORKERS, timeout=120)
    print(*sorted(c.run(os.getpid).values()))" >worker_pids
}

# wait_for_file FILE: FILE exists and is not empty, within 60 s.
wait_for_file() {
	local i
	for i in $(seq 1 600); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	echo "no $1 after 60 s; scheduler.log:" >&2
	cat "$CLUSTER/scheduler.log" >&2
	return 1
}

# stop_cluster: TERM to every process started, by PID; those still there
# after 15 s get KILL. Fails if one survives that.
stop_cluster() {
	local pids pid i
	pids=$(cut -d ' ' -f 2 "$CLUSTER/pids")
	for pid in $pids; do kill -TERM "$pid" 2>/dev/null || true; done
	for i in $(seq 1 150); do
		alive "$pids" || return 0
		sleep 0.1
	done
	for pid in $pids; do kill -KILL "$pid" 2>/dev/null || true; done
	sleep 1
	! alive "$pids"
}

# alive PIDS: one of PIDS is still running (a zombie has ended).
alive() {
	local pid state
	for pid in $1; do
		state=$(ps -o stat= -p "$pid" 2>/dev/null) || continue
		case $state in Z*) ;; *) return 0 ;; esac
	done
	return 1
}

setup() {
	[ -z "$DASK_SKIP" ] || skip "$DASK_SKIP"
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
	seq -f 'https://example.com/page/%g' 1 $N >urls.txt
	bfbuild -n $N -p $P --key "$KEY" -o template.bf </dev/null
	bfbuild -n $N -p $P --key "$KEY" -o serial.bf urls.txt
}

# bfdask ARGS...: the driver, on the system python, on this cluster.
bfdask() {
	bfdask_file "$CLUSTER/scheduler.json" "$@"
}

# bfdask_file SCHEDULER_FILE ARGS...: the driver given that scheduler file.
bfdask_file() {
	"$PY" "$DRIVER" --scheduler-file "$@"
}

# shard_pids: the worker PIDs in bfdask -v's report ($stderr), sorted, unique.
shard_pids() {
	printf '%s\n' "$stderr" | sed -n 's/^bfdask: shard .* pid \([0-9]*\)$/\1/p' | sort -n -u | xargs
}

# listeners PID...: "PID ADDRESS:PORT" for every TCP socket PID listens on,
# IPv4 and IPv6, read from /proc (the socket inodes of its descriptors).
listeners() {
	"$PY" - "$@" <<-'EOF'
	import os, socket, struct, sys
	def address(hexaddr, family):
	    # 32-bit words in host order, as the kernel prints them
	    hexip = hexaddr.split(":")[0]
	    raw = b"".join(struct.pack("=I", int(hexip[i:i + 8], 16)) for i in range(0, len(hexip), 8))
	    return socket.inet_ntop(family, raw)
	def listening():
	    found = {}
	    for name, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
	        with open("/proc/net/" + name) as f:
	            next(f)
	            for row in f:
	                cols = row.split()
	                if cols[3] == "0A":  # TCP_LISTEN
	                    port = int(cols[1].split(":")[1], 16)
	                    found[cols[9]] = "%s:%d" % (address(cols[1], family), port)
	    return found
	sockets = listening()
	for pid in sys.argv[1:]:
	    for fd in os.listdir("/proc/%s/fd" % pid):
	        try:
	            link = os.readlink("/proc/%s/fd/%s" % (pid, fd))
	        except OSError:
	            continue
	        if link.startswith("socket:[") and link[8:-1] in sockets:
	            print(pid, sockets[link[8:-1]])
	EOF
}

@test "scaleout dask: scheduler and workers are separate processes listening on 127.0.0.1 only" {
	local started workers
	started=$(cut -d ' ' -f 2 "$CLUSTER/pids" | sort -n | xargs)
	workers=$(grep '^worker ' "$CLUSTER/pids" | cut -d ' ' -f 2 | sort -n | xargs)
	expect_eq "worker PIDs the scheduler reports" "$workers" "$(cat "$CLUSTER/worker_pids")"
	expect_eq "distinct processes" $((WORKERS + 1)) "$(printf '%s\n' $started | sort -u | wc -l)"
	run --separate-stderr listeners $started
	expect_status 0
	# each process listens at least once (its Dask port), all on 127.0.0.1
	expect_eq "processes listening" "$started" "$(printf '%s\n' "$output" | cut -d ' ' -f 1 | sort -n -u | xargs)"
	expect_eq "listeners not on 127.0.0.1" "" "$(printf '%s\n' "$output" | grep -v ' 127\.0\.0\.1:[0-9]*$' || true)"
}

@test "scaleout dask: bfbuild shards built by every worker, merged, are the serial build byte for byte" {
	run --separate-stderr bfdask -v --workers $WORKERS --shards 6 --like template.bf -o merged.bf urls.txt
	expect_status 0
	expect_output ""
	expect_eq "shards reported" 6 "$(printf '%s\n' "$stderr" | grep -c '^bfdask: shard [1-6]/6: urls.txt bytes ')"
	expect_eq "PIDs of the workers that built shards" "$(cat "$CLUSTER/worker_pids")" "$(shard_pids)"
	cmp merged.bf serial.bf
	expect_eq insertions $N "$(header_uint merged.bf 96 8)"
	# the shards' directory is gone
	expect_eq "files left" "merged.bf serial.bf template.bf urls.txt" "$(ls -A | xargs)"
}

@test "scaleout dask: bfcount sketches of the shards, merged, are the serial sketch and count" {
	local serial addr
	bfcount -o hll-template.hll </dev/null >/dev/null
	serial=$(bfcount -o serial.hll urls.txt)
	# the scheduler's address given as such, not in its file
	addr=$(sed -n 's/^ *"address": "\(tcp:[^"]*\)",*$/\1/p' "$CLUSTER/scheduler.json")
	run --separate-stderr "$PY" "$DRIVER" --scheduler "$addr" -v --count --shards 6 \
		--like hll-template.hll -o merged.hll urls.txt
	expect_status 0
	expect_output "$serial"
	expect_eq "PIDs of the workers that counted shards" "$(cat "$CLUSTER/worker_pids")" "$(shard_pids)"
	cmp merged.hll serial.hll
	run --separate-stderr bfcount -s merged.hll
	expect_output "$serial"
	# a real count of the 200000 keys: within 1% at the 95th percentile,
	# and the same every run (bfcount's default key is fixed and public)
	[ "$serial" -ge 198000 ] && [ "$serial" -le 202000 ]
}

@test "scaleout dask: several files and -z records with a key field, merged to the serial build" {
	# records "key<newline>N" ended by NUL, keyed on N: a cut at a newline would split them
	seq -f 'key %g' 1 60000 | tr ' \n' '\n\000' >a.z
	seq -f 'key %g' 60001 90000 | tr ' \n' '\n\000' >b.z
	cat a.z b.z | bfbuild -z -k 2 -t $'\n' -n 90000 --key "$KEY" -o zserial.bf
	bfbuild -n 90000 --key "$KEY" -o ztemplate.bf </dev/null
	run --separate-stderr bfdask -z --shards 5 --like ztemplate.bf -o merged.bf a.z b.z -- -k 2 -t $'\n'
	expect_status 0
	expect_stderr ""
	cmp merged.bf zserial.bf
}

@test "scaleout dask: a shard that fails fails the run: one line, status 2, no output" {
	echo "not a filter" >bad.bf
	run --separate-stderr bfdask --shards 4 --like bad.bf -o merged.bf urls.txt
	expect_status 2
	expect_output ""
	case $stderr in
	"bfdask: shard "[1-4]"/4 ($PWD/urls.txt bytes "*"): bfbuild: $PWD/bad.bf: not a bftools filter"*) ;;
	*) expect_eq "stderr" "bfdask: shard I/4 ($PWD/urls.txt bytes A-B): bfbuild: $PWD/bad.bf: not a bftools filter..." "$stderr" ;;
	esac
	[ ! -e merged.bf ]
	expect_eq "files left" "bad.bf serial.bf template.bf urls.txt" "$(ls -A | xargs)"
}

@test "scaleout dask: no scheduler fails the run after --wait: one line, status 2, no output" {
	run --separate-stderr bfdask_file absent.json --wait 1 --like template.bf -o merged.bf urls.txt
	expect_fail "bfdask: absent.json: no scheduler address after 1 s ([Errno 2] No such file or directory: 'absent.json')"
	run --separate-stderr "$PY" "$DRIVER" --scheduler tcp://127.0.0.1:1 --wait 1 \
		--like template.bf -o merged.bf urls.txt
	expect_status 2
	expect_output ""
	expect_eq "stderr" "bfdask: cannot use the scheduler: Timed out trying to connect to tcp://127.0.0.1:1 after 1 s" "$stderr"
	expect_eq "files left" "serial.bf template.bf urls.txt" "$(ls -A | xargs)"
}

# ------------------------------------------------- de-duplication by partition
# tests/examples/bfdedup.py: map tasks bfsplit byte ranges by key partition,
# one reduce task per partition runs bfuniq -f STATE_i over its pieces.
DEDUP=$BATS_TEST_DIRNAME/examples/bfdedup.py
PARTS=8

# day1.txt: 1e6 URLs drawn from 600000 (about 810000 distinct, many
# repeated); day2.txt: 300000 drawn from 900000, a third of them new.
dedup_input() {
	awk 'BEGIN { srand(1); for (i = 0; i < 1000000; i++) print "https://example.com/u" int(rand() * 600000) }' >day1.txt
	awk 'BEGIN { srand(2); for (i = 0; i < 300000; i++) print "https://example.com/u" int(rand() * 900000) }' >day2.txt
}

# bfdedup ARGS...: the driver on this cluster, 8 partitions, fixed keys, -p 1e-9.
bfdedup() {
	"$PY" "$DEDUP" --scheduler-file "$CLUSTER/scheduler.json" -N $PARTS --shard-key "$KEY" "$@" \
		-- -p 1e-9 --key "$KEY"
}

# expect_partitions OUTDIR WANT: OUTDIR's outputs together are WANT's lines
# (a multiset), and each output is in WANT's order.
expect_partitions() {
	local i
	[ "$(ls "$1"/part-* | wc -l)" -eq $PARTS ]
	cat "$1"/part-* | sort | cmp - <(sort "$2")
	for i in "$1"/part-*; do
		awk 'NR == FNR { mine[$0] = 1; next } $0 in mine' "$i" "$2" | cmp - "$i"
	done
}

# dedup_pids: the worker PIDs in bfdedup -v's report ($stderr), sorted, unique.
dedup_pids() {
	printf '%s\n' "$stderr" | sed -n 's/^bfdedup: partition .* pid \([0-9]*\)$/\1/p' | sort -n -u | xargs
}

@test "scaleout dask: dedup by partition on every worker writes awk's first sightings, each partition in input order" {
	local i distinct count
	dedup_input
	awk '!s[$0]++' day1.txt >want.txt
	run --separate-stderr bfdedup -v --workers $WORKERS --state-dir states -o out --run day1 day1.txt
	expect_status 0
	expect_output ""
	expect_eq "partitions reported" $PARTS "$(printf '%s\n' "$stderr" | grep -c '^bfdedup: partition [0-7]/8: ')"
	expect_eq "PIDs of the workers that de-duplicated" "$(cat "$CLUSTER/worker_pids")" "$(dedup_pids)"
	expect_partitions out want.txt
	# the lines reported (bfuniq's own count, from its -v --json) are each output's
	for i in $(seq 0 7); do
		expect_eq "partition $i's lines reported" "$(wc -l <out/part-0000$i | tr -d ' ')" \
			"$(printf '%s\n' "$stderr" | sed -n "s|^bfdedup: partition $i/8: \([0-9]*\) lines: .*|\1|p")"
	done
	# each state holds its share: 810000 / 8 = 101000 keys, binomial sd 300,
	# bfcount's estimate off by far less than the 10% allowed
	distinct=$(wc -l <want.txt)
	for i in $(seq 0 7); do
		count=$(bfcount -f states/day1/part-0000$i.bf)
		[ "$count" -gt $((distinct / PARTS * 9 / 10)) ] && [ "$count" -lt $((distinct / PARTS * 11 / 10)) ] ||
			expect_eq "state $i keys" "$((distinct / PARTS)) +-10%" "$count"
	done
	expect_eq "CURRENT" day1 "$(cat states/CURRENT)"
	# nothing left but outputs and states: no pieces, temporaries or locks
	expect_eq "files left" "CURRENT config.json day1" "$(ls -A states | xargs)"
	expect_eq "states" 8 "$(ls -A states/day1 | grep -c '^part-0000[0-7]\.bf$')"
	expect_eq "state dir" 8 "$(ls -A states/day1 | wc -l)"
	expect_eq "outputs" 8 "$(ls -A out | wc -l)"
}

@test "scaleout dask: the second day's run against the saved states writes exactly the keys never seen" {
	dedup_input
	bfdedup --state-dir states -o out1 --run day1 day1.txt
	# each task's bfsplit and bfuniq on two threads: the same outputs as on one
	run --separate-stderr bfdedup --task-threads 2 --state-dir states -o out2 --run day2 day2.txt
	expect_status 0
	expect_stderr ""
	awk 'NR == FNR { seen[$0] = 1; next } !seen[$0]++' day1.txt day2.txt >new.txt
	[ "$(wc -l <new.txt)" -gt 50000 ]
	expect_partitions out2 new.txt
	expect_eq "CURRENT" day2 "$(cat states/CURRENT)"
	# the first day's states are gone, the second's replace them
	expect_eq "state runs" "CURRENT config.json day2" "$(ls -A states | xargs)"
	# another partition count or key cannot use these states
	run --separate-stderr "$PY" "$DEDUP" --scheduler-file "$CLUSTER/scheduler.json" -N 4 --shard-key "$KEY" \
		--state-dir states -o out3 --run day3 day2.txt
	expect_fail "bfdedup: $PWD/states/config.json: the states were made with 8 partitions and another shard key: give the same -N and --shard-key"
	run --separate-stderr bfdedup --task-threads 0 --state-dir states -o out3 --run day3 day2.txt
	expect_fail "bfdedup: --task-threads 0: 1 or more"
}

@test "scaleout dask: a run that failed in one partition, run again, is exact: no duplicate, nothing lost" {
	dedup_input
	awk '!s[$0]++' day1.txt >want.txt
	# partition 3's output cannot be renamed into place: a directory is there
	mkdir -p out/part-00003/blocker
	run --separate-stderr bfdedup --state-dir states -o out --run day1 day1.txt
	expect_status 2
	case $stderr in "bfdedup: partition 3/8: "*) ;; *) expect_eq stderr "bfdedup: partition 3/8: ..." "$stderr" ;; esac
	[ ! -e states/CURRENT ]
	rm -r out/part-00003
	run --separate-stderr bfdedup --state-dir states -o out --run day1 day1.txt
	expect_status 0
	expect_partitions out want.txt
}

@test "scaleout dask: a map task's range reaches bfsplit exactly, by sendfile or, where it cannot be used, read and written" {
	seq 1 300000 >in.txt
	# to a pipe by sendfile; to an O_APPEND file, which sendfile refuses
	# (EINVAL), by the fallback: each prints its sendfile errors, then
	# whether the bytes are exactly the range
	run "$PY" -c '
import errno, os, subprocess, sys
sys.path.insert(0, sys.argv[1])
import bfdask
errors, real = [], os.sendfile
def spy(*a):
    try:
        return real(*a)
    except OSError as e:
        errors.append(errno.errorcode[e.errno])
        raise
os.sendfile = spy
data = open("in.txt", "rb").read()
a, b = 1001, len(data) - 777
with open("in.txt", "rb") as f, open("piped", "wb") as out:
    cat = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=out)
    bfdask.copy_range(f, a, b, cat.stdin)
    cat.stdin.close()
    cat.wait()
print("pipe", errors, open("piped", "rb").read() == data[a:b])
with open("in.txt", "rb") as f, open("appended", "ab") as out:
    bfdask.copy_range(f, a, b, out)
print("append", errors, open("appended", "rb").read() == data[a:b])
' "$BATS_TEST_DIRNAME/examples"
	expect_status 0
	expect_output "pipe [] True
append ['EINVAL'] True"
}

# Last: it leaves the cluster one worker short.
@test "scaleout dask: a worker killed by its PID mid-run: the job is still exact" {
	local driver victim i
	dedup_input
	cat day1.txt day2.txt day1.txt >three.txt
	awk '!s[$0]++' three.txt >want.txt
	victim=$(cut -d ' ' -f 1 "$CLUSTER/worker_pids")
	"$PY" "$DEDUP" --scheduler-file "$CLUSTER/scheduler.json" -N $PARTS --shard-key "$KEY" --shards 60 \
		--state-dir states -o out --run day1 -v three.txt -- -p 1e-9 --key "$KEY" 2>driver.err &
	driver=$!
	# the first map task's pieces: the job is under way
	for i in $(seq 1 300); do
		ls out/.bfdedup.*/map* >/dev/null 2>&1 && break
		sleep 0.02
	done
	kill -0 "$driver" || expect_eq "driver" "still running when the worker is killed" "(done)"
	kill -KILL "$victim"
	wait "$driver" || { cat driver.err >&2; false; }
	expect_partitions out want.txt
	expect_eq "CURRENT" day1 "$(cat states/CURRENT)"
}
