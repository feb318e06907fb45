#!/bin/sh
# SPDX-License-Identifier: MIT
# layers.sh [ROOT] - check that the source tree keeps its architecture
# (ARCHITECTURE.md): lib/ is in layers, one folder each, listed bottom up
# by LIB_LAYERS in the Makefile (base hash io sets files), with
# lib/bftools.h, the one-include header, above them all and cmd/ above
# that. Read from the #include "..." lines of every .c and .h file:
#   - a file includes only headers of its own layer or the layers below
#     (lib/ never includes cmd/);
#   - no circle: modules (x.c with its x.h) including one another round a
#     loop, at any length, within a layer or across;
#   - every included header exists, in exactly one place (headers are
#     included by their bare names, as they are installed).
# Each problem is printed on a line of its own; exit 1 if there was any,
# else print one summary line and exit 0. ROOT defaults to the repository.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=${1:-$(cd "$here/.." && pwd)}
cd "$root" || exit 2

layers=$(sed -n 's/^LIB_LAYERS *= *//p' Makefile)
if [ -z "$layers" ]; then
	echo "layers: no LIB_LAYERS line in $root/Makefile"
	exit 2
fi

# One line per file: "FILE LAYER" (cmd files are layer "cmd"), then one
# line per include: "FILE -> HEADER" with the header's bare or relative name.
list_files() {
	for layer in $layers; do
		for f in lib/"$layer"/*.c lib/"$layer"/*.h; do
			[ -f "$f" ] && echo "file $f $layer"
		done
	done
	[ -f lib/bftools.h ] && echo "file lib/bftools.h top"
	find cmd -name '*.[ch]' | sort | sed 's/^/file /; s/$/ cmd/'
}

list_includes() {
	list_files | while read -r _ f _; do
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
			sed "s|^|incl $f |"
	done
}

{ list_files; list_includes; } | awk -v order="$layers top cmd" '
function module(path,   m) {
	m = path
	sub(/\.[ch]$/, "", m)
	return m
}
# the file an include names: a bare name is a lib header; cmd files may
# name their own headers relative to themselves
function resolve(from, name,   dir, path, n, parts, i, out) {
	if (name ~ /\//) {
		dir = from
		sub(/\/[^\/]*$/, "", dir)
		path = dir "/" name
		n = split(path, parts, "/")
		out = ""
		for (i = 1; i <= n; i++) {
			if (parts[i] == "..") { sub(/\/?[^\/]*$/, "", out); continue }
			if (parts[i] == ".") continue
			out = out == "" ? parts[i] : out "/" parts[i]
		}
		return out
	}
	if (from ~ /^cmd\// && ((dirof(from) "/" name) in layer)) return dirof(from) "/" name
	if (name in byname) return byname[name]
	return ""
}
function dirof(path,   d) { d = path; sub(/\/[^\/]*$/, "", d); return d }
function base(path,   b) { b = path; sub(/^.*\//, "", b); return b }
BEGIN {
	n = split(order, o, " ")
	for (i = 1; i <= n; i++) rank[o[i]] = i
}
$1 == "file" {
	layer[$2] = $3
	if ($2 ~ /^lib\// && $2 ~ /\.h$/) {
		b = base($2)
		if (b in byname) { printf "layers: %s and %s share a name: bare includes are ambiguous\n", byname[b], $2; bad++ }
		byname[b] = $2
	}
	files++
	next
}
$1 == "incl" {
	includes++
	target = resolve($2, $3)
	if (target == "" || !(target in layer)) {
		printf "layers: %s includes \"%s\", which is no header of lib/ or cmd/\n", $2, $3
		bad++
		next
	}
	if (rank[layer[target]] > rank[layer[$2]]) {
		printf "layers: %s (%s) includes %s from %s, a layer above its own\n", $2, layer[$2], target, layer[target]
		bad++
	}
	from = module($2); to = module(target)
	if (from != to && !((from, to) in edge)) {
		edge[from, to] = 1
		out[from] = out[from] " " to
	}
	node[from] = 1; node[to] = 1
}
# depth-first search; state 1 = on the current path, 2 = done
function visit(m,   i, j, k, next_m, parts, cyc) {
	state[m] = 1
	path[++depth] = m
	k = split(out[m], parts, " ")
	for (i = 1; i <= k; i++) {
		next_m = parts[i]
		if (state[next_m] == 1) {
			for (j = depth; j > 1 && path[j] != next_m; j--)
				;
			cyc = path[j]
			for (j++; j <= depth; j++)
				cyc = cyc " -> " path[j]
			printf "layers: include circle: %s -> %s\n", cyc, next_m
			bad++
		} else if (state[next_m] == 0) {
			visit(next_m)
		}
	}
	depth--
	state[m] = 2
}
END {
	for (m in node) state[m] = 0
	for (m in node) if (state[m] == 0) visit(m)
	if (bad) exit 1
	printf "layers: %d files, %d includes, %s bottom up: no upward include, no circle\n", files, includes, order
}'
