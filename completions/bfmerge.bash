# SPDX-License-Identifier: MIT
# bash completion for bfmerge(1): every option, any file after -o/--output
# (the result) and --key-file, nothing after -j/--threads and --max-memory, *.bf filters
# and *.hll sketches (and directories to reach them) for the FILTER
# arguments.
#
# Self-contained: it does not need the bash-completion package, and it
# copes with "--output=me" whether or not COMP_WORDBREAKS splits at "=".
# Install as .../bash-completion/completions/bfmerge, or source it from
# ~/.bashrc.

_bfmerge_options='-o --output --intersect -v --verbose --no-wait --key-file -j --threads --max-memory
--progress --no-progress -h --help -V --version'

# Append each line that the command "$@" prints to COMPREPLY as it is: no
# word splitting, no globbing, so any file name survives.
_bfmerge_add() {
	local line
	while IFS= read -r line; do
		COMPREPLY+=("$line")
	done < <("$@")
}

# Filters (*.bf), sketches (*.hll) and directories to descend into.
_bfmerge_filters() {
	_bfmerge_add compgen -f -X '!*.bf' -- "$1"
	_bfmerge_add compgen -f -X '!*.hll' -- "$1"
	_bfmerge_add compgen -d -X '*.bf' -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

_bfmerge_files() {
	_bfmerge_add compgen -f -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

# Complete the value of option $1 at word $2 into the empty COMPREPLY.
# Returns 1 if $1 takes no value.
_bfmerge_value() {
	case $1 in
	-o | --output | --key-file) _bfmerge_files "$2" ;;
	-j | --threads | --max-memory) ;;
	*) return 1 ;;
	esac
	return 0
}

_bfmerge() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' i
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	# After "--" every word is a FILTER.
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			_bfmerge_filters "$cur"
			return 0
		fi
	done

	# "--output=val" split by COMP_WORDBREAKS: words "--output" "=" "val".
	if [ "$cur" = = ]; then
		_bfmerge_value "$prev" '' && return 0
	elif [ "$prev" = = ] && [ "$COMP_CWORD" -gt 1 ]; then
		_bfmerge_value "${COMP_WORDS[COMP_CWORD - 2]}" "$cur" && return 0
	fi
	# "--output=val" kept in one word: complete val, keep the prefix.
	case $cur in
	--*=*)
		if _bfmerge_value "${cur%%=*}" "${cur#*=}"; then
			COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
			return 0
		fi
		;;
	esac
	_bfmerge_value "$prev" "$cur" && return 0

	case $cur in
	-*) _bfmerge_add compgen -W "$_bfmerge_options" -- "$cur" ;;
	*) _bfmerge_filters "$cur" ;;
	esac
	return 0
}

complete -F _bfmerge bfmerge
