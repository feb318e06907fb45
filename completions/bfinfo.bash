# SPDX-License-Identifier: MIT
# bash completion for bfinfo(1): its options, any file after --key-file,
# nothing after -j/--threads and --max-memory, and *.bf filters and *.hll sketches (with
# directories to descend into) for every other word, since every other
# argument is a filter or a sketch.
#
# Self-contained: it does not need the bash-completion package, and it
# copes with "--key-file=ke" whether or not COMP_WORDBREAKS splits at "=".
# Install as .../bash-completion/completions/bfinfo, or source it from
# ~/.bashrc.

_bfinfo_options='--report --brief --json --verify --key-file -j --threads --max-memory --progress --no-progress -h
--help -V --version'

# Append each line that the command "$@" prints to COMPREPLY as it is: no
# word splitting, no globbing, so any file name survives.
_bfinfo_add() {
	local line
	while IFS= read -r line; do
		COMPREPLY+=("$line")
	done < <("$@")
}

# Filters (*.bf), sketches (*.hll) and directories to descend into.
_bfinfo_filters() {
	_bfinfo_add compgen -f -X '!*.bf' -- "$1"
	_bfinfo_add compgen -f -X '!*.hll' -- "$1"
	_bfinfo_add compgen -d -X '*.bf' -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

_bfinfo_files() {
	_bfinfo_add compgen -f -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

# Complete the value of option $1 at word $2 into the empty COMPREPLY.
# Returns 1 if $1 takes no value.
_bfinfo_value() {
	case $1 in
	--report) _bfinfo_add compgen -W 'json' -- "$2" ;;
	--key-file) _bfinfo_files "$2" ;;
	-j | --threads | --max-memory) ;;
	*) return 1 ;;
	esac
	return 0
}

_bfinfo() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' i
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	# After "--" every word is a filter.
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			_bfinfo_filters "$cur"
			return 0
		fi
	done

	# "--opt=val" split by COMP_WORDBREAKS: words "--opt" "=" "val".
	if [ "$cur" = = ]; then
		_bfinfo_value "$prev" '' && return 0
	elif [ "$prev" = = ] && [ "$COMP_CWORD" -gt 1 ]; then
		_bfinfo_value "${COMP_WORDS[COMP_CWORD - 2]}" "$cur" && return 0
	fi
	# "--opt=val" kept in one word: complete val, keep the prefix.
	case $cur in
	--*=*)
		if _bfinfo_value "${cur%%=*}" "${cur#*=}"; then
			COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
			return 0
		fi
		;;
	esac
	_bfinfo_value "$prev" "$cur" && return 0

	case $cur in
	-*) _bfinfo_add compgen -W "$_bfinfo_options" -- "$cur" ;;
	*) _bfinfo_filters "$cur" ;;
	esac
	return 0
}

complete -F _bfinfo bfinfo
