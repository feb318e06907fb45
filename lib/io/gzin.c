/* SPDX-License-Identifier: MIT */
/*
 * gzin.c - one gzip member read strictly from a descriptor (see gzin.h).
 *
 * inflate is asked for exactly the bytes the caller wants, reading 1 MiB
 * of input whenever it has none left. zlib's return codes become our
 * words: Z_BUF_ERROR with no input left is a truncated file, Z_DATA_ERROR
 * is damage (zlib's own message, translated where we know it). Integrity
 * comes from the gzip member itself: the header CRC (FHCRC, which our
 * writers set) and the trailer's CRC-32 and length of the content, which
 * inflate checks when it reaches the end; gzin_end insists that it does,
 * and that nothing follows.
 *
 * Deliberately absent: several members back to back (DCSO's files allow
 * them, and dcso.c reads those itself), and zlib's transparent mode for
 * plain files.
 */
#include "gzin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gzout.h"

#define INFLATE_MAX ((size_t)1 << 30)	/* avail_out is a 32-bit uInt: feed it in pieces */
#define SNIFF_FIRST 64	/* gzin_sniff asks its test once this many bytes are in, then on doubling */
#define GZIP_WINDOW (15 + 16)		/* 32 KiB window, gzip wrapper only */
#define SUBFIELD_HEAD 4			/* SI1, SI2, LEN */

/* The messages that name what the file holds, by enum gzin_kind. */
static const struct {
	const char *not_gzip, *inside, *after;
} named[] = {
	[GZIN_FILTER] = { "not a bftools filter (not gzip data)", "trailing data inside the filter",
			  "trailing data after the filter" },
	[GZIN_SKETCH] = { "not a bftools sketch (not gzip data)", "trailing data inside the sketch",
			  "trailing data after the sketch" },
	[GZIN_SUMMARY] = { "not a bftools summary (not gzip data)", "trailing data inside the summary",
			   "trailing data after the summary" },
};

static int bad(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

static ssize_t read_some(int fd, unsigned char *p, size_t len)
{
	ssize_t n;

	do
		n = read(fd, p, len);
	while (n < 0 && errno == EINTR);
	return n;
}

/* The buffers alone (before the stream exists, or after it ended). */
static void gzin_free(struct gzin *g)
{
	free(g->buf);
	free(g->extra);
	g->buf = NULL;
	g->extra = NULL;
}

int gzin_open(struct gzin *g, int fd, enum gzin_kind kind, const char **errstr)
{
	int ret;

	memset(g, 0, sizeof *g);
	g->fd = fd;
	g->kind = kind;
	g->start = (long long)lseek(fd, 0, SEEK_CUR);
	g->buf = malloc(GZIN_BUFFER);
	g->extra = malloc(GZIN_EXTRA_MAX);
	if (g->buf == NULL || g->extra == NULL) {
		gzin_free(g);
		return bad(errstr, strerror(ENOMEM));
	}
	ret = inflateInit2(&g->zs, GZIP_WINDOW);	/* gzip only: never zlib's transparent mode */
	if (ret != Z_OK) {
		*errstr = gzout_zlib_message(&g->zs, ret);
		gzin_free(g);
		return -1;
	}
	/* the extra field kept as inflate reads it: the header CRC covers it */
	g->head.extra = g->extra;
	g->head.extra_max = GZIN_EXTRA_MAX;
	if ((ret = inflateGetHeader(&g->zs, &g->head)) != Z_OK) {
		*errstr = gzout_zlib_message(&g->zs, ret);
		inflateEnd(&g->zs);
		gzin_free(g);
		return -1;
	}
	return 0;
}

int gzin_open_started(struct gzin *g, int fd, enum gzin_kind kind, const unsigned char *start,
		      size_t len, int eof, const char **errstr)
{
	if (len > GZIN_BUFFER)
		return bad(errstr, "too many bytes read ahead of the gzip stream");
	if (gzin_open(g, fd, kind, errstr) < 0)
		return -1;
	if (len > 0)
		memcpy(g->buf, start, len);
	g->zs.next_in = g->buf;
	g->zs.avail_in = (uInt)len;
	g->eof = eof;
	return 0;
}

void gzin_close(struct gzin *g)
{
	if (g->buf == NULL)
		return;
	inflateEnd(&g->zs);
	gzin_free(g);
}

const unsigned char *gzin_find_subfield(const unsigned char *p, size_t xlen, unsigned char si1,
					unsigned char si2, size_t *len)
{
	size_t at = 0;

	while (xlen - at >= SUBFIELD_HEAD) {
		size_t sub = (size_t)p[at + 2] | (size_t)p[at + 3] << 8;

		if (sub > xlen - at - SUBFIELD_HEAD)
			return NULL;
		if (p[at] == si1 && p[at + 1] == si2) {
			*len = sub;
			return p + at + SUBFIELD_HEAD;
		}
		at += SUBFIELD_HEAD + sub;
	}
	return NULL;
}

const unsigned char *gzin_subfield(const struct gzin *g, unsigned char si1, unsigned char si2,
				   size_t *len)
{
	/* a field longer than the buffer cannot be: XLEN is 16 bits */
	if (g->buf == NULL || g->head.done != 1 || g->head.extra == Z_NULL || g->head.extra_len > GZIN_EXTRA_MAX)
		return NULL;
	return gzin_find_subfield(g->head.extra, g->head.extra_len, si1, si2, len);
}

int gzin_sniff(struct gzin *g, int (*tell)(const unsigned char *start, size_t len), size_t cap,
	       int *verdict, const char **errstr)
{
	size_t len = 0, told = 0;

	if (cap > GZIN_BUFFER)
		cap = GZIN_BUFFER;
	*verdict = tell(g->buf, 0);
	while (*verdict < 0 && !g->eof && len < cap) {
		ssize_t n = read_some(g->fd, g->buf + len, cap - len);

		if (n < 0)
			return bad(errstr, strerror(errno));
		g->eof = n == 0;
		len += (size_t)n;
		/*
		 * A test may inflate all it is shown (dcso.c, sketch.c): from a
		 * pipe handing out a few bytes a read, asking after every read
		 * would cost as much as reading the whole start again each time.
		 * Asking once the bytes have doubled bounds that; all of them
		 * are read before a verdict is final either way.
		 */
		if (len >= 2 * told + SNIFF_FIRST || g->eof || len >= cap) {
			*verdict = tell(g->buf, len);
			told = len;
		}
	}
	g->zs.next_in = g->buf;
	g->zs.avail_in = (uInt)len;
	return 0;
}

/* At least two bytes of input, unless the file ends first. */
static int top_up(struct gzin *g, const char **errstr)
{
	while (g->zs.avail_in < 2 && !g->eof) {
		size_t have = g->zs.avail_in;
		ssize_t n;

		memmove(g->buf, g->zs.next_in, have);
		n = read_some(g->fd, g->buf + have, GZIN_BUFFER - have);
		if (n < 0)
			return bad(errstr, strerror(errno));
		g->eof = n == 0;
		g->zs.next_in = g->buf;
		g->zs.avail_in = (uInt)(have + (size_t)n);
	}
	return 0;
}

int gzin_expect_gzip(struct gzin *g, const char **errstr)
{
	const unsigned char *p;
	size_t got;

	if (top_up(g, errstr) < 0)
		return -1;
	p = g->zs.next_in;
	got = g->zs.avail_in;
	if (got == 0)
		return bad(errstr, "empty file");
	if (p[0] != 0x1f || (got > 1 && p[1] != 0x8b))
		return bad(errstr, named[g->kind].not_gzip);
	return got < 2 ? bad(errstr, "truncated") : 0;
}

static int refill(struct gzin *g, const char **errstr)
{
	ssize_t n = read_some(g->fd, g->buf, GZIN_BUFFER);

	if (n < 0)
		return bad(errstr, strerror(errno));
	g->eof = n == 0;
	g->zs.next_in = g->buf;
	g->zs.avail_in = (uInt)n;
	return 0;
}

/* zlib's words for damage, in ours. */
static const char *corrupt_message(const char *zmsg)
{
	static const struct {
		const char *zlib, *ours;
	} known[] = {
		{ "incorrect data check", "corrupt: checksum mismatch" },
		{ "incorrect length check", "corrupt: length mismatch" },
		{ "header crc mismatch", "corrupt: header checksum mismatch" },
		{ "unknown compression method", "corrupt: unknown gzip compression method" },
		{ "unknown header flags set", "corrupt: unknown gzip header flags" },
	};

	for (size_t i = 0; zmsg && i < sizeof known / sizeof known[0]; i++)
		if (strcmp(zmsg, known[i].zlib) == 0)
			return known[i].ours;
	return "corrupt: invalid compressed data";
}

/*
 * One inflate call into the caller's next_out/avail_out (avail_out > 0),
 * reading more input first if none is left. Returns 0 (carry on), 1 (end of
 * the gzip member) or -1.
 */
static int inflate_step(struct gzin *g, const char **errstr)
{
	int ret;

	if (g->zs.avail_in == 0 && !g->eof && refill(g, errstr) < 0)
		return -1;
	ret = inflate(&g->zs, Z_NO_FLUSH);
	if (ret == Z_STREAM_END) {
		g->ended = 1;
		return 1;
	}
	if (ret == Z_OK)
		return 0;
	if (ret == Z_BUF_ERROR && g->zs.avail_in == 0)	/* wants input, and there is none */
		return bad(errstr, "truncated");
	if (ret == Z_DATA_ERROR)
		return bad(errstr, corrupt_message(g->zs.msg));
	return bad(errstr, gzout_zlib_message(&g->zs, ret));
}

int gzin_read(struct gzin *g, void *dst, size_t len, size_t *done, const char **errstr)
{
	unsigned char *out = dst;

	*done = 0;
	while (*done < len) {
		size_t want = len - *done < INFLATE_MAX ? len - *done : INFLATE_MAX;
		int st;

		g->zs.next_out = out + *done;
		g->zs.avail_out = (uInt)want;
		st = inflate_step(g, errstr);
		*done += want - g->zs.avail_out;
		if (st < 0)
			return -1;
		if (st == 1 && *done < len)
			return bad(errstr, "truncated");
	}
	return 0;
}

int gzin_end(struct gzin *g, const char **errstr)
{
	unsigned char extra;
	ssize_t n;

	while (!g->ended) {
		g->zs.next_out = &extra;
		g->zs.avail_out = 1;
		if (inflate_step(g, errstr) < 0)
			return -1;
		if (g->zs.avail_out == 0)
			return bad(errstr, named[g->kind].inside);
	}
	if (g->zs.avail_in > 0)
		return bad(errstr, named[g->kind].after);
	if (g->eof)
		return 0;
	n = read_some(g->fd, g->buf, GZIN_BUFFER);
	if (n < 0)
		return bad(errstr, strerror(errno));
	return n > 0 ? bad(errstr, named[g->kind].after) : 0;
}

size_t gzin_peek(const unsigned char *p, size_t len, unsigned char *out, size_t want, int *more)
{
	z_stream zs;
	int ret;

	memset(&zs, 0, sizeof zs);
	*more = 0;
	if (inflateInit2(&zs, GZIP_WINDOW) != Z_OK)
		return 0;	/* cannot look inside: the real reader will say why */
	zs.next_in = p;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)want;
	do
		ret = inflate(&zs, Z_NO_FLUSH);
	while (ret == Z_OK && zs.avail_out > 0 && zs.avail_in > 0);
	*more = zs.avail_out > 0 && (ret == Z_OK || ret == Z_BUF_ERROR);
	inflateEnd(&zs);
	return want - zs.avail_out;
}

int gzin_detect_magic(const unsigned char *start, size_t len, const unsigned char *magic,
		      size_t magic_len)
{
	unsigned char head[GZIN_MAGIC_MAX];
	size_t got;
	int more;

	if (len == 0)
		return -1;
	if (start[0] != 0x1f)
		return 0;
	if (len < 2)
		return -1;
	if (start[1] != 0x8b || magic_len > sizeof head)
		return 0;
	got = gzin_peek(start, len, head, magic_len, &more);
	if (memcmp(head, magic, got) != 0)
		return 0;
	if (got == magic_len)
		return 1;
	return more ? -1 : 0;
}
