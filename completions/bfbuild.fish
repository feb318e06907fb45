# SPDX-License-Identifier: MIT
# fish completion for bfbuild(1): every option with its description, the
# values of --layout, --hash and --format, *.bf filters after
# -f/--filter/--like, ordinary files for -o, --key-file and the inputs
# (fish's default for arguments); --key and --key-file are not offered
# together, as bfbuild refuses them.
# Install in ~/.config/fish/completions/ or a vendor completions directory.

# Filters (*.bf) and directories to descend into. fish's own
# __fish_complete_suffix offers every file, only sorting *.bf first; a
# filter option should offer filters. For "--filter=x" fish puts the
# "--filter=" back itself, so only the value is completed here.
function __bfbuild_filters
    set -l token (commandline -ct | string replace -r -- '^--[a-z-]+=' '')
    for f in $token*.bf
        test -f $f; and echo $f
    end
    for d in $token*/
        echo $d
    end
end

complete -c bfbuild -s n -l capacity -x -d 'Distinct keys to size for (default 1000000)'
complete -c bfbuild -s p -l rate -x -d 'False-positive rate at N keys (default 0.001)'
complete -c bfbuild -s o -l output -r -d 'Write the filter to FILE, atomically'
complete -c bfbuild -s f -l filter -x -a '(__bfbuild_filters)' -d 'Add to an existing filter and replace it'
complete -c bfbuild -l remove -d 'Remove the input lines from -f FILTER (counting only)'
complete -c bfbuild -l like -x -a '(__bfbuild_filters)' -d 'Start empty with the shape, key and hash of FILTER'
complete -c bfbuild -l layout -x -a 'blocked\t"One cache line per key (default)" classic\t"The textbook layout" counting\t"4-bit counters: keys can be removed"' -d 'Memory layout of the filter'
complete -c bfbuild -s m -l bits -x -d 'Filter size in bits (rounded up to a multiple of 512)'
complete -c bfbuild -s K -l hashes -x -d 'Hash probes per key (1..64)'
complete -c bfbuild -n 'not __fish_contains_opt key-file' -l key -x -d '128-bit SipHash key as 32 hex digits'
complete -c bfbuild -l hash -x -a 'siphash13\t"SipHash-1-3-128 (default)" siphash24\t"SipHash-2-4-128"' -d 'Hash function'
complete -c bfbuild -l format -x -a 'bftools\t"The bftools format (default)" dcso\t"DCSO bloom format" dcso-gzip\t"DCSO bloom format, gzipped"' -d 'File format to write'
complete -c bfbuild -s k -l field -x -d 'Key on fields of each line (N, N,M, N-M, N-)'
complete -c bfbuild -s t -l separator -x -d 'Fields are separated by C'
complete -c bfbuild -l header -d 'The first line of each input is a header, not a key'
complete -c bfbuild -l csv -d 'The input is CSV (RFC 4180): quoted fields, keys are values'
complete -c bfbuild -l jsonl -d 'Each line is JSON (JSON Lines): -k takes jq paths'
complete -c bfbuild -l bad-line -x -a 'error skip' -d 'What to do with a line that is not JSON'
complete -c bfbuild -l shard -x -d 'Only lines whose key is in partition I of N (I/N)'
complete -c bfbuild -l shard-key -x -d 'The partitioning key, 32 hex digits, the same on every machine'
complete -c bfbuild -s i -l ignore-case -d 'Fold ASCII case; recorded in the filter'
complete -c bfbuild -s z -l null-data -d 'Records end with NUL, not newline'
complete -c bfbuild -l no-decompress -d 'Read compressed inputs as they are, not decompressed'
complete -c bfbuild -s v -l verbose -d 'Report lines, keys, fill and rate on stderr'
complete -c bfbuild -l no-wait -d 'Fail at once if another bftools process is updating the file'
complete -c bfbuild -n 'not __fish_contains_opt key' -l key-file -r -F -d "The filters' key is kept in FILE, not in them"
complete -c bfbuild -l checkpoint -x -d 'With -f, also save FILTER every INTERVAL (30s, 10m, 1h, or lines)'
complete -c bfbuild -l window -x -d 'A windowed filter forgetting keys after W keys (10Mkeys) or W of time (90s, 1h30m, 1w)'
complete -c bfbuild -l generations -x -d "The window's generations, 2..64 (default 8)"
complete -c bfbuild -l refresh -d "A repeat within the window restarts its key's age"
complete -c bfbuild -l time-field -x -d "A line's time is its Fth field"
complete -c bfbuild -l bad-time -x -a 'error\t"Stop with an error (default)" skip\t"Leave the line out"' -d 'A line whose time cannot be read'
complete -c bfbuild -l now -x -d 'The time of a time window without --time-field'
complete -c bfbuild -s j -l threads -x -d 'Use N threads (the output is the same for every N)'
complete -c bfbuild -l max-memory -x -d 'Refuse filters larger than SIZE bytes in memory'
complete -c bfbuild -l progress -d 'Show progress on stderr even when not a terminal'
complete -c bfbuild -l no-progress -d 'Never show progress'
complete -c bfbuild -s h -l help -d 'Show the help and exit'
complete -c bfbuild -s V -l version -d 'Show the version and exit'
complete -c bfbuild -l report -x -a json -d 'The -v report as one JSON object on stderr'
complete -c bfbuild -l json -d 'The -v report as one JSON object on stderr'
