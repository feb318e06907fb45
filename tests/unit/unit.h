/* SPDX-License-Identifier: MIT */
/*
 * unit.h - the smallest test harness that does the job.
 *
 * Each test is a void function run by unit_run(); a failed CHECK prints the
 * file, line and expression and ends that test. Results are TAP lines
 * ("ok N - name" / "not ok N - name"), which tests/run.sh counts together
 * with the bats results.
 *
 * Each test_<module>.c defines one suite function, declared here and called
 * from main.c.
 */
#ifndef BFTOOLS_UNIT_H
#define BFTOOLS_UNIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "merge.h"

extern int unit_failed_check;

void unit_run(const char *name, void (*fn)(void));
void unit_fail(const char *file, int line, const char *expr);

#define CHECK(cond)                                               \
	do {                                                      \
		if (!(cond)) {                                    \
			unit_fail(__FILE__, __LINE__, #cond);     \
			return;                                   \
		}                                                 \
	} while (0)

/* Like CHECK, with a printf-style explanation on failure. */
#define CHECKF(cond, ...)                                         \
	do {                                                      \
		if (!(cond)) {                                    \
			unit_fail(__FILE__, __LINE__, #cond);     \
			printf("#   ");                           \
			printf(__VA_ARGS__);                      \
			printf("\n");                             \
			return;                                   \
		}                                                 \
	} while (0)

/* The next number of a splitmix64 stream: fixed-seed data, the same every run. */
uint64_t unit_splitmix64(uint64_t *state);

/* Merge the filter file at path into c by streaming (test_merge.c); 0, or -1 with *why. */
int unit_merge_file(struct cascade *c, const char *path, enum merge_op op, const char **why);

/* An unlinked temporary file holding data[0..len), positioned at its start; -1 on failure. */
int unit_temp_file(const char *data, size_t len);

/*
 * 4 KiB pages of [p, p + len) in memory now (mincore; nothing in these
 * tests is in swap), or -1: what a sparse filter really costs.
 */
long unit_resident_pages(const void *p, size_t len);

/*
 * Give sig its default action and unblock it. A test that sends a signal
 * calls this first (in the child it forks, before the code under test
 * runs): how the suite was started must not decide the result, and a
 * background job of a script, nohup or a CI runner may start it with
 * SIGINT or SIGHUP ignored, which the code under test rightly keeps.
 */
void unit_default_signal(int sig);

/* Directory holding test data: $BFTOOLS_TESTDATA, else tests/data (run from the top). */
const char *unit_testdata_dir(void);

void suite_siphash(void);
void suite_partition(void);
void suite_parts(void);
void suite_writer_pipe(void);
void suite_siphash_many(void);
void suite_blocked_simd(void);
void suite_crc(void);
void suite_staged(void);
void suite_untouched(void);
void suite_pipeline(void);
void suite_numparse(void);
void suite_format(void);
void suite_filter(void);
void suite_layout(void);
void suite_sizing(void);
void suite_lines(void);
void suite_instream(void);
void suite_ranges(void);
void suite_keys(void);
void suite_fieldlist(void);
void suite_csv(void);
void suite_json(void);
void suite_keys_cut(void);
void suite_cascade(void);
void suite_owners(void);
void suite_hll(void);
void suite_merge(void);
void suite_keyfile(void);
void suite_lock(void);
void suite_dcso(void);
void suite_counting(void);
void suite_window(void);
void suite_sketch(void);
void suite_stats(void);
void suite_topk(void);
void suite_walk(void);
void suite_cov_window(void);
void suite_cov_dcso(void);
void suite_cov_params(void);

#endif
