/* SPDX-License-Identifier: MIT */
/*
 * lines.c - the line reader: records out of one growable buffer.
 *
 * The buffer holds bytes read but not yet handed out, [start, end):
 *
 *   0          start                     scanned        end          cap
 *   +----------+-------------------------+--------------+------------+
 *   | handed   | complete records and a partial tail    | free       |
 *   | out      |                         | (no delim in |            |
 *   |          |                         |  [.., end))  |            |
 *   +----------+-------------------------+--------------+------------+
 *
 * A batch is a run of memchr calls over that span: each record is a pointer
 * into the buffer, so nothing is copied per line. The buffer is only moved
 * (compacted to the front, or doubled by realloc) when the call has not yet
 * handed out anything, which is what keeps the previous batch valid until
 * the next call and this batch valid until the one after. Compaction moves
 * at most one partial record, because we only refill when no complete
 * record is left. `scanned` remembers how far the tail is known to hold no
 * delimiter, so a 100 MB record is searched once, not once per refill.
 *
 * A call that has records in hand returns them rather than reading again:
 * on a pipe that read could block, and a tool in a streaming pipeline must
 * emit what it has. After read(2) reports end of input we never read again
 * (a terminal would otherwise wait for a second end-of-file).
 *
 * Asking for zero records is an error (EINVAL), not end of input.
 *
 * A timed call (lines_next_owned_within) waits for input with poll(2) up
 * to a deadline and then returns LINES_IDLE with nothing handed out: a
 * record begun stays in the buffer, so the next call goes on as if the
 * wait had never ended. The deadline is for the whole call, so a partial
 * record arriving a byte at a time cannot hold the caller off either.
 *
 * A ranged reader (lines_open_range) reads a regular file with pread(2)
 * instead, so that readers on several threads can share one descriptor,
 * and its records are those that begin in [from, to): refill skips the
 * record begun before `from` (everything up to the first delimiter at or
 * after from - 1) and stops the stream after the record that holds byte
 * to - 1 (at the first delimiter at or after it). Everything above the
 * refill is the same code: it only ever sees the range's own bytes. Cut so,
 * ranges that tile a file hand out each record exactly once, whatever
 * their sizes and wherever the delimiters fall: a record longer than a
 * range belongs to the one range it begins in, and the ranges it covers
 * entirely hold nothing (their skip reads up to `to` and finds no start).
 *
 * A stream reader (lines_open_stream) takes its bytes from an instream
 * (instream.h: the input decompressed when it is compressed) instead of
 * read(2): the bytes are decoded straight into the buffer, so records cost
 * no copy more than plain input, and the wait for input (poll) happens
 * only when the stream has to read its descriptor.
 * A CSV reader (lines_csv) ends a record only at a delimiter outside
 * quotes, RFC 4180's way: a field that begins with a quote runs to the
 * quote that is not doubled, whatever delimiters and separators it holds.
 * `scanned` then also carries the quote state at that point (csv_state),
 * so a record of many lines is still scanned once. A line without a quote,
 * begun outside quotes, costs one more memchr; only lines with quotes go
 * byte by byte. Like Python's csv module, a quote inside an unquoted field
 * is data, and bytes after a closing quote belong to the same field (keys.c
 * reads them so too). A quote left open at the end of input is an error
 * (lines_error), after every record before the one it opened: that record
 * cannot be told from the rest of the input, so nothing of it is handed
 * out, as zcat stops at damage. CSV readers are never ranged: a range cannot know
 * whether it begins inside quotes.
 *
 * Deliberately absent: shrinking the buffer after a huge record, seeking
 * a stream, and any decoding of the bytes here (instream.c does that).
 */
#define _GNU_SOURCE	/* F_GETPIPE_SZ and F_SETPIPE_SZ on Linux */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "instream.h"
#include "iosize.h"
#include "lines.h"

/* Big enough that the per-read cost vanishes, small enough to stay cached (iosize.h). */
#define LINES_INITIAL_CAP IOSIZE_BUFFER
/* What we ask a pipe to hold: the default 64 KiB means 16x more wakeups. */
#define LINES_PIPE_SIZE (1 << 20)
/*
 * One read(2) for an owned batch asks for enough bytes for about
 * LINES_BATCH_TARGET records of the length seen so far, within
 * [LINES_OWNED_MIN, LINES_OWNED_MAX], and LINES_OWNED_FIRST before any
 * record is seen. Each batch is handed between two threads, so bigger
 * batches cost less a line: 60-byte records in 512 KiB reads instead of
 * 128 KiB took bfgrep from 0.194 to 0.171 s a 10M-line file. Counting in
 * records keeps short lines modest: 7-byte records get 64 KiB reads, and
 * the memory of a batch (its spans, keys and hashes) follows its records.
 */
#define LINES_BATCH_TARGET 8192
#define LINES_OWNED_MIN ((size_t)1 << 16)
#define LINES_OWNED_FIRST ((size_t)1 << 17)
#define LINES_OWNED_MAX ((size_t)1 << 19)
/* The first size of an owned batch's record array; it doubles as needed. */
#define LINES_BATCH_RECORDS 4096
/* One read(2) never asks for more than this (SSIZE_MAX limits; 1 GiB is plenty). */
#define LINES_MAX_READ ((size_t)1 << 30)
/*
 * A ranged reader reads little past its range's end: what is left of the
 * range and this much more, where its last record most likely ends. The
 * next range reads those bytes again, so more would be waste.
 */
#define LINES_RANGE_TAIL ((size_t)1 << 14)

struct lines_reader {
	char *buf;
	size_t cap;
	size_t start;		/* first byte not yet handed out */
	size_t scanned;		/* [start, scanned) holds no delimiter */
	size_t end;		/* one past the last byte read */
	unsigned long long consumed;
	unsigned long long records;	/* handed out so far */
	int fd;
	struct instream *stream;	/* lines_open_stream: the bytes come from it, not fd */
	int eof;		/* read(2) returned 0: never read again */
	unsigned char delim;
	/* a CSV reader (lines_csv): */
	int csv;
	unsigned char csv_sep;
	int csv_state;		/* the quote state at scanned (enum csv_state) */
	const char *why;	/* lines_error: what is wrong with the input, or NULL */
	/* a ranged reader (lines_open_range): */
	int ranged;
	int skipping;		/* still looking for the range's first record */
	uint64_t pos;		/* the file offset of the next byte to read */
	uint64_t stop;		/* records beginning at or after this are not ours */
};

/* Where a CSV scan stands: at a field's start, in an unquoted field, in quotes, just past a quote in them. */
enum csv_state { CSV_FIELD_START, CSV_UNQUOTED, CSV_QUOTED, CSV_QUOTE_SEEN };

/*
 * Process-wide: a descriptor that becomes readable when reading should
 * stop (lines_stop_when_readable), or -1. Set before any reader thread
 * starts, so every thread sees it.
 */
static int stop_fd = -1;

void lines_stop_when_readable(int fd)
{
	stop_fd = fd;
}

/* What await_input found. */
enum { AWAIT_STOP, AWAIT_READ, AWAIT_IDLE };

/* Milliseconds from now to deadline (CLOCK_MONOTONIC), 0 once past; -1 for no deadline. */
static int ms_left(const struct timespec *deadline)
{
	struct timespec now;
	long long ms;

	if (deadline == NULL)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(deadline->tv_sec - now.tv_sec) * 1000 +
	     (deadline->tv_nsec - now.tv_nsec) / 1000000;
	if (ms <= 0)
		return 0;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/*
 * Wait for input on r->fd, or for stop_fd, or until deadline (NULL: no
 * deadline). A signal handler cannot wake a read(2) already blocked in
 * another thread, but it can write to a pipe that poll(2) watches, and no
 * signal is lost between a check and the read. Stop wins when both are
 * ready; input wins over a deadline just past.
 */
static int await_input(const struct lines_reader *r, const struct timespec *deadline)
{
	struct pollfd fds[2] = { { r->fd, POLLIN, 0 }, { stop_fd, POLLIN, 0 } };
	nfds_t n = stop_fd < 0 ? 1 : 2;

	/* no stop to watch and no deadline, or decompressed bytes still to hand out */
	if ((stop_fd < 0 && deadline == NULL) ||
	    (r->stream != NULL && !instream_needs_input(r->stream)))
		return AWAIT_READ;
	for (;;) {
		int ready = poll(fds, n, ms_left(deadline));

		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			return AWAIT_READ;	/* the read reports what is wrong */
		if (ready == 0)
			return AWAIT_IDLE;
		if (n == 2 && fds[1].revents)
			return AWAIT_STOP;
		if (fds[0].revents)
			return AWAIT_READ;
	}
}

/*
 * Stop reading: what is buffered up to the last delimiter is still handed
 * out; a line read only in part is dropped, as it never ended.
 */
static void stop_at_last_delimiter(struct lines_reader *r)
{
	size_t end = r->end;

	/* refill comes only when [start, end) holds no complete record */
	if (r->csv)
		end = r->start;
	while (end > r->start && (unsigned char)r->buf[end - 1] != r->delim)
		end--;
	r->end = end;
	if (r->scanned > r->end)
		r->scanned = r->end;
	r->eof = 1;
}

/* Hints that make large sequential reads cheaper; failure changes nothing. */
static void advise_descriptor(int fd)
{
	struct stat st;
	int saved = errno;

	if (fstat(fd, &st) < 0) {
		errno = saved;
		return;
	}
	if (S_ISREG(st.st_mode))
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#if defined(F_GETPIPE_SZ) && defined(F_SETPIPE_SZ)
	if (S_ISFIFO(st.st_mode) && fcntl(fd, F_GETPIPE_SZ) < LINES_PIPE_SIZE)
		(void)fcntl(fd, F_SETPIPE_SZ, LINES_PIPE_SIZE);
#endif
	errno = saved;
}

/* A reader of fd with its first buffer and nothing read; NULL (ENOMEM) if there is no memory. */
static struct lines_reader *reader_new(int fd, char delim)
{
	struct lines_reader *r = calloc(1, sizeof *r);

	if (!r)
		return NULL;
	r->buf = malloc(LINES_INITIAL_CAP);
	if (!r->buf) {
		free(r);
		return NULL;
	}
	r->cap = LINES_INITIAL_CAP;
	r->fd = fd;
	r->delim = (unsigned char)delim;
	return r;
}

struct lines_reader *lines_open(int fd, char delim)
{
	struct lines_reader *r = reader_new(fd, delim);

	if (r)
		advise_descriptor(fd);
	return r;
}

struct lines_reader *lines_open_stream(struct instream *s, char delim)
{
	struct lines_reader *r = lines_open(instream_fd(s), delim);

	if (r)
		r->stream = s;
	return r;
}

struct lines_reader *lines_open_range(int fd, char delim)
{
	struct lines_reader *r = reader_new(fd, delim);

	if (!r)
		return NULL;
	r->ranged = 1;
	r->eof = 1;	/* no range yet */
	return r;
}

void lines_set_range(struct lines_reader *r, uint64_t from, uint64_t to, int at_record)
{
	r->start = r->scanned = r->end = 0;
	r->eof = to <= from;
	r->skipping = from > 0 && !at_record;
	r->pos = r->skipping ? from - 1 : from;
	r->stop = to;
}

void lines_csv(struct lines_reader *r, char separator)
{
	r->csv = 1;
	r->csv_sep = (unsigned char)separator;
	r->csv_state = CSV_FIELD_START;
}

void lines_close(struct lines_reader *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}

/* One byte outside quotes or just past a closing one: the next state, or -1 at a record's end. */
static int csv_step(const struct lines_reader *r, int state, unsigned char c)
{
	if (c == r->delim)
		return -1;
	if (c == r->csv_sep)
		return CSV_FIELD_START;
	if (c == '"' && state == CSV_FIELD_START)
		return CSV_QUOTED;
	return CSV_UNQUOTED;
}

/* Byte by byte from p: the delimiter that ends the record, or NULL (state at end kept). */
static char *csv_scan(struct lines_reader *r, char *p, char *end)
{
	int state = r->csv_state;

	for (; p < end; p++) {
		unsigned char c;

		/* inside an unquoted field only a separator or delimiter matters */
		if (state == CSV_UNQUOTED)
			while (p < end && (unsigned char)*p != r->delim && (unsigned char)*p != r->csv_sep)
				p++;
		if (p == end)
			break;
		c = (unsigned char)*p;
		if (state == CSV_QUOTED) {
			char *q = memchr(p, '"', (size_t)(end - p));

			if (q == NULL)
				break;
			p = q;
			state = CSV_QUOTE_SEEN;
		} else if (state == CSV_QUOTE_SEEN && c == '"') {
			state = CSV_QUOTED;	/* a doubled quote: still in quotes */
		} else if ((state = csv_step(r, state, c)) < 0) {
			r->csv_state = CSV_FIELD_START;
			return p;
		}
	}
	r->csv_state = state;
	return NULL;
}

/* The delimiter in [scan, end) that ends the record, or NULL; CSV-aware. */
static char *record_end(struct lines_reader *r, char *scan, char *end)
{
	char *d = memchr(scan, r->delim, (size_t)(end - scan));
	char *stop = d ? d : end;

	if (!r->csv)
		return d;
	/* the common line: begun outside quotes, and no quote in it */
	if (r->csv_state != CSV_QUOTED && memchr(scan, '"', (size_t)(stop - scan)) == NULL) {
		if (d) {
			r->csv_state = CSV_FIELD_START;
			return d;
		}
		if (stop > scan)
			r->csv_state = (unsigned char)stop[-1] == r->csv_sep ? CSV_FIELD_START
									  : CSV_UNQUOTED;
		return NULL;
	}
	return csv_scan(r, scan, end);
}

/* Hands out complete records from the buffer; never reads or moves it. */
static size_t take_records(struct lines_reader *r, struct line *out, size_t max)
{
	char *p = r->buf + r->start;
	char *scan = r->buf + r->scanned;
	char *end = r->buf + r->end;
	size_t count = 0;

	while (count < max) {
		char *d = record_end(r, scan, end);

		if (!d) {
			scan = end;
			break;
		}
		out[count].data = p;
		out[count].len = (size_t)(d - p);
		count++;
		p = d + 1;
		scan = p;
	}
	r->consumed += (unsigned long long)(p - (r->buf + r->start));
	r->records += count;
	r->start = (size_t)(p - r->buf);
	r->scanned = (size_t)(scan - r->buf);
	return count;
}

/* At end of input, the bytes after the last delimiter are one more record. */
static long take_last(struct lines_reader *r, struct line *out)
{
	if (r->start == r->end)
		return 0;
	if (r->csv && r->csv_state == CSV_QUOTED) {
		r->why = "a quoted field is never closed";
		errno = EILSEQ;
		return -1;
	}
	out[0].data = r->buf + r->start;
	out[0].len = r->end - r->start;
	r->consumed += out[0].len;
	r->records++;
	r->start = r->scanned = r->end;
	r->csv_state = CSV_FIELD_START;
	return 1;
}

/* Doubles the buffer; only called when no record of this call is out. */
static int grow(struct lines_reader *r)
{
	char *bigger;

	if (r->cap > SIZE_MAX / 2) {
		errno = ENOMEM;
		return -1;
	}
	bigger = realloc(r->buf, r->cap * 2);
	if (!bigger)
		return -1;
	r->buf = bigger;
	r->cap *= 2;
	return 0;
}

/* pread(2) of up to want bytes at r->pos into the free part of the buffer; EINTR retried. */
static ssize_t range_pread(struct lines_reader *r, size_t want)
{
	ssize_t got;

	do
		got = pread(r->fd, r->buf + r->end, want, (off_t)r->pos);
	while (got < 0 && errno == EINTR);
	if (got > 0)
		r->pos += (uint64_t)got;
	return got;
}

/*
 * The bytes at buf[end, end + got) were read at file offset at, while
 * skipping: drop those up to the first delimiter, and say whether the
 * range's first record (at or after it) begins before stop. Returns the
 * bytes kept, or 0 with r->eof set when the range holds no
 * record, or SIZE_MAX when no delimiter came yet and the range may still
 * hold one. The bytes kept begin at buf + end, as read bytes do.
 */
static size_t skip_begun_record(struct lines_reader *r, uint64_t at, size_t got)
{
	char *p = r->buf + r->end;
	char *d = memchr(p, r->delim, got);
	size_t drop;

	if (d == NULL) {
		/* a record begins in the range only after a delimiter before stop - 1 */
		if (at + got >= r->stop - 1) {
			r->eof = 1;
			return 0;
		}
		return SIZE_MAX;
	}
	drop = (size_t)(d - p) + 1;
	r->skipping = 0;
	if (at + drop >= r->stop) {
		r->eof = 1;
		return 0;
	}
	/*
	 * Nothing is buffered while skipping (start = scanned = end): the
	 * dropped bytes are passed over, not moved out, which would copy
	 * most of a range read whole (lines_read_range).
	 */
	r->end += drop;
	r->start = r->scanned = r->end;
	return got - drop;
}

/*
 * Bytes at buf[end, end + got) read at file offset at: end the stream at
 * the first delimiter at or after offset stop - 1, the end of the range's
 * last record. Returns the bytes kept.
 */
static size_t cut_at_stop(struct lines_reader *r, uint64_t at, size_t got)
{
	uint64_t last = r->stop - 1;
	size_t from;
	char *d;

	if (at + got <= last)
		return got;
	from = last > at ? (size_t)(last - at) : 0;
	d = memchr(r->buf + r->end + from, r->delim, got - from);
	if (d == NULL)
		return got;
	r->eof = 1;
	return (size_t)(d - (r->buf + r->end)) + 1;
}

/*
 * How much a ranged read asks for at most: the rest of the range and
 * LINES_RANGE_TAIL; past the range's end (a long last record), as much as
 * was read past it so far, so a huge record takes few reads.
 */
static size_t range_want(const struct lines_reader *r)
{
	uint64_t want = r->pos < r->stop ? r->stop - r->pos + LINES_RANGE_TAIL : r->pos - r->stop;

	if (want < LINES_RANGE_TAIL)
		want = LINES_RANGE_TAIL;
	return want > LINES_MAX_READ ? LINES_MAX_READ : (size_t)want;
}

/* refill for a ranged reader: the next bytes of the range (see the top of the file). */
static int range_refill(struct lines_reader *r, size_t want)
{
	for (;;) {
		uint64_t at = r->pos;
		ssize_t got;
		size_t kept;

		if (want > range_want(r))
			want = range_want(r);
		got = range_pread(r, want);
		if (got < 0)
			return -1;
		if (got == 0) {
			r->eof = 1;
			return 0;
		}
		kept = (size_t)got;
		if (r->skipping) {
			kept = skip_begun_record(r, at, kept);
			if (kept == SIZE_MAX)
				continue;	/* all of it the record begun before the range */
			at = r->pos - kept;
		}
		r->end += cut_at_stop(r, at, kept);
		return 0;
	}
}

/* refill for a stream reader: what the stream gives for one read of its descriptor. */
static int stream_refill(struct lines_reader *r, size_t want)
{
	ssize_t got = instream_read(r->stream, r->buf + r->end, want);

	if (got < 0)
		return -1;
	if (got == 0 && instream_ended(r->stream))
		r->eof = 1;
	r->end += (size_t)got;
	return 0;
}

/*
 * Makes room (compact, then grow if still full) and reads once, at most
 * limit bytes: 0, or 1 when deadline passed with nothing to read, or -1.
 */
static int refill(struct lines_reader *r, size_t limit, const struct timespec *deadline)
{
	size_t want;
	ssize_t got;

	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->scanned -= r->start;
		r->start = 0;
	}
	if (r->end == r->cap && grow(r) < 0)
		return -1;
	want = r->cap - r->end;
	if (want > limit)
		want = limit;
	switch (await_input(r, deadline)) {
	case AWAIT_STOP:
		stop_at_last_delimiter(r);
		return 0;
	case AWAIT_IDLE:
		return 1;
	}
	if (r->ranged)
		return range_refill(r, want);
	if (r->stream)
		return stream_refill(r, want);
	do
		got = read(r->fd, r->buf + r->end, want);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -1;
	if (got == 0)
		r->eof = 1;
	r->end += (size_t)got;
	return 0;
}

long lines_next_batch(struct lines_reader *r, struct line *out, size_t max)
{
	if (max == 0) {
		errno = EINVAL;
		return -1;
	}
	if (max > LONG_MAX)
		max = LONG_MAX;	/* the count must fit the return type */
	for (;;) {
		size_t count = take_records(r, out, max);

		if (count > 0)
			return (long)count;
		if (r->eof)
			return take_last(r, out);
		if (refill(r, LINES_MAX_READ, NULL) < 0)
			return -1;
	}
}

/* Room for at least one more record in b; -1 (ENOMEM) if none. */
static int batch_reserve(struct lines_batch *b)
{
	size_t cap = b->records_cap ? 2 * b->records_cap : LINES_BATCH_RECORDS;
	struct line *bigger;

	if (b->n < b->records_cap)
		return 0;
	if (cap > SIZE_MAX / sizeof *bigger) {
		errno = ENOMEM;
		return -1;
	}
	bigger = realloc(b->records, cap * sizeof *bigger);
	if (!bigger)
		return -1;
	b->records = bigger;
	b->records_cap = cap;
	return 0;
}

/* Every complete record in the buffer into b; -1 (ENOMEM) if b cannot grow. */
static int take_all(struct lines_reader *r, struct lines_batch *b)
{
	for (;;) {
		size_t got;

		if (batch_reserve(b) < 0)
			return -1;
		got = take_records(r, b->records + b->n, b->records_cap - b->n);
		b->n += got;
		if (b->n < b->records_cap)
			return 0;
	}
}

/*
 * Hand the buffer holding b's records to b, and give the reader b's old
 * buffer with the bytes not yet handed out (at most one partial record)
 * copied to its front: that copy is all a batch costs.
 */
static int swap_buffers(struct lines_reader *r, struct lines_batch *b)
{
	size_t carry = r->end - r->start;
	size_t cap = b->bytes_cap;
	char *next = b->bytes;

	if (next == NULL || cap < carry || cap < LINES_INITIAL_CAP) {
		cap = carry > LINES_INITIAL_CAP ? carry : LINES_INITIAL_CAP;
		next = malloc(cap);
		if (!next)
			return -1;
		free(b->bytes);
	}
	if (carry > 0)
		memcpy(next, r->buf + r->start, carry);
	b->bytes = r->buf;
	b->bytes_cap = r->cap;
	r->buf = next;
	r->cap = cap;
	r->scanned -= r->start;
	r->end = carry;
	r->start = 0;
	return 0;
}

/* How much one read for an owned batch asks for (see LINES_BATCH_TARGET). */
static size_t owned_read(const struct lines_reader *r)
{
	unsigned long long want;

	if (r->records == 0)
		return LINES_OWNED_FIRST;
	want = r->consumed / r->records * LINES_BATCH_TARGET;
	if (want < LINES_OWNED_MIN)
		return LINES_OWNED_MIN;
	return want > LINES_OWNED_MAX ? LINES_OWNED_MAX : (size_t)want;
}

/* A batch taken: handed out with the reader's buffer (swap_buffers); its count, or -1. */
static long hand_out(struct lines_reader *r, struct lines_batch *b)
{
	if (b->n > LONG_MAX) {
		errno = EOVERFLOW;
		return -1;
	}
	if (b->n > 0 && swap_buffers(r, b) < 0)
		return -1;
	return (long)b->n;
}

/* lines_next_owned, waiting for input until deadline (NULL: for ever). */
static long next_owned(struct lines_reader *r, struct lines_batch *b,
		       const struct timespec *deadline)
{
	b->n = 0;
	for (;;) {
		int got;

		if (take_all(r, b) < 0)
			return -1;
		if (b->n == 0 && r->eof) {
			long last;

			if (batch_reserve(b) < 0 || (last = take_last(r, b->records)) < 0)
				return -1;
			b->n = (size_t)last;
		}
		if (b->n > 0 || r->eof)
			break;
		got = refill(r, owned_read(r), deadline);
		if (got != 0)
			return got < 0 ? -1 : LINES_IDLE;
	}
	return hand_out(r, b);
}

long lines_next_owned(struct lines_reader *r, struct lines_batch *b)
{
	return next_owned(r, b, NULL);
}

long lines_next_owned_within(struct lines_reader *r, struct lines_batch *b, unsigned timeout_ms)
{
	struct timespec deadline;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += (time_t)(timeout_ms / 1000);
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	return next_owned(r, b, &deadline);
}

/*
 * lines_read_range: reads until the range's end without handing anything
 * out, so start stays 0 and refill never moves the bytes; then one
 * take, as next_owned does. range_refill, not refill: a stop request is
 * for reads that may block, and a pread of a regular file does not.
 */
long lines_read_range(struct lines_reader *r, uint64_t from, uint64_t to, int at_record,
		      struct lines_batch *b)
{
	lines_set_range(r, from, to, at_record);
	b->n = 0;
	while (!r->eof) {
		if (r->end == r->cap && grow(r) < 0)
			return -1;
		if (range_refill(r, r->cap - r->end) < 0)
			return -1;
	}
	if (take_all(r, b) < 0)
		return -1;
	if (r->start < r->end) {	/* the file's last record, without a delimiter */
		if (batch_reserve(b) < 0)
			return -1;
		b->n += (size_t)take_last(r, b->records + b->n);
	}
	return hand_out(r, b);
}

void lines_batch_free(struct lines_batch *b)
{
	free(b->records);
	free(b->bytes);
	free(b->kept);
	b->records = NULL;
	b->bytes = NULL;
	b->kept = NULL;
	b->n = b->records_cap = b->bytes_cap = b->kept_n = b->kept_cap = b->read = 0;
	b->taken_out = 0;
}

int lines_batch_keep(struct lines_batch *b, int (*keep)(void *ctx, size_t r), void *ctx)
{
	size_t kept = 0;

	if (b->n > UINT32_MAX) {
		errno = ENOMEM;
		return -1;
	}
	if (b->n > b->kept_cap) {
		uint32_t *more = realloc(b->kept, b->n * sizeof *more);

		if (more == NULL)
			return -1;
		b->kept = more;
		b->kept_cap = b->n;
	}
	/* kept <= r: a record moves only to a place already asked about */
	for (size_t r = 0; r < b->n; r++)
		if (keep(ctx, r)) {
			b->kept[kept] = (uint32_t)r;
			b->records[kept++] = b->records[r];
		}
	b->read = b->n;
	b->kept_n = b->n = kept;
	b->taken_out = 1;
	return 0;
}

size_t lines_batch_read_index(const struct lines_batch *b, size_t i)
{
	if (!b->taken_out)
		return i;
	return i < b->kept_n ? b->kept[i] : b->read;
}

const char *lines_error(const struct lines_reader *r)
{
	return r->why;
}

unsigned long long lines_bytes_read(const struct lines_reader *r)
{
	return r->consumed;
}

#define ESTIMATE_HEAD ((size_t)64 << 10)

/*
 * The head is mapped, not read: the estimate only advises, and a read
 * that fails here must not be the one that an input's reading reports
 * (nor be counted where tests make the Nth read fail). The mapping ends
 * within the size fstat gave; only a file cut shorter in the moment
 * between could fault.
 */
uint64_t lines_estimate(int fd, char delim)
{
	const unsigned char *head;
	struct stat st;
	size_t len;
	uint64_t records = 0;
	int compressed;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return 0;
	len = (uint64_t)st.st_size < ESTIMATE_HEAD ? (size_t)st.st_size : ESTIMATE_HEAD;
	head = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (head == MAP_FAILED)
		return 0;
	compressed = instream_compressed_head(head, len);
	for (size_t i = 0; !compressed && i < len; i++)
		records += head[i] == (unsigned char)delim;
	munmap((void *)head, len);
	if (compressed)
		return 0;
	/* a last record without its delimiter counts too */
	return records == 0 ? 1 : (uint64_t)((double)st.st_size * (double)records / (double)len);
}
