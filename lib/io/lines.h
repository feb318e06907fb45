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
#include <stdint.h>

#include "line.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lines_reader;
struct instream;

/* A reader over fd (not closed by lines_close). NULL on out of memory. */
struct lines_reader *lines_open(int fd, char delim);

/*
 * A reader of the bytes stream s gives (instream.h: an input,
 * decompressed when compressed); lines_close does not close s. When
 * reading fails with instream_error(s) set, that says what is wrong.
 * NULL on out of memory.
 */
struct lines_reader *lines_open_stream(struct instream *s, char delim);
void lines_close(struct lines_reader *r);

/*
 * From now on r (from lines_open) reads CSV records (RFC 4180): a
 * delimiter inside a quoted field, one that begins with '"', does not end
 * the record, so a record may span lines; fields are separated by
 * separator (not '"' nor the delimiter). Records are handed out as read,
 * quotes and all. A quote left open at the end of input is a read error
 * (EILSEQ, lines_error says why) after every record before the one that
 * opened it.
 */
void lines_csv(struct lines_reader *r, char separator);

/*
 * A ranged reader: one range of the regular file fd at a time, read with
 * pread(2), so the descriptor's offset is neither used nor moved and
 * readers on several threads can share it. It holds no records until
 * lines_set_range. NULL on out of memory.
 */
struct lines_reader *lines_open_range(int fd, char delim);

/*
 * From now on r (from lines_open_range) hands out the records that begin
 * in bytes [from, to) of its file, then reports the end of input. A record
 * begins at from when at_record is nonzero (from is where the input
 * starts), else right after the first delimiter at or after from - 1. The
 * last record is the one holding byte to - 1; it ends at its delimiter
 * however far past to that is, or at the end of the file. So ranges that
 * tile [start, size) of a file, the first with at_record, hand out every
 * record of it exactly once, as one reader from start would. Records of
 * earlier calls are no longer valid.
 */
void lines_set_range(struct lines_reader *r, uint64_t from, uint64_t to, int at_record);

/*
 * Up to max complete records, without their delimiters. They stay valid
 * until the next call. Returns the count (> 0), 0 at end of input, or -1 on
 * a read error (errno set).
 */
long lines_next_batch(struct lines_reader *r, struct line *out, size_t max);

/*
 * A batch that owns its bytes, so that several can be in use at once (one
 * being read while others are worked on, on other threads). Start from
 * all zeros; lines_batch_free releases it.
 */
struct lines_batch {
	struct line *records;	/* n records, pointing into bytes */
	size_t n;
	size_t records_cap;
	char *bytes;
	size_t bytes_cap;
	/*
	 * After lines_batch_keep took records out (taken_out): kept[i] is the
	 * index as read of record i (of the kept_n kept), of `read` in all.
	 */
	int taken_out;
	uint32_t *kept;
	size_t kept_n, kept_cap, read;
};

/*
 * Keep only b's records r for which keep(ctx, r) is nonzero, in order,
 * remembering where each was read, so that line numbers still count every
 * record (lines_batch_read_index). keep is called once for each record,
 * r ascending, before any is moved (so it may walk something in step with
 * the records, and the caller needs no array of its answers). 0, or -1
 * with errno ENOMEM (b unchanged, keep not called). A batch refilled is
 * whole again only when this is called on it again: callers that take
 * records out call it on every batch.
 */
int lines_batch_keep(struct lines_batch *b, int (*keep)(void *ctx, size_t r), void *ctx);

/*
 * The index as read of record i of b, for i up to the count kept (that
 * count itself: the records read), whatever n was cut to since; i
 * unchanged when nothing was taken out.
 */
size_t lines_batch_read_index(const struct lines_batch *b, size_t i);

/*
 * Replace b's contents with the next records: every complete record the
 * reader has buffered, reading (once: 64 to 512 KiB, about 8,192 records
 * of the length seen so far) only when it has none, so on a pipe a record
 * is passed on as soon as it is complete.
 * Costs no copy of the records: b takes over the reader's buffer, and
 * the reader continues in b's old one. Returns the count (> 0), 0 at end
 * of input, or -1 on a read error or out of memory (errno set; then the
 * reader must not be used again). Records of lines_next_batch calls stay
 * valid only until the next call of either kind.
 */
long lines_next_owned(struct lines_reader *r, struct lines_batch *b);
void lines_batch_free(struct lines_batch *b);

/*
 * After a read error: what is wrong with the input in words, when the
 * reader found it (a CSV quote never closed); NULL when it was the
 * stream's or errno's.
 */
const char *lines_error(const struct lines_reader *r);

/*
 * Every record that begins in bytes [from, to) of r's file (r from
 * lines_open_range; from, to and at_record as for lines_set_range) into b
 * at once, as lines_next_owned hands out records (b takes the bytes; no
 * copy), however many reads that takes: a range is one batch, whatever
 * its records' lengths. Never waits for lines_stop_when_readable's
 * descriptor: a regular file's range is read whole or not at all.
 * Returns the count (0: no record begins there), or -1 on a read error
 * or out of memory (errno set; then r must not be used again).
 */
long lines_read_range(struct lines_reader *r, uint64_t from, uint64_t to, int at_record,
		      struct lines_batch *b);

/*
 * lines_next_owned, but when no record is complete and none completes
 * within timeout_ms, returns LINES_IDLE with b empty (n = 0) instead of
 * waiting on: for a caller with something to do on time while a stream
 * is quiet (a timed checkpoint). Nothing is lost: a record begun stays
 * buffered, and the next call of either kind goes on from there.
 */
#define LINES_IDLE (-2L)
long lines_next_owned_within(struct lines_reader *r, struct lines_batch *b, unsigned timeout_ms);

/* Bytes consumed so far (for progress and reports). */
unsigned long long lines_bytes_read(const struct lines_reader *r);

/*
 * About how many records (ended by delim) the file open on fd holds,
 * without moving its offset: its size times the records in its first
 * 64 KiB over their bytes. 0 when it cannot be told: not a regular file,
 * compressed (instream would inflate it), empty, or unreadable.
 */
uint64_t lines_estimate(int fd, char delim);

/*
 * Make every reader stop at its next read once fd is readable (a pipe a
 * signal handler writes to), as if its input had ended there: records
 * already read are handed out, a last line read only in part is dropped.
 * -1 (the default) turns it off. Call before readers run on other threads.
 */
void lines_stop_when_readable(int fd);

#ifdef __cplusplus
}
#endif

#endif
