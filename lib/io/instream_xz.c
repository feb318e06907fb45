/* SPDX-License-Identifier: MIT */
/*
 * instream_xz.c - xz for instream.c, with liblzma's stream decoder:
 * streams one after another are one input, as xzcat reads them
 * (`cat a.xz b.xz`, xz's own multi-stream files), with the stream padding
 * the .xz format allows between and after them (null bytes, a multiple of
 * four). Bytes after the last stream that do not begin another are
 * "trailing garbage after xz data"; other damage is told in xz's words.
 *
 * The decoder is liblzma's single-stream one, started again for each
 * stream: LZMA_STREAM_END says a stream ended (index and footer checked),
 * so that is where the input may end. liblzma's LZMA_CONCATENATED would
 * do the padding itself, but it reports the end only when told the input
 * ended, which a codec here never is. Every stream's integrity check
 * (CRC32, CRC64, SHA-256) is verified; the memory limit is none, as
 * xzcat's default.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lzma.h>

#include "instream_codec.h"

static const unsigned char xz_magic[] = { 0xfd, '7', 'z', 'X', 'Z', 0x00 };

struct xz_decoder {
	lzma_stream zs;
	int between;		/* a stream ended and no byte of another came yet */
	uint64_t padding;	/* null bytes since the stream ended */
};

static int xz_start(struct xz_decoder *d)
{
	lzma_stream fresh = LZMA_STREAM_INIT;

	lzma_end(&d->zs);
	d->zs = fresh;
	if (lzma_stream_decoder(&d->zs, UINT64_MAX, 0) != LZMA_OK) {
		errno = ENOMEM;
		return -1;
	}
	d->between = 0;
	d->padding = 0;
	return 0;
}

static void *xz_open(void)
{
	struct xz_decoder *d = calloc(1, sizeof *d);
	lzma_stream fresh = LZMA_STREAM_INIT;

	if (d == NULL)
		return NULL;
	d->zs = fresh;
	if (xz_start(d) < 0) {
		free(d);
		return NULL;
	}
	return d;
}

static void xz_close(void *state)
{
	struct xz_decoder *d = state;

	lzma_end(&d->zs);
	free(d);
}

static int xz_at_boundary(const void *state)
{
	const struct xz_decoder *d = state;

	return d->between && d->padding % 4 == 0;
}

/* What lzma_code's rc means, in xz's words, into msg; -1. */
static int xz_damage(lzma_ret rc, char *msg)
{
	const char *why = "compressed data is corrupt";

	if (rc == LZMA_MEM_ERROR) {
		errno = ENOMEM;
		return -1;
	}
	if (rc == LZMA_FORMAT_ERROR)
		why = "file format not recognized";
	else if (rc == LZMA_OPTIONS_ERROR)
		why = "unsupported options";
	else if (rc == LZMA_MEMLIMIT_ERROR)
		why = "memory usage limit reached";
	snprintf(msg, INSTREAM_MESSAGE, "corrupt xz input: %s", why);
	return -1;
}

/* Between streams: skip stream padding; 1 when another stream begins here. */
static int xz_next_stream(struct xz_decoder *d, const unsigned char **in, size_t *in_len,
			  char *msg)
{
	while (*in_len > 0 && **in == 0) {
		(*in)++;
		(*in_len)--;
		d->padding++;
	}
	if (*in_len == 0)
		return 0;
	if (memcmp(*in, xz_magic, *in_len < sizeof xz_magic ? *in_len : sizeof xz_magic) != 0) {
		snprintf(msg, INSTREAM_MESSAGE, "trailing garbage after xz data");
		return -1;
	}
	if (d->padding % 4 != 0) {
		snprintf(msg, INSTREAM_MESSAGE, "corrupt xz input: stream padding not a multiple of four bytes");
		return -1;
	}
	return xz_start(d) < 0 ? -1 : 1;
}

static int xz_step(void *state, const unsigned char **in, size_t *in_len, unsigned char **out,
		   size_t *out_len, char *msg)
{
	struct xz_decoder *d = state;
	lzma_ret rc;

	if (d->between) {
		int next = xz_next_stream(d, in, in_len, msg);

		if (next <= 0)
			return next;
	}
	d->zs.next_in = *in;
	d->zs.avail_in = *in_len;
	d->zs.next_out = *out;
	d->zs.avail_out = *out_len;
	rc = lzma_code(&d->zs, LZMA_RUN);
	*in += *in_len - d->zs.avail_in;
	*in_len = d->zs.avail_in;
	*out += *out_len - d->zs.avail_out;
	*out_len = d->zs.avail_out;
	if (rc == LZMA_STREAM_END)
		d->between = 1;
	if (rc == LZMA_OK || rc == LZMA_STREAM_END || rc == LZMA_BUF_ERROR)
		return 0;	/* LZMA_BUF_ERROR: no progress possible now, not damage */
	return xz_damage(rc, msg);
}

const struct instream_codec instream_xz = {
	"xz", xz_magic, sizeof xz_magic, NULL, 0,
	xz_open, xz_step, xz_at_boundary, xz_close, NULL,
};
