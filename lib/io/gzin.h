/* SPDX-License-Identifier: MIT */
/*
 * gzin.h - one gzip member read strictly from a descriptor: the reading
 * half that bftools' own files share (filters, format.c; sketches,
 * sketch.c). The writing half is pgzip.h.
 *
 * The content is inflated in exactly the pieces the caller asks for, so a
 * reader can check a header before it allocates anything for what
 * follows. gzin_end then checks that the content ends there, that the
 * member's trailer (CRC-32 and length) is right, and that nothing follows
 * the member. A plain (uncompressed) file is refused: zlib's transparent
 * mode is never used. Damage comes back as one static message in our
 * words ("truncated", "corrupt: checksum mismatch", ...); the messages
 * that name the kind of file ("not a bftools sketch (not gzip data)",
 * "trailing data after the filter") name the kind given to gzin_open.
 *
 * Not installed: a library-internal module. No printing, no exit.
 */
#ifndef BFTOOLS_GZIN_H
#define BFTOOLS_GZIN_H

#include <stddef.h>

#ifndef ZLIB_CONST
#define ZLIB_CONST	/* zlib takes const input (z_const), as it never writes it */
#endif
#include <zlib.h>

#include "iosize.h"

/* Compressed input is read this much at a time (1 MiB unless built smaller). */
#define GZIN_BUFFER IOSIZE_BUFFER

/* What the member holds, for the messages that name it. */
enum gzin_kind { GZIN_FILTER, GZIN_SKETCH, GZIN_SUMMARY };

struct gzin {
	int fd;
	int eof;		/* read() returned 0 */
	int ended;		/* inflate reached the end of the gzip member */
	enum gzin_kind kind;
	long long start;	/* fd's offset when opened: where the file began; -1 if unknown (a pipe) */
	z_stream zs;		/* next_in/avail_in: input read and not yet inflated */
	unsigned char *buf;	/* GZIN_BUFFER bytes of compressed input */
	gz_header head;		/* the gzip header, once inflate has read it */
	unsigned char *extra;	/* GZIN_EXTRA_MAX bytes: its extra field */
};

/* The longest extra field a gzip header can have (XLEN is 16 bits). */
#define GZIN_EXTRA_MAX 65535u

/* Get ready to read from fd. Returns 0, or -1 with *errstr (out of memory). */
int gzin_open(struct gzin *g, int fd, enum gzin_kind kind, const char **errstr);

/*
 * gzin_open for a file whose first len bytes (at most GZIN_BUFFER) were
 * read from fd already, into start, by a caller telling kinds of file
 * apart; eof: nothing follows them. Returns 0, or -1 with *errstr.
 */
int gzin_open_started(struct gzin *g, int fd, enum gzin_kind kind, const unsigned char *start,
		      size_t len, int eof, const char **errstr);

/* Free the buffer and the stream; does not close fd. Safe after a failed gzin_open. */
void gzin_close(struct gzin *g);

/*
 * Read the start of the file into g->buf, for telling what it is before
 * inflating any of it: until tell(g->buf, len) is no longer -1, the file
 * ends, or cap bytes (at most GZIN_BUFFER) are in. *verdict is tell's last
 * answer (-1 when it could not decide). The bytes stay as the reader's
 * input. Returns 0, or -1 with *errstr when reading fails.
 */
int gzin_sniff(struct gzin *g, int (*tell)(const unsigned char *start, size_t len), size_t cap,
	       int *verdict, const char **errstr);

/*
 * Check that the file opens a gzip member (1f 8b), reading its first bytes
 * if gzin_sniff has not. Returns 0, or -1 with *errstr ("empty file",
 * "not a bftools filter (not gzip data)", "truncated").
 */
int gzin_expect_gzip(struct gzin *g, const char **errstr);

/*
 * Inflate exactly len bytes of content into dst; *done says how many
 * arrived, also on failure. Returns 0, or -1 with *errstr ("truncated"
 * when the member ends first, "corrupt: ..." on damage).
 */
int gzin_read(struct gzin *g, void *dst, size_t len, size_t *done, const char **errstr);

/*
 * The content must end here, the member's trailer must be right, and the
 * member must be the last thing in the file. Returns 0, or -1 with
 * *errstr ("trailing data inside the sketch", "corrupt: checksum
 * mismatch", "trailing data after the filter", ...).
 */
int gzin_end(struct gzin *g, const char **errstr);

/*
 * The data of subfield si1 si2 in the member's extra field (RFC 1952,
 * 2.3.1.1), *len bytes, once some content has been inflated (the header
 * read and its CRC checked); NULL when there is none. gzin_find_subfield
 * looks in an extra field of xlen bytes at p, as it stands in a file.
 */
const unsigned char *gzin_subfield(const struct gzin *g, unsigned char si1, unsigned char si2,
				   size_t *len);
const unsigned char *gzin_find_subfield(const unsigned char *p, size_t xlen, unsigned char si1,
					unsigned char si2, size_t *len);

/*
 * The first bytes of the content of the gzip member in p[0..len), up to
 * want of them, inflated into out without disturbing anything: for
 * recognising a file by its content's magic. Returns how many arrived;
 * *more says whether more input could bring more (the member neither
 * ended nor broke before want bytes).
 */
size_t gzin_peek(const unsigned char *p, size_t len, unsigned char *out, size_t want, int *more);

/*
 * Whether start[0..len) opens a gzip member whose content begins with
 * magic (magic_len <= GZIN_MAGIC_MAX bytes): 1 yes, 0 no, -1 cannot tell
 * yet (more bytes needed). For telling a kind of bftools file apart.
 */
#define GZIN_MAGIC_MAX 16
int gzin_detect_magic(const unsigned char *start, size_t len, const unsigned char *magic,
		      size_t magic_len);

#endif
