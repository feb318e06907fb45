#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# jsonout.bats - every --json report is JSON (RFC 8259) whatever bytes its
# keys and file names hold (issue 32): valid UTF-8 as it is, every other
# byte as \udcXX (lib/io/json_out.h), so Python's json module reads it and
# "surrogateescape" gives the bytes back.

load helpers
bats_require_minimum_version 1.5.0

# random_lines N SEED: N lines of 1..12 random bytes (no newline, no NUL), the same for a seed.
random_lines() {
	awk -v n="$1" -v seed="$2" 'BEGIN {
		srand(seed)
		for (i = 0; i < n; i++) {
			len = 1 + int(rand() * 12); s = ""
			for (j = 0; j < len; j++) { b = 1 + int(rand() * 255); if (b == 10) b = 11; s = s sprintf("%c", b) }
			print s
		}
	}'
}

@test "jsonout: bftop --json of random bytes is JSON, and gives back every key's bytes" {
	random_lines 3000 7 >in.txt
	# every line thrice: each is a frequent key, so all of them are listed
	cat in.txt in.txt in.txt >thrice.txt
	bftop -n 100000 --json thrice.txt >out.json
	python3 - in.txt out.json <<'PY'
import json, sys
want = set(open(sys.argv[1], "rb").read().split(b"\n")[:-1])
got = {e["key"].encode("utf-8", "surrogateescape") for e in json.load(open(sys.argv[2], encoding="utf-8"))}
assert got == want, (len(got), len(want), sorted(want - got)[:3], sorted(got - want)[:3])
PY
}

@test "jsonout: bfinfo --json of a file whose name is not UTF-8 is JSON naming its bytes" {
	local name
	name=$(printf 'f\351\300\200.bf')
	bfbuild -n 100 --key "$KEY" -o "$name" </dev/null
	bfinfo --json "$name" >out.json
	python3 - "$name" out.json <<'PY'
import json, os, sys
text = open(sys.argv[2], encoding="utf-8").read()
want = os.fsencode(sys.argv[1])
found = [v for v in json.loads(text).values() if isinstance(v, str) and v.encode("utf-8", "surrogateescape") == want]
assert found, text[:200]
PY
}

@test "jsonout: valid UTF-8, quotes, backslashes and control bytes are escaped as RFC 8259 asks" {
	printf 'caf\303\251\na"b\\c\n\001\177\n' >in.txt
	bftop --json in.txt >out.json
	grep -q '"key": "café"' out.json
	grep -qF '"key": "a\"b\\c"' out.json
	grep -qF '"key": "\u0001\u007f"' out.json
}

# ------------------------------------------------ --json: output, never input
# One name, one meaning (issue 32, finding 7): --json is a report as JSON
# in every program that prints one; JSON Lines input is --jsonl.

# is_json FILE: FILE is one JSON value, or JSON Lines of them (python3's json).
is_json() {
	python3 -c 'import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
lines = [l for l in text.split("\n") if l]
assert lines, "empty"
for l in lines if len(lines) > 1 and not text.lstrip().startswith("[") else [text]:
    json.loads(l)' "$1"
}

@test "jsonout: --json is the report as JSON in bfbuild, bfuniq and bfcount, the same as --report=json" {
	seq 1 1000 >in.txt
	bfbuild --key "$KEY" -n 2000 --json -o a.bf in.txt 2>build.json
	bfbuild --key "$KEY" -n 2000 --report=json -o b.bf in.txt 2>build.report
	is_json build.json
	cmp build.json build.report
	grep -q '"keys_added":1000' build.json
	bfuniq --key "$KEY" --json in.txt 2>uniq.json >uniq.out
	bfuniq --key "$KEY" --report=json in.txt 2>uniq.report >/dev/null
	is_json uniq.json
	cmp uniq.json uniq.report
	cmp in.txt uniq.out	# the lines still go to standard output
	bfcount --json in.txt >count.json
	is_json count.json
	expect_eq "bfcount --json" '{"count":1000,"exact":true,"relative_error":0}' "$(cat count.json)"
	bfcount --json -f a.bf -f b.bf >filters.json
	is_json filters.json
	expect_eq "lines" 2 "$(wc -l <filters.json)"
	bftop --json -n 2 in.txt >top.json
	is_json top.json
	bfinfo --json a.bf >info.json
	is_json info.json
}

@test "jsonout: --jsonl reads JSON Lines in every key-taking program, beside a --json report" {
	printf '%s\n' '{"pkg":"a"}' '{"pkg":"b"}' '{"pkg":"a"}' >in.ndjson
	run --separate-stderr bfuniq --jsonl -k .pkg in.ndjson
	expect_output $'{"pkg":"a"}\n{"pkg":"b"}'
	bfuniq --key "$KEY" --jsonl -k .pkg --json in.ndjson 2>report.json >/dev/null
	is_json report.json
	grep -q '"first_seen":2' report.json
	bfbuild --key "$KEY" -n 10 --jsonl -k .pkg -o p.bf in.ndjson
	run --separate-stderr bfgrep -c --jsonl -k .pkg -f p.bf in.ndjson
	expect_output 3
	run --separate-stderr bfcount --jsonl -k .pkg --json in.ndjson
	expect_output '{"count":2,"exact":true,"relative_error":0}'
	run --separate-stderr bftop --jsonl -k .pkg in.ndjson
	expect_output $'      2 a\n      1 b'
}

@test "jsonout: --json given the old way, for JSON Lines input, is refused in one line naming --jsonl" {
	printf '%s\n' '{"pkg":"a"}' >in.ndjson
	bfbuild --key "$KEY" -n 10 -o p.bf </dev/null
	local prog
	for prog in bfbuild bfuniq bfcount bftop; do
		run --separate-stderr $prog --json -k .pkg in.ndjson
		expect_usage_error "$prog" "--json is JSON output now (the report); JSON Lines input is --jsonl"
		run --separate-stderr $prog --json --bad-line=skip in.ndjson
		expect_usage_error "$prog" "--json is JSON output now (the report); JSON Lines input is --jsonl"
	done
	run --separate-stderr bfgrep --json -k .pkg -f p.bf in.ndjson
	expect_usage_error bfgrep "--json is JSON output, and bfgrep prints no report: JSON Lines input is --jsonl"
	run --separate-stderr bfgrep --json -f p.bf in.ndjson
	expect_usage_error bfgrep "--json is JSON output, and bfgrep prints no report: JSON Lines input is --jsonl"
}
