/* SPDX-License-Identifier: MIT */
/*
 * topk_file.h - a heavy-hitter summary (topk.h) as a file, summary format
 * version 1 (byte layout drawn in topk_file.c and man/bf.5): what bftop
 * -o saves, -s loads, bfmerge merges and bfinfo shows.
 *
 * One gzip member like filter and sketch files, whose content opens with
 * its own magic; loading checks every header field before it allocates
 * anything, and refuses truncation, damage, trailing bytes, filters and
 * sketches. Saving to a path is atomic (atomic.h). The structure itself
 * lives in topk.c; this module only encodes and decodes it.
 */
#ifndef BFTOOLS_TOPK_FILE_H
#define BFTOOLS_TOPK_FILE_H

#include <stddef.h>

#include "topk.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOPK_FORMAT_VERSION 1u

/* Whether the first len bytes of a file open a summary: 1 yes, 0 no, -1 more bytes needed. */
int topk_file_detect(const unsigned char *start, size_t len);

/*
 * Whether the file at path ("-" is standard input) is a summary: 1, or 0
 * (something else, or it cannot be told without reading: a pipe). Reads
 * with pread, so the file's offset does not move and whoever reads it
 * next starts where it stood. For programs that take filters, sketches
 * and summaries alike (bfmerge, bfinfo).
 */
int topk_file_sniff_path(const char *path);

/* Read a summary from fd. A new summary, or NULL with *errstr. */
struct topk *topk_file_load(int fd, const char **errstr);
/* The same, for a file whose first len bytes were read already into start. */
struct topk *topk_file_load_started(int fd, const unsigned char *start, size_t len, int eof,
				    const char **errstr);
/* Open path ("-" is stdin) and load it. */
struct topk *topk_file_load_path(const char *path, const char **errstr);

/* Write t to fd as a complete summary file, the same bytes for the same summary. 0 or -1. */
int topk_file_save(const struct topk *t, int fd, const char **errstr);
/* Write t to path atomically (temporary file, fsync, rename). 0 or -1 with *errstr. */
int topk_file_save_path(const struct topk *t, const char *path, const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
