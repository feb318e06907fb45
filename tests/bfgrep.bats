#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# bfgrep.bats - the command-line contract of bfgrep (cli.md, bfgrep(1)):
# selection, inversion, counting, quiet mode, words, fields, NUL records,
# several filters, filters on stdin, exit statuses, bad filters, unreadable
# inputs and output errors. Filters are built with a fixed key and a rate
# of 1e-6, so that a "not selected" line is one the test can rely on: with
# a fixed key the outcome is deterministic, and at 1e-6 a false positive
# among a dozen probe lines has odds of about 1e-5 for any key we might
# have picked.

bats_require_minimum_version 1.5.0
load helpers

SYNOPSIS="Usage: bfgrep -f FILTER [-f FILTER...] [-v] [-c] [-q] [-w] [-k N] [-t C] [-z] [--line-buffered] [--now T] [FILE...]"

# names.bf holds alice, bob and carol.
make_names() {
	put_lines names.txt alice bob carol
	build names.bf -n 100 -p 1e-6 names.txt
	put_lines in.txt alice dave bob erin alice frank carol
}

# ---------------------------------------------------------------- help, version

@test "bfgrep: -h prints the usage on stdout, starting with the synopsis, and exits 0" {
	run --separate-stderr bfgrep -h
	expect_status 0
	expect_stderr ""
	expect_eq "first line" "$SYNOPSIS" "${lines[0]}"
}

@test "bfgrep: --help prints the same usage as -h, naming every long option" {
	run --separate-stderr bfgrep -h
	local short=$output
	run --separate-stderr bfgrep --help
	expect_status 0
	expect_output "$short"
	for opt in --filter --invert-match --count --quiet --silent --words --field \
		--separator --null-data --line-buffered --help --version; do
		case $output in *"$opt"*) ;; *) expect_eq "help mentions" "$opt" "(missing)" ;; esac
	done
}

@test "bfgrep: -V prints 'bfgrep (bftools) 1.0.0' then the MIT licence, and exits 0" {
	run --separate-stderr bfgrep -V
	expect_status 0
	expect_stderr ""
	expect_eq "first line" "bfgrep (bftools) 1.0.0" "${lines[0]}"
	case $output in *MIT*) ;; *) expect_eq licence "MIT" "$output" ;; esac
	case $output in *"This is free software"*) ;; *) expect_eq licence "This is free software" "$output" ;; esac
}

@test "bfgrep: --version prints the same text as -V" {
	run --separate-stderr bfgrep -V
	local short=$output
	run --separate-stderr bfgrep --version
	expect_status 0
	expect_output "$short"
}

@test "bfgrep: --version to a full disk is a write error, exit 2" {
	run --separate-stderr bash -c 'bfgrep --version >/dev/full'
	expect_fail "bfgrep: write error: No space left on device"
}

# ---------------------------------------------------------------- usage errors

@test "bfgrep: without -f it is a usage error" {
	put_lines in.txt alice
	run --separate-stderr bfgrep in.txt
	expect_usage_error bfgrep "no filter given (use -f FILTER)"
}

@test "bfgrep: an unknown short option is a usage error pointing at --help" {
	make_names
	run --separate-stderr bfgrep -f names.bf -x in.txt
	expect_any_usage_error bfgrep
}

@test "bfgrep: an unknown long option is a usage error pointing at --help" {
	make_names
	run --separate-stderr bfgrep -f names.bf --no-such-option in.txt
	expect_any_usage_error bfgrep
}

@test "bfgrep: option errors are worded once, naming the option" {
	run --separate-stderr bfgrep --no-such-option
	expect_usage_error bfgrep "unrecognized option '--no-such-option'"
	run --separate-stderr bfgrep -x
	expect_usage_error bfgrep "invalid option -- 'x'"
	run --separate-stderr bfgrep --filter
	expect_usage_error bfgrep "option '--filter' requires an argument"
}

@test "bfgrep: a flag given a value is refused by its full name, even abbreviated" {
	run --separate-stderr bfgrep --count=3
	expect_usage_error bfgrep "option '--count' doesn't allow an argument"
	run --separate-stderr bfgrep --cou=3
	expect_usage_error bfgrep "option '--count' doesn't allow an argument"
	run --separate-stderr bfgrep --json=3
	expect_usage_error bfgrep "unrecognized option '--json=3'"
}

@test "bfgrep: -f missing its argument is a usage error" {
	run --separate-stderr bfgrep -f
	expect_any_usage_error bfgrep
}

@test "bfgrep: -k rejects field 0, junk and negatives" {
	make_names
	run --separate-stderr bfgrep -f names.bf -k 0 in.txt
	expect_usage_error bfgrep "invalid field number '0': must be at least 1"
	run --separate-stderr bfgrep -f names.bf --field=x in.txt
	expect_usage_error bfgrep "invalid field number 'x': not a number"
	run --separate-stderr bfgrep -f names.bf -k 1.5 in.txt
	expect_usage_error bfgrep "invalid field number '1.5': not a whole number"
}

@test "bfgrep: -t with two characters is a usage error" {
	make_names
	run --separate-stderr bfgrep -f names.bf -t ab in.txt
	expect_usage_error bfgrep "invalid separator 'ab': expected one character"
	run --separate-stderr bfgrep -f names.bf --separator=:: in.txt
	expect_usage_error bfgrep "invalid separator '::': expected one character"
}

@test "bfgrep: standard input cannot be read twice (-f - with no FILE, with -, or twice)" {
	make_names
	run --separate-stderr bfgrep -f - <names.bf
	expect_usage_error bfgrep "standard input can be read only once (a filter or the input)"
	run --separate-stderr bfgrep -f - in.txt - <names.bf
	expect_usage_error bfgrep "standard input can be read only once (a filter or the input)"
	run --separate-stderr bfgrep -f - -f - in.txt <names.bf
	expect_usage_error bfgrep "standard input can be read only once (a filter or the input)"
}

# ---------------------------------------------------------------- selection

@test "bfgrep: prints the input lines whose key is in the filter, in input order" {
	make_names
	run --separate-stderr bfgrep -f names.bf in.txt
	expect_status 0
	expect_stderr ""
	expect_output $'alice\nbob\nalice\ncarol'
}

@test "bfgrep: --filter=FILTER and --filter FILTER are the long forms of -f" {
	make_names
	run --separate-stderr bfgrep --filter=names.bf in.txt
	expect_output $'alice\nbob\nalice\ncarol'
	run --separate-stderr bfgrep --filter names.bf in.txt
	expect_output $'alice\nbob\nalice\ncarol'
}

@test "bfgrep: reads standard input when no FILE is named, and for -" {
	make_names
	run --separate-stderr bfgrep -f names.bf <in.txt
	expect_output $'alice\nbob\nalice\ncarol'
	put_lines b.txt bob
	run --separate-stderr bfgrep -f names.bf b.txt - <in.txt
	expect_output $'bob\nalice\nbob\nalice\ncarol'
}

@test "bfgrep: searches every FILE in order" {
	make_names
	put_lines b.txt carol zed
	run --separate-stderr bfgrep -f names.bf b.txt in.txt
	expect_status 0
	expect_output $'carol\nalice\nbob\nalice\ncarol'
}

@test "bfgrep: exits 1 and prints nothing when no line is selected" {
	make_names
	put_lines other.txt dave erin
	run --separate-stderr bfgrep -f names.bf other.txt
	expect_status 1
	expect_output ""
	expect_stderr ""
	run --separate-stderr bfgrep -f names.bf </dev/null
	expect_status 1
	expect_output ""
}

@test "bfgrep: -v prints the lines whose key is in no filter" {
	make_names
	run --separate-stderr bfgrep -v -f names.bf in.txt
	expect_status 0
	expect_output $'dave\nerin\nfrank'
}

@test "bfgrep: --invert-match is the long form of -v; exits 1 when every line is in the filter" {
	make_names
	run --separate-stderr bfgrep --invert-match -f names.bf in.txt
	expect_output $'dave\nerin\nfrank'
	run --separate-stderr bfgrep --invert-match -f names.bf names.txt
	expect_status 1
	expect_output ""
}

@test "bfgrep: -c prints the number of selected lines" {
	make_names
	run --separate-stderr bfgrep -c -f names.bf in.txt
	expect_status 0
	expect_output 4
}

@test "bfgrep: --count totals over all FILEs and prints 0 with exit 1 when none" {
	make_names
	run --separate-stderr bfgrep --count -f names.bf in.txt names.txt
	expect_status 0
	expect_output 7
	put_lines other.txt dave
	run --separate-stderr bfgrep --count -f names.bf other.txt
	expect_status 1
	expect_output 0
}

@test "bfgrep: -c -v counts the lines in no filter" {
	make_names
	run --separate-stderr bfgrep -c -v -f names.bf in.txt
	expect_status 0
	expect_output 3
}

@test "bfgrep: -q prints nothing and exits 0 when a line is selected" {
	make_names
	run --separate-stderr bfgrep -q -f names.bf in.txt
	expect_status 0
	expect_output ""
	expect_stderr ""
}

@test "bfgrep: -q exits 1 with no output when nothing is selected" {
	make_names
	put_lines other.txt dave erin
	run --separate-stderr bfgrep -q -f names.bf other.txt
	expect_status 1
	expect_output ""
	expect_stderr ""
}

@test "bfgrep: --quiet and --silent are the long forms of -q" {
	make_names
	run --separate-stderr bfgrep --quiet -f names.bf in.txt
	expect_status 0
	expect_output ""
	run --separate-stderr bfgrep --silent -f names.bf in.txt
	expect_status 0
	expect_output ""
}

@test "bfgrep: -q stops at the first selected line (an endless input ends)" {
	make_names
	local st=0
	# yes never ends: only an early exit of bfgrep finishes the pipeline;
	# the timeout only turns a hang into a failure
	yes alice 2>/dev/null | timeout 60 bfgrep -q -f names.bf >out.txt || st=$?
	expect_eq status 0 "$st"
	expect_file out.txt ''
}

@test "bfgrep: -q -v stops at the first line in no filter" {
	make_names
	local st=0
	yes dave 2>/dev/null | timeout 60 bfgrep -q -v -f names.bf >out.txt || st=$?
	expect_eq status 0 "$st"
	expect_file out.txt ''
}

@test "bfgrep: -c -q prints nothing" {
	make_names
	run --separate-stderr bfgrep -c -q -f names.bf in.txt
	expect_status 0
	expect_output ""
}

@test "bfgrep: -w selects a mail-log line by the address inside from=<...>," {
	put_lines spammers.txt spammer@example.com
	build spam.bf -n 10 -p 1e-6 spammers.txt
	put_lines log.txt \
		'Jan  1 00:00:01 mx postfix/qmgr[42]: 4B2F: from=<spammer@example.com>, size=1024, nrcpt=1 (queue active)' \
		'Jan  1 00:00:02 mx postfix/qmgr[42]: 4B30: from=<friend@example.com>, size=2048, nrcpt=1 (queue active)' \
		'Jan  1 00:00:03 mx postfix/smtp[43]: 4B2F: to=<bob@example.org>, relay=none, status=sent'
	run --separate-stderr bfgrep -w -f spam.bf log.txt
	expect_status 0
	expect_output 'Jan  1 00:00:01 mx postfix/qmgr[42]: 4B2F: from=<spammer@example.com>, size=1024, nrcpt=1 (queue active)'
	run --separate-stderr bfgrep -f spam.bf log.txt
	expect_status 1
	expect_output ""
}

@test "bfgrep: --words splits at blanks and at < > ( ) [ ] { } , ; : \" ' =" {
	put_lines keys.txt k
	build k.bf -n 10 -p 1e-6 keys.txt
	put_lines log.txt 'a<k>b' 'a(k)b' 'a[k]b' 'a{k}b' 'a,k;b' 'a:k"b' "a'k=b" 'a k	b' 'akb' 'a.k.b' 'a/k/b' 'a-k-b'
	run --separate-stderr bfgrep --words -f k.bf log.txt
	expect_status 0
	expect_output "a<k>b
a(k)b
a[k]b
a{k}b
a,k;b
a:k\"b
a'k=b
a k	b"
}

@test "bfgrep: -w -v prints the lines with no word in the filter" {
	put_lines keys.txt k
	build k.bf -n 10 -p 1e-6 keys.txt
	put_lines log.txt 'x=<k>' 'x=<j>' 'k' ''
	# the empty line has no word, so no key: never selected, printed by -v
	bfgrep -w -v -f k.bf log.txt >out.txt
	expect_file out.txt 'x=<j>\n\n'
}

@test "bfgrep: -w with -k looks only at the words of field N" {
	put_lines spammers.txt spammer@example.com
	build spam.bf -n 10 -p 1e-6 spammers.txt
	put_lines log.txt \
		'2024-01-01 from=<spammer@example.com>, 1' \
		'from=<spammer@example.com>, 2024-01-01 2' \
		'x y'
	run --separate-stderr bfgrep -w -k 2 -f spam.bf log.txt
	expect_status 0
	expect_output '2024-01-01 from=<spammer@example.com>, 1'
}

@test "bfgrep: -k N -t , tests a CSV column" {
	put_lines ids.txt alice bob
	build ids.bf -n 10 -p 1e-6 ids.txt
	put_lines in.csv "1,alice,x" "2,carol,y" "3,bob,z" "alice,4,w"
	run --separate-stderr bfgrep -t , -k 2 -f ids.bf in.csv
	expect_status 0
	expect_output $'1,alice,x\n3,bob,z'
	run --separate-stderr bfgrep --separator=, --field=2 -f ids.bf in.csv
	expect_output $'1,alice,x\n3,bob,z'
	run --separate-stderr bfgrep --separator , --field 2 -f ids.bf in.csv
	expect_output $'1,alice,x\n3,bob,z'
}

@test "bfgrep: -k splits at runs of blanks and skips leading blanks" {
	put_lines ids.txt alice
	build ids.bf -n 10 -p 1e-6 ids.txt
	printf '  x \t alice  1\nalice x\n\talice\n' >in.txt
	run --separate-stderr bfgrep -k 2 -f ids.bf in.txt
	expect_output $'  x \t alice  1'
}

@test "bfgrep: -t '\\t' tests tab-separated fields, blanks being data" {
	put_lines ids.txt "a b"
	build ids.bf -n 10 -p 1e-6 ids.txt
	printf '1\ta b\n2\ta\n3\ta b c\n' >in.tsv
	bfgrep -t '\t' -k 2 -f ids.bf in.tsv >out.txt
	expect_file out.txt '1\ta b\n'
}

@test "bfgrep: a line without field N is never selected, and -v prints it" {
	put_lines ids.txt alice ""
	build ids.bf -n 10 -p 1e-6 ids.txt
	put_lines in.txt "1 alice" "alice" "" "2 bob"
	run --separate-stderr bfgrep -k 2 -f ids.bf in.txt
	expect_status 0
	expect_output "1 alice"
	bfgrep -v -k 2 -f ids.bf in.txt >out.txt
	expect_file out.txt 'alice\n\n2 bob\n'
	run --separate-stderr bfgrep -c -v -k 2 -f ids.bf in.txt
	expect_output 3
}

@test "bfgrep: -t , with too few fields: the line is not selected, -v prints it" {
	put_lines ids.txt x
	build ids.bf -n 10 -p 1e-6 ids.txt
	put_lines in.csv "a,x" "x" "x,"
	run --separate-stderr bfgrep -t , -k 2 -f ids.bf in.csv
	expect_output "a,x"
	run --separate-stderr bfgrep -v -t , -k 2 -f ids.bf in.csv
	expect_output $'x\nx,'
}

@test "bfgrep: -z reads and writes NUL-terminated records" {
	printf 'alice\0bob\0' >ids.bin
	build ids.bf -n 10 -p 1e-6 -z ids.bin
	printf 'alice\0line\ntwo\0bob' >in.bin
	bfgrep -z -f ids.bf in.bin >out.bin
	expect_file out.bin 'alice\0bob\0'
	bfgrep --null-data -v -f ids.bf in.bin >out.bin
	expect_file out.bin 'line\ntwo\0'
}

@test "bfgrep: a last line without a newline is selected and printed with one" {
	make_names
	printf 'dave\ncarol' >in.txt
	bfgrep -f names.bf in.txt >out.txt
	expect_file out.txt 'carol\n'
}

@test "bfgrep: prints selected lines unchanged: NUL bytes, CR and bytes above 127" {
	printf 'a\0b\nc\r\n\377\376\n' >ids.txt
	build ids.bf -n 10 -p 1e-6 ids.txt
	printf 'a\0b\na\nc\nc\r\n\377\376\n\377\n' >in.txt
	bfgrep -f ids.bf in.txt >out.txt
	expect_file out.txt 'a\0b\nc\r\n\377\376\n'
}

@test "bfgrep: a CRLF line is a different key from the LF line" {
	put_lines ids.txt alice
	build ids.bf -n 10 -p 1e-6 ids.txt
	printf 'alice\r\n' >in.txt
	run --separate-stderr bfgrep -f ids.bf in.txt
	expect_status 1
	expect_output ""
}

@test "bfgrep: applies the -i recorded in the filter without being told" {
	put_lines ids.txt Alice
	build ids.bf -n 10 -p 1e-6 -i ids.txt
	put_lines in.txt ALICE alice bob
	run --separate-stderr bfgrep -f ids.bf in.txt
	expect_output $'ALICE\nalice'
}

@test "bfgrep: several -f select a line in any filter" {
	put_lines a.txt alice
	put_lines b.txt bob
	build a.bf -n 10 -p 1e-6 a.txt
	build b.bf -n 10 -p 1e-6 --layout classic --hash siphash24 b.txt
	put_lines in.txt alice bob carol
	run --separate-stderr bfgrep -f a.bf -f b.bf in.txt
	expect_status 0
	expect_output $'alice\nbob'
	run --separate-stderr bfgrep -v -f a.bf --filter=b.bf in.txt
	expect_output carol
	run --separate-stderr bfgrep -c -f a.bf -f b.bf in.txt
	expect_output 2
}

@test "bfgrep: several -f apply each filter's own case folding" {
	put_lines a.txt alice
	put_lines b.txt bob
	build a.bf -n 10 -p 1e-6 -i a.txt
	build b.bf -n 10 -p 1e-6 b.txt
	put_lines in.txt ALICE BOB bob
	run --separate-stderr bfgrep -f a.bf -f b.bf in.txt
	expect_output $'ALICE\nbob'
	run --separate-stderr bfgrep -f b.bf -f a.bf in.txt
	expect_output $'ALICE\nbob'
}

@test "bfgrep: -f - reads the filter from stdin while the input comes from a FILE" {
	make_names
	run --separate-stderr bfgrep -f - in.txt <names.bf
	expect_status 0
	expect_output $'alice\nbob\nalice\ncarol'
}

@test "bfgrep: --line-buffered gives output identical to the default" {
	seq 1 5000 >ids.txt
	build ids.bf -n 5000 -p 1e-6 ids.txt
	seq 1 2 10000 >in.txt
	bfgrep -f ids.bf in.txt >plain.txt
	bfgrep --line-buffered -f ids.bf in.txt >lb.txt
	cmp plain.txt lb.txt
	expect_eq lines 2500 "$(wc -l <lb.txt | tr -d ' ')"
}

@test "bfgrep: --line-buffered prints each selected line before the input ends" {
	make_names
	mkfifo in.fifo out.fifo
	# fd 3 belongs to bats: the background job must not hold it
	bfgrep --line-buffered -f names.bf <in.fifo >out.fifo 3>&- &
	local pid=$! line=""
	exec 7>in.fifo 8<out.fifo
	printf 'dave\nbob\n' >&7
	# the writer is still open: bob can only arrive if bfgrep flushed it;
	# the timeout only turns a hang into a failure
	read -r -t 60 line <&8 || true
	exec 7>&-
	wait "$pid" || true
	exec 8<&-
	expect_eq "first line, input still open" bob "$line"
}

# ---------------------------------------------------------------- trouble

@test "bfgrep: a missing FILE is reported, the others are searched, and the exit is 2" {
	make_names
	run --separate-stderr bfgrep -f names.bf missing.txt in.txt
	expect_status 2
	expect_stderr "bfgrep: missing.txt: No such file or directory"
	expect_output $'alice\nbob\nalice\ncarol'
}

@test "bfgrep: -c with a missing FILE counts the others and exits 2" {
	make_names
	run --separate-stderr bfgrep -c -f names.bf in.txt missing.txt
	expect_status 2
	expect_stderr "bfgrep: missing.txt: No such file or directory"
	expect_output 4
}

@test "bfgrep: a missing FILE and no selected line exit 2, not 1" {
	make_names
	put_lines other.txt dave
	run --separate-stderr bfgrep -f names.bf other.txt missing.txt
	expect_status 2
	expect_output ""
	expect_stderr "bfgrep: missing.txt: No such file or directory"
}

@test "bfgrep: -q exits 0 when a line is selected even if a FILE is missing (as grep)" {
	make_names
	run --separate-stderr bfgrep -q -f names.bf missing.txt in.txt
	expect_status 0
	expect_output ""
	expect_stderr "bfgrep: missing.txt: No such file or directory"
}

@test "bfgrep: a directory as FILE is reported and the exit is 2" {
	make_names
	mkdir dir
	run --separate-stderr bfgrep -f names.bf dir in.txt
	expect_status 2
	expect_stderr "bfgrep: dir: Is a directory"
	expect_output $'alice\nbob\nalice\ncarol'
}

@test "bfgrep: a missing filter is an error before any input is read" {
	make_names
	run --separate-stderr bfgrep -f nofilter.bf in.txt
	expect_fail "bfgrep: nofilter.bf: No such file or directory"
	run --separate-stderr bfgrep -f names.bf -f nofilter.bf in.txt
	expect_fail "bfgrep: nofilter.bf: No such file or directory"
}

@test "bfgrep: a plain text file is not a filter" {
	make_names
	put_lines notes.txt "alice" "these are notes, not a filter"
	run --separate-stderr bfgrep -f notes.txt in.txt
	expect_one_line_error "bfgrep: notes.txt: not a bftools filter"
}

@test "bfgrep: an empty file is not a filter" {
	make_names
	: >empty.bf
	run --separate-stderr bfgrep -f empty.bf in.txt
	expect_one_line_error "bfgrep: empty.bf: "
}

@test "bfgrep: a truncated filter is rejected" {
	make_names
	local size
	size=$(wc -c <names.bf)
	head -c $((size - 1)) names.bf >short.bf
	run --separate-stderr bfgrep -f short.bf in.txt
	expect_one_line_error "bfgrep: short.bf: "
	head -c 20 names.bf >short.bf
	run --separate-stderr bfgrep -f short.bf in.txt
	expect_one_line_error "bfgrep: short.bf: "
}

@test "bfgrep: gzip data without the magic is 'not a bftools filter (bad magic)'" {
	make_names
	seq 1 2000 | gzip -c >wrong.bf
	run --separate-stderr bfgrep -f wrong.bf in.txt
	expect_fail "bfgrep: wrong.bf: not a bftools filter (bad magic)"
}

@test "bfgrep: a bad filter on stdin is named (standard input)" {
	make_names
	run --separate-stderr bfgrep -f - in.txt </dev/null
	expect_one_line_error "bfgrep: (standard input): "
}

@test "bfgrep: a bad filter among good ones is an error, with no output" {
	make_names
	put_lines notes.txt "not a filter"
	run --separate-stderr bfgrep -f names.bf -f notes.txt in.txt
	expect_one_line_error "bfgrep: notes.txt: "
}

@test "bfgrep: writing to a full disk is a write error, exit 2" {
	make_names
	run --separate-stderr bash -c 'bfgrep -f names.bf in.txt >/dev/full'
	expect_fail "bfgrep: write error: No space left on device"
}

@test "bfgrep: writing a count to a full disk is a write error, exit 2" {
	make_names
	run --separate-stderr bash -c 'bfgrep -c -f names.bf in.txt >/dev/full'
	expect_fail "bfgrep: write error: No space left on device"
}

@test "bfgrep: many selected lines to a full disk are one write error, exit 2" {
	seq 1 100000 >ids.txt
	build ids.bf -n 100000 ids.txt
	run --separate-stderr bash -c 'bfgrep -f ids.bf ids.txt >/dev/full'
	expect_fail "bfgrep: write error: No space left on device"
}

@test "bfgrep: --line-buffered to a full disk is a write error, exit 2" {
	make_names
	run --separate-stderr bash -c 'bfgrep --line-buffered -f names.bf in.txt >/dev/full'
	expect_fail "bfgrep: write error: No space left on device"
}

@test "bfgrep: finds every one of 100000 keys (no false negatives), both layouts" {
	seq 1 100000 >ids.txt
	build b.bf -n 100000 -p 1e-3 ids.txt
	build c.bf -n 100000 -p 1e-3 --layout classic ids.txt
	run --separate-stderr bfgrep -c -f b.bf ids.txt
	expect_output 100000
	run --separate-stderr bfgrep -c -f c.bf ids.txt
	expect_output 100000
}
