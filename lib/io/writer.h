/* SPDX-License-Identifier: MIT */
/*
 * writer.h - buffered, checked output to a descriptor.
 *
 * stdio would do, but this writer batches records with one memcpy each,
 * never locks, and reports the first write error (ENOSPC, EPIPE, EBADF) to
 * the caller instead of losing it: every put returns -1 once output failed.
 */
#ifndef BFTOOLS_WRITER_H
#define BFTOOLS_WRITER_H

#include <stddef.h>

#include "line.h"

#ifdef __cplusplus
extern "C" {
#endif

struct writer_thread;

struct writer {
	int fd;
	char *buf;
	size_t len, cap;
	int line_buffered;	/* flush after every record */
	int failed;		/* errno of the first failure, or 0 */
	struct writer_thread *thread;	/* writer_async's, or NULL */
};

/*
 * Write all len bytes to fd, finishing short writes and retrying EINTR
 * (the loop behind the writer, for anything else that writes a buffer
 * out). Returns 0, or -1 with errno set.
 */
int writer_write_all(int fd, const void *data, size_t len);

/* What writer_init widens a pipe to, where it can (Linux: the unprivileged most by default). */
#define WRITER_PIPE_SIZE (1 << 20)

/* Returns 0, or -1 when out of memory. A pipe fd is widened (WRITER_PIPE_SIZE), best effort. */
int writer_init(struct writer *w, int fd, size_t cap);

/* Append bytes. Returns 0, or -1 with errno set once writing failed. */
int writer_put(struct writer *w, const void *data, size_t len);

/* Append a record and its delimiter. */
int writer_record(struct writer *w, struct line record, char delim);

/*
 * Write full buffers on a thread of their own from now on, while the
 * caller fills the next (a second buffer of the same size): for a program
 * whose one ordered thread is its ceiling, write(2) of a fast output (page
 * cache, a fast reader) is half of that thread's time. Best effort: 0 when
 * the thread runs, -1 (nothing changed, errno) when it could not start.
 * Not with line_buffered (every record is a flush). The thread blocks
 * every signal, so a write to a closed pipe fails with EPIPE there, kept
 * as any failure is, where SIGPIPE is ignored; where it is not, the
 * signal goes to the process as it would from the calling thread.
 * writer_flush and writer_finish return only once all is written, as
 * without it; between them a failure shows at a later put.
 */
int writer_async(struct writer *w);

/*
 * Back to writing on the calling thread: waits until what the thread has
 * is written, and stops it (what is still in the buffer stays there).
 * For a program about to exit in trouble: no thread may write on while
 * exit(3) runs. Nothing when there is no thread.
 */
void writer_sync(struct writer *w);

/* Write out everything buffered. Returns 0 or -1 (errno). */
int writer_flush(struct writer *w);

/* Flush and free the buffer (fd is not closed). Returns 0 or -1 (errno). */
int writer_finish(struct writer *w);

#ifdef __cplusplus
}
#endif

#endif
