/* SPDX-License-Identifier: MIT */
/*
 * instream_zstd.c - zstd for instream.c, with libzstd's streaming
 * decoder: frames one after another (zstd's own multi-frame files,
 * `cat a.zst b.zst`, skippable frames) are one stream, as zstdcat reads
 * them; the decoder starts the next frame by itself.
 *
 * ZSTD_decompressStream returns 0 exactly when a frame is decoded and
 * fully flushed, so that is where the input may end; otherwise how much
 * input its next stage (a block, the checksum) needs. We give it no more
 * than that at a time, so each block's content is handed out by a call of
 * its own: a call that fails reports nothing it decoded, and a frame's
 * checksum is checked by a call that decodes nothing, so the content
 * before a damaged block or a wrong checksum is never lost with it. Frames are checked
 * against their checksum when they carry one. The window is libzstd's
 * default limit (128 MiB), as zstdcat's without --memory: a frame that
 * needs more is refused in libzstd's words.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <zstd.h>
#include <zstd_errors.h>

#include "instream_codec.h"

struct zstd_decoder {
	ZSTD_DCtx *dctx;
	size_t last;		/* ZSTD_decompressStream's last answer: 0 at a frame's end */
	size_t want;		/* the input its next stage needs; 1 at a frame's start */
};

static void *zstd_open(void)
{
	struct zstd_decoder *d = malloc(sizeof *d);

	if (d == NULL)
		return NULL;
	d->dctx = ZSTD_createDCtx();
	if (d->dctx == NULL) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	d->last = 1;	/* a frame has begun: its magic was read */
	d->want = 1;	/* its header: the decoder asks for the rest */
	return d;
}

static void zstd_close(void *state)
{
	struct zstd_decoder *d = state;

	ZSTD_freeDCtx(d->dctx);
	free(d);
}

static int zstd_at_boundary(const void *state)
{
	const struct zstd_decoder *d = state;

	return d->last == 0;
}

static int zstd_step(void *state, const unsigned char **in, size_t *in_len, unsigned char **out,
		     size_t *out_len, char *msg)
{
	struct zstd_decoder *d = state;
	ZSTD_inBuffer src = { *in, *in_len < d->want ? *in_len : d->want, 0 };
	ZSTD_outBuffer dst = { *out, *out_len, 0 };
	size_t rc;

	if (*in_len == 0 && d->last == 0)
		return 0;	/* between frames, nothing held back */
	rc = ZSTD_decompressStream(d->dctx, &dst, &src);
	*in += src.pos;
	*in_len -= src.pos;
	*out += dst.pos;
	*out_len -= dst.pos;
	if (!ZSTD_isError(rc)) {
		d->last = rc;
		d->want = rc > 0 ? rc : 1;
		return 0;
	}
	if (ZSTD_getErrorCode(rc) == ZSTD_error_memory_allocation) {
		errno = ENOMEM;
		return -1;
	}
	snprintf(msg, INSTREAM_MESSAGE, "corrupt zstd input: %s", ZSTD_getErrorName(rc));
	return -1;
}

static const unsigned char zstd_magic[] = { 0x28, 0xb5, 0x2f, 0xfd };

const struct instream_codec instream_zstd = {
	"zstd", zstd_magic, sizeof zstd_magic, NULL, 0,
	zstd_open, zstd_step, zstd_at_boundary, zstd_close, NULL,
};
