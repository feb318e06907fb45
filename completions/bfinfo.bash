# SPDX-License-Identifier: MIT
# bash completion for bfinfo(1): its options, and *.bf filters (with
# directories to descend into) for every other word, since every argument
# that is not an option is a filter.
#
# Self-contained: it does not need the bash-completion package. Install as
# .../bash-completion/completions/bfinfo, or source it from ~/.bashrc.

_bfinfo_options='--json -h --help -V --version'

# Append each line that the command "$@" prints to COMPREPLY as it is: no
# word splitting, no globbing, so any file name survives.
_bfinfo_add() {
	local line
	while IFS= read -r line; do
		COMPREPLY+=("$line")
	done < <("$@")
}

# Filters (*.bf) and directories to descend into.
_bfinfo_filters() {
	_bfinfo_add compgen -f -X '!*.bf' -- "$1"
	_bfinfo_add compgen -d -X '*.bf' -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

_bfinfo() {
	local cur=${COMP_WORDS[COMP_CWORD]} i
	COMPREPLY=()

	# After "--" every word is a filter.
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			_bfinfo_filters "$cur"
			return 0
		fi
	done
	case $cur in
	-*) _bfinfo_add compgen -W "$_bfinfo_options" -- "$cur" ;;
	*) _bfinfo_filters "$cur" ;;
	esac
	return 0
}

complete -F _bfinfo bfinfo
