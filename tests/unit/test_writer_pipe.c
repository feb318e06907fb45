/* SPDX-License-Identifier: MIT */
/*
 * test_writer_pipe.c - writer_init widens a pipe (lib/io/writer.c), so a
 * program writing faster than its reader does not block on every other
 * buffer; best effort, so where the system caps pipes lower it only must
 * not fail. And writer_async: the same bytes as writing on the calling
 * thread, flush and finish complete, a failure kept and reported.
 */
#define _GNU_SOURCE	/* F_GETPIPE_SZ on Linux */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "writer.h"

/* /proc/sys/fs/pipe-max-size, or -1 where there is none (not Linux). */
static long pipe_max_size(void)
{
	FILE *f = fopen("/proc/sys/fs/pipe-max-size", "r");
	long max = -1;

	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld", &max) != 1)
		max = -1;
	fclose(f);
	return max;
}

static void a_pipe_is_widened_where_the_system_allows(void)
{
	int fds[2];
	struct writer w;
	long max = pipe_max_size();

	CHECK(pipe(fds) == 0);
	errno = 0;
	CHECK(writer_init(&w, fds[1], 0) == 0);
	CHECK(errno == 0);	/* best effort: nothing reported, even if refused */
#ifdef F_GETPIPE_SZ
	/* root may always widen; others up to pipe-max-size (1 MiB by default) */
	if (max >= WRITER_PIPE_SIZE || geteuid() == 0)
		CHECKF(fcntl(fds[1], F_GETPIPE_SZ) >= WRITER_PIPE_SIZE, "pipe of %d bytes",
		       fcntl(fds[1], F_GETPIPE_SZ));
#endif
	(void)max;
	CHECK(writer_finish(&w) == 0);
	close(fds[0]);
	close(fds[1]);
}

static void a_file_is_left_as_it_is(void)
{
	int fd = unit_temp_file("", 0);
	struct writer w;

	CHECK(fd >= 0);
	CHECK(writer_init(&w, fd, 16) == 0);
	CHECK(writer_record(&w, (struct line){ "x", 1 }, '\n') == 0);
	CHECK(writer_finish(&w) == 0);
	CHECK(lseek(fd, 0, SEEK_END) == 2);
	close(fd);
}

/* Records of 0..300 bytes, some longer than the buffer, written to fd by a writer of cap bytes. */
static int write_records(int fd, size_t cap, int async, int flush_every)
{
	struct writer w;
	char rec[300];
	int ok;

	ok = writer_init(&w, fd, cap) == 0 && (!async || writer_async(&w) == 0);
	for (unsigned i = 0; ok && i < 5000; i++) {
		size_t len = (i * 7919u) % sizeof rec;

		memset(rec, 'a' + (int)(i % 26), len);
		ok = writer_record(&w, (struct line){ rec, len }, '\n') == 0;
		if (ok && flush_every && i % flush_every == 0)
			ok = writer_flush(&w) == 0;
	}
	return writer_finish(&w) == 0 && ok;
}

static unsigned char *file_bytes(int fd, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	unsigned char *b = end >= 0 ? malloc((size_t)end + 1) : NULL;

	*len = b != NULL && pread(fd, b, (size_t)end, 0) == end ? (size_t)end : 0;
	return b;
}

static void async_writes_the_same_bytes(void)
{
	static const size_t caps[] = { 16, 256, 4096, 0 };

	for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
		int one = unit_temp_file("", 0), two = unit_temp_file("", 0);
		size_t len1 = 0, len2 = 0;
		unsigned char *b1, *b2;

		CHECK(one >= 0 && two >= 0);
		CHECK(write_records(one, caps[c], 0, 0));
		CHECK(write_records(two, caps[c], 1, (int)c * 97));
		b1 = file_bytes(one, &len1);
		b2 = file_bytes(two, &len2);
		CHECKF(b1 != NULL && b2 != NULL && len1 > 0 && len1 == len2 && memcmp(b1, b2, len1) == 0,
		       "cap %zu: %zu against %zu bytes", caps[c], len1, len2);
		free(b1);
		free(b2);
		close(one);
		close(two);
	}
}

/* A write that fails on the thread (EPIPE, SIGPIPE ignored) is reported by a later call, and sticks. */
static void async_reports_a_failed_write(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	struct writer w;
	char rec[100] = { 0 };
	int fds[2], rc = 0;

	sigemptyset(&ign.sa_mask);
	CHECK(sigaction(SIGPIPE, &ign, &old) == 0);
	CHECK(pipe(fds) == 0);
	close(fds[0]);
	CHECK(writer_init(&w, fds[1], 64) == 0 && writer_async(&w) == 0);
	for (int i = 0; rc == 0 && i < 100; i++)
		rc = writer_record(&w, (struct line){ rec, sizeof rec }, '\n');
	if (rc == 0)
		rc = writer_flush(&w);
	CHECKF(rc == -1 && errno == EPIPE, "rc %d, errno %d", rc, errno);
	CHECK(writer_record(&w, (struct line){ rec, 1 }, '\n') == -1 && errno == EPIPE);
	CHECK(writer_finish(&w) == -1 && errno == EPIPE);
	close(fds[1]);
	sigaction(SIGPIPE, &old, NULL);
}

/* writer_sync stops the thread once its buffer is out; the writer goes on, on this thread. */
static void sync_after_async_goes_on_in_order(void)
{
	int fd = unit_temp_file("", 0);
	struct writer w;
	size_t len = 0;
	unsigned char *b;

	CHECK(fd >= 0 && writer_init(&w, fd, 4) == 0 && writer_async(&w) == 0);
	CHECK(writer_put(&w, "abcdef", 6) == 0 && writer_put(&w, "gh", 2) == 0);
	writer_sync(&w);
	CHECK(w.thread == NULL);
	CHECK(writer_put(&w, "ijk", 3) == 0 && writer_finish(&w) == 0);
	b = file_bytes(fd, &len);
	CHECKF(b != NULL && len == 11 && memcmp(b, "abcdefghijk", 11) == 0, "%zu bytes", len);
	free(b);
	close(fd);
}

/* No thread for a line-buffered writer (every record is a flush); a second writer_async keeps the one. */
static void async_is_refused_where_it_cannot_help(void)
{
	int fd = unit_temp_file("", 0);
	struct writer w;

	CHECK(fd >= 0 && writer_init(&w, fd, 64) == 0);
	w.line_buffered = 1;
	errno = 0;
	CHECK(writer_async(&w) == -1 && errno == EINVAL && w.thread == NULL);
	writer_sync(&w);	/* no thread: nothing */
	w.line_buffered = 0;
	CHECK(writer_async(&w) == 0 && w.thread != NULL);
	CHECK(writer_async(&w) == 0);
	CHECK(writer_record(&w, (struct line){ "y", 1 }, '\n') == 0 && writer_finish(&w) == 0);
	CHECK(lseek(fd, 0, SEEK_END) == 2);
	close(fd);
}

void suite_writer_pipe(void)
{
	unit_run("writer: async is refused for a line-buffered writer, and asked twice keeps one thread",
		 async_is_refused_where_it_cannot_help);
	unit_run("writer: async writes the very bytes of the calling thread, flushed or not, any buffer size",
		 async_writes_the_same_bytes);
	unit_run("writer: async reports a write that failed on its thread, and the failure sticks",
		 async_reports_a_failed_write);
	unit_run("writer: writer_sync after async writes what the thread had, then goes on in order",
		 sync_after_async_goes_on_in_order);
	unit_run("writer: a pipe is widened to 1 MiB where the system allows it, silently",
		 a_pipe_is_widened_where_the_system_allows);
	unit_run("writer: a regular file is written as before", a_file_is_left_as_it_is);
}
