# SPDX-License-Identifier: MIT
# fish completion for bfcount(1): every option with its description; *.bf
# filters after -f/--filter, and as the operands once a -f, --union,
# --intersection or --jaccard is on the line (bfcount then counts
# filters); *.hll sketches after -s/--sketch and --like; ordinary files
# (fish's default) for the input stream, -o and --key-file otherwise. The
# key and sketch options and the filter options are offered only while the
# other kind is absent, as bfcount refuses to mix them.
# Install in ~/.config/fish/completions/ or a vendor completions directory.

# Filters (*.bf) and directories to descend into. fish's own
# __fish_complete_suffix offers every file, only sorting *.bf first; a
# filter option should offer filters. For "--filter=x" fish puts the
# "--filter=" back itself, so only the value is completed here.
function __bfcount_filters
    set -l token (commandline -ct | string replace -r -- '^--[a-z-]+=' '')
    for f in $token*.bf
        test -f $f; and echo $f
    end
    for d in $token*/
        echo $d
    end
end

# Sketches (*.hll) and directories to descend into, as for filters.
function __bfcount_sketches
    set -l token (commandline -ct | string replace -r -- '^--[a-z-]+=' '')
    for f in $token*.hll
        test -f $f; and echo $f
    end
    for d in $token*/
        echo $d
    end
end

# Whether a -f/--filter or a set operation is already on the line:
# operands are then filters.
function __bfcount_filter_mode
    __fish_contains_opt -s f filter union intersection jaccard
end

# Whether a key or sketch option is on the line: a stream is being counted.
function __bfcount_stream_mode
    __fish_contains_opt -s k field -s t separator header csv jsonl bad-line shard shard-key -s i ignore-case -s z null-data no-decompress \
        -s o output -s s sketch add precision key like
end

# Whether -s/--sketch is on the line: the sketch's key and precision are fixed.
function __bfcount_sketch_given
    __fish_contains_opt -s s sketch
end

# Whether one of --union, --intersection and --jaccard is already given.
function __bfcount_set_op
    __fish_contains_opt union intersection jaccard
end

complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -s k -l field -x -d 'Key on fields of each line (N, N,M, N-M, N-)'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -s t -l separator -x -d 'Fields are separated by C'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -l header -d 'The first line of each input is a header, not a key'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -l csv -d 'The input is CSV (RFC 4180): quoted fields, keys are values'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -l jsonl -d 'Each line is JSON (JSON Lines): -k takes jq paths'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -l bad-line -x -a 'error skip' -d 'What to do with a line that is not JSON'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -l shard -x -d 'Only lines whose key is in partition I of N (I/N)'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -l shard-key -x -d 'The partitioning key, 32 hex digits, the same on every machine'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -s i -l ignore-case -d 'Fold ASCII case of keys'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -s z -l null-data -d 'Records end with NUL, not newline'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -l no-decompress -d 'Read compressed inputs as they are, not decompressed'
complete -c bfcount -n 'not __bfcount_stream_mode' -s f -l filter -x -a '(__bfcount_filters)' -d 'Count the elements of a filter instead (repeatable; - is stdin)'
complete -c bfcount -n 'not __bfcount_stream_mode; and not __bfcount_set_op' -l union -d 'The number of elements in the union of the filters'
complete -c bfcount -n 'not __bfcount_stream_mode; and not __bfcount_set_op' -l intersection -d 'The number of elements in their intersection'
complete -c bfcount -n 'not __bfcount_stream_mode; and not __bfcount_set_op' -l jaccard -d 'Intersection over union, from 0 to 1'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -s o -l output -r -F -d "Also save the count's sketch to SKETCH, atomically"
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -s s -l sketch -x -a '(__bfcount_sketches)' -d 'Count the union of sketches (repeatable; - is stdin)'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op' -l add -d 'Add the input to -s SKETCH and replace it (or write -o)'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op; and not __bfcount_sketch_given' -l precision -x -d '2^P registers in a new sketch, 4..18'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op; and not __bfcount_sketch_given' -l key -x -d '128-bit SipHash key of a new sketch (32 hex digits)'
complete -c bfcount -n 'not __bfcount_filter_mode; and not __bfcount_set_op; and not __bfcount_sketch_given' -l like -x -a '(__bfcount_sketches)' -d "A new sketch with SKETCH's key and precision"
complete -c bfcount -s v -l verbose -d 'Also report the standard error on stderr'
complete -c bfcount -l key-file -r -F -d "The filters' key is kept in FILE, not in them"
complete -c bfcount -s j -l threads -x -d 'Use N threads (the output is the same for every N)'
complete -c bfcount -l max-memory -x -d 'Refuse filters larger than SIZE bytes in memory'
complete -c bfcount -l progress -d 'Show progress on stderr even when not a terminal'
complete -c bfcount -l no-progress -d 'Never show progress'
complete -c bfcount -s h -l help -d 'Show the help and exit'
complete -c bfcount -s V -l version -d 'Show the version and exit'
# In filter mode the operands are filters: offer those, not every file.
complete -c bfcount -n __bfcount_filter_mode -f -a '(__bfcount_filters)'
complete -c bfcount -l report -x -a json -d 'Print the count as a JSON object'
complete -c bfcount -l json -d 'Print the count as a JSON object'
