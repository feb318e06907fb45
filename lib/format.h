/* SPDX-License-Identifier: MIT */
/*
 * format.h - the bftools filter file, format version 1 (byte layout drawn
 * in format.c and man/bf.5).
 *
 * A filter file is exactly one gzip member whose content is a 64-byte file
 * header, one 64-byte stage header per stage (version 1 writes one stage),
 * then each stage's bit array. Loading trusts nothing: every field is
 * range-checked and cross-checked against the payload length before any
 * memory is allocated; truncation, a bad CRC or length, bytes after the
 * member, and plain (uncompressed) files are all rejected.
 *
 * The library never prints: failures return NULL/-1 with a static message in
 * *errstr ("not a bftools filter (not gzip data)", "truncated", ...); for a
 * system error the message is strerror(errno).
 */
#ifndef BFTOOLS_FORMAT_H
#define BFTOOLS_FORMAT_H

#include "filter.h"

#define FORMAT_VERSION 1u

/*
 * Read one filter from fd (a file or a pipe) to its end. Returns a new
 * filter, or NULL with *errstr set.
 */
struct filter *format_load(int fd, const char **errstr);

/* Open path ("-" is stdin) and format_load it. */
struct filter *format_load_path(const char *path, const char **errstr);

/*
 * Write f to fd as a complete filter file. The compression level adapts per
 * chunk of the bit array: stored (level 0) where the bits look random, level
 * 1 where they are sparse enough to shrink. Returns 0, or -1 with *errstr.
 * Does not fsync or close fd.
 */
int format_save(const struct filter *f, int fd, const char **errstr);

/*
 * Write f to path atomically: a temporary file in the same directory,
 * fsync, rename over path. On failure path is untouched and the temporary
 * file is removed. Returns 0, or -1 with *errstr.
 */
int format_save_path(const struct filter *f, const char *path, const char **errstr);

#endif
