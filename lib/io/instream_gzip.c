/* SPDX-License-Identifier: MIT */
/*
 * instream_gzip.c - gzip for instream.c, with zlib's inflate: members one
 * after another are one stream, as gzip -d and zcat read them (RFC 1952
 * allows it; pigz and `cat a.gz b.gz` make such files).
 *
 * inflate checks each member's header and its trailer (CRC-32 and
 * length) itself. After a member ends, the next input byte begins the
 * next member: the decoder is reset and inflate checks the new header,
 * so bytes after the last member that are not gzip are reported as
 * "trailing garbage after gzip data" (zcat warns likewise). The input may
 * end only right after a member.
 *
 * Not here: zlib's transparent mode (plain input never reaches a codec)
 * and the zlib and raw deflate formats, which have no magic to sniff.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef ZLIB_CONST
#define ZLIB_CONST	/* zlib takes const input (z_const), as it never writes it */
#endif
#include <zlib.h>

#include "instream_codec.h"

struct gzip_decoder {
	z_stream zs;
	int between;		/* a member ended and no byte of another came yet */
	unsigned long members;	/* members begun */
};

static void *gzip_open(void)
{
	struct gzip_decoder *d = calloc(1, sizeof *d);

	if (d == NULL)
		return NULL;
	/* 16 + MAX_WBITS: gzip members only, the largest window */
	if (inflateInit2(&d->zs, 16 + MAX_WBITS) != Z_OK) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	d->members = 1;
	return d;
}

static void gzip_close(void *state)
{
	struct gzip_decoder *d = state;

	inflateEnd(&d->zs);
	free(d);
}

static int gzip_at_boundary(const void *state)
{
	const struct gzip_decoder *d = state;

	return d->between;
}

/* What inflate's rc means in words, into msg; -1. */
static int gzip_damage(struct gzip_decoder *d, int rc, char *msg)
{
	if (rc == Z_MEM_ERROR) {
		errno = ENOMEM;
		return -1;
	}
	/* a header check failing on a later member's first bytes: not gzip at all */
	if (d->members > 1 && d->zs.total_in <= 2)
		snprintf(msg, INSTREAM_MESSAGE, "trailing garbage after gzip data");
	else
		snprintf(msg, INSTREAM_MESSAGE, "corrupt gzip input: %s",
			 d->zs.msg != NULL ? d->zs.msg : "invalid data");
	return -1;
}

static int gzip_step(void *state, const unsigned char **in, size_t *in_len, unsigned char **out,
		     size_t *out_len, char *msg)
{
	struct gzip_decoder *d = state;
	uInt in_now = *in_len > UINT_MAX ? UINT_MAX : (uInt)*in_len;
	uInt out_now = *out_len > UINT_MAX ? UINT_MAX : (uInt)*out_len;
	int rc;

	if (d->between) {
		if (*in_len == 0)
			return 0;	/* nothing held back: the member was flushed whole */
		if (inflateReset(&d->zs) != Z_OK)
			return gzip_damage(d, Z_STREAM_ERROR, msg);
		d->between = 0;
		d->members++;
	}
	d->zs.next_in = *in;
	d->zs.avail_in = in_now;
	d->zs.next_out = *out;
	d->zs.avail_out = out_now;
	rc = inflate(&d->zs, Z_NO_FLUSH);
	*in += in_now - d->zs.avail_in;
	*in_len -= in_now - d->zs.avail_in;
	*out += out_now - d->zs.avail_out;
	*out_len -= out_now - d->zs.avail_out;
	if (rc == Z_STREAM_END)
		d->between = 1;
	if (rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR)
		return 0;	/* Z_BUF_ERROR: no progress possible now, not damage */
	return gzip_damage(d, rc, msg);
}

static const unsigned char gzip_magic[] = { 0x1f, 0x8b };

const struct instream_codec instream_gzip = {
	"gzip", gzip_magic, sizeof gzip_magic, NULL, 0,
	gzip_open, gzip_step, gzip_at_boundary, gzip_close, NULL,
};
