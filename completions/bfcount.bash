# SPDX-License-Identifier: MIT
# bash completion for bfcount(1): every option; *.bf filters after
# -f/--filter, and as the operands once a -f, --union, --intersection or
# --jaccard is on the line (bfcount then counts filters); *.hll sketches
# after -s/--sketch and --like; ordinary files (the input stream, -o,
# --key-file) otherwise.
#
# Self-contained: it does not need the bash-completion package, and it
# copes with "--filter=sp" whether or not COMP_WORDBREAKS splits at "=".
# -j, -k, -t, --precision, --key and --max-memory get no suggestions (there
# is nothing sensible to guess).
# Install as .../bash-completion/completions/bfcount, or source it from
# ~/.bashrc.

_bfcount_options='--report --json -k --field -t --separator --header --csv --jsonl --bad-line --shard --shard-key -i --ignore-case -z --null-data --no-decompress
-f --filter --union --intersection --jaccard -o --output -s --sketch --add
--precision --key --like -v --verbose --key-file -j --threads --max-memory --progress
--no-progress -h --help -V --version'

# Append each line that the command "$@" prints to COMPREPLY as it is: no
# word splitting, no globbing, so any file name survives.
_bfcount_add() {
	local line
	while IFS= read -r line; do
		COMPREPLY+=("$line")
	done < <("$@")
}

# Filters (*.bf) and directories to descend into.
_bfcount_filters() {
	_bfcount_add compgen -f -X '!*.bf' -- "$1"
	_bfcount_add compgen -d -X '*.bf' -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

# Sketches (*.hll, as bfcount -o names them in the docs) and directories.
_bfcount_sketches() {
	_bfcount_add compgen -f -X '!*.hll' -- "$1"
	_bfcount_add compgen -d -X '*.hll' -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

_bfcount_files() {
	_bfcount_add compgen -f -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

# Complete the value of option $1 at word $2 into the empty COMPREPLY.
# Returns 1 if $1 takes no value.
_bfcount_value() {
	case $1 in
	--report) _bfcount_add compgen -W 'json' -- "$2" ;;
	--bad-line) _bfcount_add compgen -W 'error skip' -- "$2" ;;
	--shard | --shard-key) ;;
	-f | --filter) _bfcount_filters "$2" ;;
	-s | --sketch | --like) _bfcount_sketches "$2" ;;
	-o | --output | --key-file) _bfcount_files "$2" ;;
	-j | --threads | -k | --field | -t | --separator | --precision | --key | --max-memory) ;;
	*) return 1 ;;
	esac
	return 0
}

# Whether a -f, --union, --intersection or --jaccard is among the words
# before the current one: the operands are then filters, not input files.
_bfcount_filter_mode() {
	local i
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--) return 1 ;;
		-f | -f?* | --filter | --filter=* | --union | --intersection | --jaccard) return 0 ;;
		esac
	done
	return 1
}

# An operand: a filter in filter mode, an input file otherwise.
_bfcount_operand() {
	if _bfcount_filter_mode; then
		_bfcount_filters "$1"
	else
		_bfcount_files "$1"
	fi
}

_bfcount() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' i
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	# After "--" every word is an operand.
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			_bfcount_operand "$cur"
			return 0
		fi
	done

	# "--opt=val" split by COMP_WORDBREAKS: words "--opt" "=" "val".
	if [ "$cur" = = ]; then
		_bfcount_value "$prev" '' && return 0
	elif [ "$prev" = = ] && [ "$COMP_CWORD" -gt 1 ]; then
		_bfcount_value "${COMP_WORDS[COMP_CWORD - 2]}" "$cur" && return 0
	fi
	# "--opt=val" kept in one word: complete val, keep the prefix.
	case $cur in
	--*=*)
		if _bfcount_value "${cur%%=*}" "${cur#*=}"; then
			COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
			return 0
		fi
		;;
	esac
	_bfcount_value "$prev" "$cur" && return 0

	case $cur in
	-*) _bfcount_add compgen -W "$_bfcount_options" -- "$cur" ;;
	*) _bfcount_operand "$cur" ;;
	esac
	return 0
}

complete -F _bfcount bfcount
