# SPDX-License-Identifier: MIT
# bash completion for bftop(1): every option; *.top summaries after
# -s/--summary; ordinary files (the input stream, -o)
# otherwise. Self-contained (no bash-completion package needed), and it
# copes with "--summary=x" whether or not COMP_WORDBREAKS splits at "=".
# --bad-time and --bad-line offer error and skip; -n, -e, --confidence, -j, -k, -t,
# --window, --generations, --time-field, --now and --max-memory get no
# suggestions.
# Install as .../bash-completion/completions/bftop, or source it from
# ~/.bashrc.

_bftop_options='--report -n --top -e --error --confidence -v --bounds --json -q --query
-o --output -s --summary -k --field -t --separator --header --csv --jsonl --bad-line --shard --shard-key -i --ignore-case -z --null-data --no-decompress
-w --words --window --generations --time-field --bad-time --now
-j --threads --max-memory --progress --no-progress
-h --help -V --version'

# Append each line that the command "$@" prints to COMPREPLY as it is.
_bftop_add() {
	local line
	while IFS= read -r line; do
		COMPREPLY+=("$line")
	done < <("$@")
}

# Summaries (*.top, as the docs name them) and directories.
_bftop_summaries() {
	_bftop_add compgen -f -X '!*.top' -- "$1"
	_bftop_add compgen -d -X '*.top' -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

_bftop_files() {
	_bftop_add compgen -f -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

# Complete the value of option $1 at word $2; 1 if $1 takes no value.
_bftop_value() {
	case $1 in
	--report) _bftop_add compgen -W 'json' -- "$2" ;;
	-s | --summary) _bftop_summaries "$2" ;;
	-o | --output) _bftop_files "$2" ;;
	--bad-time | --bad-line) _bftop_add compgen -W 'error skip' -- "$2" ;;
	-n | --top | -e | --error | --confidence | -j | --threads | -k | --field | -t | --separator | --max-memory) ;;
	--window | --generations | --time-field | --now | --shard | --shard-key) ;;
	*) return 1 ;;
	esac
	return 0
}

_bftop() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' i
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	for ((i = 1; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			_bftop_files "$cur"
			return 0
		fi
	done
	# "--opt=val" split by COMP_WORDBREAKS: words "--opt" "=" "val".
	if [ "$cur" = = ]; then
		_bftop_value "$prev" '' && return 0
	elif [ "$prev" = = ] && [ "$COMP_CWORD" -gt 1 ]; then
		_bftop_value "${COMP_WORDS[COMP_CWORD - 2]}" "$cur" && return 0
	fi
	# "--opt=val" kept in one word: complete val, keep the prefix.
	case $cur in
	--*=*)
		if _bftop_value "${cur%%=*}" "${cur#*=}"; then
			COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
			return 0
		fi
		;;
	esac
	_bftop_value "$prev" "$cur" && return 0

	case $cur in
	-*) _bftop_add compgen -W "$_bftop_options" -- "$cur" ;;
	*) _bftop_files "$cur" ;;
	esac
	return 0
}

complete -F _bftop bftop
