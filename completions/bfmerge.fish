# SPDX-License-Identifier: MIT
# fish completion for bfmerge(1): every option with its description, any
# file for -o/--output (the result) and --key-file, *.bf filters and
# *.hll sketches (and directories to reach them) for the FILTER arguments.
# Install in ~/.config/fish/completions/ or a vendor completions directory.

# Filters (*.bf), sketches (*.hll) and directories to descend into.
# fish's own __fish_complete_suffix offers every file, only sorting *.bf
# first; a FILTER argument should offer filters and sketches.
function __bfmerge_filters
    set -l token (commandline -ct)
    for f in $token*.bf $token*.hll
        test -f $f; and echo $f
    end
    for d in $token*/
        echo $d
    end
end

# The FILTER arguments: filters only, not every file.
complete -c bfmerge -f -a '(__bfmerge_filters)'
complete -c bfmerge -s o -l output -r -F -d 'Write the result to FILE, atomically'
complete -c bfmerge -l intersect -d 'AND the filters (intersection) instead of OR-ing them'
complete -c bfmerge -s v -l verbose -d "Report the result's fill and estimates on stderr"
complete -c bfmerge -l no-wait -d 'Fail at once if another bftools process is updating the file'
complete -c bfmerge -l key-file -r -F -d "The filters' key is kept in FILE, not in them"
complete -c bfmerge -s j -l threads -x -d 'Use N threads (the output is the same for every N)'
complete -c bfmerge -l max-memory -x -d 'Refuse filters larger than SIZE bytes in memory'
complete -c bfmerge -l progress -d 'Show progress on stderr even when not a terminal'
complete -c bfmerge -l no-progress -d 'Never show progress'
complete -c bfmerge -s h -l help -d 'Show the help and exit'
complete -c bfmerge -s V -l version -d 'Show the version and exit'
