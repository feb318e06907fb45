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

struct writer {
	int fd;
	char *buf;
	size_t len, cap;
	int line_buffered;	/* flush after every record */
	int failed;		/* errno of the first failure, or 0 */
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

/* Write out everything buffered. Returns 0 or -1 (errno). */
int writer_flush(struct writer *w);

/* Flush and free the buffer (fd is not closed). Returns 0 or -1 (errno). */
int writer_finish(struct writer *w);

#ifdef __cplusplus
}
#endif

#endif
