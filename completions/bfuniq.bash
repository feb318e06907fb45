# SPDX-License-Identifier: MIT
# bash completion for bfuniq(1): every option, the values of --layout,
# *.bf state files after -f/--state, ordinary files (the input, --key-file)
# elsewhere.
#
# Self-contained: it does not need the bash-completion package, and it
# copes with "--state=se" whether or not COMP_WORDBREAKS splits at "=".
# Options that take a number, a key, a field, a separator or a size get no
# suggestions (there is nothing sensible to guess). Install as
# .../bash-completion/completions/bfuniq, or source it from ~/.bashrc.

_bfuniq_options='--report --json -n --capacity -p --rate -f --state -d --repeated --once -k --field
-t --separator --header --csv --jsonl --bad-line --shard --shard-key -i --ignore-case -z --null-data --no-decompress -v --verbose --layout --key
--line-buffered --window --generations --refresh --time-field --bad-time --now
--no-wait --checkpoint --key-file -j --threads --max-memory --progress --no-progress -h --help -V --version'

# Append each line that the command "$@" prints to COMPREPLY as it is: no
# word splitting, no globbing, so any file name survives.
_bfuniq_add() {
	local line
	while IFS= read -r line; do
		COMPREPLY+=("$line")
	done < <("$@")
}

# State files (*.bf) and directories to descend into. A state that does
# not exist yet is created, so any name may be typed; only *.bf is offered.
_bfuniq_states() {
	_bfuniq_add compgen -f -X '!*.bf' -- "$1"
	_bfuniq_add compgen -d -X '*.bf' -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

_bfuniq_files() {
	_bfuniq_add compgen -f -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

# Complete the value of option $1 at word $2 into the empty COMPREPLY.
# Returns 1 if $1 takes no value.
_bfuniq_value() {
	case $1 in
	--report) _bfuniq_add compgen -W 'json' -- "$2" ;;
	--bad-line) _bfuniq_add compgen -W 'error skip' -- "$2" ;;
	--shard | --shard-key) ;;
	--layout) _bfuniq_add compgen -W 'blocked classic' -- "$2" ;;
	--bad-time) _bfuniq_add compgen -W 'error skip' -- "$2" ;;
	-f | --state) _bfuniq_states "$2" ;;
	--key-file) _bfuniq_files "$2" ;;
	-n | --capacity | -p | --rate | --key | -k | --field | -t | --separator | \
		-j | --threads | --max-memory | --window | --generations | --time-field | --now | --checkpoint) ;;
	*) return 1 ;;
	esac
	return 0
}

_bfuniq() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' i
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	# After "--" every word is an input file.
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			_bfuniq_files "$cur"
			return 0
		fi
	done

	# "--opt=val" split by COMP_WORDBREAKS: words "--opt" "=" "val".
	if [ "$cur" = = ]; then
		_bfuniq_value "$prev" '' && return 0
	elif [ "$prev" = = ] && [ "$COMP_CWORD" -gt 1 ]; then
		_bfuniq_value "${COMP_WORDS[COMP_CWORD - 2]}" "$cur" && return 0
	fi
	# "--opt=val" kept in one word: complete val, keep the prefix.
	case $cur in
	--*=*)
		if _bfuniq_value "${cur%%=*}" "${cur#*=}"; then
			COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
			return 0
		fi
		;;
	esac
	_bfuniq_value "$prev" "$cur" && return 0

	case $cur in
	-*) _bfuniq_add compgen -W "$_bfuniq_options" -- "$cur" ;;
	*) _bfuniq_files "$cur" ;;
	esac
	return 0
}

complete -F _bfuniq bfuniq
