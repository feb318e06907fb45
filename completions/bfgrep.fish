# SPDX-License-Identifier: MIT
# fish completion for bfgrep(1): every option with its description, *.bf
# filters after -f/--filter, ordinary files (fish's default) for the input
# and --key-file.
# Install in ~/.config/fish/completions/ or a vendor completions directory.

# Filters (*.bf) and directories to descend into. fish's own
# __fish_complete_suffix offers every file, only sorting *.bf first; a
# filter option should offer filters. For "--filter=x" fish puts the
# "--filter=" back itself, so only the value is completed here.
function __bfgrep_filters
    set -l token (commandline -ct | string replace -r -- '^--[a-z-]+=' '')
    for f in $token*.bf
        test -f $f; and echo $f
    end
    for d in $token*/
        echo $d
    end
end

complete -c bfgrep -s f -l filter -x -a '(__bfgrep_filters)' -d 'A filter file made by bfbuild (repeatable; - is stdin)'
complete -c bfgrep -s v -l invert-match -d 'Print the lines whose key is surely in no filter'
complete -c bfgrep -s c -l count -d 'Print only the number of selected lines, per FILE'
complete -c bfgrep -s l -l files-with-matches -d 'Print only the names of FILEs with a selected line'
complete -c bfgrep -s L -l files-without-match -d 'Print only the names of FILEs without one'
complete -c bfgrep -s q -l quiet -d 'Print nothing; exit 0 at the first selected line'
complete -c bfgrep -l silent -d 'Same as --quiet'
complete -c bfgrep -s w -l words -d 'Select a line if any word of its key is in a filter'
complete -c bfgrep -l word-regexp -d 'Same as --words'
complete -c bfgrep -s o -l only-matching -d 'Print only the key (with -w: each word in a filter)'
complete -c bfgrep -s n -l line-number -d 'Put the line number before each line'
complete -c bfgrep -s H -l with-filename -d 'Put the file name before each line'
complete -c bfgrep -s h -l no-filename -d 'Never put file names before lines'
complete -c bfgrep -s m -l max-count -x -d 'Stop reading a FILE after NUM selected lines'
complete -c bfgrep -s s -l no-messages -d 'Say nothing about FILEs that cannot be read'
complete -c bfgrep -s Z -l null -d "End file names with NUL, not ':' or newline"
complete -c bfgrep -l label -x -d 'The name of standard input in the output'
complete -c bfgrep -s r -l recursive -d 'Search the files under directories (no FILE: .)'
complete -c bfgrep -s k -l field -x -d 'Key on fields of each line (N, N,M, N-M, N-)'
complete -c bfgrep -s t -l separator -x -d 'Fields are separated by C'
complete -c bfgrep -l header -d 'The first line of each input is a header, not a key'
complete -c bfgrep -l csv -d 'The input is CSV (RFC 4180): quoted fields, keys are values'
complete -c bfgrep -l jsonl -d 'Each line is JSON (JSON Lines): -k takes jq paths'
complete -c bfgrep -l bad-line -x -a 'error skip' -d 'What to do with a line that is not JSON'
complete -c bfgrep -l shard -x -d 'Only lines whose key is in partition I of N (I/N)'
complete -c bfgrep -l shard-key -x -d 'The partitioning key, 32 hex digits, the same on every machine'
complete -c bfgrep -s z -l null-data -d 'Records end with NUL, not newline'
complete -c bfgrep -l no-decompress -d 'Read compressed inputs as they are, not decompressed'
complete -c bfgrep -l line-buffered -d 'Flush output after every line'
complete -c bfgrep -l now -x -d 'A windowed filter answers as of time T (default: now)'
complete -c bfgrep -l key-file -r -F -d "The filters' key is kept in FILE, not in them"
complete -c bfgrep -s j -l threads -x -d 'Use N threads (the output is the same for every N)'
complete -c bfgrep -l max-memory -x -d 'Refuse filters larger than SIZE bytes in memory'
complete -c bfgrep -l progress -d 'Show progress on stderr even when not a terminal'
complete -c bfgrep -l no-progress -d 'Never show progress'
complete -c bfgrep -l help -d 'Show the help and exit'
complete -c bfgrep -s V -l version -d 'Show the version and exit'
