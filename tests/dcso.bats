#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# dcso.bats - interoperation with DCSO's bloom filter format: filters that
# DCSO's own `bloom` tool (Debian: golang-github-dcso-bloom-cli) built are
# read by bfgrep and bfinfo, detected by their bytes, plain or gzipped;
# filters that bfbuild --format dcso writes are byte for byte what `bloom`
# writes and answer `bloom check` exactly as bfgrep does; the programs
# that cannot use a DCSO filter say so.
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

@test "dcso: bfuniq, bfcount, bfmerge and bfbuild -f refuse a DCSO filter, naming the readers" {
	keys 1 10 >present
	bfbuild --format dcso -n 10 -p 0.01 -o f.bloom present
	build ours.bf present
	for prog in bfuniq bfcount; do
		run --separate-stderr $prog -f f.bloom present
		expect_fail "$prog: f.bloom: a DCSO bloom filter, not a bftools filter ($prog does not take those; bfgrep and bfinfo read them)"
	done
	run --separate-stderr bfbuild -f f.bloom present
	expect_fail "bfbuild: f.bloom: a DCSO bloom filter, not a bftools filter (bfbuild does not take those; bfgrep and bfinfo read them)"
	run --separate-stderr bfmerge -o m.bf f.bloom ours.bf
	expect_fail "bfmerge: f.bloom: a DCSO bloom filter, not a bftools filter (bfmerge does not take those; bfgrep and bfinfo read them)"
	run --separate-stderr bfmerge -o m.bf ours.bf f.bloom
	expect_fail "bfmerge: f.bloom: a DCSO bloom filter, not a bftools filter (it cannot be streamed)"
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
