# SPDX-License-Identifier: MIT
# fish completion for bftop(1): every option with its description; *.top
# summaries after -s/--summary; ordinary files (fish's default) for the
# input stream and -o (--key-file is refused: bftop has its own key). -e and --confidence are offered only
# without -s (a loaded summary is sized already).
# Install in ~/.config/fish/completions/ or a vendor completions directory.

# Summaries (*.top) and directories to descend into.
function __bftop_summaries
    set -l token (commandline -ct | string replace -r -- '^--[a-z-]+=' '')
    for f in $token*.top
        test -f $f; and echo $f
    end
    for d in $token*/
        echo $d
    end
end

complete -c bftop -s n -l top -x -d 'Print at most N keys, the most frequent (0: all)'
complete -c bftop -n 'not __fish_contains_opt -s s summary' -s e -l error -x -d 'Additive error, a fraction of the stream'
complete -c bftop -n 'not __fish_contains_opt -s s summary' -l confidence -x -d 'Probability of the count-min bound'
complete -c bftop -s v -l bounds -d 'Also the keys that may be frequent: lower and upper bounds, + or ?, the key'
complete -c bftop -l json -d 'Print a JSON array of {key, count, lower, upper, guaranteed}'
complete -c bftop -s q -l query -d "Print each input key's count or range (needs -s)"
complete -c bftop -s o -l output -r -F -d 'Save the summary to SUMMARY, atomically'
complete -c bftop -s s -l summary -x -a '(__bftop_summaries)' -d 'Start from saved summaries (repeatable: merged)'
complete -c bftop -s k -l field -x -d 'Key on fields LIST of each line'
complete -c bftop -s t -l separator -x -d 'Fields are separated by C'
complete -c bftop -l header -d 'The first line of each input is a header, not a key'
complete -c bftop -l csv -d 'The input is CSV (RFC 4180): quoted fields, keys are values'
complete -c bftop -l jsonl -d 'Each line is JSON (JSON Lines): -k takes jq paths'
complete -c bftop -l bad-line -x -a 'error skip' -d 'What to do with a line that is not JSON'
complete -c bftop -s i -l ignore-case -d 'Fold ASCII case of keys'
complete -c bftop -s z -l null-data -d 'Records end with NUL, not newline'
complete -c bftop -l no-decompress -d 'Read compressed inputs as they are, not decompressed'
complete -c bftop -s w -l words -d 'Each word of a key is a key'
complete -c bftop -l shard -x -d 'Only lines whose key is in partition I of N (I/N)'
complete -c bftop -l shard-key -x -d 'The partitioning key, 32 hex digits, the same on every machine'
complete -c bftop -l window -x -d 'Only the last W keys (10Mkeys) or W of time (90s, 10m, 1h30m, 1.5h, 7d, 1w)'
complete -c bftop -l generations -x -d "The window's generations, 2..64 (default 8)"
complete -c bftop -l time-field -x -d "A line's time is its Fth field"
complete -c bftop -l bad-time -x -a 'error skip' -d 'A line whose time cannot be read: error or skip'
complete -c bftop -l now -x -d 'The time of a time window without --time-field'
complete -c bftop -s j -l threads -x -d 'Use N threads (the output is the same for every N)'
complete -c bftop -l max-memory -x -d 'Refuse summaries larger than SIZE bytes in memory'
complete -c bftop -l progress -d 'Show progress on stderr even when not a terminal'
complete -c bftop -l no-progress -d 'Never show progress'
complete -c bftop -s h -l help -d 'Show the help and exit'
complete -c bftop -s V -l version -d 'Show the version and exit'
complete -c bftop -l report -x -a json -d 'The same as --json'
