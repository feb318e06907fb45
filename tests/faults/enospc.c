/* SPDX-License-Identifier: MIT */
/*
 * enospc.c - an LD_PRELOAD shim that makes the disk fill up, for
 * tests/faults.bats when no small tmpfs can be mounted (and beside the
 * tmpfs test when one can).
 *
 * write(2) to a regular file other than stdin, stdout and stderr succeeds
 * for the first ENOSPC_AFTER bytes in total (an environment variable,
 * default 0 unless SLOW_WRITE_MS is set, below); the write that crosses the limit is cut short at it, as a
 * real file system does, and every later one fails with ENOSPC. Standard
 * output and error are left alone so that a program can still report the
 * failure and write its normal output.
 *
 * With SLOW_WRITE_MS=N it also makes a save slow, for the signal tests:
 * each such write takes at most SLOW_WRITE_CHUNK bytes (a short write,
 * which every caller must handle anyway) and sleeps N ms after it, so a
 * save lasts N ms per chunk however fast the machine is, and the test
 * sees its temporary file half written by looking, not by racing it.
 * Without ENOSPC_AFTER there is then no limit on the bytes.
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
#include <time.h>
#include <unistd.h>

/* A slowed write takes at most this much (a multiple of 4096, so that a
 * file opened O_DIRECT still gets aligned writes). */
#define SLOW_WRITE_CHUNK (128u * 1024u)

typedef ssize_t (*write_fn)(int, const void *, size_t);

static write_fn real_write;
static unsigned long long budget;
static int budget_read;
static long slow_ms;

static void init(void)
{
	const char *s = getenv("ENOSPC_AFTER");
	const char *slow = getenv("SLOW_WRITE_MS");
	void *sym = dlsym(RTLD_NEXT, "write");

	/* ISO C has no object-to-function pointer cast; POSIX guarantees the copy works */
	memcpy(&real_write, &sym, sizeof real_write);
	slow_ms = slow != NULL ? strtol(slow, NULL, 10) : 0;
	if (s != NULL)
		budget = strtoull(s, NULL, 10);
	else
		budget = slow_ms > 0 ? ~0ULL : 0;
	budget_read = 1;
}

/*
 * At load time, not at the first write: that may come from a signal
 * handler (a program saving what it read when SIGINT came), where dlsym's
 * allocations are not safe (ThreadSanitizer says so, and fails the run).
 */
__attribute__((constructor)) static void init_at_load(void)
{
	if (!budget_read)
		init();
}

/* The pause after a slowed write; a signal may cut it short, which only
 * makes the save a little faster. */
static void pause_after_write(void)
{
	struct timespec ts = { slow_ms / 1000, (slow_ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
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
	if (slow_ms > 0 && len > SLOW_WRITE_CHUNK)
		len = SLOW_WRITE_CHUNK;
	n = real_write(fd, buf, len);
	if (n > 0)
		budget -= (unsigned long long)n;
	if (slow_ms > 0) {
		int saved = errno;

		pause_after_write();
		errno = saved;
	}
	return n;
}
