/* SPDX-License-Identifier: MIT */
/*
 * pgzip.h - one gzip member deflated on many threads, pigz-style.
 *
 * The caller hands in pieces of content in order, each with its own
 * compression level. Every piece is raw-deflated on its own (no dictionary
 * from the piece before) and ended on a byte boundary (a sync flush), so
 * pieces can be compressed on either thread in any order and simply be
 * written one after the other: the bytes depend on the pieces and their
 * levels only, never on the thread count or on timing. A level-0 piece is
 * written as stored blocks without zlib. The member ends with an empty
 * final block and a trailer whose CRC-32 is combined from the pieces'.
 *
 * The gzip header is fixed, for reproducible files: FHCRC set, mtime 0,
 * XFL 4 (fastest), OS 3 (Unix), no name or comment. A member of
 * GZINDEX_PIECES_MIN pieces or more written to a regular file carries an
 * index of its pieces in an extra field (gzindex.h), so that readers can
 * inflate it on many threads: the header is written again, in place, when
 * the member is complete. Elsewhere (a pipe, a file opened to append) it
 * has none, and those are the only bytes that differ.
 *
 * Threads: the calling thread does all the writing (write(2) errors are
 * strerror(errno), as in gzout.c), and deflates pieces while it would
 * otherwise wait; threads - 1 workers, with all signals blocked, deflate
 * the rest. No printing, no exit: failures return -1 with a static message.
 */
#ifndef BFTOOLS_PGZIP_H
#define BFTOOLS_PGZIP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The largest piece pgzip_write takes (output buffers are sized for it). */
#define PGZIP_PIECE_MAX ((size_t)1 << 20)
/*
 * Threads a member is deflated on at most: 32 outrun the writes of a
 * 16-core machine; each holds a zlib stream (~400 KiB) and two output
 * buffers of up to 1.2 MiB.
 */
#define PGZIP_THREADS_MAX 32

struct pgzip;

/*
 * Write the gzip header to fd and get ready to deflate with strategy
 * (Z_RLE, ...). threads: 1 to deflate on the calling thread alone, more
 * for as many in all (at most PGZIP_THREADS_MAX; fewer if workers cannot
 * start: same bytes). direct: write around the page cache where
 * the file allows (gzout_sink_direct: fd must be the caller's own new
 * regular file); the bytes are the same either way. pieces: how many
 * pgzip_write calls will follow (for the index; 0 for none). extra:
 * extra_len bytes of whole subfields (SI1 SI2 LEN data, RFC 1952 2.3.1.1)
 * for the header's extra field, after the index's, written wherever the
 * member goes (NULL, 0 for none). NULL with *errstr on failure.
 */
struct pgzip *pgzip_open(int fd, int threads, int strategy, int direct, uint64_t pieces,
			 const void *extra, size_t extra_len, const char **errstr);

/*
 * The most bytes of subfields pgzip_open carries for its caller: what the
 * extra field (XLEN, 16 bits) leaves beside the largest index.
 */
#define PGZIP_EXTRA_MAX ((size_t)65535 - 4 - 8 - 8 * 4096)

/*
 * Add len bytes (at most PGZIP_PIECE_MAX) as one piece deflated at level
 * (0..9; 0 is stored). data must stay valid and unchanged until
 * pgzip_in_flight(z) more pgzip_write calls, or pgzip_finish or
 * pgzip_close, have returned: that many pieces may be waiting or being
 * deflated when this returns. Returns 0, or -1 with *errstr; after a
 * failure, only pgzip_close.
 */
int pgzip_write(struct pgzip *z, const void *data, size_t len, int level, const char **errstr);

/*
 * Add len zero bytes (at most PGZIP_PIECE_MAX) as one piece at level:
 * the same bytes pgzip_write would write for them, deflated once per
 * member and copied after that, and marked zero in the member's index
 * (gzindex.h) where every piece of its run is. For a filter sized far
 * beyond what it holds: most of its chunks are zeros, and the caller
 * need not even have touched their memory. Returns as pgzip_write.
 */
int pgzip_write_zeros(struct pgzip *z, size_t len, int level, const char **errstr);

/* How many pieces may be in flight after a pgzip_write returns (1 with no workers). */
unsigned pgzip_in_flight(const struct pgzip *z);

/*
 * A whole file of one gzip member, on this thread: head then payload (any
 * length, in pieces), deflated at level, finished. For the small files of
 * the family (sketches, summaries). Returns 0, or -1 with *errstr.
 */
int pgzip_save_member(int fd, const void *head, size_t head_len, const void *payload,
		      size_t len, int level, const char **errstr);

/* End the member: the last pieces, the final block, the trailer. 0, or -1 with *errstr. */
int pgzip_finish(struct pgzip *z, const char **errstr);

/* Stop the worker and free everything; safe after a failure, and on NULL. Does not close fd. */
void pgzip_close(struct pgzip *z);

#ifdef __cplusplus
}
#endif

#endif
