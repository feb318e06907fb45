/* SPDX-License-Identifier: MIT */
/*
 * ranges.h - one regular file read by several threads at once, each
 * reading ranges of its own with pread(2), for work that does not need the
 * records in order (counting, setting bits, yes-or-no questions); or
 * read by number, each range whole into one batch, for a caller that puts
 * the batches back in file order (ranges_read).
 *
 * The file's bytes [start, end) are divided into ranges of a nominal size
 * (ranges_step), claimed by the threads one at a time as they finish the
 * last, so a thread that is descheduled or slower holds up no other. Each
 * range hands out the records that begin in it (lines_set_range): every
 * record of the file is read exactly once, by one thread, whatever the
 * record lengths. No range is cut ahead: a thread finds its range's first
 * record by reading on from the nominal boundary to the next delimiter.
 */
#ifndef BFTOOLS_RANGES_H
#define BFTOOLS_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "lines.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The smallest range: below this, claiming and cutting would cost more than they share. */
#define RANGES_MIN ((uint64_t)512 << 10)

/*
 * The nominal range size for bytes read by threads: about four ranges a
 * thread, so that the last ones even out, within [RANGES_MIN, 64 MiB].
 */
uint64_t ranges_step(uint64_t bytes, int threads);

/*
 * How many threads are worth starting on bytes (at most threads, and at
 * most one a range of ranges_step); 1 means: read it as one stream.
 */
int ranges_threads(uint64_t bytes, int threads);

struct ranges;

/*
 * Bytes [start, end) of the regular file fd (not closed by ranges_close),
 * a record beginning at start, in ranges of step bytes (0: ranges_step's),
 * for up to threads readers numbered 0..threads-1. NULL when out of memory.
 */
struct ranges *ranges_open(int fd, uint64_t start, uint64_t end, char delim, int threads,
			   uint64_t step);

/*
 * Reader t's next records into b (as lines_next_owned), from the range it
 * is reading or the next one it claims. Only one thread may use a given
 * t at a time. Returns the count (> 0), 0 when no range is left or any
 * reader has failed (then none reads on), or -1 with errno (which
 * ranges_error then returns).
 */
long ranges_next(struct ranges *rs, int t, struct lines_batch *b);

/*
 * Ranges read by number instead of claimed, for a caller that takes the
 * ranges' records in file order (each range one batch, whichever thread
 * read it). Their size must not depend on the thread count, so that
 * batch i is the same records however many threads there are; it follows
 * the records' length instead, as a stream's batches do: about
 * RANGES_ORDERED_RECORDS records of the length of those in the first
 * RANGES_ORDERED_SAMPLE bytes, within [RANGES_ORDERED_MIN,
 * RANGES_ORDERED_MAX]. So short lines do not make batches of too many
 * records (their keys and hashes are a batch's memory), nor long ones
 * batches too small to share.
 */
#define RANGES_ORDERED_RECORDS 8192
#define RANGES_ORDERED_SAMPLE ((size_t)64 << 10)
#define RANGES_ORDERED_MIN ((uint64_t)64 << 10)
#define RANGES_ORDERED_MAX ((uint64_t)1 << 20)

/*
 * The range size for bytes [start, end) of the regular file fd read in
 * order, from its first bytes (pread: fd's offset is not moved). 0 with
 * errno when they cannot be read.
 */
uint64_t ranges_ordered_step(int fd, uint64_t start, uint64_t end, char delim);

/* How many ranges rs has: 0 .. ranges_count - 1. */
uint64_t ranges_count(const struct ranges *rs);

/* The file offset where range i ends (nominally: its last record may end later). */
uint64_t ranges_end_of(const struct ranges *rs, uint64_t i);

/*
 * Every record that begins in range i into b at once (lines_read_range),
 * with reader t's buffers: only one thread may use a given t at a time.
 * Returns the count (0: none begins there), or -1 with errno, which
 * ranges_error then returns too. Unlike ranges_next, an earlier failure
 * does not stop it: the caller decides what to read.
 */
long ranges_read(struct ranges *rs, uint64_t i, int t, struct lines_batch *b);

/* The errno of the first read that failed, or 0. */
int ranges_error(struct ranges *rs);

/* Bytes handed out so far by all readers, for progress. */
uint64_t ranges_bytes_read(struct ranges *rs);

void ranges_close(struct ranges *rs);

#ifdef __cplusplus
}
#endif

#endif
