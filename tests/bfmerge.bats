#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# bfmerge.bats - the command-line contract of bfmerge (bfmerge(1)): OR of
# shards is the serial build bit for bit, AND keeps the intersection (and
# only what both filters say), every incompatibility is refused by name,
# growing filters merge stage by stage, output is atomic and checked, and
# the completions offer what --help lists.
#
# Header fields are read from the decompressed file: file header at 0,
# stage header i at 64 + 64 i (its insertion count at 96 + 64 i); a fixed
# filter's bits start at byte 128.

bats_require_minimum_version 1.5.0
load helpers

SYNOPSIS="Usage: bfmerge [-o FILE] [--intersect] [-v] [--no-wait] FILTER..."

# As in helpers.bash, with the programs these tests run besides bfbuild.
setup() {
	for prog in bfbuild bfgrep bfmerge bfuniq; do
		if [ ! -x "$BFTOOLS_BIN/$prog" ]; then
			echo "$BFTOOLS_BIN/$prog is missing: build it (make) or set BFTOOLS_BIN" >&2
			return 1
		fi
	done
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
}

# payload FILTER: the bit array of a one-stage filter, as hex (no headers).
payload() {
	gzip -dc "$1" | tail -c +129 | od -A n -v -t x1 | tr -d ' \n'
}

# shards TEMPLATE FILE...: shardI.bf --like TEMPLATE from the Ith FILE.
shards() {
	local template=$1 i=0 f
	shift
	for f in "$@"; do
		i=$((i + 1))
		bfbuild --like "$template" -o "shard$i.bf" "$f"
	done
}

# split_three FILE: FILE's lines dealt into part1..part3 in runs, as
# parallel --pipe would cut them.
split_three() {
	local n
	n=$(wc -l <"$1")
	head -n $((n / 3)) "$1" >part1.txt
	tail -n +$((n / 3 + 1)) "$1" | head -n $((n / 3)) >part2.txt
	tail -n +$((2 * (n / 3) + 1)) "$1" >part3.txt
}

# ---------------------------------------------------------------- help, version

@test "bfmerge: -h prints the usage on stdout, starting with the synopsis, and exits 0" {
	run --separate-stderr bfmerge -h
	expect_status 0
	expect_stderr ""
	expect_eq "first line" "$SYNOPSIS" "${lines[0]}"
}

@test "bfmerge: --help prints the same usage as -h, naming every long option" {
	run --separate-stderr bfmerge -h
	local short=$output
	run --separate-stderr bfmerge --help
	expect_status 0
	expect_output "$short"
	for opt in --output --intersect --verbose --no-wait --help --version; do
		case $output in *"$opt"*) ;; *) expect_eq "help mentions" "$opt" "(missing)" ;; esac
	done
}

@test "bfmerge: -V and --version print 'bfmerge (bftools) 1.0.0' then the MIT licence" {
	run --separate-stderr bfmerge -V
	expect_status 0
	expect_stderr ""
	expect_eq "first line" "bfmerge (bftools) 1.0.0" "${lines[0]}"
	case $output in *MIT*"This is free software"*) ;; *) expect_eq licence "MIT ... This is free software" "$output" ;; esac
	local short=$output
	run --separate-stderr bfmerge --version
	expect_status 0
	expect_output "$short"
}

@test "bfmerge: --help to a full disk is a write error, exit 2" {
	run --separate-stderr bash -c 'bfmerge --help >/dev/full'
	expect_fail "bfmerge: write error: No space left on device"
}

# ---------------------------------------------------------------- usage errors

@test "bfmerge: no FILTER is a usage error" {
	run --separate-stderr bfmerge -o f.bf
	expect_usage_error bfmerge "no filter given"
	[ ! -e f.bf ]
}

@test "bfmerge: an unknown option or -o without its argument is a usage error" {
	run --separate-stderr bfmerge -x a.bf
	expect_any_usage_error bfmerge
	run --separate-stderr bfmerge --union a.bf
	expect_any_usage_error bfmerge
	run --separate-stderr bfmerge -o
	expect_any_usage_error bfmerge
}

@test "bfmerge: standard input named twice is a usage error" {
	build a.bf -n 100 </dev/null
	run --separate-stderr bfmerge -o f.bf - - <a.bf
	expect_usage_error bfmerge "standard input can be read only once"
	[ ! -e f.bf ]
}

# ---------------------------------------------------------------- OR = serial build

@test "bfmerge: OR of shards built --like one template is the serial build, bit for bit" {
	seq -f 'user%g@example.com' 1 30000 >all.txt
	split_three all.txt
	build serial.bf -n 30000 -p 1e-4 all.txt
	build template.bf -n 30000 -p 1e-4 </dev/null
	shards template.bf part1.txt part2.txt part3.txt
	run --separate-stderr bfmerge -o merged.bf shard1.bf shard2.bf shard3.bf
	expect_status 0
	expect_output ""
	expect_stderr ""
	cmp merged.bf serial.bf
}

@test "bfmerge: OR of shards is the serial build with --layout classic" {
	seq 1 30000 >all.txt
	split_three all.txt
	build serial.bf -n 30000 -p 1e-3 --layout classic all.txt
	build template.bf -n 30000 -p 1e-3 --layout classic </dev/null
	shards template.bf part1.txt part2.txt part3.txt
	bfmerge -o merged.bf shard1.bf shard2.bf shard3.bf
	cmp merged.bf serial.bf
}

@test "bfmerge: OR of shards is the serial build with --hash siphash24" {
	seq 1 30000 >all.txt
	split_three all.txt
	build serial.bf -n 30000 -p 1e-3 --hash siphash24 all.txt
	build template.bf -n 30000 -p 1e-3 --hash siphash24 </dev/null
	shards template.bf part1.txt part2.txt part3.txt
	bfmerge -o merged.bf shard1.bf shard2.bf shard3.bf
	cmp merged.bf serial.bf
}

@test "bfmerge: OR of shards is the serial build with -i, and still folds case" {
	seq -f 'User%g@Example.COM' 1 30000 >all.txt
	split_three all.txt
	build serial.bf -n 30000 -p 1e-3 -i all.txt
	build template.bf -n 30000 -p 1e-3 -i </dev/null
	shards template.bf part1.txt part2.txt part3.txt
	bfmerge -o merged.bf shard1.bf shard2.bf shard3.bf
	cmp merged.bf serial.bf
	put_lines q.txt user1@example.com USER30000@EXAMPLE.COM
	run --separate-stderr bfgrep -c -f merged.bf q.txt
	expect_output 2
}

@test "bfmerge: the order of the inputs does not change the result" {
	seq 1 9000 >all.txt
	split_three all.txt
	build template.bf -n 9000 </dev/null
	shards template.bf part1.txt part2.txt part3.txt
	bfmerge -o abc.bf shard1.bf shard2.bf shard3.bf
	bfmerge -o cab.bf shard3.bf shard1.bf shard2.bf
	cmp abc.bf cab.bf
}

@test "bfmerge: without -o the result goes to stdout; --output=FILE is the long -o" {
	put_lines a.txt alice
	put_lines b.txt bob
	build template.bf -n 100 -p 1e-6 </dev/null
	shards template.bf a.txt b.txt
	run --separate-stderr bash -c 'bfmerge shard1.bf shard2.bf >out.bf'
	expect_status 0
	expect_stderr ""
	bfmerge --output=long.bf shard1.bf shard2.bf
	cmp out.bf long.bf
	put_lines q.txt alice bob carol
	run --separate-stderr bfgrep -f out.bf q.txt
	expect_status 0
	expect_output $'alice\nbob'
}

@test "bfmerge: - reads one of the filters from standard input, in any position" {
	seq 1 9000 >all.txt
	split_three all.txt
	build serial.bf -n 9000 all.txt
	build template.bf -n 9000 </dev/null
	shards template.bf part1.txt part2.txt part3.txt
	bfmerge -o first.bf - shard2.bf shard3.bf <shard1.bf
	bfmerge -o middle.bf shard1.bf - shard3.bf <shard2.bf
	bfmerge shard1.bf shard2.bf - <shard3.bf >last.bf
	cmp first.bf serial.bf
	cmp middle.bf serial.bf
	cmp last.bf serial.bf
}

@test "bfmerge: a single FILTER is copied unchanged, after being checked" {
	seq 1 1000 >in.txt
	build a.bf -n 1000 in.txt
	run --separate-stderr bfmerge -o copy.bf a.bf
	expect_status 0
	expect_stderr ""
	cmp copy.bf a.bf
	gzip -dc a.bf | head -c 1000 | gzip >short.bf
	run --separate-stderr bfmerge -o copy2.bf short.bf
	expect_one_line_error "bfmerge: short.bf: "
	[ ! -e copy2.bf ]
}

@test "bfmerge: insertion counts are summed (a filter merged with itself doubles them)" {
	seq 1 1000 >a.txt
	seq 1001 1500 >b.txt
	build template.bf -n 2000 </dev/null
	shards template.bf a.txt b.txt
	bfmerge -o ab.bf shard1.bf shard2.bf
	expect_eq "insertions of a + b" 1500 "$(header_uint ab.bf 96 8)"
	expect_eq "insertions (od)" 1500 "$(gzip -dc ab.bf | od -A n -t u8 -j 96 -N 8 | tr -d ' ')"
	bfmerge -o aa.bf shard1.bf shard1.bf
	expect_eq "insertions of a + a" 2000 "$(header_uint aa.bf 96 8)"
	# OR is idempotent: the bits are those of a alone
	expect_eq "bits of a + a" "$(payload shard1.bf)" "$(payload aa.bf)"
}

@test "bfmerge: -o may name one of the inputs, which is replaced by the union" {
	seq 1 1000 >a.txt
	seq 1001 2000 >b.txt
	cat a.txt b.txt >ab.txt
	build serial.bf -n 2000 ab.txt
	build template.bf -n 2000 </dev/null
	shards template.bf a.txt b.txt
	cp shard1.bf acc.bf
	bfmerge -o acc.bf acc.bf shard2.bf
	cmp acc.bf serial.bf
	cp shard2.bf acc2.bf
	bfmerge -o acc2.bf shard1.bf acc2.bf
	cmp acc2.bf serial.bf
}

@test "bfmerge: filters differing only in their recorded capacity and rate merge; the first's are kept" {
	put_lines a.txt alice
	put_lines b.txt bob
	# -m and -n fix the rate recorded: the rate at n keys (-p may not be given too)
	build a.bf -m 4096 -K 4 -n 100 a.txt
	build b.bf -m 4096 -K 4 -n 200 b.txt
	[ "$(header_hex a.bf 48 8)" != "$(header_hex b.bf 48 8)" ]
	run --separate-stderr bfmerge -o ab.bf a.bf b.bf
	expect_status 0
	expect_stderr ""
	expect_eq "capacity and rate" "$(header_hex a.bf 40 16)" "$(header_hex ab.bf 40 16)"
	run --separate-stderr bfgrep -c -f ab.bf <(cat a.txt b.txt)
	expect_output 2
}

# ---------------------------------------------------------------- AND

# A = 1..100000 and B = 90001..190000, each filling a filter sized for
# 100000 keys at 1%; A and B share 90001..100000. Every guarantee below is
# exact, not statistical: a bit set by a key of A and B is set in both
# filters, so the AND holds every bit of the filter built from A and B
# directly (every key positive there is positive in the AND, which can
# only add false positives), and the AND holds no bit that A or B lacks.
# Measured with this key on 200000 absent keys: the AND says present for
# 35, the filter built from A and B directly for 0, A alone for 2049 and
# B alone for 1961: a rate near 2e-4, where the direct filter (holding
# a tenth of its capacity) is far below 1e-5.
@test "bfmerge: --intersect keeps every key of both, and only what both filters say" {
	seq 1 100000 >A.txt
	seq 90001 190000 >B.txt
	seq 90001 100000 >AB.txt
	seq 1000001 1200000 >absent.txt
	build template.bf -n 100000 -p 0.01 </dev/null
	bfbuild --like template.bf -o A.bf A.txt
	bfbuild --like template.bf -o B.bf B.txt
	bfbuild --like template.bf -o direct.bf AB.txt
	run --separate-stderr bfmerge --intersect -o and.bf A.bf B.bf
	expect_status 0
	expect_stderr ""
	run --separate-stderr bfgrep -c -f and.bf AB.txt
	expect_output 10000
	# direct <= AND <= A, B, bit by bit: OR-ing the smaller in changes nothing
	bfmerge -o direct+and.bf direct.bf and.bf
	expect_eq "bits of direct OR and" "$(payload and.bf)" "$(payload direct+and.bf)"
	bfmerge -o and+A.bf and.bf A.bf
	expect_eq "bits of and OR A" "$(payload A.bf)" "$(payload and+A.bf)"
	bfmerge -o and+B.bf and.bf B.bf
	expect_eq "bits of and OR B" "$(payload B.bf)" "$(payload and+B.bf)"
	# and so on absent keys: direct's false positives are among the AND's
	bfgrep -f direct.bf absent.txt >fp-direct.txt || true
	bfgrep -f and.bf absent.txt >fp-and.txt || true
	bfgrep -f A.bf absent.txt >fp-A.txt || true
	bfgrep -f B.bf absent.txt >fp-B.txt || true
	expect_eq "direct false positives missing from the AND's" "" "$(comm -23 fp-direct.txt fp-and.txt)"
	expect_eq "AND false positives missing from A's" "" "$(comm -23 fp-and.txt fp-A.txt)"
	expect_eq "AND false positives missing from B's" "" "$(comm -23 fp-and.txt fp-B.txt)"
	echo "# false positives on 200000 absent keys: and $(wc -l <fp-and.txt)," \
		"direct $(wc -l <fp-direct.txt), A $(wc -l <fp-A.txt), B $(wc -l <fp-B.txt)" >&3
	[ "$(wc -l <fp-and.txt)" -ge "$(wc -l <fp-direct.txt)" ]
}

@test "bfmerge: --intersect of a filter with itself keeps its bits" {
	seq 1 5000 >in.txt
	build a.bf -n 5000 --layout classic in.txt
	bfmerge --intersect -o aa.bf a.bf a.bf
	expect_eq bits "$(payload a.bf)" "$(payload aa.bf)"
	run --separate-stderr bfgrep -c -f aa.bf in.txt
	expect_output 5000
}

# ---------------------------------------------------------------- incompatible

# Each pair differs in exactly one parameter. The message names the file
# being merged in, then the first FILTER, then the values in that order.

@test "bfmerge: filters of different sizes (-n) are refused, naming both files and the size" {
	build n1.bf -n 1000 </dev/null
	build n2.bf -n 2000 </dev/null
	run --separate-stderr bfmerge -o f.bf n1.bf n2.bf
	expect_fail "bfmerge: n2.bf: cannot be merged with n1.bf: different size (31232 vs 15872 bits)"
	[ ! -e f.bf ]
}

@test "bfmerge: filters with different k (-K) are refused, naming both files and k" {
	build k4.bf -m 16384 -K 4 </dev/null
	build k5.bf -m 16384 -K 5 </dev/null
	run --separate-stderr bfmerge -o f.bf k4.bf k5.bf
	expect_fail "bfmerge: k5.bf: cannot be merged with k4.bf: different hashes (k = 5 vs 4)"
	[ ! -e f.bf ]
}

@test "bfmerge: filters of different layouts are refused, naming both files" {
	build blocked.bf -m 16384 -K 4 --layout blocked </dev/null
	build classic.bf -m 16384 -K 4 --layout classic </dev/null
	run --separate-stderr bfmerge -o f.bf blocked.bf classic.bf
	expect_fail "bfmerge: classic.bf: cannot be merged with blocked.bf: different layout"
	[ ! -e f.bf ]
}

@test "bfmerge: filters with different --hash are refused, naming both files" {
	build s13.bf -m 16384 -K 4 --hash siphash13 </dev/null
	build s24.bf -m 16384 -K 4 --hash siphash24 </dev/null
	run --separate-stderr bfmerge -o f.bf s13.bf s24.bf
	expect_fail "bfmerge: s24.bf: cannot be merged with s13.bf: different hash function"
	[ ! -e f.bf ]
}

@test "bfmerge: filters with different keys are refused, naming both files" {
	build k1.bf -n 1000 </dev/null
	bfbuild --key ffeeddccbbaa99887766554433221100 -n 1000 -o k2.bf </dev/null
	run --separate-stderr bfmerge -o f.bf k1.bf k2.bf
	expect_fail "bfmerge: k2.bf: cannot be merged with k1.bf: different key"
	# two templates made without --key get two random keys
	bfbuild -n 1000 -o r1.bf </dev/null
	bfbuild -n 1000 -o r2.bf </dev/null
	run --separate-stderr bfmerge -o f.bf r1.bf r2.bf
	expect_fail "bfmerge: r2.bf: cannot be merged with r1.bf: different key"
	[ ! -e f.bf ]
}

@test "bfmerge: a filter built with -i and one without are refused, naming both files" {
	build plain.bf -n 1000 </dev/null
	build folded.bf -n 1000 -i </dev/null
	run --separate-stderr bfmerge -o f.bf plain.bf folded.bf
	expect_fail "bfmerge: folded.bf: cannot be merged with plain.bf: different normalisation"
	[ ! -e f.bf ]
}

@test "bfmerge: a growing filter and a fixed one are refused as a different growth" {
	seq 1 1000 | bfuniq --key "$KEY" -f grow.bf >/dev/null
	build fixed.bf -n 1000 </dev/null
	run --separate-stderr bfmerge -o f.bf fixed.bf grow.bf
	expect_fail "bfmerge: grow.bf: cannot be merged with fixed.bf: different growth (2/1 vs 0/0)"
	run --separate-stderr bfmerge -o f.bf grow.bf fixed.bf
	expect_fail "bfmerge: fixed.bf: cannot be merged with grow.bf: different growth (0/0 vs 2/1)"
	[ ! -e f.bf ]
}

@test "bfmerge: a filter from standard input is named (standard input) in messages" {
	build plain.bf -n 1000 </dev/null
	build folded.bf -n 1000 -i </dev/null
	run --separate-stderr bfmerge -o f.bf plain.bf - <folded.bf
	expect_fail "bfmerge: (standard input): cannot be merged with plain.bf: different normalisation"
	run --separate-stderr bfmerge -o f.bf - plain.bf <folded.bf
	expect_fail "bfmerge: plain.bf: cannot be merged with (standard input): different normalisation"
	[ ! -e f.bf ]
}

# ---------------------------------------------------------------- trouble

@test "bfmerge: an input that is not a filter is an error naming it, exit 2" {
	build a.bf -n 100 </dev/null
	put_lines notes.txt "just some text"
	run --separate-stderr bfmerge -o f.bf a.bf notes.txt
	expect_one_line_error "bfmerge: notes.txt: not a bftools filter"
	run --separate-stderr bfmerge -o f.bf notes.txt a.bf
	expect_one_line_error "bfmerge: notes.txt: not a bftools filter"
	: >empty.bf
	run --separate-stderr bfmerge -o f.bf a.bf empty.bf
	expect_one_line_error "bfmerge: empty.bf: "
	run --separate-stderr bfmerge -o f.bf a.bf - <notes.txt
	expect_one_line_error "bfmerge: (standard input): not a bftools filter"
	[ ! -e f.bf ]
}

@test "bfmerge: a missing input is an error naming it, exit 2" {
	build a.bf -n 100 </dev/null
	run --separate-stderr bfmerge -o f.bf a.bf missing.bf
	expect_fail "bfmerge: missing.bf: No such file or directory"
	run --separate-stderr bfmerge -o f.bf missing.bf a.bf
	expect_fail "bfmerge: missing.bf: No such file or directory"
	[ ! -e f.bf ]
}

@test "bfmerge: -o after a refused merge leaves the old FILE byte-identical and no temp file" {
	build a.bf -n 1000 </dev/null
	build b.bf -n 1000 -i </dev/null
	echo "old contents" >out.bf
	cp out.bf saved
	run --separate-stderr bfmerge -o out.bf a.bf b.bf
	expect_status 2
	cmp out.bf saved
	expect_eq "directory" "a.bf
b.bf
out.bf
saved" "$(ls -A)"
}

@test "bfmerge: -o after a corrupt input (bad checksum) leaves the old FILE intact and no temp file" {
	seq 1 100000 >in.txt
	build big.bf -n 100000 in.txt
	bfbuild --like big.bf -o empty.bf </dev/null
	cp big.bf bad.bf
	# one byte in the middle of the stored bits: only the CRC at the end tells
	local size
	size=$(wc -c <bad.bf)
	printf '\125' | dd of=bad.bf bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
	! cmp -s big.bf bad.bf
	echo "old contents" >out.bf
	cp out.bf saved
	run --separate-stderr bfmerge -o out.bf empty.bf bad.bf
	expect_one_line_error "bfmerge: bad.bf: "
	cmp out.bf saved
	expect_eq "directory" "bad.bf
big.bf
empty.bf
in.txt
out.bf
saved" "$(ls -A)"
}

@test "bfmerge: a truncated input is an error and writes nothing to stdout" {
	seq 1 1000 >in.txt
	build a.bf -n 1000 in.txt
	bfbuild --like a.bf -o b.bf in.txt
	head -c 200 b.bf >cut.bf
	run --separate-stderr bash -c 'bfmerge a.bf cut.bf >out.bf'
	expect_one_line_error "bfmerge: cut.bf: "
	[ ! -s out.bf ]
}

@test "bfmerge: writing the result to a full disk is a write error, exit 2" {
	build a.bf -n 1000 </dev/null
	run --separate-stderr bash -c 'bfmerge a.bf a.bf >/dev/full'
	expect_fail "bfmerge: write error: No space left on device"
}

@test "bfmerge: -o into a missing directory is an error naming the file, exit 2" {
	build a.bf -n 100 </dev/null
	run --separate-stderr bfmerge -o nodir/f.bf a.bf
	expect_one_line_error "bfmerge: nodir/f.bf: "
}

@test "bfmerge: refuses to write a filter to a terminal" {
	if ! command -v script >/dev/null 2>&1; then
		skip "script(1) from util-linux is not installed"
	fi
	if ! script -qec true /dev/null </dev/null >/dev/null 2>&1; then
		skip "script(1) here cannot run a command on a pseudo-terminal"
	fi
	build a.bf -n 100 </dev/null
	run script -qec "bfmerge a.bf a.bf; echo status=\$?" /dev/null </dev/null
	local text=${output//$'\r'/}
	expect_eq "terminal output" "bfmerge: refusing to write a filter to a terminal (use -o FILE or a redirection)
status=2" "$text"
}

# ---------------------------------------------------------------- growing

# bfuniq -f without -n keeps a growing filter: a first stage for 100000
# keys, each next one twice as large. 250000 keys make 2 stages, 50000
# make 1, 700000 make 3.
@test "bfmerge: growing filters merge stage by stage and answer for every key" {
	seq 1 250000 | bfuniq --key "$KEY" -f g1.bf >/dev/null
	seq 250001 300000 | bfuniq --key "$KEY" -f g2.bf >/dev/null
	seq 300001 1000000 | bfuniq --key "$KEY" -f g3.bf >/dev/null
	expect_eq "stages of g1, g2, g3" "2 1 3" \
		"$(header_uint g1.bf 16 4) $(header_uint g2.bf 16 4) $(header_uint g3.bf 16 4)"
	run --separate-stderr bfmerge -o all.bf g2.bf g1.bf g3.bf
	expect_status 0
	# stage 0 now holds the 100000 + 50000 + 100000 keys of three first stages
	case $stderr in
	"bfmerge: warning: filter over capacity: estimated false-positive rate "*" exceeds target 1e-06 (about "*" distinct keys, capacity 100000)") ;;
	*) expect_eq "stderr" "bfmerge: warning: filter over capacity: ..." "$stderr" ;;
	esac
	expect_eq "stages" 3 "$(header_uint all.bf 16 4)"
	# per stage: the sum of the inputs' insertions at that stage
	local i want
	for i in 0 1 2; do
		want=0
		for f in g1.bf g2.bf g3.bf; do
			[ "$(header_uint $f 16 4)" -gt $i ] && want=$((want + $(header_uint $f $((96 + 64 * i)) 8)))
		done
		expect_eq "insertions of stage $i" "$want" "$(header_uint all.bf $((96 + 64 * i)) 8)"
	done
	# the third stage exists only in g3: carried over as it is
	expect_eq "stage 3 header" "$(header_hex g3.bf 192 64)" "$(header_hex all.bf 192 64)"
	run --separate-stderr bash -c 'seq 1 1000000 | bfgrep -c -f all.bf'
	expect_status 0
	expect_output 1000000
}

@test "bfmerge: a growing filter merged with itself keeps its bits and answers" {
	seq 1 150000 | bfuniq --key "$KEY" -f g.bf >/dev/null
	bfmerge -o gg.bf g.bf g.bf
	expect_eq "stages" "$(header_uint g.bf 16 4)" "$(header_uint gg.bf 16 4)"
	expect_eq "bits" "$(gzip -dc g.bf | tail -c +193 | cksum)" "$(gzip -dc gg.bf | tail -c +193 | cksum)"
	run --separate-stderr bash -c 'seq 1 150000 | bfgrep -c -f gg.bf'
	expect_output 150000
}

@test "bfmerge: --intersect of growing filters is refused" {
	seq 1 1000 | bfuniq --key "$KEY" -f g1.bf >/dev/null
	seq 500 1500 | bfuniq --key "$KEY" -f g2.bf >/dev/null
	run --separate-stderr bfmerge --intersect -o f.bf g1.bf g2.bf
	expect_fail "bfmerge: g1.bf: cannot intersect growing filters (a key may sit in different stages)"
	[ ! -e f.bf ]
}

# ---------------------------------------------------------------- capacity

@test "bfmerge: warns as bfbuild does when the union is over capacity, and still writes it" {
	seq 1 600 >a.txt
	seq 601 1200 >b.txt
	cat a.txt b.txt >ab.txt
	build template.bf -n 1000 </dev/null
	shards template.bf a.txt b.txt
	# each shard fits; the union of 1200 keys does not
	run --separate-stderr bfmerge -o ab.bf shard1.bf shard2.bf
	expect_status 0
	local warning=$stderr
	case $warning in
	"bfmerge: warning: filter over capacity: estimated false-positive rate "*" exceeds target 0.001 (about "*" distinct keys, capacity 1000)") ;;
	*) expect_eq "warning" "bfmerge: warning: filter over capacity: estimated false-positive rate R exceeds target 0.001 (about N distinct keys, capacity 1000)" "$warning" ;;
	esac
	[ -s ab.bf ]
	# the same words and figures as bfbuild's for the same filter
	run --separate-stderr bfbuild --key "$KEY" -n 1000 -o serial.bf ab.txt
	expect_eq "bfbuild's warning" "${warning#bfmerge: }" "${stderr#bfbuild: }"
	# a union within capacity says nothing
	run --separate-stderr bfmerge -o aa.bf shard1.bf shard1.bf
	expect_status 0
	expect_stderr ""
}

# ---------------------------------------------------------------- -v

@test "bfmerge: -v reports the result on stderr, and nothing else changes" {
	seq 1 1000 >a.txt
	seq 1001 2000 >b.txt
	build template.bf -n 2000 </dev/null
	shards template.bf a.txt b.txt
	run --separate-stderr bfmerge -v -o v.bf shard1.bf shard2.bf
	expect_status 0
	expect_output ""
	expect_eq "first line" "bfmerge: 1 stage, 3.9 kB, 2000 insertions" "${stderr%%$'\n'*}"
	case ${stderr#*$'\n'} in
	"bfmerge: about "*" distinct keys, estimated false-positive rate "*" (target 0.001)") ;;
	*) expect_eq "second line" "bfmerge: about N distinct keys, estimated false-positive rate R (target 0.001)" "${stderr#*$'\n'}" ;;
	esac
	bfmerge --verbose -o quiet.bf shard1.bf shard2.bf 2>/dev/null
	cmp v.bf quiet.bf
}

# ---------------------------------------------------------------- completions

# bash_complete WORD...: what bfmerge's bash completion offers for the last
# WORD of "bfmerge WORD...", sorted (as in completions.bats).
bash_complete() {
	bash --norc --noprofile -c '
		source "$1" || exit 3
		shift
		COMP_WORDS=(bfmerge "$@")
		COMP_CWORD=$#
		_bfmerge bfmerge "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" || exit 4
		if [ "${#COMPREPLY[@]}" -gt 0 ]; then printf "%s\n" "${COMPREPLY[@]}"; fi
	' bash "$BATS_TEST_DIRNAME/../completions/bfmerge.bash" "$@" | LC_ALL=C sort
}

help_options() {
	bfmerge --help | grep -oE -- '(^|[ ,[])--?[A-Za-z][A-Za-z0-9-]*' |
		sed 's/^[ ,[]//' | LC_ALL=C sort -u
}

@test "bfmerge: bash completion offers every option of --help, and no other" {
	run bash_complete -
	expect_status 0
	expect_output "$(help_options)"
}

@test "bfmerge: bash completion offers .bf files as FILTERs, any file after -o" {
	touch a.bf b.bf c.txt
	mkdir sub
	run bash_complete ''
	expect_output $'a.bf\nb.bf\nsub'
	run bash_complete a.bf ''
	expect_output $'a.bf\nb.bf\nsub'
	run bash_complete -o ''
	expect_output $'a.bf\nb.bf\nc.txt\nsub'
	run bash_complete --output=c
	expect_output "--output=c.txt"
	run bash_complete --output = c
	expect_output "c.txt"
	run bash_complete --inter
	expect_output "--intersect"
}

@test "bfmerge: zsh completion offers every option of --help and .bf FILTERs" {
	command -v zsh >/dev/null 2>&1 || skip "zsh is not installed: its completion is not checked"
	[ "$(head -n 1 "$BATS_TEST_DIRNAME/../completions/_bfmerge")" = "#compdef bfmerge" ]
	zsh -n "$BATS_TEST_DIRNAME/../completions/_bfmerge"
	touch a.bf b.bf c.txt
	cat >zcomp.zsh <<'EOF'
zmodload zsh/zpty || exit 3
out=""
wait_for() {
  integer n=0
  local chunk
  while (( n++ < 100 )); do
    while zpty -r -t z chunk; do out+=${chunk//$'\r'/}; done
    [[ $out == *$1* ]] && return 0
    sleep 0.05
  done
  return 1
}
zpty z zsh -f -i
zpty -w z "PROMPT='>'"
zpty -w z "fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'compadd() { local -a hits; builtin compadd -A hits "$@"; local h; for h in $hits; do print -r -- "<<$h>>"; done; builtin compadd "$@"; }'
zpty -w z 'print -r -- "<<START>>"'
wait_for $'\n<<START>>' || exit 3
zpty -n -w z "$2"$'\t'
zpty -w z $'\C-u'
zpty -w z 'print -r -- "<<END>>"'
wait_for $'\n<<END>>' || exit 3
zpty -d z
print -r -- "$out" | sed -n '/^<<START>>$/,/^<<END>>$/p' | grep -o '<<[^<>]*>>' |
  grep -v '^<<START>>$' | grep -v '^<<END>>$' | sed 's/^<<//; s/>>$//'
EOF
	local dir=$BATS_TEST_DIRNAME/../completions
	run bash -c 'HOME="$1" zsh -f zcomp.zsh "$2" "bfmerge -" | LC_ALL=C sort -u' sh "$BATS_TEST_TMPDIR" "$dir"
	expect_output "$(help_options)"
	run bash -c 'HOME="$1" zsh -f zcomp.zsh "$2" "bfmerge " | LC_ALL=C sort -u' sh "$BATS_TEST_TMPDIR" "$dir"
	expect_output $'a.bf\nb.bf'
}

@test "bfmerge: fish completion offers every option of --help and .bf FILTERs" {
	command -v fish >/dev/null 2>&1 || skip "fish is not installed: its completion is not checked"
	touch a.bf b.bf c.txt
	local file=$BATS_TEST_DIRNAME/../completions/bfmerge.fish
	run bash -c 'HOME="$1" fish --no-config -c "source $2; complete -C \"bfmerge -\"" | cut -f1 | LC_ALL=C sort' \
		sh "$BATS_TEST_TMPDIR" "$file"
	expect_output "$(help_options)"
	run bash -c 'HOME="$1" fish --no-config -c "source $2; complete -C \"bfmerge \"" | cut -f1 | LC_ALL=C sort' \
		sh "$BATS_TEST_TMPDIR" "$file"
	expect_output $'a.bf\nb.bf'
	run bash -c 'HOME="$1" fish --no-config -c "source $2; complete -C \"bfmerge -o \"" | cut -f1 | LC_ALL=C sort' \
		sh "$BATS_TEST_TMPDIR" "$file"
	expect_output $'a.bf\nb.bf\nc.txt'
}
