/* SPDX-License-Identifier: MIT */
/*
 * ranges.c - a regular file read in ranges by several threads (ranges.h).
 *
 * Range i is nominally [start + i * step, start + (i + 1) * step), the
 * last one ending at end; the records it hands out are those that begin
 * in it (lines.c cuts them). Claiming is one atomic increment, so the
 * threads share out the ranges as they go: on a machine shared with other
 * work a descheduled thread simply claims fewer. Each reader keeps its
 * own buffer, which lines_next_owned trades with the caller's batch.
 *
 * A read error stops every reader at its next call: as with one reader,
 * an input that cannot be read is not read further.
 *
 * Read by number (ranges_read), nothing is claimed: the caller says which
 * range, and the range's records come whole, in one batch, so that
 * batch i is the same whichever thread reads it.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline.h"
#include "ranges.h"

#define RANGES_MAX ((uint64_t)64 << 20)
/* Ranges per thread aimed at: more even out the last ones, fewer cost less claiming. */
#define RANGES_PER_THREAD 4

struct reader {
	struct lines_reader *lines;	/* NULL until the thread's first call */
	uint64_t handed;		/* its lines_bytes_read at its last call */
	int active;			/* it holds a range not yet at its end */
};

struct ranges {
	int fd;
	char delim;
	uint64_t start, end, step, count;
	atomic_uint_least64_t next;	/* the next range to claim */
	atomic_int err;			/* the first read error's errno */
	atomic_uint_least64_t bytes;	/* handed out by all readers */
	int nreaders;
	struct reader readers[];
};

uint64_t ranges_step(uint64_t bytes, int threads)
{
	uint64_t step = bytes / ((uint64_t)(threads > 1 ? threads : 1) * RANGES_PER_THREAD);

	if (step < RANGES_MIN)
		return RANGES_MIN;
	return step > RANGES_MAX ? RANGES_MAX : step;
}

int ranges_threads(uint64_t bytes, int threads)
{
	uint64_t step = ranges_step(bytes, threads), count = bytes / step + (bytes % step != 0);

	if (threads > PIPELINE_SLOTS)
		threads = PIPELINE_SLOTS;
	return count < (uint64_t)threads ? (int)count : threads < 1 ? 1 : threads;
}

struct ranges *ranges_open(int fd, uint64_t start, uint64_t end, char delim, int threads,
			   uint64_t step)
{
	struct ranges *rs;
	uint64_t bytes = end > start ? end - start : 0;

	if (threads < 1)
		threads = 1;
	rs = calloc(1, sizeof *rs + (size_t)threads * sizeof rs->readers[0]);
	if (rs == NULL)
		return NULL;
	rs->fd = fd;
	rs->delim = delim;
	rs->start = start;
	rs->end = start + bytes;
	rs->step = step ? step : ranges_step(bytes, threads);
	rs->count = bytes / rs->step + (bytes % rs->step != 0);
	rs->nreaders = threads;
	atomic_init(&rs->next, 0);
	atomic_init(&rs->err, 0);
	atomic_init(&rs->bytes, 0);
	return rs;
}

/* Point reader r at the next unclaimed range; 0 when none is left. */
static int claim(struct ranges *rs, struct reader *r)
{
	uint64_t i = atomic_fetch_add(&rs->next, 1), from, to;

	if (i >= rs->count)
		return 0;
	from = rs->start + i * rs->step;
	to = rs->end - from > rs->step ? from + rs->step : rs->end;
	lines_set_range(r->lines, from, to, i == 0);
	r->active = 1;
	return 1;
}

/* Note a failure for every reader; -1 with errno kept. */
static long fail(struct ranges *rs)
{
	int err = errno, none = 0;

	atomic_compare_exchange_strong(&rs->err, &none, err);
	errno = err;
	return -1;
}

long ranges_next(struct ranges *rs, int t, struct lines_batch *b)
{
	struct reader *r = &rs->readers[t];

	if (r->lines == NULL && (r->lines = lines_open_range(rs->fd, rs->delim)) == NULL) {
		errno = ENOMEM;
		return fail(rs);
	}
	while (atomic_load_explicit(&rs->err, memory_order_relaxed) == 0) {
		long n;
		uint64_t handed;

		if (!r->active && !claim(rs, r))
			return 0;
		n = lines_next_owned(r->lines, b);
		if (n < 0)
			return fail(rs);
		handed = lines_bytes_read(r->lines);
		atomic_fetch_add_explicit(&rs->bytes, handed - r->handed, memory_order_relaxed);
		r->handed = handed;
		if (n > 0)
			return n;
		r->active = 0;
	}
	return 0;
}

uint64_t ranges_ordered_step(int fd, uint64_t start, uint64_t end, char delim)
{
	char sample[RANGES_ORDERED_SAMPLE];
	size_t want = end - start < sizeof sample ? (size_t)(end - start) : sizeof sample, got = 0;
	uint64_t records = 0, step;

	while (got < want) {
		ssize_t n = pread(fd, sample + got, want - got, (off_t)(start + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return 0;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	for (const char *p = sample, *e = sample + got; p < e; p++) {
		p = memchr(p, delim, (size_t)(e - p));
		if (p == NULL)
			break;
		records++;
	}
	if (records == 0)	/* no record ends in the sample: long ones */
		return RANGES_ORDERED_MAX;
	step = (uint64_t)got / records * RANGES_ORDERED_RECORDS;
	if (step < RANGES_ORDERED_MIN)
		return RANGES_ORDERED_MIN;
	return step > RANGES_ORDERED_MAX ? RANGES_ORDERED_MAX : step;
}

uint64_t ranges_count(const struct ranges *rs)
{
	return rs->count;
}

uint64_t ranges_end_of(const struct ranges *rs, uint64_t i)
{
	uint64_t from = rs->start + i * rs->step;

	return i >= rs->count ? rs->end : rs->end - from > rs->step ? from + rs->step : rs->end;
}

long ranges_read(struct ranges *rs, uint64_t i, int t, struct lines_batch *b)
{
	struct reader *r = &rs->readers[t];
	long n;

	b->n = 0;
	if (i >= rs->count)
		return 0;
	if (r->lines == NULL && (r->lines = lines_open_range(rs->fd, rs->delim)) == NULL) {
		errno = ENOMEM;
		return fail(rs);
	}
	n = lines_read_range(r->lines, rs->start + i * rs->step, ranges_end_of(rs, i), i == 0, b);
	if (n < 0)
		return fail(rs);
	return n;
}

int ranges_error(struct ranges *rs)
{
	return atomic_load(&rs->err);
}

uint64_t ranges_bytes_read(struct ranges *rs)
{
	return atomic_load_explicit(&rs->bytes, memory_order_relaxed);
}

void ranges_close(struct ranges *rs)
{
	if (rs == NULL)
		return;
	for (int i = 0; i < rs->nreaders; i++)
		lines_close(rs->readers[i].lines);
	free(rs);
}
