#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# layers.bats - the architecture check (tests/layers.sh, also run by make
# lint): the tree as committed keeps its layers, and the check fails on a
# planted include that points up a layer and on a planted circle.

bats_require_minimum_version 1.5.0
load helpers

TOP=$BATS_TEST_DIRNAME/..

# A copy of what the check reads: lib/, cmd/ and the Makefile (LIB_LAYERS).
copy_tree() {
	mkdir tree
	cp -R "$TOP/lib" "$TOP/cmd" "$TOP/Makefile" tree/
}

@test "layers: the tree includes only downward and has no circle" {
	run --separate-stderr sh "$TOP/tests/layers.sh" "$TOP"
	expect_status 0
	case $output in
	"layers: "*" files, "*" includes, base hash io sets files top cmd bottom up: no upward include, no circle") ;;
	*) echo "unexpected: $output" >&2; return 1 ;;
	esac
}

@test "layers: a header of base including a header of sets is refused, named" {
	copy_tree
	printf '#include "filter.h"\n' >>tree/lib/base/bytes.h
	run --separate-stderr sh "$TOP/tests/layers.sh" "$PWD/tree"
	expect_status 1
	expect_eq output "layers: lib/base/bytes.h (base) includes lib/sets/filter.h from sets, a layer above its own" "$output"
}

@test "layers: the library including a program's header is refused" {
	copy_tree
	printf '#include "../../cmd/cli.h"\n' >>tree/lib/io/lines.c
	run --separate-stderr sh "$TOP/tests/layers.sh" "$PWD/tree"
	expect_status 1
	expect_eq output "layers: lib/io/lines.c (io) includes cmd/cli.h from cmd, a layer above its own" "$output"
}

@test "layers: two modules of one layer including each other are a circle" {
	copy_tree
	printf '#include "cascade.h"\n' >>tree/lib/sets/sizing.h
	run --separate-stderr sh "$TOP/tests/layers.sh" "$PWD/tree"
	expect_status 1
	expect_eq output "layers: include circle: lib/sets/cascade -> lib/sets/sizing -> lib/sets/cascade" "$output"
}

@test "layers: an include of a header that does not exist is refused" {
	copy_tree
	printf '#include "nowhere.h"\n' >>tree/lib/sets/filter.c
	run --separate-stderr sh "$TOP/tests/layers.sh" "$PWD/tree"
	expect_status 1
	expect_eq output 'layers: lib/sets/filter.c includes "nowhere.h", which is no header of lib/ or cmd/' "$output"
}
