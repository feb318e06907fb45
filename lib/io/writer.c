/* SPDX-License-Identifier: MIT */
/*
 * writer.c - buffered, checked output to a descriptor.
 *
 * Records are memcpy'd into one buffer that goes out in a single write(2)
 * when full; a record that alone is at least a buffer long skips the copy
 * and is written straight through (after what is buffered, so order holds).
 * The write loop finishes short writes and retries EINTR.
 *
 * Errors are sticky: the first failure's errno is kept in w->failed, the
 * buffered bytes are dropped (they can no longer reach the output in
 * order), and every later call returns -1 with errno set to it again. A
 * tool can therefore write its whole output unchecked and test once, at
 * writer_finish, and still report the real cause (ENOSPC, EPIPE, EBADF).
 *
 * A capacity of 0 asks for the default, WRITER_DEFAULT_CAP.
 *
 * A pipe is widened to WRITER_PIPE_SIZE where Linux allows it (as
 * lines.c widens an input pipe): with the 64 KiB default, a program
 * writing faster than its reader reads blocks on every other buffer,
 * and each block is a pair of context switches on both sides.
 *
 * Deliberately absent: formatting (printf), and closing the descriptor.
 */
#define _GNU_SOURCE	/* F_GETPIPE_SZ and F_SETPIPE_SZ on Linux */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writer.h"

/* 64 KiB: a pipe's default size, so one flush fills a reader's pipe once. */
#define WRITER_DEFAULT_CAP ((size_t)64 * 1024)
/* One write(2) never asks for more than this (it must fit ssize_t). */
#define WRITER_MAX_WRITE ((size_t)1 << 30)

/* Best effort: a pipe wider, errno untouched; anything refused changes nothing. */
static void widen_pipe(int fd)
{
#if defined(F_GETPIPE_SZ) && defined(F_SETPIPE_SZ)
	struct stat st;
	int saved = errno;

	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && fcntl(fd, F_GETPIPE_SZ) < WRITER_PIPE_SIZE)
		(void)fcntl(fd, F_SETPIPE_SZ, WRITER_PIPE_SIZE);
	errno = saved;
#else
	(void)fd;
#endif
}

int writer_init(struct writer *w, int fd, size_t cap)
{
	widen_pipe(fd);
	if (cap == 0)
		cap = WRITER_DEFAULT_CAP;
	w->fd = fd;
	w->len = 0;
	w->line_buffered = 0;
	w->failed = 0;
	w->buf = malloc(cap);
	w->cap = w->buf ? cap : 0;
	return w->buf ? 0 : -1;
}

int writer_write_all(int fd, const void *data, size_t n)
{
	const char *p = data;

	while (n > 0) {
		size_t chunk = n < WRITER_MAX_WRITE ? n : WRITER_MAX_WRITE;
		ssize_t done = write(fd, p, chunk);

		if (done < 0 && errno == EINTR)
			continue;
		if (done < 0)
			return -1;
		if (done == 0) {
			errno = EIO;	/* no progress and no reason: do not spin */
			return -1;
		}
		p += done;
		n -= (size_t)done;
	}
	return 0;
}

/* Records the first failure (errno) and drops what can no longer be written. */
static int fail(struct writer *w)
{
	w->failed = errno ? errno : EIO;
	w->len = 0;
	errno = w->failed;
	return -1;
}

static int failed_before(const struct writer *w)
{
	errno = w->failed;
	return -1;
}

int writer_flush(struct writer *w)
{
	if (w->failed)
		return failed_before(w);
	if (w->len == 0)
		return 0;
	if (writer_write_all(w->fd, w->buf, w->len) < 0)
		return fail(w);
	w->len = 0;
	return 0;
}

int writer_put(struct writer *w, const void *data, size_t len)
{
	if (w->failed)
		return failed_before(w);
	if (len <= w->cap - w->len) {
		if (len > 0)
			memcpy(w->buf + w->len, data, len);
		w->len += len;
		return 0;
	}
	if (writer_flush(w) < 0)
		return -1;
	if (len >= w->cap)
		return writer_write_all(w->fd, data, len) < 0 ? fail(w) : 0;
	memcpy(w->buf, data, len);
	w->len = len;
	return 0;
}

int writer_record(struct writer *w, struct line record, char delim)
{
	if (!w->failed && record.len < w->cap - w->len) {
		/* The common case: record and delimiter fit, one copy, no calls. */
		if (record.len > 0)
			memcpy(w->buf + w->len, record.data, record.len);
		w->buf[w->len + record.len] = delim;
		w->len += record.len + 1;
	} else if (writer_put(w, record.data, record.len) < 0 ||
		   writer_put(w, &delim, 1) < 0) {
		return -1;
	}
	return w->line_buffered ? writer_flush(w) : 0;
}

int writer_finish(struct writer *w)
{
	int rc = writer_flush(w);
	int saved = errno;

	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
	errno = saved;
	return rc;
}
