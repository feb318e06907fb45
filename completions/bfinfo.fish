# SPDX-License-Identifier: MIT
# fish completion for bfinfo(1): its options with their descriptions, any
# file for --key-file, and *.bf filters and *.hll sketches (with
# directories to descend into) for every other argument. Install in ~/.config/fish/completions/
# or a vendor completions directory.

# Filters (*.bf), sketches (*.hll) and directories. fish's own
# __fish_complete_suffix offers every file, only sorting *.bf first;
# every argument here is a filter or a sketch.
function __bfinfo_filters
    set -l token (commandline -ct)
    for f in $token*.bf $token*.hll
        test -f $f; and echo $f
    end
    for d in $token*/
        echo $d
    end
end

complete -c bfinfo -f -a '(__bfinfo_filters)'
complete -c bfinfo -l json -d 'One JSON object per file and line (JSON Lines)'
complete -c bfinfo -l key-file -r -F -d "The filters' key is kept in FILE, not in them"
complete -c bfinfo -s j -l threads -x -d 'Use N threads (the output is the same for every N)'
complete -c bfinfo -l max-memory -x -d 'Refuse filters larger than SIZE bytes in memory'
complete -c bfinfo -l progress -d 'Show progress on stderr even when not a terminal'
complete -c bfinfo -l no-progress -d 'Never show progress'
complete -c bfinfo -s h -l help -d 'Show the help and exit'
complete -c bfinfo -s V -l version -d 'Show the version and exit'
complete -c bfinfo -l report -x -a json -d 'The same as --json'
complete -c bfinfo -l brief -d 'A header, then one line per file: kind, keys, fill, rates, size'
complete -c bfinfo -l verify -d 'Read every bit and check the figures the header stores'
