#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# completions.bats - the shell completions in completions/ offer what the
# programs accept: every option their --help lists (and nothing else), the
# values of --layout and --hash, only *.bf files where a filter is wanted.
#
# Every test runs in a fresh $BATS_TEST_TMPDIR holding a.bf, b.bf and
# c.txt. bash is always checked, by calling the completion function with
# COMP_WORDS/COMP_CWORD set as bash itself would. zsh and fish are checked
# when installed (the real completion systems: zsh through zpty, fish
# through complete -C), and skipped with a message otherwise. The --help
# comparisons are skipped, saying so, until the programs are built.

setup() {
	TOP="$BATS_TEST_DIRNAME/.."
	BIN="${BFTOOLS_BIN:-$BATS_TEST_DIRNAME/../cmd}"
	cd "$BATS_TEST_TMPDIR" || return 1
	touch a.bf b.bf c.txt
}

# bash_complete PROG WORD... - the candidates bash's completion for PROG
# offers for the last WORD of "PROG WORD...", sorted, one per line.
bash_complete() {
	bash --norc --noprofile -c '
		source "$1" || exit 3
		fn=$2
		shift 2
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" || exit 4
		if [ "${#COMPREPLY[@]}" -gt 0 ]; then printf "%s\n" "${COMPREPLY[@]}"; fi
	' bash "$TOP/completions/$1.bash" "_$1" "$@" | LC_ALL=C sort
}

# help_options PROG - every option PROG --help lists, sorted, one per line.
help_options() {
	"$BIN/$1" --help | grep -oE -- '(^|[ ,[])--?[A-Za-z][A-Za-z0-9-]*' |
		sed 's/^[ ,[]//' | LC_ALL=C sort -u
}

need_program() {
	[ -x "$BIN/$1" ] || skip "$BIN/$1 is not built yet (run make): cannot compare with its --help"
}

need_shell() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed: its completion is not checked"
}

# same_options PROG LIST - fail, naming the differences, unless LIST (the
# options a completion offers) is exactly what PROG --help lists.
same_options() {
	help_options "$1" >help.txt
	printf '%s\n' "$2" | LC_ALL=C sort -u >offered.txt
	missing=$(LC_ALL=C comm -23 help.txt offered.txt)
	extra=$(LC_ALL=C comm -13 help.txt offered.txt)
	[ -z "$missing" ] || echo "in $1 --help but not completed: $missing"
	[ -z "$extra" ] || echo "completed but not in $1 --help: $extra"
	[ -s help.txt ] && [ -z "$missing" ] && [ -z "$extra" ]
}

# zsh_complete LINE - the candidates zsh's completion system offers at the
# end of LINE, sorted, one per line. A zsh on a pseudo-terminal (zpty)
# loads compinit with completions/ first on $fpath; compadd is wrapped to
# print every match it is given; LINE is typed followed by a TAB.
zsh_complete() {
	cat >zcomp.zsh <<'EOF'
zmodload zsh/zpty || exit 3
out=""
wait_for() {	# read the pty until $1 shows up (5 s at most)
  integer n=0
  local chunk
  while (( n++ < 100 )); do
    while zpty -r -t z chunk; do out+=${chunk//$'\r'/}; done
    [[ $out == *$1* ]] && return 0
    sleep 0.05
  done
  return 1
}
zpty z zsh -f -i
zpty -w z "PROMPT='>'"
zpty -w z "fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'compadd() { local -a hits; builtin compadd -A hits "$@"; local h; for h in $hits; do print -r -- "<<$h>>"; done; builtin compadd "$@"; }'
zpty -w z 'print -r -- "<<START>>"'
wait_for $'\n<<START>>' || { print -u2 "zsh did not start"; exit 3; }
zpty -n -w z "$2"$'\t'
zpty -w z $'\C-u'
zpty -w z 'print -r -- "<<END>>"'
wait_for $'\n<<END>>' || { print -u2 "zsh did not finish completing"; exit 3; }
zpty -d z
print -r -- "$out" | sed -n '/^<<START>>$/,/^<<END>>$/p' | grep -o '<<[^<>]*>>' |
  grep -v '^<<START>>$' | grep -v '^<<END>>$' | sed 's/^<<//; s/>>$//'
EOF
	HOME="$BATS_TEST_TMPDIR" zsh -f zcomp.zsh "$TOP/completions" "$1" | LC_ALL=C sort -u
}

# fish_complete LINE - the candidates fish offers for LINE, sorted.
fish_complete() {
	HOME="$BATS_TEST_TMPDIR" fish --no-config -c "
		for f in '$TOP'/completions/*.fish; source \$f; end
		complete -C '$1'" | cut -f1 | LC_ALL=C sort
}

# --- bash ---------------------------------------------------------------

@test "completions: bash: both files register a function with complete -F" {
	run bash --norc --noprofile -c "source '$TOP/completions/bfbuild.bash' &&
		source '$TOP/completions/bfgrep.bash' && complete -p bfbuild bfgrep"
	[ "$status" -eq 0 ]
	[ "$output" = "complete -F _bfbuild bfbuild
complete -F _bfgrep bfgrep" ]
}

@test "completions: bash: bfbuild --lay completes to --layout" {
	run bash_complete bfbuild --lay
	[ "$status" -eq 0 ]
	[ "$output" = "--layout" ]
}

@test "completions: bash: bfbuild --layout offers blocked, classic and counting" {
	run bash_complete bfbuild --layout ''
	[ "$output" = "blocked
classic
counting" ]
	# "--layout=" split at "=" by COMP_WORDBREAKS, as bash does by default
	run bash_complete bfbuild --layout = b
	[ "$output" = "blocked" ]
	# "--layout=cl" kept as one word: the prefix is kept
	run bash_complete bfbuild --layout=cl
	[ "$output" = "--layout=classic" ]
	run bash_complete bfbuild --layout=co
	[ "$output" = "--layout=counting" ]
}

@test "completions: bash: bfbuild --hash offers siphash13 and siphash24" {
	run bash_complete bfbuild --hash ''
	[ "$output" = "siphash13
siphash24" ]
}

@test "completions: bash: bfgrep -f offers a.bf and b.bf but not c.txt" {
	run bash_complete bfgrep -f ''
	[ "$status" -eq 0 ]
	[ "$output" = "a.bf
b.bf" ]
	run bash_complete bfgrep --filter = ''
	[ "$output" = "a.bf
b.bf" ]
}

@test "completions: bash: bfbuild -f, --filter and --like offer only .bf files" {
	for opt in -f --filter --like; do
		run bash_complete bfbuild "$opt" ''
		[ "$output" = "a.bf
b.bf" ]
	done
}

@test "completions: bash: -o and the input files complete to any file" {
	run bash_complete bfbuild -o ''
	[ "$output" = "a.bf
b.bf
c.txt" ]
	run bash_complete bfgrep -f a.bf c
	[ "$output" = "c.txt" ]
}

@test "completions: bash: options taking a number or a key offer nothing" {
	for opt in -n --capacity -p --rate -m --bits -K --hashes --key -k -t; do
		run bash_complete bfbuild "$opt" ''
		[ "$status" -eq 0 ]
		[ -z "$output" ]
	done
}

@test "completions: bash: every option in bfbuild --help is completed, and no other" {
	need_program bfbuild
	run bash_complete bfbuild -
	[ "$status" -eq 0 ]
	run same_options bfbuild "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "completions: bash: every option in bfgrep --help is completed, and no other" {
	need_program bfgrep
	run bash_complete bfgrep -
	[ "$status" -eq 0 ]
	run same_options bfgrep "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

# --- zsh ----------------------------------------------------------------

@test "completions: zsh: _bfbuild and _bfgrep are #compdef files that parse" {
	need_shell zsh
	[ "$(head -n 1 "$TOP/completions/_bfbuild")" = "#compdef bfbuild" ]
	[ "$(head -n 1 "$TOP/completions/_bfgrep")" = "#compdef bfgrep" ]
	zsh -n "$TOP/completions/_bfbuild"
	zsh -n "$TOP/completions/_bfgrep"
}

@test "completions: zsh: bfbuild --lay completes to --layout" {
	need_shell zsh
	run zsh_complete 'bfbuild --lay'
	[ "$status" -eq 0 ]
	[ "$output" = "--layout" ]
}

@test "completions: zsh: bfbuild --layout offers blocked, classic and counting" {
	need_shell zsh
	run zsh_complete 'bfbuild --layout '
	[ "$output" = "blocked
classic
counting" ]
}

@test "completions: zsh: bfgrep -f offers a.bf and b.bf but not c.txt" {
	need_shell zsh
	run zsh_complete 'bfgrep -f '
	[ "$output" = "a.bf
b.bf" ]
}

@test "completions: zsh: every option in bfbuild --help is completed, and no other" {
	need_shell zsh
	need_program bfbuild
	run zsh_complete 'bfbuild -'
	[ "$status" -eq 0 ]
	run same_options bfbuild "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "completions: zsh: every option in bfgrep --help is completed, and no other" {
	need_shell zsh
	need_program bfgrep
	run zsh_complete 'bfgrep -'
	[ "$status" -eq 0 ]
	run same_options bfgrep "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

# --- fish ---------------------------------------------------------------

@test "completions: fish: bfbuild --lay completes to --layout" {
	need_shell fish
	run fish_complete 'bfbuild --lay'
	[ "$status" -eq 0 ]
	[ "$output" = "--layout" ]
}

@test "completions: fish: bfbuild --layout offers blocked, classic and counting" {
	need_shell fish
	run fish_complete 'bfbuild --layout '
	[ "$output" = "blocked
classic
counting" ]
}

@test "completions: fish: bfgrep -f offers a.bf and b.bf but not c.txt" {
	need_shell fish
	run fish_complete 'bfgrep -f '
	[ "$output" = "a.bf
b.bf" ]
}

@test "completions: fish: every option in bfbuild --help is completed, and no other" {
	need_shell fish
	need_program bfbuild
	run fish_complete 'bfbuild -'
	[ "$status" -eq 0 ]
	run same_options bfbuild "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "completions: fish: every option in bfgrep --help is completed, and no other" {
	need_shell fish
	need_program bfgrep
	run fish_complete 'bfgrep -'
	[ "$status" -eq 0 ]
	run same_options bfgrep "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

# --- bfcount --------------------------------------------------------------

@test "completions: bash: bfcount registers _bfcount with complete -F" {
	run bash --norc --noprofile -c "source '$TOP/completions/bfcount.bash' && complete -p bfcount"
	[ "$output" = "complete -F _bfcount bfcount" ]
}

@test "completions: bash: bfcount operands are any file, or filters once -f or a set operation is given" {
	run bash_complete bfcount ''
	[ "$output" = "a.bf
b.bf
c.txt" ]
	run bash_complete bfcount -f a.bf ''
	[ "$output" = "a.bf
b.bf" ]
	run bash_complete bfcount --filter=a.bf ''
	[ "$output" = "a.bf
b.bf" ]
	run bash_complete bfcount --union -fa.bf ''
	[ "$output" = "a.bf
b.bf" ]
	# --union, --intersection and --jaccard take filters as operands too
	run bash_complete bfcount --jaccard ''
	[ "$output" = "a.bf
b.bf" ]
	run bash_complete bfcount --union a.bf ''
	[ "$output" = "a.bf
b.bf" ]
}

@test "completions: bash: bfcount -f and --filter offer only .bf files" {
	run bash_complete bfcount -f ''
	[ "$output" = "a.bf
b.bf" ]
	run bash_complete bfcount --filter = ''
	[ "$output" = "a.bf
b.bf" ]
	run bash_complete bfcount --filter=a
	[ "$output" = "--filter=a.bf" ]
}

@test "completions: bash: bfcount -k and -t offer nothing" {
	for opt in -k --field -t --separator; do
		run bash_complete bfcount "$opt" ''
		[ "$status" -eq 0 ]
		[ -z "$output" ]
	done
}

@test "completions: bash: every option in bfcount --help is completed, and no other" {
	need_program bfcount
	run bash_complete bfcount -
	run same_options bfcount "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "completions: zsh: _bfcount is a #compdef file that parses" {
	need_shell zsh
	[ "$(head -n 1 "$TOP/completions/_bfcount")" = "#compdef bfcount" ]
	zsh -n "$TOP/completions/_bfcount"
}

@test "completions: zsh: bfcount operands are any file, or filters once -f or a set operation is given" {
	need_shell zsh
	# (zsh_complete leaves its own zcomp.zsh in the directory)
	run zsh_complete 'bfcount '
	[ "$output" = "a.bf
b.bf
c.txt
zcomp.zsh" ]
	run zsh_complete 'bfcount -f a.bf '
	[ "$output" = "a.bf
b.bf" ]
	run zsh_complete 'bfcount -f '
	[ "$output" = "a.bf
b.bf" ]
	run zsh_complete 'bfcount --union a.bf '
	[ "$output" = "a.bf
b.bf" ]
}

@test "completions: zsh: every option in bfcount --help is completed, and no other" {
	need_shell zsh
	need_program bfcount
	run zsh_complete 'bfcount -'
	run same_options bfcount "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "completions: zsh: bfcount -f a.bf - offers no key options; --union excludes --jaccard" {
	need_shell zsh
	run zsh_complete 'bfcount -f a.bf --'
	echo "$output"
	[[ $output != *--field* ]]
	[[ $output == *--union* ]]
	run zsh_complete 'bfcount --union -f a.bf --'
	echo "$output"
	[[ $output != *--jaccard* ]]
}

@test "completions: fish: bfcount operands are any file, or filters once -f or a set operation is given" {
	need_shell fish
	run fish_complete 'bfcount '
	[ "$output" = "a.bf
b.bf
c.txt" ]
	run fish_complete 'bfcount -f a.bf '
	[ "$output" = "a.bf
b.bf" ]
	run fish_complete 'bfcount -f '
	[ "$output" = "a.bf
b.bf" ]
	run fish_complete 'bfcount --intersection a.bf '
	[ "$output" = "a.bf
b.bf" ]
}

@test "completions: fish: every option in bfcount --help is completed, and no other" {
	need_shell fish
	need_program bfcount
	run fish_complete 'bfcount -'
	run same_options bfcount "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

# --- bfinfo ---------------------------------------------------------------

@test "completions: bash: bfinfo registers _bfinfo with complete -F" {
	run bash --norc --noprofile -c "source '$TOP/completions/bfinfo.bash' && complete -p bfinfo"
	[ "$status" -eq 0 ]
	[ "$output" = "complete -F _bfinfo bfinfo" ]
}

@test "completions: bash: bfinfo offers only .bf files, also after options and --" {
	run bash_complete bfinfo ''
	[ "$output" = "a.bf
b.bf" ]
	run bash_complete bfinfo --json a.bf ''
	[ "$output" = "a.bf
b.bf" ]
	run bash_complete bfinfo -- ''
	[ "$output" = "a.bf
b.bf" ]
}

@test "completions: bash: every option in bfinfo --help is completed, and no other" {
	need_program bfinfo
	run bash_complete bfinfo -
	[ "$status" -eq 0 ]
	run same_options bfinfo "$output"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "completions: zsh: _bfinfo is a #compdef file that parses" {
	need_shell zsh
	[ "$(head -n 1 "$TOP/completions/_bfinfo")" = "#compdef bfinfo" ]
	zsh -n "$TOP/completions/_bfinfo"
}

@test "completions: zsh: bfinfo offers only .bf files, and --json for --j" {
	need_shell zsh
	run zsh_complete 'bfinfo '
	[ "$output" = "a.bf
b.bf" ]
	run zsh_complete 'bfinfo --j'
	[ "$output" = "--json" ]
}

@test "completions: zsh: every option in bfinfo --help is completed, and no other" {
	need_shell zsh
	need_program bfinfo
	run zsh_complete 'bfinfo -'
	run same_options bfinfo "$output"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "completions: fish: bfinfo offers only .bf files" {
	need_shell fish
	run fish_complete 'bfinfo '
	[ "$output" = "a.bf
b.bf" ]
}

@test "completions: fish: every option in bfinfo --help is completed, and no other" {
	need_shell fish
	need_program bfinfo
	run fish_complete 'bfinfo -'
	run same_options bfinfo "$output"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

# --- bfuniq ---------------------------------------------------------------

@test "completions: bash: bfuniq registers _bfuniq with complete -F" {
	run bash --norc --noprofile -c "source '$TOP/completions/bfuniq.bash' && complete -p bfuniq"
	[ "$output" = "complete -F _bfuniq bfuniq" ]
}

@test "completions: bash: bfuniq -f and --state offer only .bf files" {
	run bash_complete bfuniq -f ''
	[ "$status" -eq 0 ]
	[ "$output" = "a.bf
b.bf" ]
	run bash_complete bfuniq --state = ''
	[ "$output" = "a.bf
b.bf" ]
}

@test "completions: bash: bfuniq --layout offers blocked and classic" {
	run bash_complete bfuniq --layout ''
	[ "$output" = "blocked
classic" ]
}

@test "completions: bash: every option in bfuniq --help is completed, and no other" {
	need_program bfuniq
	run bash_complete bfuniq -
	[ "$status" -eq 0 ]
	run same_options bfuniq "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "completions: zsh: every option in bfuniq --help is completed, and no other" {
	need_shell zsh
	need_program bfuniq
	run zsh_complete 'bfuniq -'
	[ "$status" -eq 0 ]
	run same_options bfuniq "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "completions: fish: bfuniq -f offers a.bf and b.bf but not c.txt" {
	need_shell fish
	run fish_complete 'bfuniq -f '
	[ "$output" = "a.bf
b.bf" ]
}

@test "completions: fish: every option in bfuniq --help is completed, and no other" {
	need_shell fish
	need_program bfuniq
	run fish_complete 'bfuniq -'
	[ "$status" -eq 0 ]
	run same_options bfuniq "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

# --- sketches (bfcount -o, -s; bfmerge and bfinfo read them) ---------------

@test "completions: bash: bfcount -s, --sketch and --like offer only .hll files; -o any file" {
	touch d.hll e.hll
	for opt in -s --sketch --like; do
		run bash_complete bfcount "$opt" ''
		[ "$output" = "d.hll
e.hll" ]
	done
	run bash_complete bfcount --sketch=d
	[ "$output" = "--sketch=d.hll" ]
	run bash_complete bfcount -o ''
	[ "$output" = "a.bf
b.bf
c.txt
d.hll
e.hll" ]
	for opt in --precision --key; do
		run bash_complete bfcount "$opt" ''
		[ -z "$output" ]
	done
}

@test "completions: bash: bfinfo and bfmerge offer .bf filters and .hll sketches" {
	touch d.hll
	for prog in bfinfo bfmerge; do
		run bash_complete "$prog" ''
		[ "$output" = "a.bf
b.bf
d.hll" ]
	done
}

@test "completions: zsh: bfcount -s offers only .hll files" {
	need_shell zsh
	touch d.hll
	run zsh_complete 'bfcount -s '
	[ "$output" = "d.hll" ]
	run zsh_complete 'bfcount --like '
	[ "$output" = "d.hll" ]
}

@test "completions: zsh: bfcount -s a.hll - offers --add but not --key, --like or --precision" {
	need_shell zsh
	run zsh_complete 'bfcount -s a.hll --'
	echo "$output"
	[[ $output == *--add* ]]
	[[ $output != *--like* && $output != *--precision* ]]
	[[ $output != *$'\n'--key$'\n'* ]]
}

@test "completions: fish: bfcount -s offers only .hll files" {
	need_shell fish
	touch d.hll
	run fish_complete 'bfcount -s '
	[ "$output" = "d.hll" ]
}

@test "completions: zsh: bfinfo and bfmerge offer .bf filters and .hll sketches" {
	need_shell zsh
	touch d.hll
	for prog in bfinfo bfmerge; do
		run zsh_complete "$prog "
		[ "$output" = "a.bf
b.bf
d.hll" ]
	done
}

@test "completions: fish: bfinfo and bfmerge offer .bf filters and .hll sketches" {
	need_shell fish
	touch d.hll
	for prog in bfinfo bfmerge; do
		run fish_complete "$prog "
		[ "$output" = "a.bf
b.bf
d.hll" ]
	done
}

# --- bftop ----------------------------------------------------------------

@test "completions: bash: bftop registers _bftop with complete -F" {
	run bash --norc --noprofile -c "source '$TOP/completions/bftop.bash' && complete -p bftop"
	[ "$output" = "complete -F _bftop bftop" ]
}

@test "completions: bash: bftop -s offers only .top summaries, operands any file" {
	touch d.top
	run bash_complete bftop -s ''
	[ "$output" = "d.top" ]
	run bash_complete bftop --summary=d
	[ "$output" = "--summary=d.top" ]
	run bash_complete bftop ''
	[ "$output" = "a.bf
b.bf
c.txt
d.top" ]
}

@test "completions: bash: every option in bftop --help is completed, and no other" {
	need_program bftop
	run bash_complete bftop -
	run same_options bftop "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "completions: zsh: _bftop is a #compdef file that parses" {
	need_shell zsh
	[ "$(head -n 1 "$TOP/completions/_bftop")" = "#compdef bftop" ]
	zsh -n "$TOP/completions/_bftop"
}

@test "completions: zsh: every option in bftop --help is completed, and no other" {
	need_shell zsh
	need_program bftop
	run zsh_complete 'bftop -'
	run same_options bftop "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "completions: zsh: bftop -s offers only .top summaries" {
	need_shell zsh
	touch d.top
	run zsh_complete 'bftop -s '
	[ "$output" = "d.top" ]
}

@test "completions: fish: every option in bftop --help is completed, and no other" {
	need_shell fish
	need_program bftop
	run fish_complete 'bftop -'
	run same_options bftop "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "completions: fish: bftop -s offers only .top summaries" {
	need_shell fish
	touch d.top
	run fish_complete 'bftop -s '
	[ "$output" = "d.top" ]
}

@test "completions: bash: bftop --bad-time offers error and skip" {
	run bash_complete bftop --bad-time ''
	[ "$output" = "error
skip" ]
}

@test "completions: bash: bfsplit registers _bfsplit with complete -F" {
	run bash --norc --noprofile -c "source '$TOP/completions/bfsplit.bash' && complete -p bfsplit"
	[ "$output" = "complete -F _bfsplit bfsplit" ]
}

@test "completions: bash: bfsplit offers nothing for -N, -o and --shard-key, files for operands" {
	run bash_complete bfsplit -N ''
	[ "$output" = "" ]
	run bash_complete bfsplit -o ''
	[ "$output" = "" ]
	run bash_complete bfsplit --shard-key ''
	[ "$output" = "" ]
	run bash_complete bfsplit --bad-line ''
	[ "$output" = "error
skip" ]
	run bash_complete bfsplit ''
	[ "$output" = "a.bf
b.bf
c.txt" ]
}

@test "completions: bash: every option in bfsplit --help is completed, and no other" {
	need_program bfsplit
	run bash_complete bfsplit -
	run same_options bfsplit "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "completions: zsh: _bfsplit is a #compdef file that parses" {
	need_shell zsh
	[ "$(head -n 1 "$TOP/completions/_bfsplit")" = "#compdef bfsplit" ]
	zsh -n "$TOP/completions/_bfsplit"
}

@test "completions: zsh: every option in bfsplit --help is completed, and no other" {
	need_shell zsh
	need_program bfsplit
	run zsh_complete 'bfsplit -'
	run same_options bfsplit "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "completions: fish: every option in bfsplit --help is completed, and no other" {
	need_shell fish
	need_program bfsplit
	run fish_complete 'bfsplit -'
	run same_options bfsplit "$output"
	echo "$output"
	[ "$status" -eq 0 ]
}
