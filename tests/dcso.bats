#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# dcso.bats - interoperation with DCSO's bloom filter format: filters that
# DCSO's own `bloom` tool (Debian: golang-github-dcso-bloom-cli) built are
# read by every program, detected by their bytes, plain or gzipped;
# filters that bfbuild --format dcso writes are byte for byte what `bloom`
# writes and answer `bloom check` exactly as bfgrep does; bfuniq -f and
# bfbuild -f add to a DCSO filter as `bloom insert` does, and bfmerge
# joins DCSO filters as `bloom join` does, byte for byte.
#
# The tests that run the reference tool skip, saying why, when it is not
# installed; the rest need only bftools.

bats_require_minimum_version 1.5.0
load helpers

# The reference tool: DCSO's bloom, not some other program of that name.
have_reference() {
	bloom --version 2>/dev/null | grep -q '^Bloom Filter'
}

need_reference() {
	have_reference || skip "DCSO's bloom tool is not installed (apt-get install golang-github-dcso-bloom-cli)"
}

# keys FIRST LAST: the lines keyFIRST .. keyLAST.
keys() {
	seq "$1" "$2" | sed 's/^/key/'
}

# The sets of the comparisons: 3000 keys added (2000 at creation, 1000 by
# insert), 3000 queried that were added and 20000 that were not.
make_sets() {
	keys 1 2000 >first
	keys 2001 3000 >second
	keys 1 3000 >present
	keys 100001 120000 >absent
	cat present absent >queries
}

@test "dcso: a filter made by bloom create and insert answers identically through bfgrep" {
	need_reference
	make_sets
	bloom create -n 3000 -p 0.01 ref.bloom <first
	bloom insert ref.bloom <second
	bloom check ref.bloom <queries >want
	run --separate-stderr bfgrep -f ref.bloom queries
	expect_status 0
	expect_stderr ""
	printf '%s\n' "$output" >got
	cmp want got
	# no false negatives, and some false positives to compare (p = 1%)
	run grep -c '^key[0-9]\{1,4\}$' got
	expect_output 3000
	[ "$(wc -l <got)" -gt 3000 ]
}

@test "dcso: a gzipped filter from bloom --gzip is detected and answers identically" {
	need_reference
	make_sets
	bloom --gzip create -n 3000 -p 0.01 ref.bloom.gz <first
	bloom --gzip insert ref.bloom.gz <second
	bloom --gzip check ref.bloom.gz <queries >want
	bfgrep -f ref.bloom.gz queries >got
	cmp want got
	bfgrep -v -f ref.bloom.gz queries >rest
	[ "$(cat got rest | wc -l)" -eq 23000 ]
}

@test "dcso: bfgrep reads a DCSO filter from standard input" {
	need_reference
	make_sets
	bloom create -n 3000 -p 0.01 ref.bloom <present
	bloom check ref.bloom <queries >want
	bfgrep -f - queries <ref.bloom >got
	cmp want got
}

@test "dcso: data that bloom set-data attached after the bits changes no answer" {
	need_reference
	make_sets
	bloom create -n 3000 -p 0.01 ref.bloom <present
	bfgrep -f ref.bloom queries >before
	printf 'source: test\nversion: 2\n' | bloom set-data ref.bloom
	run bloom get-data ref.bloom
	expect_output $'source: test\nversion: 2'
	bfgrep -f ref.bloom queries >after
	cmp before after
}

@test "dcso: bfbuild --format dcso writes byte for byte what bloom create and insert write" {
	need_reference
	make_sets
	bloom create -n 3000 -p 0.01 ref.bloom <first
	bloom insert ref.bloom <second
	bfbuild --format dcso -n 3000 -p 0.01 -o ours.bloom first second
	cmp ref.bloom ours.bloom
}

@test "dcso: a filter from bfbuild --format dcso answers bloom check as bfgrep does" {
	need_reference
	make_sets
	bfbuild --format dcso -n 3000 -p 0.01 -o ours.bloom present
	bloom check ours.bloom <queries >want
	bfgrep -f ours.bloom queries >got
	cmp want got
	[ "$(grep -c '^key[0-9]\{1,4\}$' want)" -eq 3000 ]
}

@test "dcso: --format dcso-gzip is read by bloom --gzip, and holds the plain file's bytes" {
	need_reference
	make_sets
	bfbuild --format dcso-gzip -n 3000 -p 0.01 -o ours.bloom.gz present
	bfbuild --format dcso -n 3000 -p 0.01 -o ours.bloom present
	gzip -dc ours.bloom.gz | cmp - ours.bloom
	bloom --gzip check ours.bloom.gz <queries >want
	bfgrep -f ours.bloom.gz queries >got
	cmp want got
}

@test "dcso: bfbuild --format dcso sizes m and k exactly as bloom create for common n and p" {
	need_reference
	for n in 1 10 1000 123456; do
		for p in 0.5 0.1 0.01 0.001 0.0001 1e-6 1e-9 0.05 0.025; do
			bloom create -n "$n" -p "$p" ref.bloom </dev/null
			bfbuild --format dcso -n "$n" -p "$p" -o ours.bloom </dev/null
			cmp ref.bloom ours.bloom || { echo "n=$n p=$p differ" >&2; return 1; }
		done
	done
}

@test "dcso: bfinfo shows the header fields bloom show reports" {
	need_reference
	make_sets
	bloom create -n 3000 -p 0.01 ref.bloom <present
	run bloom show ref.bloom
	local bits=${output##*Bits:}
	bits=$(printf '%s' "${bits%%Hash*}" | tr -d '[:space:]')
	local elements=$(printf '%s\n' "$output" | sed -n 's/^Elements present:[[:space:]]*//p')
	run --separate-stderr bfinfo ref.bloom
	expect_status 0
	local text=$output
	field() { printf '%s\n' "$text" | sed -n "s/^$1: *//p"; }
	expect_eq kind "DCSO bloom filter" "$(field kind)"
	expect_eq "capacity" 3000 "$(field 'capacity (n)')"
	expect_eq "rate" 0.01 "$(field 'target rate (p)')"
	expect_eq "bits" "$bits" "$(field 'bits (m)')"
	expect_eq "hashes" 7 "$(field 'hashes (k)')"
	expect_eq "elements" "$elements" "$(field 'elements (N)')"
	run --separate-stderr bfinfo --json ref.bloom
	expect_status 0
	case $output in
	*'"kind":"dcso"'*"\"bits\":$bits,"*) ;;
	*) expect_eq "JSON" '..."kind":"dcso"..."bits":'"$bits"',...' "$output" ;;
	esac
}

# ---- every program that reads a filter reads a DCSO one, against the reference

@test "dcso: bfuniq -f x.bloom adds to it as bloom insert does: the same file, its data kept" {
	need_reference
	make_sets
	keys 1500 4000 >more
	bloom create -n 5000 -p 0.01 ref.bloom <first
	printf 'source: test\n' | bloom set-data ref.bloom
	cp ref.bloom ours.bloom
	run bloom show ref.bloom
	local before=${output##*Elements present:}
	before=$(printf '%s' "${before%%FP*}" | tr -d '[:space:]')
	bloom insert ref.bloom <more
	run --separate-stderr bfuniq -f ours.bloom more
	expect_status 0
	expect_stderr ""
	printf '%s\n' "$output" >written
	cmp ref.bloom ours.bloom
	run bloom get-data ours.bloom
	expect_output "source: test"
	# the lines written are those that set a new bit: N grew by as many
	run bloom show ours.bloom
	local after=${output##*Elements present:}
	after=$(printf '%s' "${after%%FP*}" | tr -d '[:space:]')
	expect_eq "lines written" "$((after - before))" "$(wc -l <written | tr -d ' ')"
	# and none of them was in the filter before (keys 1500..2000 were)
	run grep -c -x -F -f first written
	expect_output 0
}

@test "dcso: bfuniq -f and bfbuild -f keep a gzipped DCSO filter gzipped, as bloom --gzip insert" {
	need_reference
	make_sets
	bloom --gzip create -n 5000 -p 0.01 ref.bloom.gz <first
	printf 'kept\n' | bloom --gzip set-data ref.bloom.gz
	cp ref.bloom.gz uniq.bloom.gz
	cp ref.bloom.gz build.bloom.gz
	bloom --gzip insert ref.bloom.gz <second
	bfuniq -f uniq.bloom.gz second >/dev/null
	bfbuild -f build.bloom.gz second
	gzip -dc ref.bloom.gz >want
	gzip -dc uniq.bloom.gz | cmp want -
	gzip -dc build.bloom.gz | cmp want -
	run bloom --gzip get-data uniq.bloom.gz
	expect_output kept
}

@test "dcso: bfbuild -f x.bloom is bloom insert, byte for byte" {
	need_reference
	make_sets
	bloom create -n 3000 -p 0.01 ref.bloom <first
	cp ref.bloom ours.bloom
	bloom insert ref.bloom <second
	run --separate-stderr bfbuild -f ours.bloom second
	expect_status 0
	expect_stderr ""
	cmp ref.bloom ours.bloom
}

@test "dcso: bfmerge of DCSO filters is bloom join: N summed, the first's data kept" {
	need_reference
	make_sets
	bloom create -n 5000 -p 0.01 a.bloom <first
	bloom create -n 5000 -p 0.01 b.bloom <present
	printf 'first\n' | bloom set-data a.bloom
	printf 'second\n' | bloom set-data b.bloom
	cp a.bloom ours.bloom
	bloom join a.bloom b.bloom
	run --separate-stderr bfmerge -o merged.bloom ours.bloom b.bloom
	expect_status 0
	expect_stderr ""
	cmp a.bloom merged.bloom
	# gzipped inputs give a gzipped result
	bloom --gzip create -n 5000 -p 0.01 a.bloom.gz <first
	bloom --gzip create -n 5000 -p 0.01 b.bloom.gz <present
	bfmerge -o merged.bloom.gz a.bloom.gz b.bloom.gz
	bloom --gzip join a.bloom.gz b.bloom.gz
	gzip -dc a.bloom.gz >want
	gzip -dc merged.bloom.gz | cmp want -
}

@test "dcso: bfmerge refuses DCSO filters of other dimensions, as bloom join does" {
	need_reference
	make_sets
	bloom create -n 5000 -p 0.01 a.bloom <first
	bloom create -n 4000 -p 0.01 n.bloom <first
	bloom create -n 5000 -p 0.02 p.bloom <first
	run --separate-stderr bloom join a.bloom n.bloom
	[ "$status" -ne 0 ]
	run --separate-stderr bfmerge -o m.bloom a.bloom n.bloom
	expect_fail "bfmerge: n.bloom: cannot be merged with a.bloom: different size (m = 38340 vs 47925 bits)"
	# same m and k, another n: the reference's join refuses it, and so do we
	cp a.bloom same.bloom
	printf '\240\017' | dd of=same.bloom bs=1 seek=8 conv=notrunc status=none	# n = 4000
	run --separate-stderr bloom join a.bloom same.bloom
	[ "$status" -ne 0 ]
	run --separate-stderr bfmerge -o m.bloom same.bloom a.bloom
	expect_fail "bfmerge: a.bloom: cannot be merged with same.bloom: different capacity (n = 5000 vs 4000)"
	[ ! -e m.bloom ]
}

@test "dcso: bfcount -f counts a DCSO filter near bloom's N, and combines DCSO filters" {
	need_reference
	keys 1 4000 >all
	keys 1 2000 >low
	keys 2001 4000 >high
	bloom create -n 5000 -p 0.01 all.bloom <all
	bloom create -n 5000 -p 0.01 low.bloom <low
	bloom create -n 5000 -p 0.01 high.bloom <high
	run bloom show all.bloom
	local n=${output##*Elements present:}
	n=$(printf '%s' "${n%%FP*}" | tr -d '[:space:]')
	# FNV-1 spreads these similar keys less evenly than SipHash would:
	# the estimates run about 1% low, so the bounds are 2%
	run --separate-stderr bfcount -f all.bloom
	expect_status 0
	expect_stderr ""
	[ "$output" -ge $((n * 98 / 100)) ] && [ "$output" -le "$n" ]
	run --separate-stderr bfcount --union low.bloom high.bloom
	expect_status 0
	[ "$output" -ge 3920 ] && [ "$output" -le 4080 ]
	run --separate-stderr bfcount --intersection low.bloom all.bloom
	[ "$output" -ge 1960 ] && [ "$output" -le 2040 ]
	# disjoint: 0, give or take the noise of three estimates of ~2000
	run --separate-stderr bfcount --jaccard low.bloom high.bloom
	awk -v j="$output" 'BEGIN { exit !(j >= 0 && j <= 0.01) }'
}

# The rest needs no reference tool: the DCSO files are bfbuild's own.

@test "dcso: bfgrep finds every key of a filter bfbuild --format dcso built, plain or gzipped" {
	keys 1 500 >present
	bfbuild --format dcso -n 500 -p 0.001 -o f.bloom present
	bfbuild --format dcso-gzip -n 500 -p 0.001 -o f.bloom.gz present
	run --separate-stderr bfgrep -c -f f.bloom present
	expect_output 500
	run --separate-stderr bfgrep -c -f f.bloom.gz present
	expect_output 500
}

@test "dcso: bfbuild --format dcso takes -n and -p only" {
	keys 1 10 >present
	for opt in "--layout classic" "-m 4096" "-K 3" "--key $KEY" "--hash siphash24" "-i"; do
		run --separate-stderr bfbuild --format dcso $opt -o f.bloom present
		expect_usage_error bfbuild "${opt%% *} cannot be used with --format dcso: DCSO filters have no such setting"
	done
	run --separate-stderr bfbuild --format dcso --key-file kf -o f.bloom present
	expect_usage_error bfbuild "--key-file cannot be used with --format dcso: DCSO filters have no such setting"
	build ours.bf present
	run --separate-stderr bfbuild --format dcso-gzip -f ours.bf present
	expect_usage_error bfbuild "-f cannot be used with --format dcso-gzip: DCSO filters are built new"
	run --separate-stderr bfbuild --format bloom present
	expect_usage_error bfbuild "invalid format 'bloom': expected 'bftools', 'dcso' or 'dcso-gzip'"
	[ ! -e f.bloom ]
}

@test "dcso: a rate that needs more than 64 hashes is a usage error" {
	run --separate-stderr bfbuild --format dcso -n 1000 -p 1e-30 -o f.bloom </dev/null
	expect_usage_error bfbuild "cannot size a DCSO filter for 1000 keys at rate 1e-30: a DCSO filter at that rate needs more than 64 hashes"
}

@test "dcso: a DCSO filter and a bftools filter do not merge: different layout" {
	keys 1 10 >present
	bfbuild --format dcso -n 10 -p 0.01 -o f.bloom present
	build ours.bf present
	run --separate-stderr bfmerge -o m.bf f.bloom ours.bf
	expect_fail "bfmerge: ours.bf: cannot be merged with f.bloom: different layout"
	run --separate-stderr bfmerge -o m.bf ours.bf f.bloom
	expect_fail "bfmerge: f.bloom: cannot be merged with ours.bf: different layout"
	[ ! -e m.bf ]
}

@test "dcso: a DCSO filter has no key, so --key-file is refused" {
	keys 1 10 >present
	bfbuild --format dcso -n 10 -p 0.01 -o f.bloom present
	run --separate-stderr bfgrep --key-file kf -f f.bloom present
	expect_fail "bfgrep: f.bloom: a DCSO bloom filter has no key: --key-file does not apply"
	[ ! -e kf ]
}

@test "dcso: a cut or damaged DCSO file is an error naming the file" {
	keys 1 100 >present
	bfbuild --format dcso -n 100 -p 0.01 -o f.bloom present
	head -c 40 f.bloom >short.bloom
	run --separate-stderr bfgrep -f short.bloom present
	expect_fail "bfgrep: short.bloom: truncated DCSO filter (header)"
	head -c 60 f.bloom >cut.bloom
	run --separate-stderr bfgrep -f cut.bloom present
	expect_fail "bfgrep: cut.bloom: truncated DCSO filter (bits)"
	# k = 0 at offset 24
	{ head -c 24 f.bloom; printf '\0\0\0\0\0\0\0\0'; tail -c +33 f.bloom; } >k0.bloom
	run --separate-stderr bfinfo k0.bloom
	expect_fail "bfinfo: k0.bloom: bad DCSO header: hashes (k) out of range 1..64"
	bfbuild --format dcso-gzip -n 100 -p 0.01 -o f.bloom.gz present
	head -c 100 f.bloom.gz >cut.bloom.gz
	run --separate-stderr bfgrep -f cut.bloom.gz present
	expect_fail "bfgrep: cut.bloom.gz: truncated DCSO filter"
}
