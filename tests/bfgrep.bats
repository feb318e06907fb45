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

SYNOPSIS="Usage: bfgrep -f FILTER [-f FILTER...] [-v] [-c|-l|-L|-q] [-w] [-o] [-n] [-H|-h] [-m NUM] [-s] [-Z] [-r] [-k LIST] [-t C] [--header] [--csv] [--jsonl] [--bad-line error|skip] [--shard I/N --shard-key HEX] [-z] [--label=LABEL] [--line-buffered] [--now T] [FILE...]"

# names.bf holds alice, bob and carol.
make_names() {
	put_lines names.txt alice bob carol
	build names.bf -n 100 -p 1e-6 names.txt
	put_lines in.txt alice dave bob erin alice frank carol
}

# ---------------------------------------------------------------- help, version

@test "bfgrep: --help prints the usage on stdout, starting with the synopsis, and exits 0" {
	run --separate-stderr bfgrep --help
	expect_status 0
	expect_stderr ""
	expect_eq "first line" "$SYNOPSIS" "${lines[0]}"
}

@test "bfgrep: --help names every long option" {
	run --separate-stderr bfgrep --help
	expect_status 0
	for opt in --filter --invert-match --count --files-with-matches --files-without-match \
		--quiet --silent --words --word-regexp --only-matching --line-number \
		--with-filename --no-filename --max-count --no-messages --null --label --recursive --field \
		--separator --null-data --line-buffered --help --version; do
		case $output in *"$opt"*) ;; *) expect_eq "help mentions" "$opt" "(missing)" ;; esac
	done
}

@test "bfgrep: -h is grep's --no-filename, not help (help is --help)" {
	make_names
	run --separate-stderr bfgrep -h -f names.bf in.txt names.txt
	expect_status 0
	expect_stderr ""
	expect_output $'alice\nbob\nalice\ncarol\nalice\nbob\ncarol'
	# -h alone: no filter given, a usage error rather than the help
	run --separate-stderr bfgrep -h
	expect_usage_error bfgrep "no filter given (use -f FILTER)"
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
	run --separate-stderr bfgrep --yaml=3
	expect_usage_error bfgrep "unrecognized option '--yaml=3'"
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
	expect_usage_error bfgrep "-k 'x': not a field number or range (field names need --header)"
	run --separate-stderr bfgrep -f names.bf -k 1.5 in.txt
	expect_usage_error bfgrep "invalid field number '1.5': a field number is a plain integer (1, 2, 3, ...; no suffix, fraction or exponent)"
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
	expect_output $'b.txt:bob\n(standard input):alice\n(standard input):bob\n(standard input):alice\n(standard input):carol'
}

@test "bfgrep: searches every FILE in order, naming the FILE before each line" {
	make_names
	put_lines b.txt carol zed
	run --separate-stderr bfgrep -f names.bf b.txt in.txt
	expect_status 0
	expect_output $'b.txt:carol\nin.txt:alice\nin.txt:bob\nin.txt:alice\nin.txt:carol'
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

@test "bfgrep: --count counts per FILE, and prints 0 with exit 1 when none" {
	make_names
	run --separate-stderr bfgrep --count -f names.bf in.txt names.txt
	expect_status 0
	expect_output $'in.txt:4\nnames.txt:3'
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

# ---------------------------------------------------------------- grep's options
#
# Each answer is compared with GNU grep's on the same files: grep -F -x
# with the list the filter was built from (a key is the whole line), or
# grep -F -w with -w. The filters hold a few keys at 1e-6 with the fixed
# key, so a line outside the list is never selected (see the top of this
# file) and the two answers must be the same bytes, messages and status.

# two logs and the list: a.log and b.log share bob; c.log has no listed line
make_logs() {
	put_lines list.txt alice bob
	build list.bf -n 100 -p 1e-6 list.txt
	put_lines a.log alice dave bob alice
	put_lines b.log erin bob
	put_lines c.log dave erin
	: >empty.log
}

# like_grep MODE ARG...: bfgrep -f list.bf ARG... (with -w when MODE is -w)
# prints, says and exits exactly as grep -F MODE -f list.txt ARG...
like_grep() {
	local mode=$1 words=""
	shift
	[ "$mode" = -w ] && words=-w
	run --separate-stderr grep -F "$mode" -f list.txt "$@"
	local want_out=$output want_err=${stderr//grep: /bfgrep: } want_status=$status
	run --separate-stderr bfgrep $words -f list.bf "$@"
	expect_eq "bfgrep $words $* stdout (grep -F $mode: '$want_out')" "$want_out" "$output"
	expect_eq "bfgrep $words $* stderr" "$want_err" "$stderr"
	expect_eq "bfgrep $words $* status" "$want_status" "$status"
}

@test "bfgrep: with several FILEs each line is named, as grep; -H and -h decide" {
	make_logs
	like_grep -x a.log b.log c.log
	like_grep -x -H a.log
	like_grep -x --with-filename a.log
	like_grep -x -h a.log b.log
	like_grep -x --no-filename a.log b.log
	# the last of -H and -h wins
	like_grep -x -H -h a.log b.log
	like_grep -x -h -H a.log
	run --separate-stderr bfgrep -H -f list.bf a.log
	expect_output $'a.log:alice\na.log:bob\na.log:alice'
}

@test "bfgrep: -n puts each line's number in its FILE before it, as grep" {
	make_logs
	like_grep -x -n a.log
	like_grep -x -n a.log b.log
	like_grep -x --line-number -h b.log a.log
	like_grep -x -n -v a.log b.log
	run --separate-stderr bfgrep -n -f list.bf a.log b.log
	expect_output $'a.log:1:alice\na.log:3:bob\na.log:4:alice\nb.log:2:bob'
}

@test "bfgrep: -c counts per FILE as FILE:COUNT when there are several, as grep" {
	make_logs
	like_grep -x -c a.log
	like_grep -x -c a.log b.log c.log empty.log
	like_grep -x -c -h a.log b.log
	like_grep -x -c -H a.log
	like_grep -x -c -v a.log b.log
	like_grep -x -c -n a.log b.log
	run --separate-stderr bfgrep -c -f list.bf a.log c.log
	expect_status 0
	expect_output $'a.log:3\nc.log:0'
}

@test "bfgrep: -l and -L print the names of the FILEs with and without a selected line, as grep" {
	make_logs
	like_grep -x -l a.log b.log c.log empty.log
	like_grep -x --files-with-matches c.log
	like_grep -x -L a.log b.log c.log empty.log
	like_grep -x --files-without-match a.log
	like_grep -x -L c.log
	like_grep -x -l -v a.log b.log c.log
	# -l and -L beat -c; -n and -H change nothing
	like_grep -x -l -c -n -H a.log b.log c.log
	like_grep -x -L -c a.log c.log
	run --separate-stderr bfgrep -L -f list.bf a.log c.log empty.log
	# as grep since 3.5: the status says whether a line was selected, not a name printed
	expect_status 0
	expect_output $'c.log\nempty.log'
	run --separate-stderr bfgrep -L -f list.bf c.log
	expect_status 1
	expect_output c.log
}

@test "bfgrep: -l stops reading a FILE at its first selected line" {
	make_logs
	local st=0
	# yes never ends: only skipping the rest of its input ends bfgrep
	yes alice 2>/dev/null | timeout 60 bfgrep -l -f list.bf >out.txt || st=$?
	expect_eq status 0 "$st"
	expect_file out.txt '(standard input)\n'
	st=0
	yes alice 2>/dev/null | timeout 60 bfgrep -l -f list.bf a.log - c.log >out.txt || st=$?
	expect_eq status 0 "$st"
	expect_file out.txt 'a.log\n(standard input)\n'
}

@test "bfgrep: -m NUM stops each FILE after NUM selected lines, as grep" {
	make_logs
	like_grep -x -m 1 a.log b.log
	like_grep -x --max-count=2 -n a.log b.log
	like_grep -x -m 1 -c a.log b.log c.log
	like_grep -x -m 1 -v a.log b.log
	like_grep -x -m 2 -o a.log
	like_grep -x -m 1 -l a.log c.log
	# -m 0 reads nothing: status 1, and nothing printed but for -L
	like_grep -x -m 0 a.log
	like_grep -x -m 0 -c a.log b.log
	like_grep -x -m 0 -L a.log c.log
	local st=0
	yes alice 2>/dev/null | timeout 60 bfgrep -m 2 -f list.bf >out.txt || st=$?
	expect_eq status 0 "$st"
	expect_file out.txt 'alice\nalice\n'
}

@test "bfgrep: -m takes a whole number" {
	make_logs
	run --separate-stderr bfgrep -m x -f list.bf a.log
	expect_usage_error bfgrep "invalid max count 'x': not a number"
	run --separate-stderr bfgrep --max-count=-1 -f list.bf a.log
	expect_any_usage_error bfgrep
}

@test "bfgrep: -o prints only the key; with -w each word in the filter on its own line, as grep" {
	make_logs
	like_grep -x -o a.log b.log
	like_grep -x --only-matching -n a.log
	like_grep -x -o -c a.log
	# -o -v: the selected lines have no key in a filter, so nothing to print
	like_grep -x -o -v a.log
	put_lines mail.log \
		'from=<alice> to=<bob>, relay=x' \
		'from=<carol> to=<dave>' \
		'bob cc bob' \
		'alice'
	cp mail.log a.log
	like_grep -w -o a.log
	like_grep -w -o -n -H a.log
	like_grep -w -o -m 1 a.log
	like_grep -w -o -c a.log
	like_grep -w -o -v a.log
}

@test "bfgrep: -o -w | sort | uniq -c says which listed words appear and how often" {
	put_lines spammers.txt spammer@example.com bad@example.net
	build spam.bf -n 10 -p 1e-6 spammers.txt
	put_lines mail.log \
		'Jan  1 00:00:01 mx qmgr: 1: from=<spammer@example.com>, size=1' \
		'Jan  1 00:00:02 mx qmgr: 2: from=<friend@example.com>, size=2' \
		'Jan  1 00:00:03 mx qmgr: 3: from=<spammer@example.com>, size=3' \
		'Jan  1 00:00:04 mx smtp: 4: to=<bad@example.net>, from=<spammer@example.com>'
	bfgrep -o -w -f spam.bf mail.log | sort | uniq -c >got.txt
	grep -o -w -F -f spammers.txt mail.log | sort | uniq -c >want.txt
	cmp want.txt got.txt
	expect_file got.txt '      1 bad@example.net\n      3 spammer@example.com\n'
}

@test "bfgrep: -o with -k prints the field that is the key" {
	put_lines ids.txt alice bob
	build ids.bf -n 10 -p 1e-6 ids.txt
	put_lines in.csv "1,alice,x" "2,carol,y" "3,bob,z"
	run --separate-stderr bfgrep -o -t , -k 2 -f ids.bf in.csv
	expect_status 0
	expect_output $'alice\nbob'
	run --separate-stderr bfgrep -o -n -t , -k 2 -f ids.bf in.csv
	expect_output $'1:alice\n3:bob'
}

@test "bfgrep: -s says nothing of FILEs that cannot be read, but the status is still 2, as grep" {
	make_logs
	mkdir dir
	like_grep -x -s missing.log a.log
	like_grep -x --no-messages dir missing.log b.log
	like_grep -x -s -c dir missing.log a.log
	like_grep -x -s -L dir missing.log a.log
	like_grep -x -s missing.log c.log
	run --separate-stderr bfgrep -s -f list.bf missing.log a.log
	expect_status 2
	expect_stderr ""
	# -s is about FILEs: a bad filter is still reported
	run --separate-stderr bfgrep -s -f missing.bf a.log
	expect_fail "bfgrep: missing.bf: No such file or directory"
}

@test "bfgrep: -q exits 0 on a selected line despite an unreadable FILE, 2 without one, as grep" {
	make_logs
	like_grep -x -q missing.log a.log
	like_grep -x -q a.log missing.log
	like_grep -x -q missing.log c.log
	like_grep -x -q -s missing.log c.log
	like_grep -x -q -s missing.log b.log
	like_grep -x -q -l a.log
}

@test "bfgrep: missing FILEs and directories are reported in their place, as grep" {
	make_logs
	mkdir dir
	like_grep -x a.log missing.log b.log
	like_grep -x -c a.log missing.log dir b.log
	like_grep -x -l dir missing.log a.log
	like_grep -x -L dir missing.log a.log c.log
	like_grep -x -n -h dir a.log
}

@test "bfgrep: --label names standard input in the output, as grep" {
	make_logs
	run --separate-stderr bfgrep --label=stdin -H -f list.bf <a.log
	expect_output $'stdin:alice\nstdin:bob\nstdin:alice'
	run --separate-stderr bfgrep --label=stdin -c -f list.bf b.log - <a.log
	expect_output $'b.log:1\nstdin:3'
	run --separate-stderr bfgrep -l -f list.bf - <a.log
	expect_output '(standard input)'
	cd "$BATS_TEST_TMPDIR/work"
	run --separate-stderr grep -F -x --label=stdin -c -f list.txt b.log - <a.log
	expect_output $'b.log:1\nstdin:3'
}

@test "bfgrep: -Z ends file names with NUL before lines, counts and in -l, as grep" {
	make_logs
	grep -F -x -Z -f list.txt a.log b.log >want
	bfgrep -Z -f list.bf a.log b.log >got
	cmp want got
	expect_file got 'a.log\0alice\na.log\0bob\na.log\0alice\nb.log\0bob\n'
	grep -F -x --null -c -f list.txt a.log c.log >want
	bfgrep --null -c -f list.bf a.log c.log >got
	cmp want got
	grep -F -x -Z -l -f list.txt a.log b.log c.log >want
	bfgrep -Z -l -f list.bf a.log b.log c.log >got
	cmp want got
	expect_file got 'a.log\0b.log\0'
	bfgrep -Z -L -f list.bf a.log c.log >got
	expect_file got 'c.log\0'
}

@test "bfgrep: -z with names: NUL-terminated records, names still end with ':'" {
	printf 'alice\0bob\0' >ids.bin
	build ids.bf -n 10 -p 1e-6 -z ids.bin
	printf 'alice\0x\0' >a.bin
	printf 'bob\0' >b.bin
	bfgrep -z -n -f ids.bf a.bin b.bin >got
	expect_file got 'a.bin:1:alice\0b.bin:1:bob\0'
	bfgrep -z -c -f ids.bf a.bin b.bin >got
	expect_file got 'a.bin:1\nb.bin:1\n'
	bfgrep -z -l -f ids.bf a.bin b.bin >got
	expect_file got 'a.bin\nb.bin\n'
}

@test "bfgrep: per-FILE answers are the same with one thread or two, over many batches" {
	seq 1 7 70000 >list.txt
	build list.bf -n 10000 -p 1e-9 list.txt
	seq 1 300000 >a.log
	seq 200000 500000 >b.log
	for args in "-n a.log b.log" "-c b.log a.log" "-m 5000 -n b.log a.log" \
		"-l a.log b.log a.log" "-L a.log b.log" "-c -m 1000 a.log b.log"; do
		grep -F -x -f list.txt $args >want
		BFTOOLS_THREADS=1 bfgrep -f list.bf $args >one
		BFTOOLS_THREADS=2 bfgrep -f list.bf $args >two
		cmp want one || { echo "one thread differs: $args" >&2; return 1; }
		cmp want two || { echo "two threads differ: $args" >&2; return 1; }
	done
}

# a tree to search with -r: files at two depths, an empty file, links
# inside (passed over, as grep -r passes them) and a FIFO (never opened)
make_tree() {
	make_logs
	mkdir -p logs/old logs/empty
	cp a.log logs/a.log
	cp b.log logs/old/b.log
	cp c.log logs/Z.log
	: >logs/old/empty.log
	ln -s ../a.log logs/link.log
	ln -s old logs/oldlink
	mkfifo logs/fifo
}

@test "bfgrep: -r searches the files under directories, named before each line, as grep -r" {
	make_tree
	local args
	for args in "logs" "-n logs" "-c logs" "-l logs" "-L logs" "-h logs" "a.log logs/old" \
		"logs/link.log logs/oldlink" "-o -n logs/"; do
		# shellcheck disable=SC2086
		grep -F -x -r -f list.txt $args | LC_ALL=C sort >want
		# shellcheck disable=SC2086
		timeout 60 bfgrep -r -f list.bf $args >got
		LC_ALL=C sort got | cmp want - || { echo "differs: -r $args" >&2; return 1; }
	done
	# in byte order of the names, depth first
	run --separate-stderr bfgrep --recursive -c -f list.bf logs
	expect_status 0
	expect_stderr ""
	expect_output $'logs/Z.log:0\nlogs/a.log:3\nlogs/old/b.log:1\nlogs/old/empty.log:0'
}

@test "bfgrep: -r with one FILE that is not a directory names nothing, as grep -r" {
	make_tree
	run --separate-stderr bfgrep -r -f list.bf a.log
	expect_output $'alice\nbob\nalice'
	run --separate-stderr bfgrep -r -H -f list.bf a.log
	expect_output $'a.log:alice\na.log:bob\na.log:alice'
}

@test "bfgrep: -r without FILE searches the working directory, names without ./" {
	make_tree
	cd logs
	grep -F -x -r -f ../list.txt | LC_ALL=C sort >../want
	bfgrep -r -f ../list.bf >../got
	LC_ALL=C sort ../got | cmp ../want -
	expect_file ../got 'a.log:alice\na.log:bob\na.log:alice\nold/b.log:bob\n'
	# standard input is not read then, so the filter may come from it
	run --separate-stderr bfgrep -r -c -f - <../list.bf
	expect_status 0
	expect_output $'Z.log:0\na.log:3\nold/b.log:1\nold/empty.log:0'
}

@test "bfgrep: -r reports a missing FILE and an unreadable directory in place, status 2" {
	make_tree
	run --separate-stderr bfgrep -r -f list.bf missing.log logs/old
	expect_status 2
	expect_stderr "bfgrep: missing.log: No such file or directory"
	expect_output "logs/old/b.log:bob"
	chmod 0 logs/old
	if [ -r logs/old ]; then
		chmod 755 logs/old
		skip "a directory without permissions is still readable here (root)"
	fi
	run --separate-stderr bfgrep -r -f list.bf logs
	chmod 755 logs/old
	expect_status 2
	expect_stderr "bfgrep: logs/old: Permission denied"
	expect_output $'logs/a.log:alice\nlogs/a.log:bob\nlogs/a.log:alice'
}

# ---------------------------------------------------------------- trouble

@test "bfgrep: a missing FILE is reported, the others are searched, and the exit is 2" {
	make_names
	run --separate-stderr bfgrep -f names.bf missing.txt in.txt
	expect_status 2
	expect_stderr "bfgrep: missing.txt: No such file or directory"
	expect_output $'in.txt:alice\nin.txt:bob\nin.txt:alice\nin.txt:carol'
}

@test "bfgrep: -c with a missing FILE counts the others and exits 2" {
	make_names
	run --separate-stderr bfgrep -c -f names.bf in.txt missing.txt
	expect_status 2
	expect_stderr "bfgrep: missing.txt: No such file or directory"
	expect_output in.txt:4
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
	expect_output $'in.txt:alice\nin.txt:bob\nin.txt:alice\nin.txt:carol'
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

@test "bfgrep: grep's per-FILE options work with a windowed filter too" {
	# a count window of 100 keys holds k0..k49: every one of them is within it
	seq 0 49 | sed 's/^/k/' | bfuniq --key "$KEY" -f w.bf --window 100keys >/dev/null
	put_lines a.txt k1 x k2
	put_lines b.txt y z
	run --separate-stderr bfgrep -n -f w.bf a.txt b.txt
	expect_status 0
	expect_output "a.txt:1:k1
a.txt:3:k2"
	run --separate-stderr bfgrep -c -f w.bf a.txt b.txt
	expect_output "a.txt:2
b.txt:0"
	run --separate-stderr bfgrep -L -f w.bf a.txt b.txt
	expect_output "b.txt"
	run --separate-stderr bfgrep -h -m 1 -f w.bf a.txt b.txt
	expect_output "k1"
}
