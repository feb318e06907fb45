/* SPDX-License-Identifier: MIT */
/*
 * instream_lz4.c - lz4 frames for instream.c, with liblz4's frame
 * decoder: frames one after another are one input (`cat a.lz4 b.lz4`,
 * skippable frames among them), as lz4cat reads them; the decoder starts
 * the next frame by itself.
 *
 * LZ4F_decompress returns 0 exactly when a frame is decoded and fully
 * flushed, so that is where the input may end; a block checksum or
 * content checksum a frame carries is checked. The legacy format of
 * lz4 -l (magic 02 21 4c 18) is not a frame: instream_refused.c names it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4frame.h>

#include "instream_codec.h"

struct lz4_decoder {
	LZ4F_dctx *dctx;
	size_t last;		/* LZ4F_decompress's last answer: 0 at a frame's end */
};

static void *lz4_open(void)
{
	struct lz4_decoder *d = malloc(sizeof *d);

	if (d == NULL)
		return NULL;
	if (LZ4F_isError(LZ4F_createDecompressionContext(&d->dctx, LZ4F_VERSION))) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	d->last = 1;	/* a frame has begun: its magic was read */
	return d;
}

static void lz4_close(void *state)
{
	struct lz4_decoder *d = state;

	LZ4F_freeDecompressionContext(d->dctx);
	free(d);
}

static int lz4_at_boundary(const void *state)
{
	const struct lz4_decoder *d = state;

	return d->last == 0;
}

static int lz4_step(void *state, const unsigned char **in, size_t *in_len, unsigned char **out,
		    size_t *out_len, char *msg)
{
	struct lz4_decoder *d = state;
	size_t src = *in_len, dst = *out_len, rc;

	if (*in_len == 0 && d->last == 0)
		return 0;	/* between frames, nothing held back */
	rc = LZ4F_decompress(d->dctx, *out, &dst, *in, &src, NULL);
	*in += src;
	*in_len -= src;
	*out += dst;
	*out_len -= dst;
	if (!LZ4F_isError(rc)) {
		d->last = rc;
		return 0;
	}
	/* LZ4F_getErrorCode is not in liblz4's stable interface: its name says it */
	if (strstr(LZ4F_getErrorName(rc), "allocation") != NULL) {
		errno = ENOMEM;
		return -1;
	}
	snprintf(msg, INSTREAM_MESSAGE, "corrupt lz4 input: %s", LZ4F_getErrorName(rc));
	return -1;
}

static const unsigned char lz4_magic[] = { 0x04, 0x22, 0x4d, 0x18 };

const struct instream_codec instream_lz4 = {
	"lz4", lz4_magic, sizeof lz4_magic, NULL, 0,
	lz4_open, lz4_step, lz4_at_boundary, lz4_close, NULL,
};
