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
