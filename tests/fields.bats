#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# fields.bats - keys made of several fields (-k 1,3, -k 2-4, -k 3-, as cut -f
# takes them) in every program that takes key options: bfbuild, bfgrep,
# bfuniq, bfcount. The key is the selected fields in record order, joined by
# one byte: the -t separator, or one space when fields are split at blanks.
#
# Every filter is built with a fixed --key and a dozen keys at p = 1e-6,
# so a false positive in any test below has odds near 1e-5.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	for prog in bfbuild bfgrep bfuniq bfcount; do
		if [ ! -x "$BFTOOLS_BIN/$prog" ]; then
			echo "$BFTOOLS_BIN/$prog is missing: build it (make) or set BFTOOLS_BIN" >&2
			return 1
		fi
	done
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
}

uniq_() {
	bfuniq --key "$KEY" "$@"
}

# ---------------------------------------------------------------- bfuniq

@test "fields: bfuniq -k 1,3 keeps the first line per (field 1, field 3) pair" {
	printf 'a b c\na x c\nb b c\na b d\na y c\n' >in.txt
	run --separate-stderr uniq_ -k 1,3 in.txt
	expect_status 0
	expect_output $'a b c\nb b c\na b d'
}

@test "fields: bfuniq -k 1,3 agrees with sort -u -k1,1 -k3,3 on the set of keys" {
	for i in $(seq 1 40); do echo "u$((i % 5)) x$i v$((i % 3)) z"; done >in.txt
	run --separate-stderr uniq_ -k 1,3 in.txt
	expect_status 0
	expect_eq "lines" "$(sort -u -k1,1 -k3,3 in.txt | wc -l)" "$(printf '%s\n' "$output" | wc -l)"
}

@test "fields: bfuniq -t , -k 2-3 keys fields 2 to 3 as they stand, separator and all" {
	printf '1,a,b,x\n2,a,b,y\n3,a,c,z\n4,a\n' >in.csv
	run --separate-stderr uniq_ -t , -k 2-3 in.csv
	expect_status 0
	expect_output $'1,a,b,x\n3,a,c,z'
}

@test "fields: bfuniq -k 3- keys from field 3 to the last; lines without field 3 have no key" {
	printf 'a b c d\nx y c d\np q c e\nonly two\n' >in.txt
	run --separate-stderr uniq_ -k 3- in.txt
	expect_status 0
	expect_output $'a b c d\np q c e'
}

@test "fields: the joining byte is part of the key: -t , -k 1,2 tells a,b,c from ab,,c" {
	# keys "a,b" and "ab," differ; with no joining byte both would be "ab"
	printf 'a,b,c\nab,,c\n' >in.csv
	run --separate-stderr uniq_ -t , -k 1,2 in.csv
	expect_output $'a,b,c\nab,,c'
}

@test "fields: blank-split lists join with one space, whatever the blanks were" {
	printf 'a\t\tb c\n  a b  d\n' >in.txt
	run --separate-stderr uniq_ -k 1-2 in.txt
	expect_output $'a\t\tb c'
}

@test "fields: a list names a set: -k 3,1 and -k 1,1,3 key as -k 1,3" {
	printf 'a b c\na x c\nb b c\n' >in.txt
	run --separate-stderr uniq_ -k 1,3 in.txt
	local want=$output
	run --separate-stderr uniq_ -k 3,1 in.txt
	expect_output "$want"
	run --separate-stderr uniq_ --field=1,1,3 in.txt
	expect_output "$want"
}

@test "fields: bad lists are usage errors naming the list" {
	: >in.txt
	run --separate-stderr bfuniq -k 1,,3 in.txt
	expect_usage_error bfuniq "invalid field list '1,,3': empty item in the field list"
	run --separate-stderr bfuniq -k 4-2 in.txt
	expect_usage_error bfuniq "invalid field list '4-2': a range decreases"
	run --separate-stderr bfuniq -k 0-3 in.txt
	expect_usage_error bfuniq "invalid field list '0-3': field numbers count from 1 to 4294967294"
	run --separate-stderr bfuniq -k 1,host in.txt
	expect_usage_error bfuniq "-k 'host': not a field number or range (field names need --header)"
}

@test "fields: a field number is a plain integer, never a count's 1k or 1e3" {
	# issue 37: -k 1k keyed on field 1000 and -k 1x spoke of suffixes
	local why="a field number is a plain integer (1, 2, 3, ...; no suffix, fraction or exponent)"
	put_lines in.txt "a b"
	for prog in bfuniq bfbuild bfgrep bfcount bftop; do
		for n in 1k 1x 1e3 1.0; do
			run --separate-stderr "$prog" -k "$n" in.txt
			expect_usage_error "$prog" "invalid field number '$n': $why"
		done
	done
	run --separate-stderr bfuniq --window 1m --time-field 1k in.txt
	expect_usage_error bfuniq "invalid time field '1k': $why"
	run --separate-stderr bfuniq -k 02 in.txt
	expect_status 0
	expect_output "a b"
}

# ---------------------------------------------------------------- bfbuild, bfgrep

@test "fields: bfbuild -k 1,3 adds the joined key; bfgrep -k 1,3 tests the same key" {
	printf 'alice x 1\nbob y 2\n' >in.txt
	bfbuild --key "$KEY" -n 10 -p 1e-6 -k 1,3 -o f.bf in.txt
	put_lines q.txt "alice 1" "bob 2" "alice 2" "alice"
	run --separate-stderr bfgrep -f f.bf q.txt
	expect_status 0
	expect_output $'alice 1\nbob 2'
	printf 'alice - 1\ncarol - 1\nbob + 2 more\n' >q2.txt
	run --separate-stderr bfgrep -f f.bf -k 1,3 q2.txt
	expect_output $'alice - 1\nbob + 2 more'
}

@test "fields: bfgrep -v with a list prints lines lacking a listed field too" {
	put_lines keys.txt "a,c"
	bfbuild --key "$KEY" -n 10 -p 1e-6 -o f.bf keys.txt
	printf 'a,b,c\na,b\nx,b,c\n' >in.csv
	run --separate-stderr bfgrep -f f.bf -t , -k 1,3 in.csv
	expect_output 'a,b,c'
	run --separate-stderr bfgrep -v -f f.bf -t , -k 1,3 in.csv
	expect_output $'a,b\nx,b,c'
}

@test "fields: bfgrep -o with a list prints the joined key" {
	put_lines keys.txt "a,c"
	bfbuild --key "$KEY" -n 10 -p 1e-6 -o f.bf keys.txt
	printf 'a,b,c,d\n' >in.csv
	run --separate-stderr bfgrep -o -f f.bf -t , -k 1,3 in.csv
	expect_output 'a,c'
}

# ---------------------------------------------------------------- bfcount

@test "fields: bfcount -k 1,3 counts distinct (field 1, field 3) pairs" {
	printf 'a b c\na x c\nb b c\na b d\nshort\n' >in.txt
	run --separate-stderr bfcount -k 1,3 in.txt
	expect_status 0
	expect_output 3
	# b c, x c, b c, b d: three distinct
	run --separate-stderr bfcount -k 2- in.txt
	expect_output 3
}

# ---------------------------------------------------------------- --header

@test "fields: bfuniq --header writes one header, the first input's, and never keys it" {
	printf 'name\nalice\nname\nbob\nalice\n' >a.txt
	printf 'name\nbob\ncarol\n' >b.txt
	run --separate-stderr uniq_ --header a.txt b.txt
	expect_status 0
	# one table: b's header, the same as a's, is not written again; the
	# header "name" is no key, so a's data line "name" is new
	expect_output $'name\nalice\nname\nbob\ncarol'
}

@test "fields: bfuniq --header -k names fields, resolved in the one header of all inputs" {
	printf 'id host path\n1 a /x\n2 b /x\n3 a /x\n4 a /y\n' >a.txt
	printf 'id host path\n5 a /x\n6 a /z\n' >b.txt
	run --separate-stderr uniq_ --header -k host,path a.txt b.txt
	expect_status 0
	expect_output $'id host path\n1 a /x\n2 b /x\n4 a /y\n6 a /z'
}

@test "fields: an input whose header differs from the first's is a clean cut naming it (tsv-utils' rule)" {
	printf 'id host path\n1 a /x\n2 b /x\n' >a.txt
	printf 'path host\n/x a\n/z a\n' >b.txt
	printf 'id host path\n3 c /x\n' >c.txt
	run --separate-stderr uniq_ --header -k host a.txt b.txt c.txt
	expect_status 2
	expect_output $'id host path\n1 a /x\n2 b /x'
	expect_eq "stderr" "bfuniq: b.txt:1: its header differs from the first input's (--header: one table, one header)" "$stderr"
}

@test "fields: a name missing from the first input's header is an error naming it at line 1" {
	printf 'server\nb\n' >b.txt
	printf 'host\nc\n' >c.txt
	run --separate-stderr uniq_ --header -k host b.txt c.txt
	expect_status 2
	expect_output ''
	expect_eq "stderr" "bfuniq: b.txt:1: no field named 'host' in its header" "$stderr"
}

@test "fields: --header with an empty input writes nothing; a header-only input writes its header" {
	: >empty.txt
	printf 'h1 h2\n' >only.txt
	run --separate-stderr uniq_ --header empty.txt only.txt
	expect_output 'h1 h2'
}

@test "fields: -k with names and -t , splits the header at the separator too" {
	printf 'a b,c\nx,1\ny,1\n' >in.csv
	run --separate-stderr uniq_ --header -t , -k c in.csv
	expect_output $'a b,c\nx,1'
	run --separate-stderr uniq_ --header -t , -k 'a b' in.csv
	expect_output $'a b,c\nx,1\ny,1'
}

@test "fields: bfgrep --header writes the header first, as line 1 with -n and -H" {
	put_lines keys.txt b
	bfbuild --key "$KEY" -n 10 -p 1e-6 -o f.bf keys.txt
	printf 'k v\na 1\nb 2\n' >in.txt
	run --separate-stderr bfgrep --header -f f.bf -k k in.txt
	expect_status 0
	expect_output $'k v\nb 2'
	run --separate-stderr bfgrep --header -n -H -f f.bf -k 1 in.txt
	expect_output $'in.txt:1:k v\nin.txt:3:b 2'
	run --separate-stderr bfgrep --header -v -f f.bf -k 1 in.txt
	expect_output $'k v\na 1'
}

@test "fields: bfgrep --header: -c, -l and -q answer for the lines only" {
	put_lines keys.txt k
	bfbuild --key "$KEY" -n 10 -p 1e-6 -o f.bf keys.txt
	printf 'k v\na 1\n' >in.txt
	run --separate-stderr bfgrep --header -c -f f.bf -k 1 in.txt
	expect_status 1
	expect_output 0
	run --separate-stderr bfgrep --header -l -f f.bf -k 1 in.txt
	expect_status 1
	expect_output ''
	run --separate-stderr bfgrep --header -q -f f.bf -k 1 in.txt
	expect_status 1
}

@test "fields: bfbuild --header adds no header key, on one thread or four" {
	# 2.3 MB: big enough for four threads to read it in ranges without --header
	{ echo "user"; seq 1 300000 | sed 's/^/u/'; } >in.txt
	BFTOOLS_THREADS=1 bfbuild --key "$KEY" -n 300000 -p 1e-6 --header -o one.bf in.txt
	BFTOOLS_THREADS=4 bfbuild --key "$KEY" -n 300000 -p 1e-6 --header -o four.bf in.txt
	cmp one.bf four.bf
	put_lines q.txt user u1 u300000
	run --separate-stderr bfgrep -f four.bf q.txt
	expect_output $'u1\nu300000'
}

@test "fields: bfcount --header counts the keys of the lines only" {
	printf 'host\na\nb\na\n' >in.txt
	run --separate-stderr bfcount --header in.txt
	expect_status 0
	expect_output 2
	run --separate-stderr bfcount --header -k host in.txt
	expect_output 2
}

# ---------------------------------------------------------------- --csv

@test "fields: bfuniq --csv keys quoted fields by value (the issue's Smith, John)" {
	printf 'id,"Smith, John"\n2,"Smith, Jane"\n' >in.csv
	run --separate-stderr uniq_ -t , -k 2 in.csv
	# without --csv both keys are "Smith: the second line is lost
	expect_output 'id,"Smith, John"'
	run --separate-stderr uniq_ --csv -k 2 in.csv
	expect_status 0
	expect_output $'id,"Smith, John"\n2,"Smith, Jane"'
}

@test "fields: bfuniq --csv writes records exactly as read, quotes, CRLF and line breaks" {
	printf 'a,"x\r\ny"\r\nb,"x\r\ny"\r\nc,"""q"""\r\nd,"q"\r\ne,"""q"""\r\n' >in.csv
	run --separate-stderr uniq_ --csv -k 2 in.csv
	expect_status 0
	expect_eq "bytes" "$(printf 'a,"x\r\ny"\r\nc,"""q"""\r\nd,"q"\r')" "$output"
}

@test "fields: --csv keys \"5\" and 5 alike, and \"a\"\"b\" as a\"b" {
	printf '"5"\n5\n"a""b"\na"b\n' >in.csv
	run --separate-stderr uniq_ --csv in.csv
	expect_output $'"5"\n"a""b"'
}

@test "fields: --csv --header -k names a quoted header field" {
	printf '"user id","url"\n1,"http://a/?x=1,2"\n2,"http://a/?x=1,2"\n3,http://b/\n' >in.csv
	run --separate-stderr uniq_ --csv --header -k url in.csv
	expect_status 0
	expect_output $'"user id","url"\n1,"http://a/?x=1,2"\n3,http://b/'
	run --separate-stderr uniq_ --csv --header -k 'user id' in.csv
	expect_output "$(cat in.csv)"
}

@test "fields: --csv -t ';' reads the European variant" {
	printf 'name;amount\n"Müller; Hans";"1,5"\n"Müller; Hans";"2,5"\nMeier;"1,5"\n' >in.csv
	run --separate-stderr uniq_ --csv -t ';' --header -k name in.csv
	expect_output $'name;amount\n"Müller; Hans";"1,5"\nMeier;"1,5"'
	run --separate-stderr uniq_ --csv -t ';' --header -k amount in.csv
	expect_output $'name;amount\n"Müller; Hans";"1,5"\n"Müller; Hans";"2,5"'
}

@test "fields: --csv with a quote or newline as separator is a usage error" {
	: >in.csv
	run --separate-stderr bfuniq --csv -t '"' in.csv
	expect_usage_error bfuniq "--csv: the separator cannot be a quote, newline or carriage return"
}

@test "fields: bfgrep --csv tests values and prints whole records; -n counts records" {
	printf 'Smith, John\0two\nlines\0' | bfbuild --key "$KEY" -z -n 10 -p 1e-6 -o f.bf
	printf 'id,name\n1,"Smith, John"\n2,"two\nlines"\n3,"Smith, Jane"\n' >in.csv
	run --separate-stderr bfgrep --csv --header -n -f f.bf -k name in.csv
	expect_status 0
	expect_output $'1:id,name\n2:1,"Smith, John"\n3:2,"two\nlines"'
	run --separate-stderr bfgrep --csv --header -c -f f.bf -k 2 in.csv
	expect_output 2
}

@test "fields: bfbuild --csv adds unquoted values; the same on one thread or four" {
	# 1.3 MB: big enough for threads to read it in ranges, were it not CSV
	awk 'BEGIN { for (i = 1; i <= 60000; i++) printf "%d,\"n%d\nx, \"\"y\"\"\"\n", i, i }' >in.csv
	BFTOOLS_THREADS=1 bfbuild --key "$KEY" -n 100000 -p 1e-6 --csv -k 2 -o one.bf in.csv
	BFTOOLS_THREADS=4 bfbuild --key "$KEY" -n 100000 -p 1e-6 --csv -k 2 -o four.bf in.csv
	cmp one.bf four.bf
	printf 'n1\nx, "y"\0n60000\nx, "y"\0n1\0name\0' >q.txt
	bfgrep -z -f four.bf q.txt | tr '\0' '|' >got.txt
	expect_eq "selected" "$(printf 'n1\nx, "y"|n60000\nx, "y"|')" "$(cat got.txt)"
}

@test "fields: bfcount --csv counts distinct values across records of several lines" {
	printf 'k\n"a\nb"\n"a\nb"\n"a b"\n' >in.csv
	run --separate-stderr bfcount --csv --header -k k in.csv
	expect_status 0
	expect_output 2
}

# ---------------------------------------------------------------- --jsonl

@test "fields: bfuniq --jsonl -k .user.id keys \"42\" and 42 alike, whatever the spacing" {
	printf '{"user":{"id":42},"u":1}\n{"user":{"id":"42"},"u":2}\n{ "user" : { "id" : 7 } }\n{"user":{}}\n' >in.json
	run --separate-stderr uniq_ --jsonl -k .user.id in.json
	expect_status 0
	expect_output $'{"user":{"id":42},"u":1}\n{ "user" : { "id" : 7 } }'
}

@test "fields: bfuniq --jsonl keys objects in canonical form and several paths joined" {
	printf '{"a":{"x":1},"b":"p"}\n{"a": { "x" : 1 },"b":"q"}\n{"a":{"x":1},"b":"p","c":0}\n' >in.json
	run --separate-stderr uniq_ --jsonl -k .a in.json
	expect_output '{"a":{"x":1},"b":"p"}'
	run --separate-stderr uniq_ --jsonl -k .a,.b in.json
	expect_output $'{"a":{"x":1},"b":"p"}\n{"a": { "x" : 1 },"b":"q"}'
}

@test "fields: --jsonl paths take [N], [\"odd key\"] and .\"quoted\"" {
	printf '{"tags":["x","y"],"odd key":1}\n{"tags":["x","z"],"odd key":1}\n{"tags":["w"],"odd key":2}\n' >in.json
	run --separate-stderr uniq_ --jsonl -k '.tags[0]' in.json
	expect_output $'{"tags":["x","y"],"odd key":1}\n{"tags":["w"],"odd key":2}'
	run --separate-stderr uniq_ --jsonl -k '.["odd key"]' in.json
	expect_output $'{"tags":["x","y"],"odd key":1}\n{"tags":["w"],"odd key":2}'
	# the third line has no .tags[1], so no key, and is not written
	run --separate-stderr uniq_ --jsonl -k '."odd key",.tags[1]' in.json
	expect_output $'{"tags":["x","y"],"odd key":1}\n{"tags":["x","z"],"odd key":1}'
}

@test "fields: a line that is not JSON is an error naming file and line" {
	printf '{"a":1}\n\n{"a":2,}\n{"a":3}\n' >in.json
	run --separate-stderr uniq_ --jsonl -k .a in.json
	expect_status 2
	expect_eq "stderr" "bfuniq: in.json:3: not JSON: expected a member name in an object" "$stderr"
}

@test "fields: --bad-line=skip passes such lines on; -v counts them" {
	printf '{"a":1}\nnot json\n{"a":1}\n' >in.json
	run --separate-stderr uniq_ --jsonl --bad-line=skip -k .a -v in.json
	expect_status 0
	expect_output $'{"a":1}\nnot json'
	[[ "$stderr" == *"lines not JSON, passed on without a key (--bad-line=skip): 1"* ]]
}

@test "fields: bad paths and --bad-line without --jsonl are usage errors" {
	: >in.json
	run --separate-stderr bfuniq --jsonl -k user in.json
	expect_usage_error bfuniq "invalid path 'user': a path starts with '.'"
	run --separate-stderr bfuniq --jsonl -k '.a[-1]' in.json
	expect_usage_error bfuniq "invalid path '.a[-1]': an array index in a path is a whole number from 0"
	run --separate-stderr bfuniq --bad-line=skip in.json
	expect_usage_error bfuniq "--bad-line is about JSON lines: it needs --jsonl"
	run --separate-stderr bfuniq --jsonl --bad-line=maybe in.json
	expect_usage_error bfuniq "invalid --bad-line 'maybe': expected 'error' or 'skip'"
	run --separate-stderr bfuniq --jsonl --csv in.json
	expect_usage_error bfuniq "--jsonl cannot be used with --csv or --header"
}

@test "fields: bfbuild, bfgrep and bfcount take --jsonl keys" {
	printf '{"ip":"10.0.0.1"}\n{"ip":"10.0.0.2"}\n' >bad.json
	bfbuild --key "$KEY" -n 10 -p 1e-6 --jsonl -k .ip -o bad.bf bad.json
	printf '{"ip":"10.0.0.2","n":1}\n{"ip":"10.0.0.3"}\n{"n":2}\n' >log.json
	run --separate-stderr bfgrep --jsonl -k .ip -f bad.bf log.json
	expect_status 0
	expect_output '{"ip":"10.0.0.2","n":1}'
	run --separate-stderr bfgrep -v --jsonl -k .ip -f bad.bf log.json
	expect_output $'{"ip":"10.0.0.3"}\n{"n":2}'
	run --separate-stderr bfcount --jsonl -k .ip log.json
	expect_output 2
	printf '10.0.0.1\n10.0.0.9\n' >q.txt
	run --separate-stderr bfgrep -f bad.bf q.txt
	expect_output '10.0.0.1'
}
