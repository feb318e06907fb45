/* SPDX-License-Identifier: MIT */
/*
 * enospc.c - an LD_PRELOAD shim that makes the disk fill up, for
 * tests/faults.bats when no small tmpfs can be mounted (and beside the
 * tmpfs test when one can).
 *
 * write(2) to a regular file other than stdin, stdout and stderr succeeds
 * for the first ENOSPC_AFTER bytes in total (an environment variable,
 * default 0); the write that crosses the limit is cut short at it, as a
 * real file system does, and every later one fails with ENOSPC. Standard
 * output and error are left alone so that a program can still report the
 * failure and write its normal output.
 *
 * Deliberately narrow: only write(2) is wrapped, because that is the one
 * call through which bftools saves a filter (format.c's write_all); stdio,
 * writev and pwrite pass through untouched. Single-threaded use only.
 *
 * Build: cc -shared -fPIC -o enospc.so enospc.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

typedef ssize_t (*write_fn)(int, const void *, size_t);

static write_fn real_write;
static unsigned long long budget;
static int budget_read;

static void init(void)
{
	const char *s = getenv("ENOSPC_AFTER");
	void *sym = dlsym(RTLD_NEXT, "write");

	/* ISO C has no object-to-function pointer cast; POSIX guarantees the copy works */
	memcpy(&real_write, &sym, sizeof real_write);
	budget = s != NULL ? strtoull(s, NULL, 10) : 0;
	budget_read = 1;
}

/* Only the filter's file counts: a regular file that is not fd 0, 1 or 2. */
static int counts(int fd)
{
	struct stat st;

	if (fd <= STDERR_FILENO)
		return 0;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

ssize_t write(int fd, const void *buf, size_t len)
{
	ssize_t n;

	if (!budget_read)
		init();
	if (real_write == NULL) {
		errno = ENOSYS;
		return -1;
	}
	if (len == 0 || !counts(fd))
		return real_write(fd, buf, len);
	if (budget == 0) {
		errno = ENOSPC;
		return -1;
	}
	if (len > budget)
		len = (size_t)budget;
	n = real_write(fd, buf, len);
	if (n > 0)
		budget -= (unsigned long long)n;
	return n;
}
