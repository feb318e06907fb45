# SPDX-License-Identifier: MIT
# bash completion for bfsplit(1): every option; ordinary files (the input
# stream) otherwise. Self-contained (no bash-completion package needed),
# and it copes with "--bad-line=s" whether or not COMP_WORDBREAKS splits
# at "=". --bad-line offers error and skip; -N, -o (a pattern, not a
# file), --shard-key, -k, -t, -j and --max-memory get no suggestions.
# Install as .../bash-completion/completions/bfsplit, or source it from
# ~/.bashrc.

_bfsplit_options='-N --partitions -o --output --shard-key -k --field -t --separator --header --csv --jsonl
--bad-line -i --ignore-case -z --null-data --no-sync --no-decompress -j --threads --max-memory --progress
--no-progress -h --help -V --version'

# Append each line that the command "$@" prints to COMPREPLY as it is.
_bfsplit_add() {
	local line
	while IFS= read -r line; do
		COMPREPLY+=("$line")
	done < <("$@")
}

_bfsplit_files() {
	_bfsplit_add compgen -f -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

# Complete the value of option $1 at word $2; 1 if $1 takes no value.
_bfsplit_value() {
	case $1 in
	--bad-line) _bfsplit_add compgen -W 'error skip' -- "$2" ;;
	-N | --partitions | -o | --output | --shard-key | -k | --field | -t | --separator) ;;
	-j | --threads | --max-memory) ;;
	*) return 1 ;;
	esac
	return 0
}

_bfsplit() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' i
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	for ((i = 1; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			_bfsplit_files "$cur"
			return 0
		fi
	done
	# "--opt=val" split by COMP_WORDBREAKS: words "--opt" "=" "val".
	if [ "$cur" = = ]; then
		_bfsplit_value "$prev" '' && return 0
	elif [ "$prev" = = ] && [ "$COMP_CWORD" -gt 1 ]; then
		_bfsplit_value "${COMP_WORDS[COMP_CWORD - 2]}" "$cur" && return 0
	fi
	# "--opt=val" kept in one word: complete val, keep the prefix.
	case $cur in
	--*=*)
		if _bfsplit_value "${cur%%=*}" "${cur#*=}"; then
			COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
			return 0
		fi
		;;
	esac
	_bfsplit_value "$prev" "$cur" && return 0

	case $cur in
	-*) _bfsplit_add compgen -W "$_bfsplit_options" -- "$cur" ;;
	*) _bfsplit_files "$cur" ;;
	esac
	return 0
}

complete -F _bfsplit bfsplit
