#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# formats.bats - --jsonl and --csv against the tools data people check them
# with, on generated data (fixed seeds): jq for JSON keys, Miller for CSV
# records. tests/deps.sh installs both for make check.
#
# Each filter holds at most a few thousand keys at p = 1e-6, and every
# run fixes --key: the expected number of first-seen lines lost to false
# positives is under 5000 * 1e-6 = 0.005 per run, and with the key fixed
# the outcome is the same every run.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	for tool in jq mlr; do
		if ! command -v "$tool" >/dev/null; then
			echo "$tool is missing: tests/deps.sh check installs it" >&2
			return 1
		fi
	done
	mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work"
}

# gen_json N SEED - N NDJSON lines whose .a.b is a scalar from a small pool,
# written in several ways that jq -r prints alike: "5" and 5, "\u00e9" and
# "é", spacing inside and around, and numbers by value: 5, 5.0, 5e0, 50e-1,
# 5.50 and 55e-1 (bftools keys a number as jq 1.6 -r prints it).
gen_json() {
	awk -v n="$1" -v seed="$2" 'BEGIN {
		srand(seed)
		for (i = 0; i < n; i++) {
			k = 1 + int(rand() * 400)	# never 0: "00e-1" is no JSON number
			r = int(rand() * 6)
			f = int(rand() * 6)
			if (r == 0 && f == 0) v = k
			else if (r == 0 && f == 1) v = k ".0"
			else if (r == 0 && f == 2) v = k "e0"
			else if (r == 0 && f == 3) v = k "0e-1"
			else if (r == 0 && f == 4) v = k ".50"
			else if (r == 0) v = k "5e-1"
			else if (r == 1) v = "\"" k "\""
			else if (r == 2) v = "\"caf\\u00e9 " k "\""
			else if (r == 3) v = "\"café " k "\""
			else if (r == 4) v = "\"q\\\"uote\\\\ \\/" k "\""
			else v = (k % 3 == 0 ? "true" : k % 3 == 1 ? "null" : "-" k)
			if (rand() < 0.5) printf "{\"n\":%d,\"a\":{\"b\":%s,\"c\":[1]}}\n", i, v
			else printf "{ \"a\" : { \"c\" : [ ], \"b\" : %s } , \"n\" : %d }\n", v, i
		}
	}'
}

@test "formats: bfuniq --jsonl -k .a.b writes the lines whose jq -r .a.b value is new" {
	gen_json 5000 25 >in.json
	jq -r .a.b in.json >values.txt
	[ "$(wc -l <values.txt)" -eq 5000 ]
	paste values.txt in.json | awk -F'\t' '!seen[$1]++' | cut -f2- >want.json
	bfuniq --key "$KEY" -p 1e-6 --jsonl -k .a.b in.json >got.json
	cmp want.json got.json
	# and the pool was exercised: hundreds of distinct values, thousands of repeats
	[ "$(wc -l <got.json)" -gt 500 ] && [ "$(wc -l <got.json)" -lt 2000 ]
}

@test "formats: bfcount --jsonl -k .a.b counts what jq -r .a.b | sort -u does" {
	gen_json 3000 7 >in.json
	want=$(jq -r .a.b in.json | sort -u | wc -l)
	run --separate-stderr bfcount --jsonl -k .a.b in.json
	expect_status 0
	# below bfcount's exact threshold the count is exact
	expect_output "$want"
}

@test "formats: --jsonl keys numbers by value as jq -r prints them, members in order, a missing path no key" {
	# issue 37: 1, 1.0 and 1e0 were three keys; jq 1.6 -r prints all as 1
	printf '%s\n' '{"a":1}' '{"a":1.0}' '{"a":1e0}' '{"a":10e-1}' '{"a":1e5}' \
		'{"a":100000}' '{"a":1e16}' '{"a":0.00001}' '{"a":-0.0}' '{"a":"1.0"}' >num.json
	jq -r .a num.json >want.txt
	expect_eq "jq 1.6 -r" "$(printf '%s\n' 1 1 1 1 100000 100000 1e+16 1e-05 -0 1.0)" "$(cat want.txt)"
	bfbuild --key "$KEY" -o jq.bf want.txt
	run --separate-stderr bfgrep --jsonl -k .a -c -f jq.bf num.json
	expect_output 10
	run --separate-stderr bfcount --jsonl -k .a num.json
	expect_output "$(sort -u want.txt | wc -l)"
	# members keep their order, as jq -c prints them: two keys
	printf '%s\n' '{"o":{"y":1,"x":2}}' '{"o":{"x":2.0,"y":1}}' '{"o":{"y":1.0,"x":2}}' >obj.json
	run --separate-stderr bfcount --jsonl -k .o obj.json
	expect_output "$(jq -c .o obj.json | sort -u | wc -l)"
	# a missing path has no key (jq -r prints null): the line is not counted
	printf '%s\n' '{"tags":["a"]}' '{"tags":[]}' '{"tags":[null]}' >tags.json
	run --separate-stderr bfcount --jsonl -k '.tags[0]' tags.json
	expect_output 2
	expect_eq "jq" "$(printf 'a\nnull\nnull')" "$(jq -r '.tags[0]' tags.json)"
}

# gen_csv N SEED - id,name,city with quoted names holding commas, doubled
# quotes and line breaks, the same name written quoted and bare.
gen_csv() {
	awk -v n="$1" -v seed="$2" 'BEGIN {
		srand(seed)
		print "id,name,city"
		for (i = 0; i < n; i++) {
			k = int(rand() * 300)
			r = int(rand() * 5)
			if (r == 0) name = "\"Smith, " k "\""
			else if (r == 1) name = "\"say \"\"" k "\"\"\""
			else if (r == 2) name = "\"two\nlines " k "\""
			else if (r == 3) name = "plain" k
			else name = "\"plain" k "\""
			printf "%d,%s,c%d\n", i, name, int(rand() * 9)
		}
	}'
}

@test "formats: bfuniq --csv --header -k name agrees with mlr head -n 1 -g name" {
	gen_csv 4000 25 >in.csv
	mlr --icsv --ocsv head -n 1 -g name in.csv >want.csv
	bfuniq --key "$KEY" -p 1e-6 --csv --header -k name in.csv >got.csv
	# Miller writes its own quoting: compare both through it
	mlr --icsv --ocsv cat got.csv >got-normal.csv
	cmp want.csv got-normal.csv
	[ "$(wc -l <want.csv)" -gt 800 ]
}

@test "formats: bfuniq --csv writes the records of the input byte for byte" {
	gen_csv 2000 9 >in.csv
	bfuniq --key "$KEY" -p 1e-6 --csv --header -k id in.csv >got.csv
	# every id is distinct: every record comes back, exactly
	cmp in.csv got.csv
}

@test "formats: bfgrep --csv --header -k name selects the records jq selects by name" {
	gen_csv 3000 3 >in.csv
	mlr --icsv --ocsv head -n 40 in.csv >first.csv
	bfbuild --key "$KEY" -n 100 -p 1e-6 --csv --header -k name -o names.bf first.csv
	bfgrep --csv --header -k name -f names.bf in.csv | mlr --icsv --ojsonl cat | jq -c . >got.jsonl
	# the reference: records whose name is among the first 40 records' names
	mlr --icsv --ojsonl cat in.csv |
		jq -c --slurp '(.[0:40] | map(.name)) as $n | .[] | select(.name as $x | any($n[]; . == $x))' >want.jsonl
	cmp want.jsonl got.jsonl
	[ "$(wc -l <want.jsonl)" -gt 100 ]
}
