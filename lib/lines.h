/* SPDX-License-Identifier: MIT */
/*
 * lines.h - fast reading of delimiter-terminated records from a descriptor.
 *
 * Large read(2)s into one growable buffer and memchr to find the ends: no
 * fixed line length, no per-line system call or copy. Records end with a
 * delimiter byte ('\n', or '\0' for -z); the last record may lack it. Bytes
 * are bytes: NULs (with '\n' delimiters) and invalid UTF-8 are data, and no
 * locale is consulted.
 */
#ifndef BFTOOLS_LINES_H
#define BFTOOLS_LINES_H

#include <stddef.h>

#include "line.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lines_reader;

/* A reader over fd (not closed by lines_close). NULL on out of memory. */
struct lines_reader *lines_open(int fd, char delim);
void lines_close(struct lines_reader *r);

/*
 * Up to max complete records, without their delimiters. They stay valid
 * until the next call. Returns the count (> 0), 0 at end of input, or -1 on
 * a read error (errno set).
 */
long lines_next_batch(struct lines_reader *r, struct line *out, size_t max);

/* Bytes consumed so far (for progress and reports). */
unsigned long long lines_bytes_read(const struct lines_reader *r);

#ifdef __cplusplus
}
#endif

#endif
