#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# common.bats - the options every program shares (cmd/cli.h): --key-file
# (the filter stores only its key's fingerprint, the key stays in a 0600
# file), --max-memory and BFTOOLS_MAX_MEMORY (filters too large are refused
# before their memory is taken), --progress and --no-progress (progress on
# stderr, by default only on a terminal).
#
# The terminal tests run the program on a pseudo-terminal with util-linux
# script(1) and feed it a pipe that pauses for a second, so the progress
# line, which a terminal shows only after half a second, is sure to be
# drawn; they are skipped where script(1) cannot run. The `ulimit -v` test
# needs a native build (not ASan, not the valgrind wrappers).

bats_require_minimum_version 1.5.0
load helpers

PROGRAMS="bfbuild bfgrep bfuniq bfcount bfmerge bfinfo bftop bfsplit"
CR=$'\r'
LF=$'\n'
ESC=$'\e'
BAR="[====================] 100% ETA 0:00"
# What --help says about the common options, in every program.
COMMON_HELP="      --key-file=FILE   the filters' key is kept in FILE, not in them
      --max-memory=SIZE refuse filters larger than SIZE bytes in memory
      --progress        show progress on stderr even when not a terminal
      --no-progress     never show progress"
LIMIT_NOTE="(--max-memory or BFTOOLS_MAX_MEMORY)"

# ---------------------------------------------------------------- helpers

# filter_hex FILTER: the whole decompressed filter as lower-case hex.
filter_hex() {
	gzip -dc "$1" | od -A n -v -t x1 | tr -d ' \n'
}

# key_in_filter FILTER KEYFILE: whether either 8-byte half of the key in
# KEYFILE appears anywhere in the decompressed FILTER.
key_in_filter() {
	local key hex
	key=$(head -c 32 "$2" | tr 'A-F' 'a-f')
	hex=$(filter_hex "$1")
	case $hex in *"${key:0:16}"* | *"${key:16:16}"*) return 0 ;; esac
	return 1
}

# expect_key_hidden FILTER KEYFILE: the key in KEYFILE is nowhere in FILTER.
expect_key_hidden() {
	! key_in_filter "$1" "$2" && return 0
	echo "the key in $2 ($(cat "$2")) appears in the decompressed $1" >&2
	return 1
}

# expect_key_file FILE: mode 0600, exactly 32 lower-case hex digits and a newline.
expect_key_file() {
	expect_eq "mode of $1" 600 "$(stat -c %a "$1")"
	expect_eq "size of $1" 33 "$(($(wc -c <"$1")))"
	expect_eq "last byte of $1" 0a "$(tail -c 1 "$1" | od -A n -t x1 | tr -d ' ')"
	[[ $(cat "$1") =~ ^[0-9a-f]{32}$ ]] || expect_eq "$1" "32 hex digits" "$(cat "$1")"
}

# fingerprint FILTER: the key fingerprint bfinfo shows.
fingerprint() {
	bfinfo "$1" | sed -n 's/^key fingerprint: *//p'
}

# expected_key_field FILTER: what a filter whose key is kept outside holds in
# the 16-byte key field: its fingerprint, little-endian, then 8 zero bytes.
expected_key_field() {
	local fp out='' i
	fp=$(fingerprint "$1")
	for ((i = 14; i >= 0; i -= 2)); do out+=${fp:i:2}; done
	echo "${out}0000000000000000"
}

# external_filter NAME KEYFILE LINE...: a filter of the LINEs, key in KEYFILE.
external_filter() {
	local out=$1 keyfile=$2
	shift 2
	printf '%s\n' "$@" | bfbuild --key-file "$keyfile" -n 1000 -o "$out"
}

# rate_free FILE: FILE's lines with the "(12.3 MB/s)" rate made "(RATE)",
# repeated lines (an update and the final line alike) shown once.
rate_free() {
	sed -E 's#\([0-9.]+ (B|kB|MB|GB|TB|PB)/s\)#(RATE)#' "$1" | uniq
}

need_script() {
	command -v script >/dev/null 2>&1 || skip "script(1) from util-linux is not installed"
	script -qec true /dev/null </dev/null >/dev/null 2>&1 ||
		skip "script(1) here cannot run a command on a pseudo-terminal"
}

# on_terminal COMMAND: run the shell COMMAND with its standard error (and
# anything it does not redirect) on a pseudo-terminal; tty.out gets what
# the terminal received, $status the command's exit status.
on_terminal() {
	script -qec "$1; echo \$? >tty.status" /dev/null </dev/null >tty.out
	status=$(cat tty.status)
}

# 1 to 200000 on a pipe that pauses a second after 100000. The first part
# (588 kB) overfills a pipe, so the pause comes after the program has
# begun reading, however slowly it starts (valgrind).
SLOW_NUMBERS="(seq 1 100000; sleep 1; seq 100001 200000)"

need_native_build() {
	[ "$(head -c 4 "$BFTOOLS_BIN/bfbuild" | tail -c 3)" = ELF ] ||
		skip "$BFTOOLS_BIN/bfbuild is not a native program (a wrapper?): ulimit -v not tested"
	if grep -aq -e __asan_init -e __tsan_init "$BFTOOLS_BIN/bfbuild"; then
		skip "$BFTOOLS_BIN/bfbuild is built with a sanitizer (terabytes of shadow mappings): ulimit -v not tested"
	fi
}

# ---------------------------------------------------------------- --help

@test "common: every program's --help lists --key-file, --max-memory, --progress and --no-progress" {
	# bftop and bfsplit leave out --key-file, which they always refuse (issue 37)
	local want
	for prog in $PROGRAMS; do
		run --separate-stderr "$prog" --help
		expect_status 0
		want=$COMMON_HELP
		case $prog in bftop | bfsplit) want=${COMMON_HELP#*$LF} ;; esac
		case $output in
		*"$want"*) ;;
		*) expect_eq "$prog --help" "...$LF$want$LF..." "$output" ;;
		esac
	done
	case $(bftop --help) in *--key-file*) expect_eq "bftop --help" "no --key-file" "(listed)" ;; esac
}

@test "common: every program accepts the four options" {
	build f.bf -n 100 </dev/null
	put_lines in.txt a b
	for prog in $PROGRAMS; do
		case $prog in
		bfbuild | bfuniq | bfcount | bftop) set -- in.txt ;;
		bfgrep) set -- -f f.bf in.txt ;;
		bfmerge) set -- f.bf ;;
		bfinfo) set -- f.bf ;;
		bfsplit) set -- -N 2 --shard-key "$KEY" -o 'part%d' in.txt ;;
		esac
		run --separate-stderr "$prog" --max-memory=1G --progress --no-progress "$@"
		case $status in 0 | 1) ;; *) expect_status 0 ;; esac
		expect_stderr ""
	done
}

@test "common: a value option given twice is refused in every program, never the last one kept" {
	# PROG, the options, how the message names the option; refused while
	# the options are read, before any file is opened (none of these exist)
	while IFS='|' read -r prog args name; do
		run --separate-stderr $prog $args
		expect_usage_error "$prog" "$name given twice: it takes one value"
	done <<'CASES'
bfbuild|-o a.bf -o b.bf in.txt|-o
bfbuild|-n 10 --capacity 20 -o a.bf|-n
bfbuild|-p 0.1 -p 0.2 -o a.bf|-p
bfbuild|--layout classic --layout blocked -o a.bf|--layout
bfbuild|-f a.bf -f b.bf|-f
bfbuild|-k 1 -k 2 -o a.bf|-k
bfgrep|-m 1 -m 2 -f a.bf|-m
bfgrep|--label x --label y -f a.bf|--label
bfgrep|-t , -t ; -f a.bf|-t
bfuniq|-f a.bf -f b.bf|-f
bfuniq|-n 10 -n 20|-n
bfuniq|--checkpoint 1m --checkpoint 2m -f a.bf|--checkpoint
bfuniq|--window 10m --window 1h|--window
bfcount|-o a.sk -o b.sk|-o
bfcount|--precision 12 --precision 14|--precision
bfcount|--bad-line skip --bad-line error --jsonl|--bad-line
bfmerge|-o a.bf -o b.bf x.bf y.bf|-o
bfmerge|-j 1 -j 2 x.bf|-j
bfinfo|-j 1 --threads 2 x.bf|-j
bfinfo|--max-memory 1G --max-memory 2G x.bf|--max-memory
bfsplit|-N 2 --partitions 3 --shard-key 000102030405060708090a0b0c0d0e0f|-N
bfsplit|-o a%d -o b%d -N 2|-o
bftop|-n 1 -n 2|-n
bftop|-e 0.01 --error 0.02|-e
bftop|-o a.top -o b.top|-o
bftop|--key-file a.key --key-file b.key|--key-file
CASES
}

@test "common: an option that cannot apply to the run is refused, not ignored" {
	put_lines in.txt a b
	bftop -o s.top in.txt
	run --separate-stderr bfbuild --no-wait -o a.bf in.txt
	expect_usage_error bfbuild "--no-wait needs -f FILTER: without it no file is updated in place"
	[ ! -e a.bf ]
	run --separate-stderr bfuniq --no-wait in.txt
	expect_usage_error bfuniq "--no-wait needs -f STATE: without it no file is updated in place"
	build a.bf -n 10 in.txt
	run --separate-stderr bfmerge --no-wait a.bf a.bf
	expect_usage_error bfmerge "--no-wait needs -o FILTER: without it no file is updated in place"
	run --separate-stderr bftop -q -n 3 -s s.top in.txt
	expect_usage_error bftop "-n chooses the most frequent keys to list; -q prints every input key's count"
}

@test "common: the options that collect values may repeat (bfgrep -f, bfcount -f and -s, bftop -s)" {
	put_lines in.txt a b
	put_lines a.txt a
	put_lines b.txt b
	build a.bf -n 100 a.txt
	build b.bf -n 100 b.txt
	run --separate-stderr bfgrep -c -f a.bf -f b.bf in.txt
	expect_status 0
	expect_output 2
	run --separate-stderr bfcount -f a.bf -f b.bf
	expect_status 0
	bfcount -o a.sk a.txt
	bfcount -o b.sk b.txt
	run --separate-stderr bfcount -s a.sk -s b.sk
	expect_status 0
	expect_output 2
	bftop -o a.top a.txt
	bftop -o b.top b.txt
	run --separate-stderr bftop -s a.top -s b.top
	expect_status 0
}

# ---------------------------------------------------------------- key files: making them

@test "key file: bfbuild --key-file creates a missing FILE, mode 0600, 32 hex digits and a newline" {
	run --separate-stderr bfbuild --key-file k.key -n 100 -o f.bf </dev/null
	expect_status 0
	expect_stderr ""
	expect_key_file k.key
}

@test "key file: the new key file is mode 0600 even under umask 000" {
	(umask 000 && bfbuild --key-file k.key -n 100 -o f.bf </dev/null)
	expect_key_file k.key
}

@test "key file: bfbuild reuses an existing key file, leaving it as it was" {
	external_filter a.bf k.key a
	cp k.key saved.key
	external_filter b.bf k.key b
	cmp k.key saved.key
	expect_eq "fingerprints" "$(fingerprint a.bf)" "$(fingerprint b.bf)"
	external_filter c.bf other.key c
	[ "$(fingerprint a.bf)" != "$(fingerprint c.bf)" ]
}

@test "key file: a new key file gets a fresh key each time" {
	external_filter a.bf one.key a
	external_filter b.bf two.key a
	if cmp -s one.key two.key; then
		echo "two new key files hold the same key: $(cat one.key)" >&2
		return 1
	fi
}

@test "key file: the filter stores only the fingerprint: flag bit 1 set, the key's bytes nowhere" {
	external_filter f.bf k.key alpha beta
	expect_eq "key flags" 2 "$(header_bytes f.bf 21 1)"
	expect_eq "key field" "$(expected_key_field f.bf)" "$(header_hex f.bf 24 16)"
	expect_key_hidden f.bf k.key
	# the check itself finds a key that is stored (bfbuild --key)
	bfbuild --key "$(cat k.key)" -n 1000 -o own.bf </dev/null
	key_in_filter own.bf k.key
	expect_eq "key flags of own.bf" 0 "$(header_bytes own.bf 21 1)"
}

@test "key file: a key file holding KEY gives the bits and fingerprint of --key KEY" {
	echo "$KEY" >fixed.key
	seq 1 1000 >in.txt
	bfbuild --key-file fixed.key -n 1000 -o ext.bf in.txt
	build own.bf -n 1000 in.txt
	expect_eq "fingerprint" "$(fingerprint own.bf)" "$(fingerprint ext.bf)"
	gzip -dc ext.bf | tail -c +65 >ext.body
	gzip -dc own.bf | tail -c +65 >own.body
	cmp ext.body own.body
	expect_key_hidden ext.bf fixed.key
}

@test "key file: an upper-case key file without a newline is read" {
	printf '%s' "$KEY" | tr a-f A-F >upper.key
	seq 1 100 >in.txt
	bfbuild --key-file upper.key -n 1000 -o ext.bf in.txt
	build own.bf -n 1000 in.txt
	expect_eq "fingerprint" "$(fingerprint own.bf)" "$(fingerprint ext.bf)"
}

@test "key file: bfbuild --key with --key-file is a usage error" {
	run --separate-stderr bfbuild --key "$KEY" --key-file k.key </dev/null
	expect_usage_error bfbuild "--key and --key-file cannot be used together"
	[ ! -e k.key ]
}

@test "key file: bfuniq --key with --key-file is a usage error" {
	run --separate-stderr bfuniq --key "$KEY" --key-file k.key </dev/null
	expect_usage_error bfuniq "--key and --key-file cannot be used together"
	[ ! -e k.key ]
}

@test "key file: a key file that cannot be created is an error naming it, exit 2" {
	run --separate-stderr bfbuild --key-file nodir/k.key -n 100 -o f.bf </dev/null
	expect_fail "bfbuild: nodir/k.key: cannot create the key file: No such file or directory"
	[ ! -e f.bf ]
}

@test "key file: a key file that is not 32 hex digits (and a newline) is refused, naming it" {
	local bad
	for bad in "${KEY:1}\n" "${KEY}0\n" "$KEY\r\n" "$KEY\n\n" "" "zz${KEY:2}\n" "$KEY $KEY\n"; do
		printf '%b' "$bad" >bad.key
		cp bad.key saved.key
		run --separate-stderr bfbuild --key-file bad.key -n 100 -o f.bf </dev/null
		expect_fail "bfbuild: bad.key: not a key file (expected 32 hexadecimal digits)"
		cmp bad.key saved.key
		[ ! -e f.bf ]
	done
}

@test "key file: every program that takes a key file refuses a malformed one, naming it" {
	external_filter f.bf k.key a
	put_lines in.txt a
	printf 'not a key\n' >bad.key
	for prog in bfbuild bfgrep bfuniq bfcount bfmerge; do
		case $prog in
		bfbuild) set -- -f f.bf in.txt ;;
		bfgrep) set -- -f f.bf in.txt ;;
		bfuniq) set -- -f f.bf in.txt ;;
		bfcount) set -- -f f.bf ;;
		bfmerge) set -- f.bf ;;
		esac
		run --separate-stderr "$prog" --key-file bad.key "$@"
		expect_fail "$prog: bad.key: not a key file (expected 32 hexadecimal digits)"
	done
}

@test "key file: a directory given as the key file is refused as not a regular file" {
	mkdir kd
	run --separate-stderr bfbuild --key-file kd -n 100 -o f.bf </dev/null
	expect_fail "bfbuild: kd: not a key file (not a regular file)"
}

# ---------------------------------------------------------------- key files: using them

@test "bfgrep: a filter whose key is in a key file needs --key-file" {
	external_filter f.bf k.key a b
	put_lines in.txt a b c
	run --separate-stderr bfgrep -f f.bf in.txt
	expect_fail "bfgrep: f.bf: the filter's key is kept in a key file: give it with --key-file"
}

@test "bfgrep: with the right --key-file it answers as with a stored key" {
	external_filter f.bf k.key alpha beta
	put_lines in.txt alpha gamma beta delta
	run --separate-stderr bfgrep --key-file k.key -f f.bf in.txt
	expect_status 0
	expect_stderr ""
	expect_output $'alpha\nbeta'
	run --separate-stderr bfgrep --key-file=k.key -v -f f.bf in.txt
	expect_output $'gamma\ndelta'
}

@test "bfgrep: a key file with another key is refused, naming the filter and the key file" {
	external_filter f.bf k.key a
	external_filter g.bf other.key a
	run --separate-stderr bfgrep --key-file other.key -f f.bf </dev/null
	expect_fail "bfgrep: f.bf: the key in other.key is not this filter's key"
}

@test "bfgrep: a missing key file is an error naming it, and is not created" {
	external_filter f.bf k.key a
	run --separate-stderr bfgrep --key-file missing.key -f f.bf </dev/null
	expect_fail "bfgrep: missing.key: No such file or directory"
	[ ! -e missing.key ]
}

@test "bfgrep: --key-file with a filter that carries another key is refused" {
	build own.bf -n 100 </dev/null
	external_filter f.bf k.key a
	run --separate-stderr bfgrep --key-file k.key -f own.bf </dev/null
	expect_fail "bfgrep: own.bf: the filter carries its own key, which is not the key in k.key"
}

@test "bfgrep: --key-file holding the key a filter carries is accepted" {
	echo "$KEY" >fixed.key
	put_lines in.txt a b
	build own.bf -n 100 in.txt
	run --separate-stderr bfgrep --key-file fixed.key -f own.bf in.txt
	expect_status 0
	expect_output $'a\nb'
}

@test "bfbuild: -f on a filter whose key is in a key file needs it, and keeps it out of the file" {
	external_filter f.bf k.key a
	cp f.bf saved.bf
	put_lines more.txt b c
	run --separate-stderr bfbuild -f f.bf more.txt
	expect_fail "bfbuild: f.bf: the filter's key is kept in a key file: give it with --key-file"
	cmp f.bf saved.bf
	external_filter g.bf other.key x
	run --separate-stderr bfbuild --key-file other.key -f f.bf more.txt
	expect_fail "bfbuild: f.bf: the key in other.key is not this filter's key"
	cmp f.bf saved.bf
	run --separate-stderr bfbuild --key-file k.key -f f.bf more.txt
	expect_status 0
	expect_key_hidden f.bf k.key
	expect_eq "key flags" 2 "$(header_bytes f.bf 21 1)"
	run bfgrep --key-file k.key -c -f f.bf <(printf 'a\nb\nc\n')
	expect_output 3
}

@test "bfbuild: -f with --key-file on a filter that carries another key is refused" {
	build own.bf -n 100 </dev/null
	cp own.bf saved.bf
	external_filter f.bf k.key a
	run --separate-stderr bfbuild --key-file k.key -f own.bf </dev/null
	expect_fail "bfbuild: own.bf: the filter carries its own key, which is not the key in k.key"
	cmp own.bf saved.bf
}

@test "bfbuild: --like a filter whose key is in a key file needs it; the new filter keeps it out too" {
	external_filter f.bf k.key a
	put_lines in.txt b
	run --separate-stderr bfbuild --like f.bf -o l.bf in.txt
	expect_fail "bfbuild: f.bf: the filter's key is kept in a key file: give it with --key-file"
	[ ! -e l.bf ]
	external_filter g.bf other.key x
	run --separate-stderr bfbuild --key-file other.key --like f.bf -o l.bf in.txt
	expect_fail "bfbuild: f.bf: the key in other.key is not this filter's key"
	run --separate-stderr bfbuild --key-file k.key --like f.bf -o l.bf in.txt
	expect_status 0
	expect_eq "fingerprint" "$(fingerprint f.bf)" "$(fingerprint l.bf)"
	expect_eq "key flags" 2 "$(header_bytes l.bf 21 1)"
	expect_key_hidden l.bf k.key
}

@test "bfuniq: --key-file for a new STATE creates the key file; the state holds only the fingerprint" {
	put_lines in.txt a b a c
	run --separate-stderr bfuniq --key-file k.key -f state.bf in.txt
	expect_status 0
	expect_output $'a\nb\nc'
	expect_key_file k.key
	expect_eq "key flags" 2 "$(header_bytes state.bf 21 1)"
	expect_key_hidden state.bf k.key
}

@test "bfuniq: --key-file without a STATE creates the key file too" {
	put_lines in.txt a b a
	run --separate-stderr bfuniq --key-file k.key in.txt
	expect_status 0
	expect_output $'a\nb'
	expect_key_file k.key
}

@test "bfuniq: a STATE whose key is in a key file needs it, refuses another, remembers with it" {
	put_lines in.txt a b
	bfuniq --key-file k.key -f state.bf in.txt >/dev/null
	cp state.bf saved.bf
	put_lines more.txt a c
	run --separate-stderr bfuniq -f state.bf more.txt
	expect_fail "bfuniq: state.bf: the filter's key is kept in a key file: give it with --key-file"
	cmp state.bf saved.bf
	external_filter g.bf other.key x
	run --separate-stderr bfuniq --key-file other.key -f state.bf more.txt
	expect_fail "bfuniq: state.bf: the key in other.key is not this filter's key"
	cmp state.bf saved.bf
	run --separate-stderr bfuniq --key-file k.key -f state.bf more.txt
	expect_status 0
	expect_output c
	expect_key_hidden state.bf k.key
}

@test "bfuniq: --key-file with a STATE that carries another key is refused" {
	put_lines in.txt a
	bfuniq --key "$KEY" -f state.bf in.txt >/dev/null
	external_filter g.bf k.key x
	run --separate-stderr bfuniq --key-file k.key -f state.bf in.txt
	expect_fail "bfuniq: state.bf: the filter carries its own key, which is not the key in k.key"
}

@test "bfmerge: merges filters of one key file without it; the result keeps the key out" {
	external_filter a.bf k.key alpha beta
	external_filter b.bf k.key gamma
	run --separate-stderr bfmerge -o m.bf a.bf b.bf
	expect_status 0
	expect_stderr ""
	expect_eq "key flags" 2 "$(header_bytes m.bf 21 1)"
	expect_eq "fingerprint" "$(fingerprint a.bf)" "$(fingerprint m.bf)"
	expect_key_hidden m.bf k.key
	put_lines in.txt alpha beta gamma delta
	run --separate-stderr bfgrep --key-file k.key -f m.bf in.txt
	expect_output $'alpha\nbeta\ngamma'
}

@test "bfmerge: --key-file is accepted when it is the filters' key, and refused when not" {
	external_filter a.bf k.key alpha
	external_filter b.bf k.key beta
	bfmerge -o plain.bf a.bf b.bf
	run --separate-stderr bfmerge --key-file k.key -o keyed.bf a.bf b.bf
	expect_status 0
	cmp plain.bf keyed.bf
	external_filter c.bf other.key x
	run --separate-stderr bfmerge --key-file other.key a.bf b.bf
	expect_fail "bfmerge: a.bf: the key in other.key is not this filter's key"
}

@test "bfmerge: filters of different key files are refused as different keys" {
	external_filter a.bf k.key alpha
	external_filter b.bf other.key beta
	run --separate-stderr bfmerge -o m.bf a.bf b.bf
	expect_fail "bfmerge: b.bf: cannot be merged with a.bf: different key"
	[ ! -e m.bf ]
}

@test "bfmerge: a filter with a stored key and one with the same key in a key file are not refused as a different normalisation" {
	# Both filters have the same key and no case folding; only where the
	# key is kept differs. Whatever bfmerge decides, "normalisation" is the
	# wrong reason.
	echo "$KEY" >fixed.key
	put_lines in.txt a
	build own.bf -n 1000 in.txt
	bfbuild --key-file fixed.key -n 1000 -o ext.bf in.txt
	run --separate-stderr bfmerge own.bf ext.bf
	echo "stderr: $stderr"
	case $stderr in *normalisation*) false ;; esac
}

@test "bfcount: -f counts a filter whose key is in a key file without it; a wrong one is refused" {
	external_filter f.bf k.key a b c
	run --separate-stderr bfcount -f f.bf
	expect_status 0
	expect_output 3
	run --separate-stderr bfcount --key-file k.key -f f.bf
	expect_output 3
	external_filter g.bf other.key x
	run --separate-stderr bfcount --key-file other.key -f f.bf
	expect_fail "bfcount: f.bf: the key in other.key is not this filter's key"
}

@test "bfcount: --union of two filters of one key file works without it" {
	external_filter a.bf k.key a b c
	external_filter b.bf k.key c d
	run --separate-stderr bfcount --union -f a.bf b.bf
	expect_status 0
	expect_output 4
}

@test "bfinfo: a filter whose key is in a key file is described without it, saying so" {
	external_filter f.bf k.key a
	build own.bf -n 100 </dev/null
	run --separate-stderr bfinfo f.bf
	expect_status 0
	expect_stderr ""
	expect_eq "key line" "key:                  kept in a key file (--key-file)" "$(grep '^key:' <<<"$output")"
	run --separate-stderr bfinfo --json f.bf
	case $output in *'"key_external":true,'*) ;; *) expect_eq json '..."key_external":true,...' "$output" ;; esac
	expect_key_hidden f.bf k.key
	run --separate-stderr bfinfo own.bf
	expect_eq "key line" "key:                  stored in the filter" "$(grep '^key:' <<<"$output")"
	run --separate-stderr bfinfo --json own.bf
	case $output in *'"key_external":false,'*) ;; *) expect_eq json '..."key_external":false,...' "$output" ;; esac
}

@test "bfinfo: --key-file that is not the filter's key, or not a key file, is refused as bfcount refuses it" {
	external_filter f.bf k.key a
	external_filter g.bf other.key a
	run --separate-stderr bfinfo --key-file other.key f.bf
	expect_fail "bfinfo: f.bf: the key in other.key is not this filter's key"
	printf 'not a key\n' >bad.key
	run --separate-stderr bfinfo --key-file bad.key f.bf
	expect_fail "bfinfo: bad.key: not a key file (expected 32 hexadecimal digits)"
}

# ---------------------------------------------------------------- --max-memory

@test "max-memory: bfbuild -n 1e9 over --max-memory is refused before allocating, exit 2" {
	run --separate-stderr bfbuild -n 1e9 --max-memory 1G -o f.bf </dev/null
	expect_fail "bfbuild: cannot create a filter of 15545503232 bits: filter needs 1.9 GB (1943187904 bytes), over the memory limit of 1.0 GB with 0 B already in use $LIMIT_NOTE"
	[ ! -e f.bf ]
}

@test "max-memory: BFTOOLS_MAX_MEMORY limits bfbuild in the same way" {
	run --separate-stderr env BFTOOLS_MAX_MEMORY=1.5G bfbuild -n 1e9 -o f.bf </dev/null
	expect_fail "bfbuild: cannot create a filter of 15545503232 bits: filter needs 1.9 GB (1943187904 bytes), over the memory limit of 1.5 GB with 0 B already in use $LIMIT_NOTE"
}

@test "max-memory: the refusal comes before allocating, even where the allocation would fail" {
	need_native_build
	run --separate-stderr bash -c 'ulimit -v 400000; exec bfbuild --max-memory 1G -n 1e9 -o f.bf </dev/null'
	expect_fail "bfbuild: cannot create a filter of 15545503232 bits: filter needs 1.9 GB (1943187904 bytes), over the memory limit of 1.0 GB with 0 B already in use $LIMIT_NOTE"
}

@test "max-memory: under ulimit -v a filter that cannot be mapped is out of memory, naming the bytes" {
	need_native_build
	run --separate-stderr bash -c 'ulimit -v 400000; exec bfbuild -n 1e9 -o f.bf </dev/null'
	expect_fail "bfbuild: cannot create a filter of 15545503232 bits: cannot allocate 1.9 GB (1943187904 bytes) for the filter: out of memory"
	[ ! -e f.bf ]
}

@test "max-memory: a limit the filter fits under changes nothing" {
	seq 1 100 >in.txt
	build plain.bf -n 1000 in.txt
	build limited.bf -n 1000 --max-memory 1M in.txt
	BFTOOLS_MAX_MEMORY=1M build env.bf -n 1000 in.txt
	cmp plain.bf limited.bf
	cmp plain.bf env.bf
}

@test "max-memory: every program refuses to load a filter over the limit, naming it, exit 2" {
	build big.bf -n 1e6 </dev/null
	local need="filter needs 1.9 MB (1943232 bytes), over the memory limit of 1.0 MB with 0 B already in use $LIMIT_NOTE"
	for prog in $PROGRAMS; do
		case $prog in
		bfbuild | bfgrep | bfcount) set -- -f big.bf ;;
		bfuniq) set -- -f big.bf ;;
		bfmerge) set -- big.bf ;;
		bfinfo) set -- --verify big.bf ;;	# without it, bfinfo reads the headers alone (below)
		bftop) continue ;;	# reads no filters: its own summary's limit is in bftop.bats
		bfsplit) continue ;;	# reads no filters, builds none
		esac
		run --separate-stderr "$prog" --max-memory 1M "$@" </dev/null
		expect_fail "$prog: big.bf: $need"
	done
}

@test "max-memory: bfinfo describes a filter over the limit from its headers, allocating no bits" {
	build big.bf -n 1e6 </dev/null
	run --separate-stderr bfinfo --max-memory 1M big.bf
	expect_status 0
	expect_stderr ""
	printf '%s\n' "$output" | grep -q '^size in memory: *1.9 MB (1943232 bytes)$'
}

@test "max-memory: bfgrep -f big.bf under BFTOOLS_MAX_MEMORY is refused; --max-memory overrides it" {
	build big.bf -n 1e6 </dev/null
	put_lines in.txt a
	run --separate-stderr env BFTOOLS_MAX_MEMORY=1M bfgrep -c -f big.bf in.txt
	expect_fail "bfgrep: big.bf: filter needs 1.9 MB (1943232 bytes), over the memory limit of 1.0 MB with 0 B already in use $LIMIT_NOTE"
	run --separate-stderr env BFTOOLS_MAX_MEMORY=1M bfgrep --max-memory 2M -c -f big.bf in.txt
	expect_status 1
	expect_stderr ""
	expect_output 0
	run --separate-stderr env BFTOOLS_MAX_MEMORY=1G bfgrep --max-memory 1M -c -f big.bf in.txt
	expect_fail "bfgrep: big.bf: filter needs 1.9 MB (1943232 bytes), over the memory limit of 1.0 MB with 0 B already in use $LIMIT_NOTE"
}

@test "max-memory: an empty BFTOOLS_MAX_MEMORY sets no limit" {
	run --separate-stderr env BFTOOLS_MAX_MEMORY= bfbuild --key "$KEY" -n 1e6 -o f.bf </dev/null
	expect_status 0
	expect_stderr ""
}

@test "max-memory: a growing bfuniq whose next stage crosses the limit stops there, exit 2" {
	seq 1 200000 >in.txt
	run --separate-stderr bfuniq --key "$KEY" --max-memory 1M in.txt
	expect_status 2
	expect_stderr "bfuniq: filter needs 1.1 MB (1134848 bytes), over the memory limit of 1.0 MB with 525.2 kB already in use $LIMIT_NOTE"
	# what was written before is the first lines of the input, not all
	printf '%s\n' "$output" >got.txt
	local n
	n=$(wc -l <got.txt)
	[ "$n" -gt 0 ] && [ "$n" -lt 200000 ]
	head -n "$n" in.txt | cmp - got.txt
}

@test "max-memory: bfuniq -f STATE refused mid-stream leaves STATE as it was" {
	seq 1 10 | bfuniq --key "$KEY" -f state.bf >/dev/null
	cp state.bf saved.bf
	seq 1 200000 >in.txt
	run --separate-stderr bfuniq --max-memory 1M -f state.bf in.txt
	expect_status 2
	expect_stderr "bfuniq: filter needs 1.1 MB (1134848 bytes), over the memory limit of 1.0 MB with 525.2 kB already in use $LIMIT_NOTE"
	cmp state.bf saved.bf
	expect_eq "files" "in.txt saved.bf state.bf" "$(echo *)"
}

@test "max-memory: a refusal says what is already held, so need plus held is over the limit" {
	# bfuniq's first stage (525248 bytes) and second (1134848) fit under
	# 1.5 MB one by one, not together; bfgrep's two 1.9 MB filters fit
	# under 3 MB one by one. The message gives the memory already in use.
	seq 1 200000 >in.txt
	run --separate-stderr bfuniq --key "$KEY" --max-memory 1.5M in.txt
	expect_status 2
	expect_stderr "bfuniq: filter needs 1.1 MB (1134848 bytes), over the memory limit of 1.5 MB with 525.2 kB already in use $LIMIT_NOTE"
	build big.bf -n 1e6 </dev/null
	run --separate-stderr bfgrep --max-memory 3M -f big.bf -f big.bf in.txt
	expect_fail "bfgrep: big.bf: filter needs 1.9 MB (1943232 bytes), over the memory limit of 3.0 MB with 1.9 MB already in use $LIMIT_NOTE"
}

@test "max-memory: bfmerge streams its later inputs, so merging needs one filter's memory" {
	build big.bf -n 1e6 </dev/null
	run --separate-stderr bfmerge --max-memory 3M -o m.bf big.bf big.bf
	expect_status 0
	expect_stderr ""
}

@test "max-memory: a bad --max-memory is a usage error in every program" {
	for prog in $PROGRAMS; do
		run --separate-stderr "$prog" --max-memory x </dev/null
		expect_usage_error "$prog" "invalid memory limit 'x': not a number"
		run --separate-stderr "$prog" --max-memory=0 </dev/null
		expect_usage_error "$prog" "invalid memory limit '0': must be at least 1"
		run --separate-stderr "$prog" --max-memory -1 </dev/null
		expect_usage_error "$prog" "invalid memory limit '-1': must not be negative"
	done
}

@test "max-memory: a bad BFTOOLS_MAX_MEMORY is a usage error in every program" {
	for prog in $PROGRAMS; do
		run --separate-stderr env BFTOOLS_MAX_MEMORY=x "$prog" </dev/null
		expect_usage_error "$prog" "invalid BFTOOLS_MAX_MEMORY 'x': not a number"
	done
}

@test "max-memory: --help and --version work whatever BFTOOLS_MAX_MEMORY holds" {
	for prog in $PROGRAMS; do
		run --separate-stderr env BFTOOLS_MAX_MEMORY=x "$prog" --help
		expect_status 0
		expect_stderr ""
		run --separate-stderr env BFTOOLS_MAX_MEMORY=x "$prog" --version
		expect_status 0
		expect_stderr ""
	done
}

# ---------------------------------------------------------------- progress, not on a terminal

@test "progress: by default nothing goes to stderr when it is not a terminal" {
	seq 1 1000 >in.txt
	build f.bf -n 1e4 in.txt
	for prog in $PROGRAMS; do
		case $prog in
		bfbuild) set -- --key "$KEY" -o g.bf in.txt ;;
		bfgrep) set -- -c -f f.bf in.txt ;;
		bfuniq) set -- -f state.bf in.txt ;;
		bfcount | bftop) set -- in.txt ;;
		bfmerge) set -- -o m.bf f.bf f.bf ;;
		bfinfo) set -- f.bf ;;
		bfsplit) set -- -N 2 --shard-key "$KEY" -o 'part%d' in.txt ;;
		esac
		run --separate-stderr "$prog" "$@"
		expect_status 0
		expect_stderr ""
	done
}

@test "progress: bfbuild --progress reports the lines with a final 100% bar, then saving FILE" {
	seq 1 1000 >in.txt
	run --separate-stderr bfbuild --progress --key "$KEY" -n 1e4 -o f.bf in.txt
	expect_status 0
	printf '%s\n' "$stderr" >err.txt
	expect_eq stderr "bfbuild: 1000 lines, 3.9 kB (RATE), 1000 keys, fill ~5.6% $BAR
bfbuild: saving f.bf: 19.5 kB $BAR" "$(rate_free err.txt)"
}

@test "progress: bfbuild --progress to stdout says saving (standard output)" {
	seq 1 1000 >in.txt
	bfbuild --progress --key "$KEY" -n 1e4 in.txt >f.bf 2>err.txt
	expect_eq "last line" "bfbuild: saving (standard output): 19.5 kB $BAR" "$(tail -n 1 err.txt)"
}

@test "progress: bfgrep --progress reports loading FILTER, then the lines with a final bar" {
	seq 1 1000 >in.txt
	build f.bf -n 1e4 in.txt
	seq 500 1500 >query.txt
	run --separate-stderr bfgrep --progress -c -f f.bf query.txt
	expect_status 0
	expect_output 501
	printf '%s\n' "$stderr" >err.txt
	expect_eq stderr "bfgrep: loading f.bf: 19.5 kB $BAR
bfgrep: 1001 lines, 4.5 kB (RATE) $BAR" "$(rate_free err.txt)"
}

@test "progress: standard input redirected from a file has a bar; from a pipe it has none" {
	seq 1 1000 >in.txt
	build f.bf -n 1e4 in.txt
	bfgrep --progress -c -f f.bf <in.txt >out.txt 2>err.txt
	expect_eq "last line" "bfgrep: 1000 lines, 3.9 kB (RATE) $BAR" "$(rate_free err.txt | tail -n 1)"
	cat in.txt | bfgrep --progress -c -f f.bf >out.txt 2>err.txt # a pipe on purpose
	expect_eq "last line" "bfgrep: 1000 lines, 3.9 kB (RATE)" "$(rate_free err.txt | tail -n 1)"
}

@test "progress: bfuniq --progress reports new keys and stages, loading and saving STATE" {
	seq 1 1000 >in.txt
	seq 500 1500 >more.txt
	bfuniq --key "$KEY" -f state.bf in.txt >/dev/null
	run --separate-stderr bfuniq --progress -f state.bf more.txt
	expect_status 0
	printf '%s\n' "$stderr" >err.txt
	expect_eq stderr "bfuniq: loading state.bf: 525.2 kB $BAR
bfuniq: 1001 lines, 4.5 kB (RATE), 500 new keys, 1 stage, fill ~0.6% $BAR
bfuniq: saving state.bf: 525.2 kB $BAR" "$(rate_free err.txt)"
}

@test "progress: bfcount --progress reports the running estimate; with -f, loading FILTER" {
	seq 1 1000 >in.txt
	run --separate-stderr bfcount --progress in.txt
	expect_status 0
	printf '%s\n' "$stderr" >err.txt
	[[ $(rate_free err.txt) =~ ^"bfcount: 1000 lines, 3.9 kB (RATE), about "[0-9]+" distinct $BAR"$ ]] ||
		expect_eq stderr "bfcount: 1000 lines, 3.9 kB (RATE), about N distinct $BAR" "$(rate_free err.txt)"
	build f.bf -n 1e4 in.txt
	run --separate-stderr bfcount --progress -f f.bf
	expect_stderr "bfcount: loading f.bf: 19.5 kB $BAR"
}

@test "progress: bfmerge --progress reports loading each FILTER and saving the result" {
	seq 1 1000 >in.txt
	build a.bf -n 1e4 in.txt
	cp a.bf b.bf
	run --separate-stderr bfmerge --progress -o m.bf a.bf b.bf
	expect_status 0
	expect_stderr "bfmerge: loading a.bf: 19.5 kB $BAR
bfmerge: loading b.bf: 19.5 kB $BAR
bfmerge: saving m.bf: 19.5 kB $BAR"
}

@test "progress: bfinfo --progress --verify reports loading each FILTER, as the other programs do" {
	seq 1 1000 >in.txt
	build f.bf -n 1e4 in.txt
	run --separate-stderr bfinfo --progress --verify f.bf
	expect_status 0
	expect_stderr "bfinfo: loading f.bf: 19.5 kB $BAR"
	# without --verify it reads the headers alone: no bits, nothing to report
	run --separate-stderr bfinfo --progress f.bf
	expect_status 0
	expect_stderr ""
}

@test "progress: the last of --progress and --no-progress wins" {
	seq 1 100 >in.txt
	build f.bf -n 1e4 in.txt
	run --separate-stderr bfgrep --progress --no-progress -c -f f.bf in.txt
	expect_stderr ""
	run --separate-stderr bfgrep --no-progress --progress -c -f f.bf in.txt
	expect_eq "lines on stderr" 2 "${#stderr_lines[@]}"
}

@test "progress: updates come at most 4 a second, plus the final line" {
	seq 1 100 >in.txt
	build f.bf -n 1e4 in.txt
	local start end n
	start=$(date +%s%N)
	for i in 1 2 3 4 5 6 7 8 9 10; do seq 4096; sleep 0.1; done |
		bfgrep --progress -c -f f.bf >out.txt 2>err.txt
	end=$(date +%s%N)
	grep ' lines, ' err.txt >updates.txt || true
	n=$(wc -l <updates.txt)
	cat err.txt
	echo "$n lines in $(((end - start) / 1000000)) ms"
	# at least one update during the second, then the final line
	[ "$n" -ge 2 ]
	[ $(((n - 1) * 250)) -le $(((end - start) / 1000000)) ]
	expect_eq "final line" "bfgrep: 41.0k lines, 193.7 kB (RATE)" "$(rate_free updates.txt | tail -n 1)"
}

@test "progress: stdout is byte for byte the same with --progress as without, in every program" {
	seq 1 1000 >in.txt
	seq 500 1500 >more.txt
	build f.bf -n 1e4 in.txt
	for prog in $PROGRAMS; do
		case $prog in
		bfbuild) set -- --key "$KEY" -n 1e4 in.txt ;;
		bfgrep) set -- -f f.bf more.txt ;;
		bfuniq) set -- --key "$KEY" in.txt more.txt ;;
		bfcount | bftop) set -- in.txt more.txt ;;
		bfmerge) set -- f.bf f.bf ;;
		bfinfo) set -- f.bf ;;
		bfsplit) set -- -N 2 --shard-key "$KEY" -o 'part%d' in.txt ;;
		esac
		"$prog" "$@" >plain.out 2>plain.err
		"$prog" --progress "$@" >progress.out 2>progress.err
		cmp plain.out progress.out
		expect_eq "$prog stderr without --progress" "" "$(cat plain.err)"
		[ "$prog" = bfinfo ] || [ -s progress.err ]
	done
}

# ---------------------------------------------------------------- progress on a terminal

@test "progress: on a terminal it shows after half a second, redrawn in place with CR and ESC[K, then cleared" {
	need_script
	seq 1 200000 >all.txt
	build expected.bf -n 2e5 all.txt
	on_terminal "$SLOW_NUMBERS | bfbuild --key $KEY -n 2e5 -o f.bf"
	expect_status 0
	cmp expected.bf f.bf
	local tty
	tty=$(cat tty.out; echo .)
	tty=${tty%.}
	od -c tty.out
	local line="${CR}bfbuild: [0-9.k]+ lines, [^$CR$LF$ESC]*, [0-9]+ keys, fill ~[0-9.]+%$ESC\\[K"
	[[ $tty =~ ^($line)+$CR$ESC\[K$ ]]
}

@test "progress: on a terminal --no-progress shows nothing" {
	need_script
	on_terminal "$SLOW_NUMBERS | bfbuild --no-progress --key $KEY -n 2e5 -o f.bf"
	expect_status 0
	expect_file tty.out ""
}

@test "progress: on a terminal a job done within half a second shows nothing" {
	need_script
	seq 1 1000 >in.txt
	build f.bf -n 1e4 in.txt
	on_terminal "bfgrep -c -f f.bf in.txt >out.txt"
	expect_status 0
	expect_file tty.out ""
	expect_file out.txt "1000\n"
}

@test "progress: on a terminal bfgrep's selected lines on stdout are unaffected" {
	need_script
	seq 1 200000 >all.txt
	seq 1 2 200000 >odd.txt
	build odd.bf -n 1e5 odd.txt
	bfgrep -f odd.bf all.txt >expected.txt
	on_terminal "$SLOW_NUMBERS | bfgrep -f odd.bf >out.txt"
	expect_status 0
	cmp expected.txt out.txt
	[ -s tty.out ]
}

@test "progress: on a terminal an error after a progress line starts on a line of its own" {
	need_script
	# 200000 repeats of one key overfill the pipe, then the pause, then
	# enough new keys to need a second stage
	on_terminal "(yes 0 | head -n 200000; sleep 1; seq 1 200000) | bfuniq --key $KEY --max-memory 1M >/dev/null"
	expect_status 2
	local tty
	tty=$(cat tty.out)
	od -c tty.out | tail -n 12
	local msg="bfuniq: filter needs 1.1 MB (1134848 bytes), over the memory limit of 1.0 MB with 525.2 kB already in use $LIMIT_NOTE"
	# the progress line was drawn before the error
	[[ $tty == "${CR}bfuniq: "*" new keys, "*"${ESC}[K"*"$msg"* ]]
	case $tty in
	*"$CR${ESC}[K$msg"* | *"$LF$msg"*) ;;
	*) expect_eq "the error" "(a cleared line)$msg" "(glued to the progress line) ${tty##*"${ESC}[K"}" ;;
	esac
}

# ---------------------------------------------------------------- over-full filters

# full.bf: 1000 bits for 5 keys, given 6703: every bit set.
make_full() {
	seq 1 6703 | sed 's/^/line/' >keys.txt
	build full.bf -m 1000 -n 5 keys.txt 2>/dev/null
}

@test "over-full: no program prints inf or nan about a full filter, whatever it reports" {
	make_full
	build ok.bf -n 10000 keys.txt
	: >all.out
	{
		bfbuild -v --key "$KEY" -m 1000 -n 5 -o full2.bf keys.txt
		bfuniq -v -n 5 keys.txt
		bfuniq -v -n 1000 keys.txt
		bfuniq -v -f full.bf keys.txt
		bfgrep -v -c -f full.bf keys.txt
		bfcount -v -f full.bf
		bfcount -f full.bf ok.bf --union
		bfmerge -v -o merged.bf full.bf ok.bf
		bfinfo full.bf
		bfinfo --json full.bf
	} >>all.out 2>&1 || true
	[ -s all.out ]
	if grep -n -i -w -E 'inf|nan|-inf|infinity' all.out; then
		expect_eq "inf or nan printed" "" "$(grep -i -w -E 'inf|nan|infinity' all.out)"
	fi
}

@test "over-full: bfgrep, bfuniq -f and bfcount -f warn once, naming the rate, about a filter over 10 times its target" {
	make_full
	build ok.bf -n 10000 keys.txt
	line="full.bf: warning: filter over-full: false-positive rate 1 at its fill, over 10 times its target 8.16973e-14 (every bit set: too many keys to estimate, capacity 5)"
	run --separate-stderr bfgrep -v -c -f full.bf keys.txt
	expect_status 1
	expect_output 0
	expect_stderr "bfgrep: $line"
	run --separate-stderr bfcount -f full.bf
	expect_status 2
	expect_eq "first line" "bfcount: $line" "${stderr%%$'\n'*}"
	put_lines new.txt a b
	run --separate-stderr bfuniq -v -f full.bf new.txt
	expect_status 0
	expect_eq "first line" "bfuniq: $line" "${stderr%%$'\n'*}"
	expect_eq "warnings" 1 "$(grep -c warning <<<"$stderr")"
	# a filter within its rate is loaded without a word
	run --separate-stderr bfgrep -c -f ok.bf keys.txt
	expect_stderr ""
	run --separate-stderr bfcount -f ok.bf
	expect_stderr ""
}

@test "over-full: bfbuild refuses -m, -n and -p together (any two fix the third)" {
	put_lines in.txt a
	run --separate-stderr bfbuild -m 1000 -n 5 -p 0.1 -o f.bf in.txt
	expect_usage_error bfbuild "-m, -n and -p cannot all be given: any two of them fix the third"
	[ ! -e f.bf ]
	run --separate-stderr bfbuild -m 1000 -n 5 -o f.bf in.txt
	expect_status 0
	run --separate-stderr bfbuild -m 1000 -p 0.1 -o g.bf in.txt
	expect_status 0
}
