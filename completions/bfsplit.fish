# SPDX-License-Identifier: MIT
# fish completion for bfsplit(1): every option with its description;
# ordinary files (fish's default) for the input stream. -o takes a
# pattern, not a file.
# Install in ~/.config/fish/completions/ or a vendor completions directory.

complete -c bfsplit -s N -l partitions -x -d 'Split into N files, partitions 0 to N-1'
complete -c bfsplit -s o -l output -x -d "The files' names: PATTERN with one %d for the partition"
complete -c bfsplit -l shard-key -x -d 'The partitioning key, 32 hex digits, the same on every machine'
complete -c bfsplit -s k -l field -x -d 'Key on fields LIST of each line'
complete -c bfsplit -s t -l separator -x -d 'Fields are separated by C'
complete -c bfsplit -l header -d 'The first line of each input is a header, written to every output'
complete -c bfsplit -l csv -d 'The input is CSV (RFC 4180)'
complete -c bfsplit -l jsonl -d 'Each line is JSON (JSON Lines): -k takes paths'
complete -c bfsplit -l bad-line -x -a 'error skip' -d 'What to do with a line that is not JSON'
complete -c bfsplit -s i -l ignore-case -d 'Fold ASCII case of keys'
complete -c bfsplit -s z -l null-data -d 'Records end with NUL, not newline'
complete -c bfsplit -l no-sync -d 'Rename the outputs into place without fsync'
complete -c bfsplit -l no-decompress -d 'Read compressed inputs as they are, not decompressed'
complete -c bfsplit -s j -l threads -x -d 'Use N threads (the output is the same for every N)'
complete -c bfsplit -l max-memory -x -d 'Refuse filters larger than SIZE bytes in memory'
complete -c bfsplit -l progress -d 'Show progress on stderr even when not a terminal'
complete -c bfsplit -l no-progress -d 'Never show progress'
complete -c bfsplit -s h -l help -d 'Show the help and exit'
complete -c bfsplit -s V -l version -d 'Show the version and exit'
