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
 * writer_async moves full buffers' write(2) to a thread of its own: the
 * caller swaps its full buffer for the thread's empty one (waiting only
 * if the thread is still writing the one before) and fills on. Errors
 * come back at the next swap or flush, and stay sticky as above.
 *
 * Deliberately absent: formatting (printf), and closing the descriptor.
 */
#define _GNU_SOURCE	/* F_GETPIPE_SZ and F_SETPIPE_SZ on Linux */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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

/* The writing thread's side: one buffer at a time, under mu. */
struct writer_thread {
	int fd;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *buf;		/* being written, or NULL; then spare is free */
	size_t len;
	char *spare;		/* the empty buffer the caller takes next */
	int failed;		/* errno of its first failed write, or 0 */
	int quit;
};

int writer_init(struct writer *w, int fd, size_t cap)
{
	widen_pipe(fd);
	if (cap == 0)
		cap = WRITER_DEFAULT_CAP;
	w->fd = fd;
	w->len = 0;
	w->line_buffered = 0;
	w->failed = 0;
	w->thread = NULL;
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

static void *writer_main(void *arg)
{
	struct writer_thread *t = arg;

	pthread_mutex_lock(&t->mu);
	for (;;) {
		while (t->buf == NULL && !t->quit)
			pthread_cond_wait(&t->cv, &t->mu);
		if (t->buf == NULL)
			break;
		pthread_mutex_unlock(&t->mu);
		/* after a failure nothing more is written: later bytes would land out of order */
		int failed = t->failed != 0 || writer_write_all(t->fd, t->buf, t->len) == 0 ? 0
			     : errno ? errno : EIO;
		pthread_mutex_lock(&t->mu);
		if (t->failed == 0)
			t->failed = failed;
		t->spare = t->buf;
		t->buf = NULL;
		pthread_cond_broadcast(&t->cv);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
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

/* Wait until the thread holds no buffer; its failure, if any, becomes the writer's. */
static int thread_idle(struct writer *w)
{
	struct writer_thread *t = w->thread;
	int failed;

	pthread_mutex_lock(&t->mu);
	while (t->buf != NULL)
		pthread_cond_wait(&t->cv, &t->mu);
	failed = t->failed;
	pthread_mutex_unlock(&t->mu);
	if (failed == 0)
		return 0;
	errno = failed;
	return fail(w);
}

/* The full buffer to the thread, its empty one back. */
static int hand_over(struct writer *w)
{
	struct writer_thread *t = w->thread;

	if (thread_idle(w) < 0)
		return -1;
	pthread_mutex_lock(&t->mu);
	t->buf = w->buf;
	t->len = w->len;
	w->buf = t->spare;
	t->spare = NULL;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
	w->len = 0;
	return 0;
}

/* Room in the buffer: what it holds on its way out (on the thread, if any). */
static int spill(struct writer *w)
{
	if (w->failed)
		return failed_before(w);
	if (w->len == 0)
		return 0;
	if (w->thread != NULL)
		return hand_over(w);
	if (writer_write_all(w->fd, w->buf, w->len) < 0)
		return fail(w);
	w->len = 0;
	return 0;
}

int writer_flush(struct writer *w)
{
	if (spill(w) < 0)
		return -1;
	return w->thread != NULL ? thread_idle(w) : 0;
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
	if (spill(w) < 0)
		return -1;
	if (len >= w->cap) {
		/* straight through, after everything before it */
		if (w->thread != NULL && thread_idle(w) < 0)
			return -1;
		return writer_write_all(w->fd, data, len) < 0 ? fail(w) : 0;
	}
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

/* Start the thread with every signal blocked but those a write itself raises. */
static int start_thread(struct writer_thread *t)
{
	sigset_t set, old;
	int err;

	sigfillset(&set);
	sigdelset(&set, SIGPIPE);
	sigdelset(&set, SIGXFSZ);
	pthread_sigmask(SIG_SETMASK, &set, &old);
	err = pthread_create(&t->thread, NULL, writer_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

int writer_async(struct writer *w)
{
	struct writer_thread *t;
	int err = ENOMEM;

	if (w->thread != NULL)
		return 0;
	if (w->line_buffered || w->buf == NULL) {
		errno = EINVAL;
		return -1;
	}
	if ((t = calloc(1, sizeof *t)) == NULL || (t->spare = malloc(w->cap)) == NULL)
		goto none;
	t->fd = w->fd;
	if ((err = pthread_mutex_init(&t->mu, NULL)) != 0)
		goto none;
	pthread_cond_init(&t->cv, NULL);	/* cannot fail with default attributes */
	if ((err = start_thread(t)) == 0) {
		w->thread = t;
		return 0;
	}
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
none:
	if (t != NULL)
		free(t->spare);
	free(t);
	errno = err;
	return -1;
}

static void stop_thread(struct writer *w)
{
	struct writer_thread *t = w->thread;

	pthread_mutex_lock(&t->mu);
	t->quit = 1;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t->spare);
	free(t);
	w->thread = NULL;
}

void writer_sync(struct writer *w)
{
	if (w->thread == NULL)
		return;
	(void)thread_idle(w);	/* a failure stays in w->failed */
	stop_thread(w);
}

int writer_finish(struct writer *w)
{
	int rc = writer_flush(w);
	int saved = errno;

	if (w->thread != NULL)
		stop_thread(w);
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
	errno = saved;
	return rc;
}
