/* SPDX-License-Identifier: MIT */
/*
 * test_writer_pipe.c - writer_init widens a pipe (lib/io/writer.c), so a
 * program writing faster than its reader does not block on every other
 * buffer; best effort, so where the system caps pipes lower it only must
 * not fail.
 */
#define _GNU_SOURCE	/* F_GETPIPE_SZ on Linux */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

void suite_writer_pipe(void)
{
	unit_run("writer: a pipe is widened to 1 MiB where the system allows it, silently",
		 a_pipe_is_widened_where_the_system_allows);
	unit_run("writer: a regular file is written as before", a_file_is_left_as_it_is);
}
