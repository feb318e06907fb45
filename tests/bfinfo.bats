#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# bfinfo.bats - the command-line contract of bfinfo (bfinfo(1)): every
# header field and derived figure, in text and as JSON Lines, for fixed
# and growing filters; the key shown only as its fingerprint; several
# files, bad files among good ones, a filter on stdin, exit statuses.
#
# Filters are built with the fixed key of helpers.bash, so every bit, and
# so every figure, is the same on every run. Derived figures are checked
# against what the test computes itself from the file's bytes (bits set
# counted with od and awk, then the formulas of bfinfo(1)), not against
# numbers copied from a run.

bats_require_minimum_version 1.5.0
load helpers

SYNOPSIS="Usage: bfinfo [--json | --brief] [--verify] FILTER..."

# SipHash-2-4-64 of "bftools key fingerprint v1" under $KEY; checked
# against an independent SipHash written for the purpose.
KEY_FINGERPRINT=0a957d3f05913eba
OTHER_KEY=f0e0d0c0b0a090807060504030201000

# field LABEL: the value after "LABEL:" on the first such line of $output.
# Stage fields are indented, so pass "  capacity" for a stage's capacity.
field() {
	printf '%s\n' "$output" | sed -n "s/^$1: *//p" | head -n 1
}

# fields LABEL: the values of every such line, one per line.
fields() {
	printf '%s\n' "$output" | sed -n "s/^$1: *//p"
}

# expect_field LABEL VALUE: the first LABEL line says exactly VALUE.
expect_field() {
	expect_eq "field '$1'" "$2" "$(field "$1")"
}

# expect_json KEY:VALUE: $output holds "KEY":VALUE exactly (VALUE as JSON).
expect_json() {
	local key=${1%%:*} value=${1#*:}
	case $output in
	*"\"$key\":$value"[,}\]]*) ;;
	*) expect_eq "JSON member" "\"$key\":$value" "$output" ;;
	esac
}

# popcount FILTER: the bits set in the bit array of a one-stage filter,
# counted from the file (the bit array starts after 128 header bytes).
popcount() {
	gzip -dc "$1" | od -A n -v -t u1 -j 128 | awk '
		{ for (i = 1; i <= NF; i++) for (b = $i; b > 0; b = int(b / 2)) n += b % 2 }
		END { print n + 0 }'
}

# classic.bf: 1000 keys in a classic filter sized for 1000 at 1%:
# m = -1000 ln 0.01 / (ln 2)^2 = 9585.1, rounded up to 512s = 9728 bits;
# k = ln 2 * 9728 / 1000 = 6.74, best integer 7.
make_classic() {
	seq 1 1000 >keys.txt
	build classic.bf -n 1000 -p 0.01 --layout classic keys.txt
}

# expect_valid_json: every line of $output is a JSON object. With python3
# the real parser decides; without it (CI machines may lack it) a
# shape check: {...} per line, no bare inf or nan, braces balanced
# (counted blindly, so the file names of these tests hold no braces).
expect_valid_json() {
	local line
	while IFS= read -r line; do
		if command -v python3 >/dev/null 2>&1; then
			printf '%s\n' "$line" | python3 -m json.tool >/dev/null ||
				expect_eq "valid JSON" "(a JSON object)" "$line"
			continue
		fi
		case $line in
		'{'*'}') ;;
		*) expect_eq "JSON object line" "{...}" "$line" ;;
		esac
		case $line in
		*[:,]inf* | *[:,]nan* | *[:,]-inf*) expect_eq "JSON number" "(no inf or nan)" "$line" ;;
		esac
		expect_eq "braces" "$(printf '%s' "$line" | tr -cd '{' | wc -c)" \
			"$(printf '%s' "$line" | tr -cd '}' | wc -c)"
	done <<<"$output"
}

# ---------------------------------------------------------------- help, version

@test "bfinfo: -h prints the usage on stdout, starting with the synopsis, and exits 0" {
	run --separate-stderr bfinfo -h
	expect_status 0
	expect_stderr ""
	expect_eq "first line" "$SYNOPSIS" "${lines[0]}"
}

@test "bfinfo: --help prints the same usage as -h, naming every long option" {
	run --separate-stderr bfinfo -h
	local short=$output
	run --separate-stderr bfinfo --help
	expect_status 0
	expect_output "$short"
	for opt in --json --help --version; do
		case $output in *"$opt"*) ;; *) expect_eq "help mentions" "$opt" "(missing)" ;; esac
	done
}

@test "bfinfo: -V and --version print 'bfinfo (bftools) 1.0.0' then the MIT licence, and exit 0" {
	run --separate-stderr bfinfo -V
	expect_status 0
	expect_stderr ""
	expect_eq "first line" "bfinfo (bftools) 1.0.0" "${lines[0]}"
	case $output in *MIT*) ;; *) expect_eq licence "MIT" "$output" ;; esac
	local short=$output
	run --separate-stderr bfinfo --version
	expect_status 0
	expect_output "$short"
}

# ---------------------------------------------------------------- usage errors

@test "bfinfo: without a FILTER it is a usage error" {
	run --separate-stderr bfinfo
	expect_usage_error bfinfo "no filter given"
	run --separate-stderr bfinfo --json
	expect_usage_error bfinfo "no filter given"
}

@test "bfinfo: an unknown short or long option is a usage error pointing at --help" {
	make_classic
	run --separate-stderr bfinfo -x classic.bf
	expect_usage_error bfinfo "invalid option -- 'x'"
	run --separate-stderr bfinfo --no-such-option classic.bf
	expect_usage_error bfinfo "unrecognized option '--no-such-option'"
}

@test "bfinfo: - may be named only once (standard input is read once)" {
	make_classic
	run --separate-stderr bfinfo - classic.bf - <classic.bf
	expect_usage_error bfinfo "standard input can be read only once"
}

# ---------------------------------------------------------------- the fields

@test "bfinfo: shows every header field of a classic filter built with known parameters" {
	make_classic
	run --separate-stderr bfinfo classic.bf
	expect_status 0
	expect_stderr ""
	expect_field "file" "classic.bf"
	expect_field "format version" 1
	expect_field "kind" fixed
	expect_field "stages" 1
	expect_field "hash function" SipHash-1-3-128
	expect_field "key fingerprint" "$KEY_FINGERPRINT"
	expect_field "key normalisation" none
	expect_field "capacity" 1000
	expect_field "target rate" 0.01
	expect_field "insertions" 1000
	expect_eq "stage heading" "stage 1 of 1:" "$(printf '%s\n' "$output" | grep '^stage [0-9]')"
	expect_field "  layout" classic
	expect_field "  bits (m)" 9728
	expect_field "  hashes (k)" 7
	expect_field "  capacity" 1000
	expect_field "  target rate" 0.01
	expect_field "  insertions" 1000
}

@test "bfinfo: counts the bits set and the fill exactly as the file holds them" {
	make_classic
	local set
	set=$(popcount classic.bf)
	cp classic.bf good.bf
	run --separate-stderr bfinfo classic.bf
	expect_field "  bits set" "$set"
	expect_field "  fill" "$(awk -v s="$set" 'BEGIN { printf "%.2f%%", 100 * s / 9728 }')"
	expect_field "total bits" 9728
	expect_field "total bits set" "$set"
	expect_field "total fill" "$(awk -v s="$set" 'BEGIN { printf "%.2f%%", 100 * s / 9728 }')"
}

@test "bfinfo: estimates elements and the current rate of a classic filter by the formulas of bfinfo(1)" {
	make_classic
	local set count rate
	set=$(popcount classic.bf)
	# n = ln(1 - X/m) / (k ln(1 - 1/m)); rate = (X/m)^k
	count=$(awk -v x="$set" 'BEGIN { m = 9728; printf "%.0f", log(1 - x / m) / (7 * log(1 - 1 / m)) }')
	rate=$(awk -v x="$set" 'BEGIN { printf "%.3g", (x / 9728) ^ 7 }')
	run --separate-stderr bfinfo classic.bf
	expect_field "  estimated elements" "$count"
	expect_field "  estimated rate" "$rate"
	expect_field "estimated elements" "$count"
	expect_field "estimated rate" "$rate (target 0.01)"
}

@test "bfinfo: size in memory is m/8 bytes, size on disk the file's size, both human and exact" {
	make_classic
	local disk
	disk=$(wc -c <classic.bf | tr -d ' ')
	run --separate-stderr bfinfo classic.bf
	expect_field "size in memory" "1.2 kB (1216 bytes)"
	case $(field "size on disk") in
	*" B ($disk bytes)" | *" kB ($disk bytes)") ;;
	*) expect_eq "size on disk" "... ($disk bytes)" "$(field "size on disk")" ;;
	esac
}

@test "bfinfo: the key fingerprint is stable for a key and differs for another key" {
	make_classic
	seq 1 10 >few.txt
	build same.bf -n 10 -p 0.5 few.txt
	bfbuild --key "$OTHER_KEY" -n 1000 -p 0.01 --layout classic -o other.bf keys.txt
	run --separate-stderr bfinfo same.bf
	expect_field "key fingerprint" "$KEY_FINGERPRINT"
	run --separate-stderr bfinfo other.bf
	local other
	other=$(field "key fingerprint")
	case $other in
	[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]) ;;
	*) expect_eq "fingerprint" "16 hex digits" "$other" ;;
	esac
	[ "$other" != "$KEY_FINGERPRINT" ] || expect_eq "other key's fingerprint" "not $KEY_FINGERPRINT" "$other"
}

@test "bfinfo: never shows the key, in text or JSON, fixed or random" {
	make_classic
	seq 1 10 | bfbuild -n 10 -o random.bf
	local random_key
	random_key=$(header_hex random.bf 24 16)
	for opt in "" --json; do
		run --separate-stderr bfinfo $opt classic.bf random.bf
		expect_status 0
		for secret in "$KEY" "${KEY:0:16}" "${KEY:16}" "$random_key" "${random_key:0:16}" "${random_key:16}"; do
			case $output in *"$secret"*) expect_eq "output without the key" "(no $secret)" "$output" ;; esac
		done
	done
}

@test "bfinfo: reports ASCII case folding for a filter built with -i" {
	seq 1 10 >few.txt
	build folded.bf -n 10 -i few.txt
	run --separate-stderr bfinfo folded.bf
	expect_field "key normalisation" "ASCII case folded"
	run --separate-stderr bfinfo --json folded.bf
	expect_json fold_case:true
}

@test "bfinfo: reports SipHash-2-4-128 for a filter built with --hash siphash24" {
	seq 1 10 >few.txt
	build sip24.bf -n 10 --hash siphash24 few.txt
	run --separate-stderr bfinfo sip24.bf
	expect_field "hash function" SipHash-2-4-128
	run --separate-stderr bfinfo --json sip24.bf
	expect_json 'hash:"SipHash-2-4-128"'
}

@test "bfinfo: the default layout is reported as blocked" {
	seq 1 10 >few.txt
	build blocked.bf -n 10 few.txt
	run --separate-stderr bfinfo blocked.bf
	expect_field "  layout" blocked
}

@test "bfinfo: estimates 5000 distinct keys within 5%, repeats not counted; insertions count them" {
	# Each of 5000 keys added three times. The estimate's spread at a third
	# of capacity is well under 1% (about sqrt(n)/n of n, 1.4%, at worst),
	# so 5% (4750..5250) is a wide margin; with the fixed key the result
	# is the same on every run anyway.
	{ seq 1 5000; seq 1 5000; seq 1 5000; } >keys.txt
	build five.bf -n 15000 -p 0.001 keys.txt
	run --separate-stderr bfinfo five.bf
	expect_field "insertions" 15000
	local estimate
	estimate=$(field "estimated elements")
	[ "$estimate" -ge 4750 ] && [ "$estimate" -le 5250 ] ||
		expect_eq "estimated elements" "4750..5250" "$estimate"
}

@test "bfinfo: an empty filter shows no bits set, 0 elements and rate 0" {
	build empty.bf -n 10 </dev/null
	run --separate-stderr bfinfo empty.bf
	expect_status 0
	expect_field "insertions" 0
	expect_field "total bits set" 0
	expect_field "total fill" "0.00%"
	expect_field "estimated elements" 0
	expect_field "estimated rate" "0 (target 0.001)"
}

@test "bfinfo: says over capacity when the estimated rate exceeds the target by more than 10%" {
	# 1000 keys in a filter sized for 100 at 1%: about 10 times too many
	seq 1 1000 >keys.txt
	build over.bf -n 100 -p 0.01 keys.txt 2>/dev/null
	run --separate-stderr bfinfo over.bf
	expect_status 0
	case $(field "estimated rate") in
	*"(target 0.01; over capacity)") ;;
	*) expect_eq "estimated rate" "... (target 0.01; over capacity)" "$(field "estimated rate")" ;;
	esac
	run --separate-stderr bfinfo --json over.bf
	expect_json over_capacity:true
}

@test "bfinfo: a filter filled to its capacity is not over capacity" {
	make_classic
	run --separate-stderr bfinfo classic.bf
	case $output in *"over capacity"*) expect_eq "output" "(no 'over capacity')" "$output" ;; esac
	run --separate-stderr bfinfo --json classic.bf
	expect_json over_capacity:false
}

@test "bfinfo: a filter with every bit set has no element estimate (text says so, JSON null)" {
	# 20000 keys into 512 bits with k = 1: a bit stays clear with
	# probability (1 - 1/512)^20000 = e^-39, so all 512 are set
	seq 1 20000 >keys.txt
	build full.bf -m 512 -K 1 --layout classic keys.txt 2>/dev/null
	run --separate-stderr bfinfo full.bf
	expect_field "total fill" "100.00%"
	expect_field "estimated elements" "too many to estimate (every bit set)"
	run --separate-stderr bfinfo --json full.bf
	expect_json estimated_elements:null
	expect_json fill:1
	expect_json over_capacity:true
	expect_valid_json
}

# ---------------------------------------------------------------- growing filters

@test "bfinfo: a growing filter from bfuniq: growth 2, tighten 1, stages of 100000 and 200000 keys" {
	# bfuniq without -n starts with 100000 keys at 1e-6/2 and doubles
	seq 1 250000 | bfuniq --key "$KEY" -f state.bf >/dev/null
	run --separate-stderr bfinfo state.bf
	expect_status 0
	expect_field "kind" "growing (growth factor 2, tighten 1)"
	expect_field "stages" 2
	expect_field "capacity" "100000 (first stage)"
	expect_field "target rate" 1e-06
	expect_field "insertions" 250000
	expect_eq "stage headings" $'stage 1 of 2:\nstage 2 of 2:' "$(printf '%s\n' "$output" | grep '^stage [0-9]')"
	expect_eq "stage capacities" $'100000\n200000' "$(fields "  capacity")"
	expect_eq "stage target rates" $'5e-07\n2.5e-07' "$(fields "  target rate")"
	expect_eq "stage insertions" $'100000\n150000' "$(fields "  insertions")"
	local sum
	sum=$(fields "  bits (m)" | awk '{ s += $1 } END { print s }')
	expect_field "total bits" "$sum"
}

@test "bfinfo: --json describes a growing filter with a stages array" {
	seq 1 250000 | bfuniq --key "$KEY" -f state.bf >/dev/null
	run --separate-stderr bfinfo --json state.bf
	expect_status 0
	expect_json 'kind:"growing"'
	expect_json growth:2
	expect_json tighten:1
	expect_json stage_count:2
	case $output in
	*'"stages":[{"layout":"blocked",'*'"capacity":100000,"target_rate":5e-07,"insertions":100000,'*'},{"layout":"blocked",'*'"capacity":200000,"target_rate":2.5e-07,"insertions":150000,'*'}],'*) ;;
	*) expect_eq "stages array" "two stages of 100000 and 200000" "$output" ;;
	esac
	expect_valid_json
}

# ---------------------------------------------------------------- JSON

@test "bfinfo: --json prints one object per line with every field, numbers as numbers" {
	make_classic
	local disk
	disk=$(wc -c <classic.bf | tr -d ' ')
	run --separate-stderr bfinfo --json classic.bf
	expect_status 0
	expect_stderr ""
	expect_eq "lines" 1 "${#lines[@]}"
	case $output in '{"file":"classic.bf",'*'}') ;; *) expect_eq "object" '{"file":"classic.bf",...}' "$output" ;; esac
	for member in format_version:1 'kind:"fixed"' growth:null tighten:null stage_count:1 \
		'hash:"SipHash-1-3-128"' "key_fingerprint:\"$KEY_FINGERPRINT\"" fold_case:false \
		capacity:1000 target_rate:0.01 insertions:1000 'layout:"classic"' bits:9728 hashes:7 \
		"bits_set:$(popcount classic.bf)" bytes_in_memory:1216 "bytes_on_disk:$disk" \
		over_capacity:false; do
		expect_json "$member"
	done
	for key in fill estimated_elements estimated_rate stages; do
		case $output in *"\"$key\":"*) ;; *) expect_eq "JSON key" "$key" "(missing)" ;; esac
	done
	expect_valid_json
}

@test "bfinfo: --json output of several files is JSON Lines, one object per file in order" {
	make_classic
	seq 1 10 >few.txt
	build few.bf -n 10 few.txt
	run --separate-stderr bfinfo --json classic.bf few.bf classic.bf
	expect_status 0
	expect_eq "lines" 3 "${#lines[@]}"
	case ${lines[0]} in '{"file":"classic.bf",'*) ;; *) expect_eq "line 1" classic.bf "${lines[0]}" ;; esac
	case ${lines[1]} in '{"file":"few.bf",'*) ;; *) expect_eq "line 2" few.bf "${lines[1]}" ;; esac
	case ${lines[2]} in '{"file":"classic.bf",'*) ;; *) expect_eq "line 3" classic.bf "${lines[2]}" ;; esac
	expect_valid_json
}

@test "bfinfo: --json escapes quotes, backslashes, control bytes and bytes of no UTF-8 in file names" {
	make_classic
	local name=$'we"ird\\na\001me\nwith\377.bf'
	cp classic.bf "$name"
	bfinfo --json "$name" >out.json
	# one line: the newline in the name is \u000a, not a line break; the
	# byte 377, valid in no UTF-8 sequence, is \udcff (json_out.h)
	expect_eq "lines" 1 "$(wc -l <out.json | tr -d ' ')"
	expect_eq "file member" '{"file":"we\"ird\\na\u0001me\u000awith\udcff.bf",' \
		"$(grep -o '^{"file":"[^,]*,' out.json)"
}

@test "bfinfo: --json with a quote and a newline in the name is valid JSON" {
	make_classic
	cp classic.bf $'say "hi"\n.bf'
	run --separate-stderr bfinfo --json $'say "hi"\n.bf'
	expect_status 0
	expect_eq "lines" 1 "${#lines[@]}"
	expect_json 'file:"say \"hi\"\u000a.bf"'
	expect_valid_json
}

# ---------------------------------------------------------------- several files, errors

@test "bfinfo: describes several files in order, a blank line between them" {
	make_classic
	seq 1 10 >few.txt
	build few.bf -n 10 few.txt
	run --separate-stderr bfinfo classic.bf few.bf
	expect_status 0
	expect_eq "file lines" $'file:                 classic.bf\nfile:                 few.bf' \
		"$(printf '%s\n' "$output" | grep '^file:')"
	expect_eq "blank lines" 1 "$(printf '%s\n' "$output" | grep -c '^$')"
	# the blank line comes just before the second file's block
	expect_eq "after the blank line" "file:                 few.bf" \
		"$(printf '%s\n' "$output" | sed -n '/^$/{n;p;}')"
}

@test "bfinfo: a bad file among good ones is reported, the others described, exit 2" {
	make_classic
	seq 1 10 >few.txt
	build few.bf -n 10 few.txt
	put_lines not-a-filter.bf hello
	mkdir dir.bf
	run --separate-stderr bfinfo classic.bf not-a-filter.bf missing.bf dir.bf few.bf
	expect_status 2
	expect_eq "described" $'file:                 classic.bf\nfile:                 few.bf' \
		"$(printf '%s\n' "$output" | grep '^file:')"
	expect_eq "stderr lines" 3 "$(printf '%s\n' "$stderr" | wc -l | tr -d ' ')"
	expect_eq "first" "bfinfo: not-a-filter.bf: not a bftools filter (not gzip data)" \
		"$(printf '%s\n' "$stderr" | sed -n 1p)"
	expect_eq "second" "bfinfo: missing.bf: No such file or directory" \
		"$(printf '%s\n' "$stderr" | sed -n 2p)"
	case $(printf '%s\n' "$stderr" | sed -n 3p) in
	"bfinfo: dir.bf: "?*) ;;
	*) expect_eq "third" "bfinfo: dir.bf: ..." "$(printf '%s\n' "$stderr" | sed -n 3p)" ;;
	esac
}

@test "bfinfo: a truncated filter is an error naming the file, exit 2" {
	make_classic
	head -c 100 classic.bf >cut.bf
	run --separate-stderr bfinfo cut.bf
	expect_one_line_error "bfinfo: cut.bf: "
}

@test "bfinfo: --json with a bad file still prints the good ones, exit 2" {
	make_classic
	put_lines bad.bf hello
	run --separate-stderr bfinfo --json bad.bf classic.bf
	expect_status 2
	expect_eq "lines" 1 "${#lines[@]}"
	expect_json 'file:"classic.bf"'
	expect_stderr "bfinfo: bad.bf: not a bftools filter (not gzip data)"
}

@test "bfinfo: - reads a filter from standard input; its size on disk is unknown" {
	make_classic
	run --separate-stderr bfinfo - <classic.bf
	expect_status 0
	expect_field "file" "(standard input)"
	expect_field "  bits (m)" 9728
	expect_field "size on disk" unknown
	run --separate-stderr bfinfo --json classic.bf - <classic.bf
	expect_status 0
	expect_eq "lines" 2 "${#lines[@]}"
	case ${lines[1]} in
	'{"file":"-",'*'"bytes_on_disk":null}') ;;
	*) expect_eq "stdin object" '{"file":"-",...,"bytes_on_disk":null}' "${lines[1]}" ;;
	esac
}

@test "bfinfo: a bad filter on standard input is named (standard input)" {
	run --separate-stderr bfinfo - <<<"hello"
	expect_fail "bfinfo: (standard input): not a bftools filter (not gzip data)"
}

@test "bfinfo: writing to a full disk is a write error, exit 2" {
	make_classic
	run --separate-stderr bash -c 'bfinfo classic.bf >/dev/full'
	expect_fail "bfinfo: write error: No space left on device"
	run --separate-stderr bash -c 'bfinfo --json classic.bf >/dev/full'
	expect_fail "bfinfo: write error: No space left on device"
}

# ---------------------------------------------------------------- keys

@test "bfinfo: bfuniq -f twice over the same 1000 keys leaves insertions 1000, the keys new to the state" {
	# bfuniq adds only the keys it passes, and counts those: the second
	# run passes none and adds none. 1000 keys at 1e-6 lose one to a false
	# positive with probability 1e-3; the fixed key makes the outcome certain
	seq 1 1000 >keys.txt
	bfuniq --key "$KEY" -f seen.bf keys.txt >first.txt
	bfuniq -f seen.bf keys.txt >second.txt
	expect_eq "passed" "1000 0" "$(wc -l <first.txt | tr -d ' ') $(wc -l <second.txt | tr -d ' ')"
	run --separate-stderr bfinfo seen.bf
	expect_status 0
	expect_field "insertions" 1000
	expect_field "keys" "1000 (estimated from the bits set)"
	run --separate-stderr bfinfo --json seen.bf
	expect_json insertions:1000
	expect_json keys:1000
	# bfbuild counts every key offered: its insertions include repeats
	cat keys.txt keys.txt | build twice.bf -n 10000
	run --separate-stderr bfinfo twice.bf
	expect_field "insertions" 2000
	expect_field "keys" "$(bfcount -f twice.bf) (estimated from the bits set)"
}

@test "bfinfo: keys is bfcount -f's figure for every kind of filter, in text and JSON" {
	seq 1 3000 >in.txt
	build fixed.bf -n 5000 in.txt
	build classic.bf -n 5000 --layout classic in.txt
	build counting.bf -n 5000 --layout counting in.txt
	seq 1 250000 | bfuniq --key "$KEY" -f growing.bf >/dev/null
	bfbuild --key "$KEY" --window 2000keys -o window.bf in.txt
	bfbuild --format dcso -n 5000 -p 0.01 -o dcso.bloom in.txt
	local f want
	for f in fixed.bf classic.bf counting.bf growing.bf window.bf dcso.bloom; do
		want=$(bfcount -f "$f")
		run --separate-stderr bfinfo "$f"
		expect_status 0
		expect_eq "$f: keys" "$want (estimated from the bits set)" "$(field keys)"
		run --separate-stderr bfinfo --json "$f"
		expect_json "keys:$want"
		expect_valid_json
	done
}

@test "bfinfo: a filter with every bit set has no keys figure (text says so, JSON null)" {
	seq 1 20000 >keys.txt
	build full.bf -m 512 -K 1 --layout classic keys.txt 2>/dev/null
	run --separate-stderr bfinfo full.bf
	expect_field "keys" "too many to estimate (every bit set)"
	run --separate-stderr bfinfo --json full.bf
	expect_json keys:null
}

@test "bfinfo --brief: a header, then one line per file, as ls -l and df -h" {
	# issue 37: 30+ lines a filter; one line each to read at a glance
	seq 1 500 | bfbuild --key "$KEY" -n 1000 -p 0.01 -o "a b.bf"
	bfbuild --key "$KEY" -n 1000 -p 0.01 -o empty.bf </dev/null
	seq 1 300 | bfcount -o s.hll >/dev/null
	printf 'x\nx\ny\n' | bftop -o t.top >/dev/null
	run --separate-stderr bfinfo --brief "a b.bf" empty.bf s.hll t.top missing.bf
	expect_status 2
	expect_stderr "bfinfo: missing.bf: No such file or directory"
	expect_eq "header" "KIND               KEYS   FILL      RATE    TARGET     SIZE FILE" "${lines[0]}"
	expect_eq "lines" 5 "${#lines[@]}"
	expect_eq "filter" "blocked $(bfcount -f "a b.bf") 0.01 size a b.bf" \
		"$(awk 'NR == 2 { print $1, $2, $5, ($6 ~ /^[0-9.]+k?B$/ ? "size" : $6), $7, $8 }' <<<"$output")"
	expect_eq "empty" "blocked 0 0.0% 0 0.01 empty.bf" \
		"$(awk 'NR == 3 { print $1, $2, $3, $4, $5, $NF }' <<<"$output")"
	expect_eq "sketch" "sketch 300 - - s.hll" "$(awk 'NR == 4 { print $1, $2, $4, $5, $NF }' <<<"$output")"
	expect_eq "summary" "summary 3 - - - t.top" "$(awk 'NR == 5 { print $1, $2, $3, $4, $5, $NF }' <<<"$output")"
	run --separate-stderr bfinfo --brief --json empty.bf
	expect_usage_error bfinfo "--brief and --json cannot be used together"
}

@test "bfinfo and bftop: --report=json is their --json; another report is refused" {
	bfbuild --key "$KEY" -n 1000 -o f.bf </dev/null
	expect_eq "bfinfo" "$(bfinfo --json f.bf)" "$(bfinfo --report=json f.bf)"
	printf 'a\na\nb\n' >in.txt
	expect_eq "bftop" "$(bftop --json in.txt)" "$(bftop --report json in.txt)"
	run --separate-stderr bfinfo --report=xml f.bf
	expect_usage_error bfinfo "invalid --report 'xml': expected json"
}

# without_stats FILE OUT: FILE's content in a plain gzip member, as a file
# written before bftools stored its figures holds it (no extra field).
without_stats() {
	gzip -dc "$1" | gzip -n >"$2"
}

# shown FILE [OPTION...]: bfinfo --json's object for FILE, less its name
# and size on disk (which differ between copies of one filter).
shown() {
	local f=$1
	shift
	bfinfo --json "$@" "$f" | sed 's/"file":"[^"]*",//; s/,"bytes_on_disk":[0-9]*//'
}

@test "bfinfo: the figures a file stores are those --verify counts from its bits, for every kind" {
	seq 1 3000 >in.txt
	build fixed.bf -n 5000 in.txt
	build classic.bf -n 5000 --layout classic in.txt
	build counting.bf -n 5000 --layout counting in.txt
	seq 1 250000 | bfuniq --key "$KEY" -f growing.bf >/dev/null
	bfbuild --key "$KEY" --window 2000keys -o window.bf in.txt
	local f stored
	for f in fixed.bf classic.bf counting.bf growing.bf window.bf; do
		stored=$(shown "$f")
		expect_eq "$f: stored against verified" "$stored" "$(shown "$f" --verify)"
		# a file without them (as written before) is counted: the same figures
		without_stats "$f" "old-$f"
		expect_eq "$f: stored against an old file's" "$stored" "$(shown "old-$f")"
		run --separate-stderr bfinfo --verify "old-$f"
		expect_status 0
	done
}

@test "bfinfo: reads a filter's header alone; --verify reads its bits and finds their damage" {
	make_classic
	local size byte before
	before=$(bfinfo classic.bf)
	# the trailer's CRC-32, 8 bytes from the end, with its low bit flipped
	size=$(wc -c <classic.bf)
	byte=$(od -A n -t u1 -j $((size - 8)) -N 1 classic.bf | tr -d ' ')
	printf "\\$(printf '%03o' $((byte ^ 1)))" | dd of=classic.bf bs=1 seek=$((size - 8)) conv=notrunc 2>/dev/null
	run --separate-stderr bfinfo classic.bf
	expect_status 0
	expect_eq "description" "$before" "$output"
	run --separate-stderr bfinfo --verify classic.bf
	expect_status 2
	expect_eq "stdout" "" "$output"
	expect_eq "stderr" "bfinfo: classic.bf: corrupt: checksum mismatch" "$stderr"
}

@test "bfinfo --verify: a stored figure that lies is named, with the file, exit 2" {
	command -v python3 >/dev/null 2>&1 || skip "python3 edits the gzip header"
	make_classic
	local set
	set=$(popcount classic.bf)
	cp classic.bf good.bf
	# the statistics subfield opens the extra field of a file this small:
	# bits set of stage 1 at byte 24; then the header CRC made right again
	python3 - classic.bf <<'PY'
import struct, sys, zlib
path = sys.argv[1]
f = bytearray(open(path, "rb").read())
assert f[12:14] == b"BS"
struct.pack_into("<Q", f, 24, struct.unpack_from("<Q", f, 24)[0] + 1)
xlen = f[10] | f[11] << 8
struct.pack_into("<H", f, 12 + xlen, zlib.crc32(bytes(f[:12 + xlen])) & 0xFFFF)
open(path, "wb").write(f)
PY
	# read alone, the header is believed
	run --separate-stderr bfinfo classic.bf
	expect_status 0
	expect_eq "bits set shown" "$((set + 1))" "$(field "  bits set")"
	# the other files are still described
	run --separate-stderr bfinfo --verify classic.bf good.bf
	expect_status 2
	expect_eq "described" "good.bf" "$(field file)"
	case $stderr in
	"bfinfo: classic.bf: stored statistics disagree with the bits: stage 1 of 1, bits set (stored $((set + 1)), "*"; counted $set, "*")") ;;
	*) expect_eq "stderr" "bfinfo: classic.bf: stored statistics disagree with the bits: stage 1 of 1, bits set ..." "$stderr" ;;
	esac
}

@test "bfinfo: a filter piped in is read to its end, so its writer is not cut off after the headers" {
	# 1e6 keys in -n 1e7: megabytes of deflated bits, more than a pipe holds
	run --separate-stderr bash -c 'set -o pipefail; seq 1 1000000 | bfbuild --key "$1" -n 1e7 | bfinfo --brief -' _ "$KEY"
	expect_status 0
	expect_eq "stderr" "" "$stderr"
	local piped=$output
	seq 1 1000000 | bfbuild --key "$KEY" -n 1e7 -o saved.bf
	# the same figures as the same filter saved to a file (less its size and name)
	expect_eq "figures" "$(bfinfo --brief saved.bf | awk 'NR == 2 { print $1, $2, $3, $4, $5 }')" \
		"$(printf '%s\n' "$piped" | awk 'NR == 2 { print $1, $2, $3, $4, $5 }')"
}
