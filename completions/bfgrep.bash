# SPDX-License-Identifier: MIT
# bash completion for bfgrep(1): every option, *.bf filters after
# -f/--filter, ordinary files (the input, --key-file) elsewhere.
#
# Self-contained: it does not need the bash-completion package, and it
# copes with "--filter=sp" whether or not COMP_WORDBREAKS splits at "=".
# -j, -k, -t, -m, --label and --max-memory get no suggestions (there is
# nothing sensible to guess).
# Install as .../bash-completion/completions/bfgrep, or source it from
# ~/.bashrc.

_bfgrep_options='-f --filter -v --invert-match -c --count -l
--files-with-matches -L --files-without-match -q --quiet --silent -w
--words --word-regexp -o --only-matching -n --line-number -H
--with-filename -h --no-filename -m --max-count -s --no-messages -Z --null
-r --recursive --label -k --field -t --separator --header --csv --jsonl --bad-line --shard --shard-key -z --null-data --no-decompress --line-buffered
--now --key-file -j --threads --max-memory --progress --no-progress --help -V --version'

# Append each line that the command "$@" prints to COMPREPLY as it is: no
# word splitting, no globbing, so any file name survives.
_bfgrep_add() {
	local line
	while IFS= read -r line; do
		COMPREPLY+=("$line")
	done < <("$@")
}

# Filters (*.bf) and directories to descend into.
_bfgrep_filters() {
	_bfgrep_add compgen -f -X '!*.bf' -- "$1"
	_bfgrep_add compgen -d -X '*.bf' -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

_bfgrep_files() {
	_bfgrep_add compgen -f -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

# Complete the value of option $1 at word $2 into the empty COMPREPLY.
# Returns 1 if $1 takes no value.
_bfgrep_value() {
	case $1 in
	--bad-line) _bfgrep_add compgen -W 'error skip' -- "$2" ;;
	--shard | --shard-key) ;;
	-f | --filter) _bfgrep_filters "$2" ;;
	--key-file) _bfgrep_files "$2" ;;
	-j | --threads | -k | --field | -t | --separator | -m | --max-count | --label | --max-memory | --now) ;;
	*) return 1 ;;
	esac
	return 0
}

_bfgrep() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' i
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	# After "--" every word is an input file.
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			_bfgrep_files "$cur"
			return 0
		fi
	done

	# "--opt=val" split by COMP_WORDBREAKS: words "--opt" "=" "val".
	if [ "$cur" = = ]; then
		_bfgrep_value "$prev" '' && return 0
	elif [ "$prev" = = ] && [ "$COMP_CWORD" -gt 1 ]; then
		_bfgrep_value "${COMP_WORDS[COMP_CWORD - 2]}" "$cur" && return 0
	fi
	# "--opt=val" kept in one word: complete val, keep the prefix.
	case $cur in
	--*=*)
		if _bfgrep_value "${cur%%=*}" "${cur#*=}"; then
			COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
			return 0
		fi
		;;
	esac
	_bfgrep_value "$prev" "$cur" && return 0

	case $cur in
	-*) _bfgrep_add compgen -W "$_bfgrep_options" -- "$cur" ;;
	*) _bfgrep_files "$cur" ;;
	esac
	return 0
}

complete -F _bfgrep bfgrep
