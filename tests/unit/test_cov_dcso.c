/* SPDX-License-Identifier: MIT */
/*
 * test_cov_dcso.c - dcso_sniff, the library's way to tell a DCSO filter
 * from anything else by reading the start of a descriptor: the programs
 * open files through format_open instead, so only this test reaches it
 * (found unreached by make coverage).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcso.h"
#include "unit.h"

/* dcso_sniff over a pipe holding exactly the n bytes of data. */
static int sniff(const void *data, size_t n, size_t cap, size_t *len, int *eof, const char **why)
{
	static unsigned char buf[DCSO_SNIFF_MAX];
	int fds[2], ret;

	if (pipe(fds) < 0)
		return -2;
	if (n > 0 && write(fds[1], data, n) != (ssize_t)n) {
		close(fds[0]);
		close(fds[1]);
		return -2;
	}
	close(fds[1]);
	ret = dcso_sniff(fds[0], buf, cap, len, eof, why);
	close(fds[0]);
	return ret;
}

static void test_sniff(void)
{
	static const unsigned char version[12] = { 1, 0, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9 };
	static const unsigned char other[12] = "BFTOOLS-ish";
	size_t len = 99;
	int eof = 9;
	const char *why;

	CHECK(sniff(version, sizeof version, sizeof version, &len, &eof, &why) == 1);
	CHECK(len >= 8 && len <= sizeof version);
	CHECK(sniff(other, sizeof other, (size_t)1 << 30, &len, &eof, &why) == 0);
	CHECK(len >= 1);
	/* nothing at all: not a DCSO filter, and the end was seen */
	CHECK(sniff(NULL, 0, 64, &len, &eof, &why) == 0);
	CHECK(len == 0 && eof == 1);
}

static void test_sniff_read_error(void)
{
	unsigned char buf[16];
	size_t len;
	int eof;
	const char *why = NULL;

	CHECK(dcso_sniff(-1, buf, sizeof buf, &len, &eof, &why) == -1);
	CHECK(why != NULL && strlen(why) > 0);
}

void suite_cov_dcso(void)
{
	unit_run("dcso_sniff: a DCSO version word, other bytes, nothing", test_sniff);
	unit_run("dcso_sniff: a read error is reported", test_sniff_read_error);
}
