# SPDX-License-Identifier: MIT
# fish completion for bfuniq(1): every option with its description, the
# values of --layout, *.bf state files after -f/--state, ordinary files
# (fish's default) for the input and --key-file; --key and --key-file are
# not offered together, as bfuniq refuses them.
# Install in ~/.config/fish/completions/ or a vendor completions directory.

# State files (*.bf) and directories to descend into. fish's own
# __fish_complete_suffix offers every file, only sorting *.bf first; a
# state option should offer filters. For "--state=x" fish puts the
# "--state=" back itself, so only the value is completed here.
function __bfuniq_states
    set -l token (commandline -ct | string replace -r -- '^--[a-z-]+=' '')
    for f in $token*.bf
        test -f $f; and echo $f
    end
    for d in $token*/
        echo $d
    end
end

complete -c bfuniq -s n -l capacity -x -d 'Size one filter for N distinct keys (default: grow)'
complete -c bfuniq -s p -l rate -x -d 'Chance of dropping a first-seen line (default 1e-6)'
complete -c bfuniq -s f -l state -x -a '(__bfuniq_states)' -d 'Load the seen keys from STATE, save them back at the end'
complete -c bfuniq -s d -l repeated -d 'Print only lines whose key was seen before'
complete -c bfuniq -l once -d 'With -d: each repeated key once, at its second sighting'
complete -c bfuniq -s k -l field -x -d 'Key on fields of each line (N, N,M, N-M, N-)'
complete -c bfuniq -s t -l separator -x -d 'Fields are separated by C'
complete -c bfuniq -l header -d 'The first line of each input is a header, not a key'
complete -c bfuniq -l csv -d 'The input is CSV (RFC 4180): quoted fields, keys are values'
complete -c bfuniq -l jsonl -d 'Each line is JSON (JSON Lines): -k takes jq paths'
complete -c bfuniq -l bad-line -x -a 'error skip' -d 'What to do with a line that is not JSON'
complete -c bfuniq -l shard -x -d 'Only lines whose key is in partition I of N (I/N)'
complete -c bfuniq -l shard-key -x -d 'The partitioning key, 32 hex digits, the same on every machine'
complete -c bfuniq -s i -l ignore-case -d 'Fold ASCII case of keys'
complete -c bfuniq -s z -l null-data -d 'Records end with NUL, not newline'
complete -c bfuniq -l no-decompress -d 'Read compressed inputs as they are, not decompressed'
complete -c bfuniq -s v -l verbose -d 'Report lines, repeats and expected losses on stderr'
complete -c bfuniq -l layout -x -a 'blocked\t"One cache line per key (default)" classic\t"The textbook layout"' -d 'Memory layout of the filter'
complete -c bfuniq -n 'not __fish_contains_opt key-file' -l key -x -d '128-bit SipHash key as 32 hex digits'
complete -c bfuniq -l line-buffered -d 'Flush output after every line'
complete -c bfuniq -l no-wait -d 'Fail at once if another bftools process is updating the file'
complete -c bfuniq -l window -x -d 'Forget keys after W keys (10Mkeys) or W of time (90s, 10m, 1h30m, 1.5h, 7d, 1w)'
complete -c bfuniq -l generations -x -d "The window's generations, 2..64 (default 8)"
complete -c bfuniq -l refresh -d "A repeat within the window restarts its key's age"
complete -c bfuniq -l time-field -x -d "A line's time is its Fth field"
complete -c bfuniq -l bad-time -x -a 'error\t"Stop with an error (default)" skip\t"Pass the line through"' -d 'A line whose time cannot be read'
complete -c bfuniq -l now -x -d 'The time of a time window without --time-field'
complete -c bfuniq -n 'not __fish_contains_opt key' -l key-file -r -F -d "The filters' key is kept in FILE, not in them"
complete -c bfuniq -l checkpoint -x -d 'With -f, also save STATE every INTERVAL (30s, 10m, 1h, or lines)'
complete -c bfuniq -s j -l threads -x -d 'Use N threads (the output is the same for every N)'
complete -c bfuniq -l max-memory -x -d 'Refuse filters larger than SIZE bytes in memory'
complete -c bfuniq -l progress -d 'Show progress on stderr even when not a terminal'
complete -c bfuniq -l no-progress -d 'Never show progress'
complete -c bfuniq -s h -l help -d 'Show the help and exit'
complete -c bfuniq -s V -l version -d 'Show the version and exit'
complete -c bfuniq -l report -x -a json -d 'The -v report as one JSON object on stderr'
complete -c bfuniq -l json -d 'The -v report as one JSON object on stderr'
