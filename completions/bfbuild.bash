# SPDX-License-Identifier: MIT
# bash completion for bfbuild(1): every option, the values of --layout,
# --hash and --format, *.bf filters after -f/--filter/--like, ordinary
# files elsewhere (-o, --key-file and the inputs).
#
# Self-contained: it does not need the bash-completion package, and it
# copes with "--layout=bl" whether or not COMP_WORDBREAKS splits at "=".
# Options that take a number, a key or a size get no suggestions (there is
# nothing sensible to guess). Install as
# .../bash-completion/completions/bfbuild, or source it from ~/.bashrc.

_bfbuild_options='--report --json -n --capacity -p --rate -o --output -f --filter --remove --like
--layout -m --bits -K --hashes --key --hash --format -k --field -t --separator --header --csv --jsonl --bad-line --shard --shard-key
-i --ignore-case -z --null-data --no-decompress -v --verbose --window --generations --refresh
--time-field --bad-time --now --no-wait --checkpoint
--key-file -j --threads --max-memory
--progress --no-progress -h --help -V --version'

# Append each line that the command "$@" prints to COMPREPLY as it is: no
# word splitting, no globbing, so any file name survives.
_bfbuild_add() {
	local line
	while IFS= read -r line; do
		COMPREPLY+=("$line")
	done < <("$@")
}

# Filters (*.bf) and directories to descend into.
_bfbuild_filters() {
	_bfbuild_add compgen -f -X '!*.bf' -- "$1"
	_bfbuild_add compgen -d -X '*.bf' -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

_bfbuild_files() {
	_bfbuild_add compgen -f -- "$1"
	compopt -o filenames 2>/dev/null
	return 0
}

# Complete the value of option $1 at word $2 into the empty COMPREPLY.
# Returns 1 if $1 takes no value.
_bfbuild_value() {
	case $1 in
	--report) _bfbuild_add compgen -W 'json' -- "$2" ;;
	--bad-line) _bfbuild_add compgen -W 'error skip' -- "$2" ;;
	--shard | --shard-key) ;;
	--layout) _bfbuild_add compgen -W 'blocked classic counting' -- "$2" ;;
	--hash) _bfbuild_add compgen -W 'siphash13 siphash24' -- "$2" ;;
	--format) _bfbuild_add compgen -W 'bftools dcso dcso-gzip' -- "$2" ;;
	-f | --filter | --like) _bfbuild_filters "$2" ;;
	-o | --output | --key-file) _bfbuild_files "$2" ;;
	-n | --capacity | -p | --rate | -m | --bits | -K | --hashes | --key | \
		-j | --threads | -k | --field | -t | --separator | --max-memory | --window | --generations | \
		--time-field | --now | --checkpoint) ;;
	--bad-time) _bfbuild_add compgen -W 'error skip' -- "$2" ;;
	*) return 1 ;;
	esac
	return 0
}

_bfbuild() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' i
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	# After "--" every word is an input file.
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			_bfbuild_files "$cur"
			return 0
		fi
	done

	# "--opt=val" split by COMP_WORDBREAKS: words "--opt" "=" "val".
	if [ "$cur" = = ]; then
		_bfbuild_value "$prev" '' && return 0
	elif [ "$prev" = = ] && [ "$COMP_CWORD" -gt 1 ]; then
		_bfbuild_value "${COMP_WORDS[COMP_CWORD - 2]}" "$cur" && return 0
	fi
	# "--opt=val" kept in one word: complete val, keep the prefix.
	case $cur in
	--*=*)
		if _bfbuild_value "${cur%%=*}" "${cur#*=}"; then
			COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
			return 0
		fi
		;;
	esac
	_bfbuild_value "$prev" "$cur" && return 0

	case $cur in
	-*) _bfbuild_add compgen -W "$_bfbuild_options" -- "$cur" ;;
	*) _bfbuild_files "$cur" ;;
	esac
	return 0
}

complete -F _bfbuild bfbuild
