/* SPDX-License-Identifier: MIT */
/*
 * main.c - runs every C unit-test suite and prints TAP.
 *
 * Usage: unit [SUITE...]   (no argument: all suites)
 * Exit status 0 when every test passed, 1 otherwise.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unit.h"

int unit_failed_check;
static int tests_run, tests_failed;

void unit_fail(const char *file, int line, const char *expr)
{
	unit_failed_check = 1;
	printf("# %s:%d: check failed: %s\n", file, line, expr);
}

void unit_run(const char *name, void (*fn)(void))
{
	unit_failed_check = 0;
	fn();
	tests_run++;
	if (unit_failed_check)
		tests_failed++;
	printf("%sok %d - %s\n", unit_failed_check ? "not " : "", tests_run, name);
	fflush(stdout);
}

uint64_t unit_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* (used by the filter, staged and merge suites) */
long unit_resident_pages(const void *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = (len + (size_t)page - 1) / (size_t)page;
	unsigned char *vec = malloc(n);
	long count = 0;

	if (vec == NULL || mincore((void *)p, len, vec) != 0) {
		free(vec);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		count += vec[i] & 1;
	free(vec);
	return count * page / 4096;
}

/* (used by the line and range suites) */
int unit_temp_file(const char *data, size_t len)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	snprintf(path, sizeof path, "%s/bftools-unit-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	unlink(path);
	for (size_t off = 0; off < len;) {
		ssize_t done = write(fd, data + off, len - off);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)done;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

void unit_default_signal(int sig)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

const char *unit_testdata_dir(void)
{
	const char *dir = getenv("BFTOOLS_TESTDATA");

	return dir && *dir ? dir : "tests/data";
}

static const struct {
	const char *name;
	void (*run)(void);
} suites[] = {
	{ "siphash", suite_siphash },
	{ "siphash_many", suite_siphash_many },
	{ "partition", suite_partition },
	{ "pipeline", suite_pipeline },
	{ "parts", suite_parts },
	{ "writer_pipe", suite_writer_pipe },
	{ "numparse", suite_numparse },
	{ "format", suite_format },
	{ "filter", suite_filter },
	{ "layout", suite_layout },
	{ "blocked_simd", suite_blocked_simd },
	{ "crc", suite_crc },
	{ "staged", suite_staged },
	{ "untouched", suite_untouched },
	{ "sizing", suite_sizing },
	{ "lines", suite_lines },
	{ "instream", suite_instream },
	{ "ranges", suite_ranges },
	{ "keys", suite_keys },
	{ "fieldlist", suite_fieldlist },
	{ "csv", suite_csv },
	{ "json", suite_json },
	{ "keys_cut", suite_keys_cut },
	{ "cascade", suite_cascade },
	{ "owners", suite_owners },
	{ "hll", suite_hll },
	{ "merge", suite_merge },
	{ "keyfile", suite_keyfile },
	{ "lock", suite_lock },
	{ "dcso", suite_dcso },
	{ "counting", suite_counting },
	{ "window", suite_window },
	{ "sketch", suite_sketch },
	{ "stats", suite_stats },
	{ "topk", suite_topk },
	{ "walk", suite_walk },
	{ "cov_window", suite_cov_window },
	{ "cov_dcso", suite_cov_dcso },
	{ "cov_params", suite_cov_params },
};

static int selected(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
		if (selected(suites[i].name, argc, argv))
			suites[i].run();
	printf("1..%d\n", tests_run);
	return tests_failed ? 1 : 0;
}
