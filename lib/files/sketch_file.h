/* SPDX-License-Identifier: MIT */
/*
 * sketch_file.h - HyperLogLog sketches (sketch.h) saved and loaded: one
 * gzip member, a checked header, a strict loader, atomic saves (bf(5)).
 */
#ifndef BFTOOLS_SKETCH_FILE_H
#define BFTOOLS_SKETCH_FILE_H

#include <stddef.h>

#include "sketch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The message for a bftools filter where a sketch was wanted. */
extern const char sketch_err_filter[];
extern const char sketch_err_summary[];	/* a bftop summary given as a sketch */

/*
 * Whether the first len bytes of a file open a sketch file: 1 yes, 0 no,
 * -1 cannot tell yet (more bytes needed). For telling files apart before
 * reading them (format_load_any).
 */
int sketch_detect(const unsigned char *start, size_t len);

/* Read a sketch file from fd. Returns a new sketch, or NULL with *errstr. */
struct sketch *sketch_load(int fd, const char **errstr);

/* The same, for a file whose first len bytes were read already into start (eof: nothing follows). */
struct sketch *sketch_load_started(int fd, const unsigned char *start, size_t len, int eof,
				  const char **errstr);

/* Open path ("-" is stdin) and sketch_load it. */
struct sketch *sketch_load_path(const char *path, const char **errstr);

/*
 * Write s to fd as a complete sketch file, the same bytes for the same
 * sketch. Returns 0, or -1 with *errstr. Does not fsync or close fd.
 */
int sketch_save(const struct sketch *s, int fd, const char **errstr);

/*
 * Write s to path atomically: a temporary file in the same directory,
 * fsync, rename over path; on failure path is untouched. 0, or -1 with
 * *errstr.
 */
int sketch_save_path(const struct sketch *s, const char *path, const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
