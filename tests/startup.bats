#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# startup.bats - the suite's result must not depend on how it was started.
#
# A background job of a non-interactive shell (`sh -c 'make check & wait'`)
# inherits SIGINT ignored, nohup ignores SIGHUP, and a CI runner may ignore
# either; bftools rightly keeps an ignored signal ignored (atomic.c), so
# every test that sends a signal sets the disposition it relies on in the
# process it signals (unit_default_signal in tests/unit, `env
# --default-signal` in the bats files). Here the tests that send signals run
# again from a shell that ignores INT and HUP, so that a new test which
# forgets to do so fails at once instead of on someone's CI.

bats_require_minimum_version 1.5.0
load helpers

# ignoring CMD...: CMD run from a shell that ignores SIGINT and SIGHUP.
ignoring() {
	bash -c 'trap "" INT HUP; exec "$@"' ignoring "$@"
}

@test "startup: a shell that ignores INT and HUP passes them on ignored (the premise)" {
	# SigIgn is a hex mask with bit (signal - 1) set: HUP (1) and INT (2) are 0x3
	run --separate-stderr ignoring awk '/^SigIgn:/ { print $2 }' /proc/self/status
	expect_status 0
	(( (16#$output & 3) == 3 )) || expect_eq "SigIgn of a child" "INT and HUP set" "$output"
}

@test "startup: the unit tests that send signals pass with INT and HUP ignored" {
	local unit=$BFTOOLS_BIN/../tests/unit/unit
	[ -x "$unit" ] || expect_eq "unit binary" "beside the programs" "missing: $unit"
	# format: the temporaries removed on SIGINT, SIGTERM, SIGHUP, SIGPIPE;
	# lines: the alarms that end a read that would block
	run --separate-stderr ignoring "$unit" format lines
	expect_status 0
	if grep -q '^not ok' <<<"$output"; then
		expect_eq "failed unit tests" "" "$(grep '^not ok' <<<"$output")"
	fi
}

# nested BATS: the signal tests of another bats file, run with INT and HUP
# ignored; its TAP lines in $output.
nested_bats() {
	run --separate-stderr ignoring bats --tap "$@"
	expect_status 0
}

@test "startup: signals.bats passes with INT and HUP ignored" {
	nested_bats "$BATS_TEST_DIRNAME/signals.bats"
}

@test "startup: bfbuild -o removes its temporary on SIGINT with INT and HUP ignored by the caller" {
	# (under valgrind the nested test skips itself: too slow to time)
	nested_bats --filter '^bfbuild -o: SIGINT' "$BATS_TEST_DIRNAME/faults.bats"
	grep -q '^ok 1 ' <<<"$output" || expect_eq "faults.bats" "ok 1 bfbuild -o: SIGINT ..." "$output"
}
